//! The event queue: events run in (time, insertion order), so events at the
//! same instant run in the order they were scheduled and a run is
//! deterministic.
//!
//! The queue is split per core, so its cost
//! does not grow with the number of cores: each part is a short sorted list,
//! and a tournament tree over the parts' earliest events finds the next one
//! in log2(parts) comparisons. Every event names the core it happens on (a
//! core's own work and tick, a thread's timers on the thread's core, a
//! queue's deadline on the core its interrupt goes to, a command's service
//! end on its thread's core, the run's end on core 0), so the parts stay as
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
    /// A command's service inside the device ends; `core` is its thread's
    /// (the part it waits in: only where it sits, never when it runs).
    ServiceDone { req: u32, core: u32 },
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
    /// JBD2's commit timer (`tid`: the JBD2 thread, whose core it is on).
    Commit { tid: u32 },
    /// Polled delivery's fallback for a device interrupt pending on a busy
    /// core since `since` ([`crate::IrqTaken::Poll`]); stale unless that
    /// interrupt still waits.
    IrqFallback { core: u32, since: Nanos },
}

/// The engine's event kinds, in the order of its events' variants: `bench sim` prints
/// how many of each a completion costs (issue 26 item 8).
pub const EVENT_KINDS: [&str; 10] = [
    "core-done",
    "service-done",
    "deadline",
    "timer",
    "start",
    "tick",
    "end",
    "commit",
    "irq-fallback",
    "stale core-done",
];

impl Ev {
    /// Its index in [`EVENT_KINDS`] (a stale `CoreDone` is counted by the
    /// engine apart, at the last index).
    pub(crate) fn kind(&self) -> usize {
        match self {
            Ev::CoreDone { .. } => 0,
            Ev::ServiceDone { .. } => 1,
            Ev::Deadline { .. } => 2,
            Ev::Timer { .. } => 3,
            Ev::Start { .. } => 4,
            Ev::Tick { .. } => 5,
            Ev::End => 6,
            Ev::Commit { .. } => 7,
            Ev::IrqFallback { .. } => 8,
        }
    }
}

/// (time, seq) in one integer: one comparison orders two events.
type Key = u128;
const NONE: Key = Key::MAX;

fn key(time: Nanos, seq: u64) -> Key {
    ((time as Key) << 64) | seq as Key
}

/// Whether `k` is [`NONE`]. Only the sequence half is tested (no event's
/// is `u64::MAX`): a key is mostly just written, by two 8-byte stores, and
/// reading it back as one 16-byte load stalls until they retire (a
/// store-forwarding failure; `perf annotate` put a third of `World::run`'s
/// samples on `tree[1] == NONE`).
fn is_none(k: Key) -> bool {
    k as u64 == NONE as u64
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    key: Key,
    ev: Ev,
}

/// One core's (or the device's) pending events.
#[derive(Debug)]
struct Part {
    /// The core's `CoreDone` (key NONE when none is pending).
    done: Entry,
    /// The rest in order from `next`; what precedes `next` has run.
    sorted: Vec<Entry>,
    next: usize,
}

const EMPTY: Entry = Entry {
    key: NONE,
    ev: Ev::End,
};

/// Popped entries left at the front of a part before they are dropped.
const COMPACT_AT: usize = 64;

impl Part {
    fn new() -> Part {
        Part {
            done: EMPTY,
            sorted: Vec::new(),
            next: 0,
        }
    }

    fn head(&self) -> Key {
        let rest = self.sorted.get(self.next).map_or(NONE, |e| e.key);
        self.done.key.min(rest)
    }

    #[inline(always)] // with `Events::push`
    fn insert(&mut self, e: Entry) {
        // New events mostly land last: walk back from the end.
        self.sorted.push(e);
        // Over the pending run only, as a slice: no bounds checks.
        let run = &mut self.sorted[self.next..];
        let mut i = run.len() - 1;
        while i > 0 && run[i - 1].key > e.key {
            run[i] = run[i - 1];
            i -= 1;
        }
        run[i] = e;
    }

    /// Takes the part's head, whose key the tree holds: keys are unique,
    /// so it is the `CoreDone` slot's exactly when the keys are equal (no
    /// second look at the sorted run's head).
    fn pop(&mut self, head: Key) -> Entry {
        if self.done.key == head {
            return std::mem::replace(&mut self.done, EMPTY);
        }
        let e = self.sorted[self.next];
        self.next += 1;
        if self.next == self.sorted.len() {
            self.sorted.clear();
            self.next = 0;
        } else if self.next >= COMPACT_AT {
            self.sorted.drain(..self.next);
            self.next = 0;
        }
        e
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.sorted.len() - self.next + usize::from(self.done.key != NONE)
    }

    fn bytes(&self) -> usize {
        std::mem::size_of::<Part>() + self.sorted.capacity() * std::mem::size_of::<Entry>()
    }
}

/// Cores get their parts when they first have an event; core 0's is made
/// at once (it holds the run's end).
const UNSET: u32 = u32::MAX;

#[derive(Debug)]
pub(crate) struct Events {
    parts: Vec<Part>,
    /// A tournament tree over the parts' earliest keys: node i (from 1)
    /// holds the earliest key among its leaves and its part; part p's leaf
    /// is node `leaves + p`.
    tree: Vec<(Key, u32)>,
    leaves: usize,
    /// Core to part.
    core_part: Vec<u32>,
    /// Thread to core, and queue to the core it interrupts.
    thread_core: Vec<u32>,
    queue_core: Vec<u32>,
    /// The part the last event popped from: its leaf is replayed at the
    /// next pop, not at once, since the popped event's handler mostly
    /// schedules the next one in the same part.
    dirty: Option<usize>,
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
            tree: Vec::new(),
            leaves: 0,
            core_part: vec![UNSET; cores],
            thread_core,
            queue_core,
            dirty: None,
            seq: 0,
            live: 0,
        };
        // The run's end waits in core 0's part: a part of its own made
        // the tree one level deeper at 16 busy cores (17 parts, 32 leaves),
        // one more comparison at every pop.
        q.core(0);
        q
    }

    fn add_part(&mut self) -> usize {
        let p = self.parts.len();
        self.parts.push(Part::new());
        if self.parts.len() > self.leaves {
            // Grow the tree and replay every match.
            self.leaves = self.parts.len().next_power_of_two().max(2);
            self.tree = vec![(NONE, 0); 2 * self.leaves];
            for i in 0..self.leaves {
                let head = self.parts.get(i).map_or(NONE, Part::head);
                self.tree[self.leaves + i] = (head, i as u32);
            }
            for i in (1..self.leaves).rev() {
                let (a, b) = (self.tree[2 * i], self.tree[2 * i + 1]);
                self.tree[i] = if b.0 < a.0 { b } else { a };
            }
            // Every leaf was just read fresh, the dirty one's too.
            self.dirty = None;
        }
        p
    }

    /// The part's head changed: replay its matches up the tree, stopping
    /// where a match's winner stays the same (the nodes above then hold,
    /// except on the dirty part's path, which the next pop replays in full).
    fn update(&mut self, p: usize) {
        self.climb::<true>(p);
    }

    /// The part's head changed: replay all its matches up the tree (the
    /// dirty part's, at a pop). Inlined into `pop`, once per event: out of
    /// line it was 67 instructions a pop on `bench sim`.
    #[inline(always)]
    fn replay(&mut self, p: usize) {
        self.climb::<false>(p);
    }

    /// Replays part `p`'s matches from its leaf up; with `STOP`, no higher
    /// than the first match whose winner did not change.
    #[inline(always)]
    fn climb<const STOP: bool>(&mut self, p: usize) {
        let mut node = (self.parts[p].head(), p as u32);
        let mut i = self.leaves + p;
        self.tree[i] = node;
        while i > 1 {
            let sibling = self.tree[i ^ 1];
            if sibling.0 < node.0 {
                node = sibling;
            }
            i >>= 1;
            if STOP && self.tree[i] == node {
                return;
            }
            self.tree[i] = node;
        }
    }

    /// A part's head changed. Inlined with `push`: it mostly finds the
    /// dirty part and does nothing, and out of line that was a call.
    #[inline(always)]
    fn changed(&mut self, p: usize) {
        if self.dirty != Some(p) {
            self.update(p);
        }
    }

    #[inline(always)] // with `Events::push`
    fn core(&mut self, core: u32) -> usize {
        let p = self.core_part[core as usize];
        if p != UNSET {
            return p as usize;
        }
        self.first_event_on(core)
    }

    #[cold]
    #[inline(never)]
    fn first_event_on(&mut self, core: u32) -> usize {
        let p = self.add_part();
        self.core_part[core as usize] = p as u32;
        p
    }

    // Inlined, with what it calls up to the tree: the caller builds `ev`
    // in registers and the match folds to its one arm. Out of line, `ev`
    // went through memory, written field by field and read back whole at
    // once, which stalls the load until the stores retire (a
    // store-forwarding failure: `perf annotate` put 60% of `push` on that
    // copy).
    #[inline(always)]
    pub(crate) fn push(&mut self, time: Nanos, ev: Ev) {
        self.seq += 1;
        let e = Entry {
            key: key(time, self.seq),
            ev,
        };
        // One match: the event's part, and whether it keeps the run alive.
        let p = match ev {
            Ev::CoreDone { core, .. } => {
                let p = self.core(core);
                if is_none(std::mem::replace(&mut self.parts[p].done, e).key) {
                    self.live += 1;
                }
                self.changed(p);
                return;
            }
            Ev::Tick { core } => {
                let p = self.core(core);
                self.parts[p].insert(e);
                self.changed(p);
                return;
            }
            // Each core's commands wait in its own part, not one part for
            // the whole device: with N cores busy the device's part held N
            // times the units' service ends, and placing one walked them.
            Ev::ServiceDone { core, .. } => self.core(core),
            Ev::End => self.core(0),
            Ev::Deadline { queue } => self.core(self.queue_core[queue as usize]),
            Ev::IrqFallback { core, .. } => self.core(core),
            Ev::Timer { tid, .. } | Ev::Start { tid } | Ev::Commit { tid } => {
                self.core(self.thread_core[tid as usize])
            }
        };
        self.live += 1;
        self.parts[p].insert(e);
        self.changed(p);
    }

    /// Drops the core's pending `CoreDone`, if any: its work was cut short.
    pub(crate) fn cancel_core_done(&mut self, core: u32) {
        let p = self.core(core);
        if !is_none(std::mem::replace(&mut self.parts[p].done, EMPTY).key) {
            self.live -= 1;
            self.changed(p);
        }
    }

    pub(crate) fn pop(&mut self) -> Option<(Nanos, Ev)> {
        if let Some(d) = self.dirty.take() {
            self.replay(d);
        }
        let (head, p) = self.tree[1];
        if is_none(head) {
            return None;
        }
        let e = self.parts[p as usize].pop(head);
        self.dirty = Some(p as usize);
        if !matches!(e.ev, Ev::Tick { .. }) {
            self.live -= 1;
        }
        Some(((e.key >> 64) as Nanos, e.ev))
    }

    /// Whether anything but ticks is scheduled.
    pub(crate) fn any_live(&self) -> bool {
        self.live > 0
    }

    /// Events pending.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.parts.iter().map(Part::len).sum()
    }

    /// What the queue holds, bytes (for `bench sim --cores`).
    pub(crate) fn bytes(&self) -> usize {
        use std::mem::size_of;
        self.parts.iter().map(Part::bytes).sum::<usize>()
            + self.tree.capacity() * size_of::<(Key, u32)>()
            + (self.core_part.capacity() + self.thread_core.capacity() + self.queue_core.capacity())
                * 4
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
        q.push(3, Ev::ServiceDone { req: 9, core: 3 });
        assert_eq!(q.pop(), Some((3, Ev::Tick { core: 1 })));
        assert_eq!(q.pop(), Some((3, Ev::Tick { core: 2 })));
        assert_eq!(q.pop(), Some((3, Ev::ServiceDone { req: 9, core: 3 })));
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
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
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

    #[test]
    fn pops_between_pushes_keep_the_order_as_parts_appear() {
        // Pushes and pops interleaved while cores get their first events
        // (new parts, with and without the tree growing), against a model
        // that keeps everything in one (time, seq)-sorted list.
        let cores = 13u32;
        let mut q = Events::new(cores as usize, (0..cores).collect(), (0..cores).collect());
        let mut model: Vec<(Nanos, u64, Ev)> = Vec::new();
        let (mut seq, mut now, mut x) = (0u64, 0u64, 99u64);
        let mut gen = 0u32;
        for step in 0..5000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if x % 5 < 2 {
                let got = q.pop();
                model.sort_by_key(|&(t, s, _)| (t, s));
                let want = (!model.is_empty()).then(|| model.remove(0));
                assert_eq!(got, want.map(|(t, _, e)| (t, e)), "step {step}");
                if let Some((t, _, _)) = want {
                    now = t;
                }
                continue;
            }
            // Cores come into use one by one over the run.
            let core = ((x >> 20) % (1 + step as u64 / 300).min(cores as u64)) as u32;
            let time = now + (x >> 33) % 20;
            let ev = match (x >> 8) % 4 {
                0 => Ev::Tick { core },
                1 => Ev::Start { tid: core },
                2 => Ev::ServiceDone { req: step, core },
                _ => {
                    gen += 1;
                    // The model drops the core's CoreDone it replaces.
                    model.retain(
                        |&(_, _, e)| !matches!(e, Ev::CoreDone { core: c, .. } if c == core),
                    );
                    Ev::CoreDone { core, gen }
                }
            };
            seq += 1;
            q.push(time, ev);
            model.push((time, seq, ev));
        }
    }
}
