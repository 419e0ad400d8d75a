//! One NVMe submission/completion queue pair in memory shared by the host
//! threads and the device thread, as the controller and the driver share it:
//! fixed-size rings, a tail doorbell for the SQ, a head doorbell for the CQ,
//! and a phase bit in each completion entry that tells a new entry from a
//! stale one without any other flag (NVMe 1.4, 4.6).
//!
//! The counters (`tail`, `head`) run freely and wrap; a slot is
//! `counter & mask`, and the phase of pass `counter / entries` alternates
//! 1, 0, 1, ... so that zeroed memory reads as empty on the first pass.
//! The command identifier carries the Urgent and Barrier bits and the
//! driver's "reaped" flag ([`policy::cid`], TOS 4.2.1).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use policy::{cid, Interrupt, Marks};

/// A command as the host writes it into the SQ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sqe {
    /// Tag plus the U/B bits ([`policy::cid::encode`]).
    pub cid: u16,
    pub write: bool,
    pub len: u32,
    pub offset: u64,
    /// The data buffer's address (the PRP, in NVMe's terms).
    pub buf: usize,
}

/// The submission ring. One producer at a time (the host holds its queue's
/// submit lock), one consumer (the device thread).
pub struct SubmissionQueue {
    slots: Box<[[AtomicU64; 3]]>,
    mask: u32,
    /// The tail doorbell: entries before it are ready for the device.
    tail: AtomicU32,
    /// How far the device has fetched; slots before it may be reused (NVMe
    /// returns it in every CQE's SQ Head Pointer field).
    head: AtomicU32,
}

impl SubmissionQueue {
    /// `entries` is rounded up to a power of two.
    pub fn new(entries: u32) -> SubmissionQueue {
        let n = entries.max(2).next_power_of_two();
        SubmissionQueue {
            slots: (0..n).map(|_| Default::default()).collect(),
            mask: n - 1,
            tail: AtomicU32::new(0),
            head: AtomicU32::new(0),
        }
    }

    #[cfg(test)]
    pub fn entries(&self) -> u32 {
        self.mask + 1
    }

    /// Host: writes `sqe` at `*tail` (the producer's private copy of the
    /// doorbell) and advances it; `false` if the ring is full. The device
    /// sees nothing until [`SubmissionQueue::ring`].
    pub fn write(&self, tail: &mut u32, sqe: Sqe) -> bool {
        let head = self.head.load(Ordering::Acquire);
        if tail.wrapping_sub(head) > self.mask {
            return false;
        }
        let slot = &self.slots[(*tail & self.mask) as usize];
        slot[0].store(sqe.offset, Ordering::Relaxed);
        slot[1].store(sqe.buf as u64, Ordering::Relaxed);
        let w = u64::from(sqe.cid) | (u64::from(sqe.write) << 16) | (u64::from(sqe.len) << 32);
        slot[2].store(w, Ordering::Relaxed);
        *tail = tail.wrapping_add(1);
        true
    }

    /// The tail doorbell as the host last rang it.
    pub fn doorbell(&self) -> u32 {
        self.tail.load(Ordering::Acquire)
    }

    /// Host: the tail doorbell write that hands the entries to the device.
    pub fn ring(&self, tail: u32) {
        self.tail.store(tail, Ordering::Release);
    }

    /// Device: fetches the next command, if the doorbell is past `*head`.
    pub fn fetch(&self, head: &mut u32) -> Option<Sqe> {
        if self.tail.load(Ordering::Acquire) == *head {
            return None;
        }
        let slot = &self.slots[(*head & self.mask) as usize];
        let offset = slot[0].load(Ordering::Relaxed);
        let buf = slot[1].load(Ordering::Relaxed) as usize;
        let w = slot[2].load(Ordering::Relaxed);
        *head = head.wrapping_add(1);
        self.head.store(*head, Ordering::Release);
        Some(Sqe {
            cid: w as u16,
            write: (w >> 16) & 1 != 0,
            len: (w >> 32) as u32,
            offset,
            buf,
        })
    }
}

/// A completion as the device posts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cqe {
    pub cid: u16,
    /// Bytes transferred, or a negative errno.
    pub result: i32,
    /// The status field says the command failed.
    pub error: bool,
}

impl Cqe {
    pub fn marks(&self) -> Marks {
        cid::marks(self.cid)
    }

    fn pack(self, phase: bool) -> u64 {
        u64::from(phase)
            | (u64::from(self.error) << 1)
            | (u64::from(self.cid) << 16)
            | (u64::from(self.result as u32) << 32)
    }

    fn unpack(w: u64) -> Cqe {
        Cqe {
            cid: (w >> 16) as u16,
            result: (w >> 32) as u32 as i32,
            error: (w >> 1) & 1 != 0,
        }
    }
}

const PHASE: u64 = 1;
const REAPED: u64 = (cid::REAPED_BIT as u64) << 16;

/// The CQ is full: the device holds the completion until the head doorbell
/// frees a slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CqFull;

/// The completion ring: the device posts, the interrupt handler reaps.
pub struct CompletionQueue {
    slots: Box<[AtomicU64]>,
    mask: u32,
    shift: u32,
    /// The head doorbell: slots before it are the device's again.
    head: AtomicU32,
}

impl CompletionQueue {
    /// `entries` is rounded up to a power of two.
    pub fn new(entries: u32) -> CompletionQueue {
        let n = entries.max(2).next_power_of_two();
        CompletionQueue {
            slots: (0..n).map(|_| AtomicU64::new(0)).collect(),
            mask: n - 1,
            shift: n.trailing_zeros(),
            head: AtomicU32::new(0),
        }
    }

    fn phase(&self, counter: u32) -> bool {
        (counter >> self.shift) & 1 == 0
    }

    /// How many entries the ring has.
    pub fn entries(&self) -> u32 {
        self.mask + 1
    }

    /// The head doorbell as the host last rang it (a free-running count).
    pub fn doorbell(&self) -> u32 {
        self.head.load(Ordering::Acquire)
    }

    /// Device: posts `cqe` at `*tail` unless the ring is full.
    pub fn post(&self, tail: &mut u32, cqe: Cqe) -> Result<(), CqFull> {
        let head = self.head.load(Ordering::Acquire);
        if tail.wrapping_sub(head) > self.mask {
            return Err(CqFull);
        }
        let w = cqe.pack(self.phase(*tail));
        self.slots[(*tail & self.mask) as usize].store(w, Ordering::Release);
        *tail = tail.wrapping_add(1);
        Ok(())
    }

    /// Host: the interrupt handler's pass over the CQ from `*head`. A full
    /// interrupt takes every new entry; an urgent-only one (OOO, TOS 3.5)
    /// takes only the Urgent ones (U+B counts as Urgent, TOS 4.1.1) and sets
    /// their reaped flag so no later pass takes them again. The head doorbell
    /// moves only over the contiguous run of taken entries (TOS 3.5).
    /// Returns how many entries `take` got.
    pub fn reap(&self, head: &mut u32, kind: Interrupt, mut take: impl FnMut(Cqe)) -> usize {
        let mut taken = 0;
        let mut at = *head;
        let mut contiguous = true;
        while at.wrapping_sub(*head) <= self.mask {
            let slot = &self.slots[(at & self.mask) as usize];
            let w = slot.load(Ordering::Acquire);
            if (w & PHASE != 0) != self.phase(at) {
                break;
            }
            let done = if w & REAPED != 0 {
                true
            } else {
                let cqe = Cqe::unpack(w);
                match kind {
                    Interrupt::Full => {
                        take(cqe);
                        taken += 1;
                        true
                    }
                    Interrupt::UrgentOnly if cqe.marks().normalized().urgent => {
                        slot.fetch_or(REAPED, Ordering::Relaxed);
                        take(cqe);
                        taken += 1;
                        true
                    }
                    Interrupt::UrgentOnly => false,
                }
            };
            contiguous &= done;
            at = at.wrapping_add(1);
            if contiguous {
                *head = at;
            }
        }
        self.head.store(*head, Ordering::Release);
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn cqe(tag: u16, m: Marks) -> Cqe {
        Cqe {
            cid: cid::encode(tag, m).unwrap(),
            result: 4096,
            error: false,
        }
    }

    fn reap(cq: &CompletionQueue, head: &mut u32, kind: Interrupt) -> Vec<u16> {
        let mut out = vec![];
        cq.reap(head, kind, |c| out.push(cid::tag(c.cid)));
        out
    }

    #[test]
    fn sq_round_trips_entries_and_refuses_when_full() {
        let sq = SubmissionQueue::new(3);
        assert_eq!(sq.entries(), 4);
        let (mut tail, mut head) = (0u32, 0u32);
        let e = |i: u16| Sqe {
            cid: cid::encode(i, Marks::BARRIER).unwrap(),
            write: i % 2 == 1,
            len: 4096 * u32::from(i + 1),
            offset: u64::from(i) << 33,
            buf: 0x1000 * usize::from(i),
        };
        for i in 0..4 {
            assert!(sq.write(&mut tail, e(i)));
        }
        assert!(!sq.write(&mut tail, e(4)), "4 slots, 4 unfetched");
        assert_eq!(sq.fetch(&mut head), None, "nothing before the doorbell");
        sq.ring(tail);
        assert_eq!(sq.fetch(&mut head), Some(e(0)));
        assert!(sq.write(&mut tail, e(4)), "a fetched slot is free again");
        sq.ring(tail);
        let rest: Vec<Sqe> = std::iter::from_fn(|| sq.fetch(&mut head)).collect();
        assert_eq!(rest, vec![e(1), e(2), e(3), e(4)]);
    }

    #[test]
    fn cqe_packing_keeps_negative_results_and_the_error_bit() {
        let c = Cqe {
            cid: 0xe123,
            result: -5,
            error: true,
        };
        for phase in [false, true] {
            assert_eq!(Cqe::unpack(c.pack(phase)), c);
        }
    }

    #[test]
    fn phase_tells_new_entries_from_stale_ones_across_wraps() {
        let cq = CompletionQueue::new(2);
        let (mut tail, mut head) = (0u32, 0u32);
        for round in 0..5u16 {
            assert!(reap(&cq, &mut head, Interrupt::Full).is_empty());
            cq.post(&mut tail, cqe(2 * round, Marks::NONE)).unwrap();
            cq.post(&mut tail, cqe(2 * round + 1, Marks::NONE)).unwrap();
            assert_eq!(cq.post(&mut tail, cqe(99, Marks::NONE)), Err(CqFull));
            assert_eq!(
                reap(&cq, &mut head, Interrupt::Full),
                vec![2 * round, 2 * round + 1]
            );
        }
    }

    // TOS Fig. 14: urgent-only takes the Urgent entries, the doorbell waits
    // for the contiguous range, and a later full pass does not retake them.
    #[test]
    fn urgent_only_reaps_out_of_order_and_holds_the_doorbell() {
        let cq = CompletionQueue::new(4);
        let (mut tail, mut head) = (0u32, 0u32);
        cq.post(&mut tail, cqe(1, Marks::URGENT)).unwrap();
        cq.post(&mut tail, cqe(2, Marks::NONE)).unwrap();
        cq.post(&mut tail, cqe(3, Marks::BOTH)).unwrap();
        cq.post(&mut tail, cqe(4, Marks::BARRIER)).unwrap();
        assert_eq!(reap(&cq, &mut head, Interrupt::UrgentOnly), vec![1, 3]);
        assert_eq!(
            head, 1,
            "entry 2 is not reaped, so the doorbell stops there"
        );
        assert_eq!(cq.post(&mut tail, cqe(5, Marks::NONE)), Ok(()));
        assert_eq!(cq.post(&mut tail, cqe(6, Marks::NONE)), Err(CqFull));
        assert_eq!(
            reap(&cq, &mut head, Interrupt::UrgentOnly),
            Vec::<u16>::new()
        );
        assert_eq!(reap(&cq, &mut head, Interrupt::Full), vec![2, 4, 5]);
        assert_eq!(head, 5);
    }

    #[test]
    fn a_device_thread_and_a_handler_thread_exchange_every_entry_once() {
        const N: u32 = 200_000;
        let cq = Arc::new(CompletionQueue::new(64));
        let device = {
            let cq = cq.clone();
            std::thread::spawn(move || {
                let mut tail = 0u32;
                let mut i = 0u32;
                while i < N {
                    let m = if i % 7 == 0 {
                        Marks::URGENT
                    } else {
                        Marks::NONE
                    };
                    if cq.post(&mut tail, cqe((i % 8000) as u16, m)).is_ok() {
                        i += 1;
                    } else {
                        std::hint::spin_loop();
                    }
                }
            })
        };
        let mut head = 0u32;
        let mut seen = vec![0u32; 8000];
        let mut total = 0u32;
        let mut n = 0u64;
        while total < N {
            n += 1;
            let kind = if n % 3 == 0 {
                Interrupt::UrgentOnly
            } else {
                Interrupt::Full
            };
            total += cq.reap(&mut head, kind, |c| seen[cid::tag(c.cid) as usize] += 1) as u32;
        }
        device.join().unwrap();
        assert_eq!(total, N);
        assert_eq!(seen.iter().map(|&s| s as u64).sum::<u64>(), u64::from(N));
        assert!(reap(&cq, &mut head, Interrupt::Full).is_empty());
    }
}

/// The emulator's ring and `policy::cq`, the model the simulator and
/// `coalesce` use, must agree on what each interrupt reaps and on where the
/// head doorbell stops (TOS 3.5): fed the same posts and interrupts, they
/// reap the same entries in the same order, ring the doorbell at the same
/// heads and refuse a post when full at the same moments.
#[cfg(test)]
mod agrees_with_the_policy_model {
    use super::*;
    use policy::cq::{CompletionQueue as Model, CqFull as ModelFull};
    use policy::Completion;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Op {
        Post { marks: Marks, error: bool },
        Interrupt(Interrupt),
    }

    fn op() -> impl Strategy<Value = Op> {
        let marks = prop_oneof![
            Just(Marks::NONE),
            Just(Marks::URGENT),
            Just(Marks::BARRIER),
            Just(Marks::BOTH)
        ];
        prop_oneof![
            6 => (marks, any::<bool>()).prop_map(|(marks, error)| Op::Post { marks, error }),
            1 => Just(Op::Interrupt(Interrupt::Full)),
            2 => Just(Op::Interrupt(Interrupt::UrgentOnly)),
        ]
    }

    proptest! {
        #[test]
        fn same_entries_reaped_and_same_doorbell_heads(
            log2 in 1u32..5,
            ops in proptest::collection::vec(op(), 1..300),
        ) {
            let entries = 1u32 << log2;
            let ring = CompletionQueue::new(entries);
            let mut model = Model::with_capacity(entries as usize);
            let (mut tail, mut head) = (0u32, 0u32);
            let mut next_tag: u16 = 0;
            for (step, op) in ops.into_iter().enumerate() {
                match op {
                    Op::Post { marks, error } => {
                        let tag = next_tag;
                        let cqe = Cqe { cid: cid::encode(tag, marks).unwrap(), result: 0, error };
                        let posted = ring.post(&mut tail, cqe);
                        let modelled = model.post(step as u64, Completion { id: u64::from(tag), marks, error });
                        prop_assert_eq!(posted.is_err(), modelled == Err(ModelFull), "post {} at step {}", tag, step);
                        if posted.is_ok() {
                            next_tag = (next_tag + 1) & cid::TAG_MASK;
                        }
                    }
                    Op::Interrupt(kind) => {
                        let mut got = vec![];
                        ring.reap(&mut head, kind, |c| got.push((u64::from(cid::tag(c.cid)), c.error)));
                        let mut want = vec![];
                        model.reap(kind, &mut want);
                        let want: Vec<(u64, bool)> = want.iter().map(|r| (r.id, r.error)).collect();
                        prop_assert_eq!(got, want, "{:?} at step {}", kind, step);
                        prop_assert_eq!(u64::from(head), model.doorbell_head(), "doorbell after {:?} at step {}", kind, step);
                    }
                }
            }
        }
    }
}
