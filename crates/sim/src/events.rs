//! The event queue: a min-heap on (time, insertion order), so events at the
//! same instant run in the order they were scheduled and a run is
//! deterministic.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use policy::Nanos;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ev {
    /// The work occupying a core ends; stale when the core's generation moved
    /// on (an interrupt or a preemption cut the work short).
    CoreDone { core: u32, gen: u32 },
    /// A command's service inside the device ends.
    ServiceDone { req: u32 },
    /// A queue's policy deadline; stale unless it is still the armed one.
    Deadline { queue: u32 },
    /// A sleeping thread's timer (rate limit, thinktime); stale unless `gen`
    /// matches the thread's current sleep.
    Timer { tid: u32, gen: u32 },
    /// A thread's `startdelay` is over.
    Start { tid: u32 },
    /// The scheduler tick on a core.
    Tick { core: u32 },
    /// The planned end of a time-based run.
    End,
}

#[derive(Debug)]
struct Entry {
    time: Nanos,
    seq: u64,
    ev: Ev,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.seq) == (other.time, other.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    // Reversed: BinaryHeap is a max-heap.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

#[derive(Debug, Default)]
pub(crate) struct Events {
    heap: BinaryHeap<Entry>,
    seq: u64,
    /// Entries other than ticks: when none is left, nothing but the
    /// scheduler tick can ever happen again.
    live: usize,
}

impl Events {
    pub(crate) fn push(&mut self, time: Nanos, ev: Ev) {
        self.seq += 1;
        if !matches!(ev, Ev::Tick { .. }) {
            self.live += 1;
        }
        self.heap.push(Entry {
            time,
            seq: self.seq,
            ev,
        });
    }

    pub(crate) fn pop(&mut self) -> Option<(Nanos, Ev)> {
        let e = self.heap.pop()?;
        if !matches!(e.ev, Ev::Tick { .. }) {
            self.live -= 1;
        }
        Some((e.time, e.ev))
    }

    /// Whether anything but ticks is scheduled.
    pub(crate) fn any_live(&self) -> bool {
        self.live > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_then_insertion_order() {
        let mut q = Events::default();
        q.push(5, Ev::End);
        q.push(3, Ev::Tick { core: 1 });
        q.push(3, Ev::Tick { core: 2 });
        assert_eq!(q.pop(), Some((3, Ev::Tick { core: 1 })));
        assert_eq!(q.pop(), Some((3, Ev::Tick { core: 2 })));
        assert_eq!(q.pop(), Some((5, Ev::End)));
        assert_eq!(q.pop(), None);
    }
}
