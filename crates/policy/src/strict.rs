//! Strict Barrier bookkeeping (TOS 3.4, 4.3): a Barrier interrupt is released
//! once the Barrier and every command submitted before it on the same queue
//! have completed. The device keeps the submission order of the commands
//! still outstanding.

use std::collections::{BTreeSet, HashMap};

#[derive(Clone, Debug, Default)]
pub struct StrictBarriers {
    next_seq: u64,
    seq_of: HashMap<u64, u64>,
    outstanding: BTreeSet<u64>,
    /// Completed Barriers still waiting for earlier commands, by sequence.
    waiting: BTreeSet<u64>,
}

impl StrictBarriers {
    pub fn submitted(&mut self, id: u64) {
        let seq = self.next_seq;
        self.next_seq += 1;
        // A reused id while still outstanding means the earlier command was
        // lost to us; forget it rather than block Barriers forever.
        if let Some(old) = self.seq_of.insert(id, seq) {
            self.outstanding.remove(&old);
        }
        self.outstanding.insert(seq);
    }

    /// Records a completion. Returns `(ready, released)`: `ready` is false
    /// only for a Barrier that must wait for earlier commands (it is then
    /// remembered); `released` is true when this completion was the last
    /// earlier command of a waiting Barrier. A command never seen submitted
    /// has no order, so a Barrier on it is ready at once (relaxed).
    pub fn completed(&mut self, id: u64, barrier: bool) -> (bool, bool) {
        let seq = self.seq_of.remove(&id);
        if let Some(seq) = seq {
            self.outstanding.remove(&seq);
        }
        let released = self.release();
        let ready = match seq {
            Some(seq) if barrier && self.has_earlier(seq) => {
                self.waiting.insert(seq);
                false
            }
            _ => true,
        };
        (ready, released)
    }

    fn has_earlier(&self, seq: u64) -> bool {
        self.outstanding.first().is_some_and(|&o| o < seq)
    }

    fn release(&mut self) -> bool {
        let mut released = false;
        while let Some(&b) = self.waiting.first() {
            if self.has_earlier(b) {
                break;
            }
            self.waiting.pop_first();
            released = true;
        }
        released
    }

    #[cfg(test)]
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn barrier_waits_for_earlier_submissions_only() {
        let mut s = StrictBarriers::default();
        for id in 1..=4 {
            s.submitted(id);
        }
        s.submitted(5); // after the barrier: must not hold it
        assert_eq!(s.completed(4, true), (false, false), "1..3 outstanding");
        assert_eq!(s.completed(2, false), (true, false));
        assert_eq!(s.completed(1, false), (true, false));
        assert_eq!(
            s.completed(3, false),
            (true, true),
            "last earlier one releases"
        );
        assert_eq!(s.waiting(), 0);
    }

    #[test]
    fn barrier_in_order_is_ready_and_unknown_ids_are_relaxed() {
        let mut s = StrictBarriers::default();
        s.submitted(1);
        s.submitted(2);
        assert_eq!(s.completed(1, false), (true, false));
        assert_eq!(s.completed(2, true), (true, false));
        assert_eq!(s.completed(99, true), (true, false));
    }
}
