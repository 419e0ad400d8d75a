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
use std::sync::{Arc, Mutex};

use hdrhistogram::Histogram;
use policy::{cid, Command, Completion, Interrupt, Marks, Nanos, Policy};

use crate::backend::{Backend, Done, Io};
use crate::config::{IrqDelivery, Recording, POLL_FALLBACK};
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
    /// Fires (each an interrupt raised), and those that merged into one
    /// still pending (APIC delivery only: 0 with IPIs by construction).
    pub raised: u64,
    pub merged: u64,
    /// IPI delivery: fires that found the call slot taken (the previous
    /// interrupt not yet taken by the target) and got it since, and the
    /// time they waited, ns.
    pub slot_waits: u64,
    pub slot_wait_ns: u64,
    /// IPI delivery: CQ entries the poller never walked because the device
    /// wrote their slot again first (the poller was a lap behind; the
    /// authors' `irq_poller` then jumps to the host's head).
    pub unwalked_lapped: u64,
    /// Polled delivery: interrupts left pending so long that the device
    /// woke the fallback handler.
    pub kicked: u64,
    /// Passes of the loop, and passes that found something to do.
    pub passes: u64,
    pub busy_passes: u64,
    /// Per mark (Urgent, Barrier, unmarked; both bits Urgent, TOS 4.1.1):
    /// completions, and the commands the device had in flight when each
    /// finished (itself included), summed and by [`depth_bucket`]. A
    /// completion alone on the device has no neighbour to be coalesced
    /// with (issue 38 item 4).
    pub depth_completions: [u64; 3],
    pub depth_sum: [u64; 3],
    pub depth: [[u64; DEPTH_BUCKETS]; 3],
    /// The device model's time, summed over completions: the fetch of each
    /// command to the post of its completion in the CQ, ns.
    pub model_ns: u64,
    /// The strategy's hold, summed over the completions an interrupt
    /// covered: each one's CQ post to the raise that covered it, ns (a
    /// completion is covered by the first raise after its post).
    pub hold_ns: u64,
    pub covered: u64,
    /// Completions in error the policy walked and did not fire for at
    /// once: must stay 0 ("commands that complete in error are not
    /// coalesced", NVMe via TOS 4.2.1; `policy::Completion::error`). Counted
    /// on the device so that a test of the invariant reads the mechanism,
    /// not the host's scheduling of the waiter.
    pub errors_held: u64,
}

/// Depth buckets of [`DeviceStats::depth`]: 1, 2, 3-4, 5-8, ... 65 and more.
pub const DEPTH_BUCKETS: usize = 8;

/// The bucket of a depth: 1, 2, 3-4, 5-8, 9-16, 17-32, 33-64, 65+.
pub fn depth_bucket(depth: u64) -> usize {
    match depth {
        0 | 1 => 0,
        d => ((64 - (d - 1).leading_zeros()) as usize).min(DEPTH_BUCKETS - 1),
    }
}

/// The depths bucket `b` holds: from, to (`None`: and more).
pub fn depth_bounds(b: usize) -> (u64, Option<u64>) {
    match b {
        0 => (1, Some(1)),
        b if b >= DEPTH_BUCKETS - 1 => ((1 << (DEPTH_BUCKETS - 2)) + 1, None),
        b => ((1 << (b - 1)) + 1, Some(1 << b)),
    }
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
    /// Completions posted to the CQ that the policy has not walked yet: the
    /// authors' poller walks the CQ behind the device (its `fake_queue`
    /// head), and stops walking while a fire waits for the call slot.
    /// Each with its CQ index.
    unwalked: VecDeque<(u32, Completion)>,
    /// IPI delivery: a fire waiting for the slot, and since when.
    waiting: Option<(Interrupt, Nanos)>,
    /// Per tag: when its command was fetched.
    fetched_at: Vec<Nanos>,
    /// Completions posted and not yet covered by a raise: how many, and
    /// the sum of their post times.
    uncovered: (u64, Nanos),
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
    irq: IrqDelivery,
    /// Set by `DeviceHandle::hurry`: the backend is polled as if
    /// every request's time had come.
    hurried: bool,
    /// Commands in flight at the start of this pass's finishes.
    pass_depth: u64,
    /// Hosts outside this process, whose submissions the device takes
    /// into the SQs at each pass (`Device::start_with_ingress`).
    pub(crate) ingress: Option<Box<dyn Ingress>>,
    /// Asks for the device's own view (`DeviceHandle::probe`), which it
    /// writes at its next pass.
    pub(crate) probe: Arc<Probe>,
}

/// A request for the device's view of itself, for a stall report: the
/// device thread checks `wanted` at each pass (one relaxed load) and
/// answers in `answer`.
#[derive(Debug, Default)]
pub(crate) struct Probe {
    pub(crate) wanted: AtomicBool,
    pub(crate) answer: Mutex<Option<String>>,
}

/// Submissions from hosts that cannot write the SQs themselves (the
/// threads of `cinterrupts exec`'s program, in other processes): the
/// device moves them into the queue pairs at the start of each pass, with
/// [`QueuePair::try_submit`], before it fetches. Like the doorbell writes
/// of a host, the device sees them once per pass.
pub trait Ingress: Send {
    /// Takes what the remote hosts posted since the last pass at `now`.
    fn poll(&mut self, now: Nanos);

    /// After each pass at `now`; `quiet` when the device holds nothing
    /// (no command in the backend, no completion held or unwalked, no
    /// interrupt pending or waiting, no policy timer): the host may run
    /// the handlers here, or park the device thread until it posts again.
    fn after_pass(&mut self, _now: Nanos, _quiet: bool) {}
}

impl Device {
    /// One policy per queue pair, in the same order. Completion gaps are
    /// recorded while `recording` is open.
    pub(crate) fn new(
        queues: Vec<Arc<QueuePair>>,
        policies: Vec<Box<dyn Policy>>,
        backend: Box<dyn Backend>,
        irq: IrqDelivery,
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
                unwalked: VecDeque::new(),
                waiting: None,
                fetched_at: vec![0; q.tags()],
                uncovered: (0, 0),
            })
            .collect();
        Device {
            queues,
            state,
            backend,
            stats: DeviceStats::default(),
            done: Vec::with_capacity(256),
            gaps: GapRecorder::new(recording),
            irq,
            hurried: false,
            pass_depth: 0,
            ingress: None,
            probe: Arc::default(),
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
            let now = clock.now();
            self.pass(now);
            if self.ingress.is_some() {
                let quiet = self.quiet();
                if let Some(ingress) = &mut self.ingress {
                    ingress.after_pass(now, quiet);
                }
            }
            if self.probe.wanted.load(Ordering::Relaxed) {
                let view = self.view();
                *self.probe.answer.lock().expect("probe lock") = Some(view);
                self.probe.wanted.store(false, Ordering::Relaxed);
            }
        }
        self.stats
    }

    /// One pass of the firmware loop at `now`.
    pub(crate) fn pass(&mut self, now: Nanos) {
        let before = (self.stats.fetched, self.stats.completed);
        self.gaps.begin_pass();
        if self.stalled(now) {
            // `ipi-stall`: the whole controller spins in the call slot's lock.
            for q in &self.queues {
                if q.irq.kick_if_overdue(now, POLL_FALLBACK) {
                    self.stats.kicked += 1;
                }
            }
            self.stats.passes += 1;
            return;
        }
        if let Some(ingress) = &mut self.ingress {
            ingress.poll(now);
        }
        self.fetch(now);
        let due = if self.hurried { Nanos::MAX } else { now };
        self.backend.poll(due, &mut self.done);
        let mut done = std::mem::take(&mut self.done);
        self.pass_depth = self.stats.fetched.saturating_sub(self.stats.completed);
        let mut finished = 0;
        while finished < done.len() {
            self.finish(now, done[finished]);
            finished += 1;
            if self.irq == IrqDelivery::IpiStall && self.state.iter().any(|s| s.waiting.is_some()) {
                break;
            }
        }
        // What a stalled controller has not posted yet waits for it, ahead
        // of what the backend returns next.
        done.drain(..finished);
        self.done = done;
        for (q, st) in self.queues.iter().zip(&mut self.state) {
            drain_held(q, st, &mut self.stats, &mut self.gaps, now);
            walk(q, st, &mut self.stats, self.irq, now);
            // The poller checks its timer only when it is not stuck at a
            // fire (`irq_poller`'s delay loop runs after the walk).
            if st.waiting.is_none() && st.policy.deadline().is_some_and(|d| now >= d) {
                if let Some(kind) = st.policy.deadline_reached(now) {
                    fire(q, st, &mut self.stats, self.irq, kind, now);
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

    /// Nothing in the backend or held, nothing to walk, nothing pending
    /// or waiting on a line, no policy timer set.
    fn quiet(&mut self) -> bool {
        self.backend.in_flight() == 0
            && self.done.is_empty()
            && self.queues.iter().zip(&mut self.state).all(|(q, st)| {
                st.held.is_empty()
                    && st.unwalked.is_empty()
                    && st.waiting.is_none()
                    && !q.irq.is_pending()
                    && st.policy.deadline().is_none()
            })
    }

    /// The device's view of itself: its counts, each SQ's head against
    /// its doorbell, and where the backend's commands stand.
    pub(crate) fn view(&mut self) -> String {
        let s = &self.stats;
        let queues = self
            .queues
            .iter()
            .zip(&self.state)
            .map(|(q, st)| {
                format!(
                    "CPU {}: SQ head {} of doorbell {}, CQ tail {}, {} held",
                    q.core,
                    st.sq_head,
                    q.sq.doorbell(),
                    st.cq_tail,
                    st.held.len()
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        let backend = self.backend.probe();
        format!(
            "device: {} passes, {} fetched, {} completed, {} posted ({}); backend: {} in flight{}{}",
            s.passes,
            s.fetched,
            s.completed,
            s.posted,
            queues,
            self.backend.in_flight(),
            if backend.is_empty() { "" } else { ", " },
            backend
        )
    }

    /// `ipi-stall`: a fire waits for its slot, and the controller with it.
    /// Tries the waiting fires first: a slot the target freed lets them go.
    fn stalled(&mut self, now: Nanos) -> bool {
        if self.irq != IrqDelivery::IpiStall {
            return false;
        }
        let mut stalled = false;
        for (q, st) in self.queues.iter().zip(&mut self.state) {
            walk(q, st, &mut self.stats, self.irq, now);
            stalled |= st.waiting.is_some();
        }
        stalled
    }

    fn fetch(&mut self, now: Nanos) {
        for (qi, q) in self.queues.iter().enumerate() {
            let st = &mut self.state[qi];
            while let Some(sqe) = q.sq.fetch(&mut st.sq_head) {
                let tag = cid::tag(sqe.cid);
                let marks = cid::marks(sqe.cid);
                st.cmds[tag as usize] = (sqe.len, marks);
                st.fetched_at[tag as usize] = now;
                // A poll queue's policy sees nothing: its CQ raises no
                // interrupt (IEN clear), so there is nothing to decide.
                if !q.polled {
                    st.policy.submitted(
                        now,
                        Command {
                            id: u64::from(tag),
                            marks,
                        },
                    );
                }
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
        // In flight on the device in the pass this one finished, itself
        // and those finishing with it included.
        let depth = self.pass_depth.max(1);
        let m = match (marks.urgent, marks.barrier) {
            (true, _) => 0,
            (false, true) => 1,
            (false, false) => 2,
        };
        self.stats.depth_completions[m] += 1;
        self.stats.depth_sum[m] += depth;
        self.stats.depth[m][depth_bucket(depth)] += 1;
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
        let q = &self.queues[qi];
        drain_held(q, st, &mut self.stats, &mut self.gaps, now);
        if !st.held.is_empty() {
            self.stats.held += 1;
        }
        walk(q, st, &mut self.stats, self.irq, now);
    }
}

/// Posts held completions while the CQ has room; each posted one joins
/// the entries the policy has still to walk (it sees a completion once it
/// is in the CQ).
fn drain_held(
    q: &QueuePair,
    st: &mut QueueState,
    stats: &mut DeviceStats,
    gaps: &mut GapRecorder,
    now: Nanos,
) {
    while let Some(&cqe) = st.held.front() {
        let at = st.cq_tail;
        if q.cq.post(&mut st.cq_tail, cqe).is_err() {
            return;
        }
        st.held.pop_front();
        stats.posted += 1;
        let tag = cid::tag(cqe.cid) as usize;
        stats.model_ns += now.saturating_sub(st.fetched_at[tag]);
        gaps.post(&mut st.last_post, now);
        q.posted.fetch_add(1, Ordering::Relaxed);
        if q.polled {
            continue;
        }
        st.uncovered.0 += 1;
        st.uncovered.1 += now;
        let c = Completion {
            id: u64::from(cid::tag(cqe.cid)),
            marks: cqe.marks(),
            error: cqe.error,
        };
        st.unwalked.push_back((at, c));
    }
}

/// The poller's walk of the CQ (`irq_poller`'s inner loop): first the fire
/// it is stuck at, once the slot is free, then each entry not walked yet,
/// through the policy, until a fire finds the slot taken.
fn walk(q: &QueuePair, st: &mut QueueState, stats: &mut DeviceStats, irq: IrqDelivery, now: Nanos) {
    loop {
        if let Some((kind, since)) = st.waiting {
            if q.irq.is_pending() {
                return;
            }
            st.waiting = None;
            let waited = now.saturating_sub(since);
            stats.slot_waits += 1;
            stats.slot_wait_ns += waited;
            q.irq.waited_for_slot(waited);
            raise(q, st, stats, kind, now);
        }
        let Some(&(at, c)) = st.unwalked.front() else {
            return;
        };
        // Index `at + entries` posted: `at`'s slot was written again.
        if st.cq_tail.wrapping_sub(at) > q.cq.entries() {
            // Its slot holds a later entry, of the other phase: the poller
            // stops there and resumes at the host's head (`irq_poller`: "If
            // fake_queue is behind the actual pointer, get it up-to-date").
            // The host reaped every entry before it: a slot is written again
            // only after the doorbell freed it.
            let head = q.cq.doorbell();
            let before = stats.unwalked_lapped;
            while let Some(&(at, _)) = st.unwalked.front() {
                if (head.wrapping_sub(at) as i32) <= 0 {
                    break;
                }
                st.unwalked.pop_front();
                stats.unwalked_lapped += 1;
            }
            if stats.unwalked_lapped > before {
                continue;
            }
        }
        st.unwalked.pop_front();
        match st.policy.completed(now, c) {
            Some(kind) => fire(q, st, stats, irq, kind, now),
            None => stats.errors_held += u64::from(c.error),
        }
    }
}

/// The policy fired. With IPIs, a fire while the previous interrupt is
/// still pending waits for the slot (`csd_lock` in
/// `smp_call_function_single`, Linux 5.0 `kernel/smp.c`); with an APIC it
/// merges into the pending one.
fn fire(
    q: &QueuePair,
    st: &mut QueueState,
    stats: &mut DeviceStats,
    irq: IrqDelivery,
    kind: Interrupt,
    now: Nanos,
) {
    if irq != IrqDelivery::Apic && q.irq.is_pending() {
        st.waiting = Some((kind, now));
    } else {
        raise(q, st, stats, kind, now);
    }
}

fn raise(q: &QueuePair, st: &mut QueueState, stats: &mut DeviceStats, kind: Interrupt, now: Nanos) {
    let (n, sum) = std::mem::take(&mut st.uncovered);
    stats.hold_ns += (n * now).saturating_sub(sum);
    stats.covered += n;
    stats.raised += 1;
    if !q.irq.raise(kind, now) {
        stats.merged += 1;
    }
}

fn token(queue: usize, tag: u16) -> u32 {
    (queue as u32) << 16 | u32::from(tag)
}
