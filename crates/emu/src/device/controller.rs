//! The controller: the emulated NVMe controller's firmware loop, which the
//! device thread runs on its own core (TOS 4.2.1, Fig. 16: the paper's emulator polls the queues from
//! a dedicated core and sends IPIs to the target core).
//!
//! Each pass reads the clock once, fetches new commands from every SQ,
//! hands them to the backend, posts what finished to the CQs, feeds each
//! CQ's policy, and raises the interrupt line when the policy fires. It
//! never sleeps: a sleep here overshoots by tens of microseconds
//! (PLATFORM.md section 3), more than the delays being emulated.

use std::collections::VecDeque;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use hdrhistogram::Histogram;
use policy::{cid, Command, Completion, Interrupt, Marks, Nanos, Policy};

use crate::backend::{Backend, Done, Io};
use crate::config::{Recording, POLL_FALLBACK};
use crate::device::gaps::GapRecorder;
use crate::queue::QueuePair;
use crate::ring::Cqe;
use crate::sys::Clock;

/// What the device did, for the audit and the report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceStats {
    pub fetched: u64,
    pub completed: u64,
    pub posted: u64,
    /// Completions that found their CQ full and waited for the doorbell.
    pub held: u64,
    pub errors: u64,
    /// Interrupts raised, and raises that merged into a pending one.
    pub raised: u64,
    pub merged: u64,
    /// Polled delivery: interrupts left pending so long that the device
    /// woke the fallback handler.
    pub kicked: u64,
    /// Passes of the loop, and passes that found something to do.
    pub passes: u64,
    pub busy_passes: u64,
}

struct QueueState {
    sq_head: u32,
    cq_tail: u32,
    /// Completions waiting for room in the CQ, in completion order.
    held: VecDeque<Cqe>,
    /// Per tag: length and marks of the command in flight.
    cmds: Vec<(u32, Marks)>,
    policy: Box<dyn Policy>,
    /// When the last completion was posted to this CQ.
    last_post: Option<Nanos>,
}

/// The controller's state: its view of every queue pair (SQ head, CQ tail,
/// commands in flight, completions held for a full CQ, the CQ's policy),
/// the backend, and its counts.
pub struct Device {
    queues: Vec<Arc<QueuePair>>,
    state: Vec<QueueState>,
    backend: Box<dyn Backend>,
    stats: DeviceStats,
    done: Vec<Done>,
    gaps: GapRecorder,
    /// Set by `DeviceHandle::hurry`: the backend is polled as if
    /// every request's time had come.
    hurried: bool,
}

impl Device {
    /// One policy per queue pair, in the same order. Completion gaps are
    /// recorded while `recording` is open.
    pub(crate) fn new(
        queues: Vec<Arc<QueuePair>>,
        policies: Vec<Box<dyn Policy>>,
        backend: Box<dyn Backend>,
        recording: Recording,
    ) -> Device {
        assert_eq!(queues.len(), policies.len(), "a policy per CQ");
        let state = queues
            .iter()
            .zip(policies)
            .map(|(q, policy)| QueueState {
                sq_head: 0,
                cq_tail: 0,
                held: VecDeque::new(),
                cmds: vec![(0, Marks::NONE); q.tags()],
                policy,
                last_post: None,
            })
            .collect();
        Device {
            queues,
            state,
            backend,
            stats: DeviceStats::default(),
            done: Vec::with_capacity(256),
            gaps: GapRecorder::new(recording),
            hurried: false,
        }
    }

    /// The gaps recorded, in ns (a gap of 0: posted in the same pass).
    pub(crate) fn into_gaps(self) -> Histogram<u64> {
        self.gaps.into_histogram()
    }

    pub(crate) fn describe(&self) -> String {
        self.backend.describe()
    }

    /// Runs until `stop`, which the caller sets once every request has been
    /// delivered; from `hurry` on, what the backend holds finishes at once.
    pub(crate) fn run(
        &mut self,
        clock: &Clock,
        stop: &AtomicBool,
        hurry: &AtomicBool,
    ) -> DeviceStats {
        while !stop.load(Ordering::Relaxed) {
            self.hurried = hurry.load(Ordering::Relaxed);
            self.pass(clock.now());
        }
        self.stats
    }

    /// One pass of the firmware loop at `now`.
    pub(crate) fn pass(&mut self, now: Nanos) {
        let before = (self.stats.fetched, self.stats.completed);
        self.gaps.begin_pass();
        self.fetch(now);
        let due = if self.hurried { Nanos::MAX } else { now };
        self.backend.poll(due, &mut self.done);
        let mut done = std::mem::take(&mut self.done);
        for d in done.drain(..) {
            self.finish(now, d);
        }
        self.done = done;
        for (q, st) in self.queues.iter().zip(&mut self.state) {
            drain_held(q, st, &mut self.stats, &mut self.gaps, now);
            if st.policy.deadline().is_some_and(|d| now >= d) {
                if let Some(kind) = st.policy.deadline_reached(now) {
                    raise(q, &mut self.stats, kind, now);
                }
            }
            if q.irq.kick_if_overdue(now, POLL_FALLBACK) {
                self.stats.kicked += 1;
            }
        }
        self.stats.passes += 1;
        if (self.stats.fetched, self.stats.completed) != before {
            self.stats.busy_passes += 1;
        }
    }

    fn fetch(&mut self, now: Nanos) {
        for (qi, q) in self.queues.iter().enumerate() {
            let st = &mut self.state[qi];
            while let Some(sqe) = q.sq.fetch(&mut st.sq_head) {
                let tag = cid::tag(sqe.cid);
                let marks = cid::marks(sqe.cid);
                st.cmds[tag as usize] = (sqe.len, marks);
                st.policy.submitted(
                    now,
                    Command {
                        id: u64::from(tag),
                        marks,
                    },
                );
                let buf = NonNull::new(sqe.buf as *mut u8).unwrap_or(NonNull::dangling());
                // SAFETY: the host lent this buffer with the command and does
                // not touch it until the completion is delivered (`Request`),
                // which happens only after the backend returns it.
                let io = unsafe { Io::new(token(qi, tag), sqe.write, sqe.offset, buf, sqe.len) };
                self.backend.submit(now, io);
                self.stats.fetched += 1;
            }
        }
    }

    fn finish(&mut self, now: Nanos, d: Done) {
        let (qi, tag) = ((d.token >> 16) as usize, d.token as u16);
        let (len, marks) = self.state[qi].cmds[tag as usize];
        let error = d.is_error(len);
        self.stats.completed += 1;
        self.stats.errors += u64::from(error);
        let cqe = Cqe {
            cid: cid::encode(tag, marks).expect("tags fit the CID"),
            result: d.result,
            error,
        };
        // Behind completions already held, to keep the CQ in completion order.
        let st = &mut self.state[qi];
        st.held.push_back(cqe);
        drain_held(&self.queues[qi], st, &mut self.stats, &mut self.gaps, now);
        if !st.held.is_empty() {
            self.stats.held += 1;
        }
    }
}

/// Posts held completions while the CQ has room; each posted one is shown
/// to the policy, which sees a completion when it is in the CQ.
fn drain_held(
    q: &QueuePair,
    st: &mut QueueState,
    stats: &mut DeviceStats,
    gaps: &mut GapRecorder,
    now: Nanos,
) {
    while let Some(&cqe) = st.held.front() {
        if q.cq.post(&mut st.cq_tail, cqe).is_err() {
            return;
        }
        st.held.pop_front();
        stats.posted += 1;
        gaps.post(&mut st.last_post, now);
        q.posted.fetch_add(1, Ordering::Relaxed);
        let c = Completion {
            id: u64::from(cid::tag(cqe.cid)),
            marks: cqe.marks(),
            error: cqe.error,
        };
        if let Some(kind) = st.policy.completed(now, c) {
            raise(q, stats, kind, now);
        }
    }
}

fn raise(q: &QueuePair, stats: &mut DeviceStats, kind: Interrupt, now: Nanos) {
    if q.irq.raise(kind, now) {
        stats.raised += 1;
    } else {
        stats.merged += 1;
    }
}

fn token(queue: usize, tag: u16) -> u32 {
    (queue as u32) << 16 | u32::from(tag)
}
