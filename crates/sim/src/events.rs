//! The event queue: events run in (time, insertion order), so events at the
//! same instant run in the order they were scheduled and a run is
//! deterministic.
//!
//! The queue is split per core (and one part for the device), so its cost
//! does not grow with the number of cores: each part is a short sorted list,
//! and a tournament tree over the parts' earliest events finds the next one
//! in log2(parts) comparisons. Every event names the core it happens on (a
//! core's own work and tick, a thread's timers on the thread's core, a
//! queue's deadline on the core its interrupt goes to), so the parts stay as
//! short as one core's pending work, however many cores run.
//!
//! A core has at most one live `CoreDone`: it sits in its part's slot, and a
//! new one replaces it, so the work an interrupt or a preemption cuts short
//! leaves no stale event behind. Keys are unique (the insertion counter), so
//! the merged order is exactly the order of one global (time, seq) heap.

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

/// (time, seq) in one integer: one comparison orders two events.
type Key = u128;
const NONE: Key = Key::MAX;

fn key(time: Nanos, seq: u64) -> Key {
    ((time as Key) << 64) | seq as Key
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    key: Key,
    ev: Ev,
}

/// One core's (or the device's) pending events.
#[derive(Debug, Default)]
struct Part {
    /// The core's `CoreDone`, if one is pending.
    done: Option<Entry>,
    /// The rest, latest first (the next one pops off the end).
    later_first: Vec<Entry>,
}

impl Part {
    fn head(&self) -> Key {
        let rest = self.later_first.last().map_or(NONE, |e| e.key);
        self.done.map_or(rest, |d| d.key.min(rest))
    }

    fn insert(&mut self, e: Entry) {
        // New events mostly land late: search from the latest.
        let at = self.later_first.partition_point(|x| x.key > e.key);
        self.later_first.insert(at, e);
    }

    fn pop(&mut self) -> Option<Entry> {
        match (self.done, self.later_first.last()) {
            (Some(d), Some(l)) if l.key < d.key => self.later_first.pop(),
            (Some(d), _) => {
                self.done = None;
                Some(d)
            }
            (None, _) => self.later_first.pop(),
        }
    }

    fn len(&self) -> usize {
        self.later_first.len() + usize::from(self.done.is_some())
    }
}

/// The device's part; cores get theirs when they first have an event.
const DEVICE: usize = 0;
const UNSET: u32 = u32::MAX;

#[derive(Debug)]
pub(crate) struct Events {
    parts: Vec<Part>,
    /// Each part's earliest key (NONE when empty), padded to the tree's
    /// leaves.
    heads: Vec<Key>,
    /// A tournament tree: node i (from 1) holds the part with the earliest
    /// head among its leaves; leaves start at `heads.len()`.
    tree: Vec<u32>,
    /// Core to part.
    core_part: Vec<u32>,
    /// Thread to core, and queue to the core it interrupts.
    thread_core: Vec<u32>,
    queue_core: Vec<u32>,
    seq: u64,
    /// Entries other than ticks: when none is left, nothing but the
    /// scheduler tick can ever happen again.
    live: usize,
}

impl Events {
    /// A queue for threads on `thread_core[tid]` and queues interrupting
    /// `queue_core[q]`.
    pub(crate) fn new(cores: usize, thread_core: Vec<u32>, queue_core: Vec<u32>) -> Events {
        let mut q = Events {
            parts: Vec::new(),
            heads: Vec::new(),
            tree: Vec::new(),
            core_part: vec![UNSET; cores],
            thread_core,
            queue_core,
            seq: 0,
            live: 0,
        };
        q.add_part();
        q
    }

    fn add_part(&mut self) -> usize {
        let p = self.parts.len();
        self.parts.push(Part::default());
        if self.parts.len() > self.heads.len() {
            let leaves = self.parts.len().next_power_of_two().max(2);
            self.heads.resize(leaves, NONE);
            self.tree = vec![0; 2 * leaves];
            for (i, leaf) in self.tree[leaves..].iter_mut().enumerate() {
                *leaf = i as u32;
            }
            for i in (1..leaves).rev() {
                self.tree[i] = self.winner(self.tree[2 * i], self.tree[2 * i + 1]);
            }
        }
        p
    }

    fn winner(&self, a: u32, b: u32) -> u32 {
        if self.heads[b as usize] < self.heads[a as usize] {
            b
        } else {
            a
        }
    }

    /// The part's head changed: replay its matches up to the root.
    fn update(&mut self, p: usize) {
        self.heads[p] = self.parts[p].head();
        let mut i = (self.heads.len() + p) / 2;
        while i >= 1 {
            self.tree[i] = self.winner(self.tree[2 * i], self.tree[2 * i + 1]);
            i /= 2;
        }
    }

    fn core(&mut self, core: u32) -> usize {
        let p = self.core_part[core as usize];
        if p != UNSET {
            return p as usize;
        }
        let p = self.add_part();
        self.core_part[core as usize] = p as u32;
        p
    }

    fn part_of(&mut self, ev: Ev) -> usize {
        match ev {
            Ev::CoreDone { core, .. } | Ev::Tick { core } => self.core(core),
            Ev::Timer { tid, .. } | Ev::Start { tid } => self.core(self.thread_core[tid as usize]),
            Ev::Deadline { queue } => self.core(self.queue_core[queue as usize]),
            Ev::ServiceDone { .. } | Ev::End => DEVICE,
        }
    }

    pub(crate) fn push(&mut self, time: Nanos, ev: Ev) {
        self.seq += 1;
        let e = Entry {
            key: key(time, self.seq),
            ev,
        };
        let p = self.part_of(ev);
        let part = &mut self.parts[p];
        match ev {
            Ev::CoreDone { .. } => {
                if part.done.replace(e).is_none() {
                    self.live += 1;
                }
            }
            Ev::Tick { .. } => part.insert(e),
            _ => {
                self.live += 1;
                part.insert(e);
            }
        }
        if e.key < self.heads[p] || matches!(ev, Ev::CoreDone { .. }) {
            self.update(p);
        }
    }

    /// Drops the core's pending `CoreDone`, if any: its work was cut short.
    pub(crate) fn cancel_core_done(&mut self, core: u32) {
        let p = self.core(core);
        if self.parts[p].done.take().is_some() {
            self.live -= 1;
            self.update(p);
        }
    }

    pub(crate) fn pop(&mut self) -> Option<(Nanos, Ev)> {
        let p = self.tree[1] as usize;
        if self.heads[p] == NONE {
            return None;
        }
        let e = self.parts[p].pop().expect("a part with a head has an event");
        self.update(p);
        if !matches!(e.ev, Ev::Tick { .. }) {
            self.live -= 1;
        }
        Some(((e.key >> 64) as Nanos, e.ev))
    }

    /// Whether anything but ticks is scheduled.
    pub(crate) fn any_live(&self) -> bool {
        self.live > 0
    }

    /// Events pending (for the memory figures of `bench sim --cores`).
    pub(crate) fn len(&self) -> usize {
        self.parts.iter().map(Part::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue() -> Events {
        Events::new(4, vec![0, 1, 3], vec![0, 1, 2, 3])
    }

    #[test]
    fn earliest_first_then_insertion_order() {
        let mut q = queue();
        q.push(5, Ev::End);
        q.push(3, Ev::Tick { core: 1 });
        q.push(3, Ev::Tick { core: 2 });
        q.push(3, Ev::ServiceDone { req: 9 });
        assert_eq!(q.pop(), Some((3, Ev::Tick { core: 1 })));
        assert_eq!(q.pop(), Some((3, Ev::Tick { core: 2 })));
        assert_eq!(q.pop(), Some((3, Ev::ServiceDone { req: 9 })));
        assert_eq!(q.pop(), Some((5, Ev::End)));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn a_new_core_done_replaces_the_cut_short_one() {
        let mut q = queue();
        q.push(10, Ev::CoreDone { core: 2, gen: 1 });
        q.push(20, Ev::CoreDone { core: 2, gen: 2 });
        q.push(15, Ev::Start { tid: 2 });
        q.push(12, Ev::CoreDone { core: 3, gen: 1 });
        q.cancel_core_done(3);
        assert!(q.any_live());
        assert_eq!(q.len(), 2);
        assert_eq!(q.pop(), Some((15, Ev::Start { tid: 2 })));
        assert_eq!(q.pop(), Some((20, Ev::CoreDone { core: 2, gen: 2 })));
        assert!(!q.any_live());
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn many_parts_merge_in_time_then_insertion_order() {
        // Against a plain sort of the same pushes, across the tree's growth.
        let cores = 40u32;
        let mut q = Events::new(cores as usize, (0..cores).collect(), (0..cores).collect());
        let mut want = Vec::new();
        let mut seq = 0u64;
        let mut x = 12345u64;
        for _ in 0..2000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let time = (x >> 33) % 50;
            let core = ((x >> 20) % cores as u64) as u32;
            let ev = match x % 3 {
                0 => Ev::Tick { core },
                1 => Ev::Start { tid: core },
                _ => Ev::Deadline { queue: core },
            };
            seq += 1;
            q.push(time, ev);
            want.push((time, seq, ev));
        }
        want.sort_by_key(|&(t, s, _)| (t, s));
        let got: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        let want: Vec<_> = want.into_iter().map(|(t, _, e)| (t, e)).collect();
        assert_eq!(got, want);
    }
}
