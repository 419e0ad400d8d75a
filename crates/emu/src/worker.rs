//! A job thread: fio's I/O loop on the emulated device. The loop's decisions
//! are [`jobs::Issuer`]'s, the same the simulator applies; this thread
//! applies them: it builds each batch, submits it through its core's queue
//! pair, and sleeps until the interrupt handler has delivered as many
//! completions as the issuer asked for (one for a blocking engine, whose
//! call waits for its own request). Latency runs from the submission to the
//! moment the thread has the completion, as fio's clat does for these
//! engines.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use hdrhistogram::Histogram;
use jobs::{Batch, Bounds, Decision, IoKind, Issuer, Job, Offsets, Reap, Waiter};
use policy::{Marks, Nanos};
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

use crate::buffers::Buffers;
use crate::driver::{BlockLayer, Handler};
use crate::latency::latency_histogram;
use crate::mailbox::{Delivered, Mailbox};
use crate::queue::{QueuePair, Request};
use crate::sys::{Clock, Usage};
use crate::verify;

mod sleep;
pub use sleep::SleepStats;

/// What one job thread does.
#[derive(Clone, Debug)]
pub struct WorkerSpec {
    /// Index of the thread's mailbox; the owner of its tags.
    pub owner: u32,
    pub job: Job,
    pub bounds: Bounds,
    /// Bytes of the file the job addresses: `[start, start + len)`.
    pub region: (u64, u64),
    pub seed: u64,
    /// Read back and check every block written (`verify=crc32c`).
    pub verify: bool,
    /// The job threads (owners) that must have exited before this one
    /// starts (`stonewall`, `wait_for`: [`jobs::serial_order`]).
    pub after: Vec<u32>,
}

/// One direction's numbers.
#[derive(Clone, Debug)]
pub struct DirStats {
    pub ops: u64,
    pub bytes: u64,
    pub errors: u64,
    pub clat: Histogram<u64>,
}

impl Default for DirStats {
    fn default() -> Self {
        DirStats {
            ops: 0,
            bytes: 0,
            errors: 0,
            clat: latency_histogram(),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct WorkerResult {
    pub read: DirStats,
    pub write: DirStats,
    /// CPU and context switches in the measured part of the run.
    pub usage: Usage,
    /// The thread's perf counters (cycles, instructions, task clock) in
    /// the measured part ([`crate::counters`]).
    pub counters: crate::counters::Reading,
    pub submitted: u64,
    pub consumed: u64,
    /// Times a submission waited for a free tag (back-pressure).
    pub tag_waits: u64,
    /// Time the thread spent running the interrupt handler (polled
    /// delivery) in the measured part: interrupt time, not the job's.
    pub irq_ns: Nanos,
    /// Polled completion, when the thread polls.
    pub poll: PollStats,
    /// Sleeps in its completion call that ended (its wake-ups), in the
    /// measured part.
    pub wakeups: u64,
    /// io_uring min-wait: waits in which its timer fired (ending the wait,
    /// or, with nothing there, switching it to the first completion), in
    /// the measured part.
    pub uring_timeouts: u64,
    pub verified: u64,
    pub mismatches: u64,
    /// The first mismatch, for the report.
    pub first_mismatch: Option<String>,
    /// The requests completed in the measured part, by their mark.
    pub by_mark: report::ByMark,
    /// When the job stopped issuing (the end of its measured part), on the
    /// run's clock.
    pub stopped_at: Nanos,
    /// When its measured part began (its start plus `ramp_time`), on the
    /// run's clock.
    pub measured_from: Nanos,
}

#[derive(Clone, Copy, Default)]
struct Slot {
    write: bool,
    offset: u64,
    len: u32,
    submitted: Nanos,
    verify: bool,
    marks: Marks,
}

/// What the run shares with every job thread.
pub struct Shared<'a> {
    pub clock: &'a Clock,
    pub queue: &'a QueuePair,
    /// The queue pair's index among the driver's (for the block layer).
    pub queue_index: usize,
    /// LD between the thread and the queue pairs, when the run has it.
    pub block: Option<&'a BlockLayer>,
    pub mailbox: &'a Mailbox,
    /// Set when the run must stop early (another thread failed).
    pub abort: &'a AtomicBool,
    /// Counts job threads whose measured part is over.
    pub finished: &'a AtomicUsize,
    /// Per job thread (by owner): it has exited, verify pass included
    /// (what `stonewall` and `wait_for` wait for).
    pub exited: &'a [AtomicBool],
    /// With polled delivery, the core's handler, which the thread runs
    /// itself when it finds the line raised (an interrupt taken in the
    /// running thread's context).
    pub handler: Option<&'a Handler>,
    /// The thread's own queue pair's handler when it is a poll queue (no
    /// interrupts): the thread spins on it for its completions.
    pub polled: Option<&'a Handler>,
    /// How it polls ([`host::poll::Mode::Poll`], `Hybrid` or a sleep
    /// strategy's mode); `None`: it sleeps for the interrupt.
    pub poll_mode: Option<host::poll::Mode>,
    /// An io_uring job's completion strategy (`run --uring`); `None`:
    /// min-complete, as always.
    pub uring: Option<host::uring::Strategy>,
    /// A "sleep, then poll" strategy's (`run --completion
    /// pas|dpas|ehp|hybrid-iopoll`): the thread's core's interrupt-driven
    /// queue pair and its index, where the requests it decides to complete
    /// by interrupt go.
    pub irq_queue: Option<(usize, &'a QueuePair)>,
}

/// What a polling thread did in its measured part.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PollStats {
    /// Polls of its queue (each a look at the CQ).
    pub polls: u64,
    /// Hybrid: waits that slept on the timer first, and the time asked
    /// (half the bucket's mean, less the timer's overshoot) and slept.
    pub hybrid_sleeps: u64,
    pub asked_ns: Nanos,
    pub slept_ns: Nanos,
    /// Hybrid: waits whose sleep was shorter than the timer's overshoot,
    /// so spun from the start (classic polling).
    pub hybrid_spun: u64,
    /// A "sleep, then poll" strategy's decisions, feedback and timer
    /// sleeps (`run --completion pas|dpas|ehp|hybrid-iopoll`).
    pub sleep: SleepStats,
}

struct Worker<'a> {
    spec: WorkerSpec,
    sh: Shared<'a>,
    waiter: Waiter,
    /// fio's loop: every issuing decision, and the counters they read.
    issuer: Issuer,
    buffers: Buffers,
    slots: Vec<Slot>,
    free: Vec<u32>,
    in_flight: u32,
    rng: Pcg64Mcg,
    /// Where each I/O goes (fio's offset choice, `nrfiles` files laid end to
    /// end in the job's region).
    offsets: Offsets,
    written: BTreeMap<u64, u32>,
    /// Still in the measured part (issuing), not draining or verifying.
    issuing: bool,
    batch: Vec<Request>,
    got: Vec<Delivered>,
    out: WorkerResult,
    /// Hybrid polling's statistics (`host::poll`: `blk_mq_poll_nsecs`).
    hybrid: Option<host::poll::Completions>,
    /// Hybrid: when the wait for the batch just issued may stop sleeping.
    hybrid_until: Option<Nanos>,
    /// Hybrid: the timer, with its overshoot measured on this thread.
    timer: crate::sys::HybridTimer,
    /// A "sleep, then poll" strategy ([`host::sleep`]), when the run's
    /// completion mode is one.
    sleeper: Option<sleep::Sleeper>,
    /// The requests of the batch being built that its strategy sends to
    /// the interrupt-driven queue pair.
    irq_batch: Vec<Request>,
}

/// Runs one job thread to the end: its I/O, then its verify pass.
pub fn run(spec: WorkerSpec, sh: Shared<'_>, t0: Nanos) -> WorkerResult {
    // fio's run_threads starts a job once those it waits for have exited;
    // its ramp and runtime count from then.
    while !spec
        .after
        .iter()
        .all(|&k| sh.exited[k as usize].load(Ordering::Acquire))
        && !sh.abort.load(Ordering::Relaxed)
    {
        std::thread::sleep(std::time::Duration::from_micros(100));
    }
    // A job that waits for none starts at the run's start, the instant the
    // window's watch counts from (a thread scheduled late only loses that
    // part of its runtime); one released by others starts when it is.
    let released = if spec.after.is_empty() {
        t0
    } else {
        sh.clock.now()
    };
    let issuer = Issuer::released(&spec.job, spec.bounds, t0, released);
    let depth = issuer.max_in_flight();
    let slot_len = spec.job.max_block_size() as usize;
    let mut rng =
        Pcg64Mcg::seed_from_u64(spec.seed ^ u64::from(spec.owner).wrapping_mul(0x9e37_79b9));
    let offsets = Offsets::new(&spec.job, spec.region, &mut rng);
    let mut w = Worker {
        waiter: Waiter::of(spec.job.ioengine),
        issuer,
        buffers: Buffers::new(depth as usize, slot_len),
        slots: vec![Slot::default(); depth as usize],
        free: (0..depth).rev().collect(),
        in_flight: 0,
        rng,
        offsets,
        written: BTreeMap::new(),
        issuing: true,
        batch: Vec::with_capacity(depth as usize),
        got: Vec::with_capacity(depth as usize),
        out: WorkerResult::default(),
        hybrid: (sh.poll_mode == Some(host::poll::Mode::Hybrid)).then(|| {
            let _ = crate::sys::set_timer_slack_min();
            host::poll::Completions::new(host::poll::Mode::Hybrid, host::poll::Costs::default())
        }),
        hybrid_until: None,
        timer: crate::sys::HybridTimer::new(),
        sleeper: sh
            .poll_mode
            .and_then(sleep::strategy)
            .map(|s| sleep::Sleeper::new(s, depth as usize)),
        irq_batch: Vec::new(),
        spec,
        sh,
    };
    w.out.measured_from = w.issuer.measure_from();
    w.main();
    if w.spec.verify {
        w.verify_pass();
    }
    w.sh.exited[w.spec.owner as usize].store(true, Ordering::Release);
    w.out
}

impl Worker<'_> {
    /// Applies the issuer's decisions until it stops issuing, then reaps
    /// what is in flight outside the measured part.
    fn main(&mut self) {
        self.sh.clock.wait_until(self.issuer.start());
        let mut usage_from = None;
        // This thread's counters, read where its usage is (issue 37 item 3).
        let counters = crate::counters::Counters::open(0, false);
        let mut counted_from = None;
        loop {
            self.take_interrupt(usage_from.is_some());
            let now = self.sh.clock.now();
            if usage_from.is_none() && now >= self.issuer.measure_from() {
                usage_from = Some(Usage::of_this_thread());
                counted_from = Some(counters.read());
            }
            if self.sh.abort.load(Ordering::Relaxed) {
                self.issuer.stop();
            }
            let decision = self.issuer.next(now, self.in_flight, &mut self.rng);
            if !self.issuer.issuing() {
                break;
            }
            match decision {
                Decision::Issue(batch) => self.issue(batch),
                Decision::Reap(reap) => self.reap(reap),
                Decision::SleepUntil(at) => self.sh.clock.wait_until(at),
                Decision::Done => unreachable!("the issuer is done only once stopped"),
            }
        }
        // The measured part ends when the job stops issuing; what is still
        // in flight completes without being measured (as in the simulator).
        let from = usage_from.unwrap_or_else(Usage::of_this_thread);
        let mut usage = Usage::of_this_thread().since(from);
        let counted = counters.read();
        self.out.counters = counted.since(counted_from.as_ref().unwrap_or(&counted));
        usage.user_ns = usage.user_ns.saturating_sub(self.out.irq_ns);
        self.out.usage = usage;
        if let Some(s) = &self.sleeper {
            self.out.poll.sleep = s.stats;
        }
        self.out.stopped_at = self.sh.clock.now();
        self.issuing = false;
        self.sh.finished.fetch_add(1, Ordering::Relaxed);
        loop {
            let now = self.sh.clock.now();
            match self.issuer.next(now, self.in_flight, &mut self.rng) {
                Decision::Reap(reap) => self.reap(reap),
                Decision::Done => break,
                d => unreachable!("a stopped issuer only reaps, got {d:?}"),
            }
        }
    }

    /// Polled delivery: runs the handler if the line is raised.
    fn take_interrupt(&mut self, measuring: bool) {
        if let Some(h) = self.sh.handler {
            let ns = h.service(self.sh.clock);
            if measuring {
                self.out.irq_ns += ns;
            }
        }
    }

    /// Builds and submits the issuer's batch; each request's offset is drawn
    /// after its direction, as before the issuer took the directions over.
    fn issue(&mut self, mut batch: Batch) {
        let now = self.sh.clock.now();
        while let Some(io) = self.issuer.take(&mut batch, &mut self.rng) {
            let offset = self.offsets.next(io.write, io.bytes, &mut self.rng);
            let cookie = self.push(io.write, offset, io.bytes as u32, io.marks, now, false);
            if let Some(s) = &mut self.sleeper {
                // DPAS's queue depth: the thread's requests in flight, this
                // one included.
                let depth = self.in_flight + (self.batch.len() + self.irq_batch.len()) as u32;
                let measuring = now >= self.issuer.measure_from();
                let sio = host::sleep::Io {
                    bytes: io.bytes,
                    write: io.write,
                    depth,
                };
                if s.decide(cookie, now, sio, measuring) == host::sleep::Decision::Interrupt {
                    let r = self.batch.pop().expect("the request just pushed");
                    self.irq_batch.push(r);
                }
            }
            if let Some(h) = &mut self.hybrid {
                // blk_mq_poll_nsecs: half the bucket's mean, once per wait
                // (the batch's earliest).
                let sleep = h.submitted(
                    now,
                    host::poll::Io {
                        bytes: io.bytes,
                        write: io.write,
                        critical: self.spec.job.critical,
                    },
                );
                if sleep > 0 {
                    let until = now + sleep;
                    self.hybrid_until = Some(self.hybrid_until.map_or(until, |u| u.min(until)));
                }
            }
        }
        self.submit_batch();
    }

    /// Puts one request in the batch; `verify` marks a read-back of the
    /// verify pass, which the job's numbers do not count.
    fn push(
        &mut self,
        write: bool,
        offset: u64,
        len: u32,
        marks: Marks,
        now: Nanos,
        verify: bool,
    ) -> u32 {
        let cookie = self.free.pop().expect("a free slot per request in flight");
        if let (Some(s), true) = (&mut self.sleeper, verify) {
            let io = host::sleep::Io {
                bytes: u64::from(len),
                write,
                depth: self.in_flight + self.batch.len() as u32 + 1,
            };
            s.unreported(cookie, now, io);
        }
        if write && self.spec.verify {
            verify::fill(self.buffers.get_mut(cookie as usize, len as usize), offset);
        }
        self.slots[cookie as usize] = Slot {
            write,
            offset,
            len,
            submitted: now,
            verify,
            marks,
        };
        self.batch.push(Request {
            cookie,
            write,
            offset,
            len,
            buf: self.buffers.addr(cookie as usize),
            marks,
        });
        cookie
    }

    fn submit_batch(&mut self) {
        // A batch a sleep strategy sent wholly to interrupts rings no
        // poll queue's doorbell; any other is submitted as always.
        if !self.irq_batch.is_empty() {
            self.submit_irq_batch();
            if self.batch.is_empty() {
                return;
            }
        }
        self.in_flight += self.batch.len() as u32;
        self.out.submitted += self.batch.len() as u64;
        self.out.tag_waits += match self.sh.block {
            Some(b) => b.submit(
                self.sh.queue_index,
                self.spec.owner,
                self.spec.job.critical,
                &self.batch,
            ),
            None => self.sh.queue.submit(self.spec.owner, &self.batch),
        };
        self.batch.clear();
    }

    /// The requests a sleep strategy sent to interrupts, to the core's
    /// interrupt-driven queue pair.
    fn submit_irq_batch(&mut self) {
        let (index, queue) = self
            .sh
            .irq_queue
            .expect("a sleep strategy's thread has its core's interrupt queue pair");
        self.in_flight += self.irq_batch.len() as u32;
        self.out.submitted += self.irq_batch.len() as u64;
        self.out.tag_waits += match self.sh.block {
            Some(b) => b.submit(
                index,
                self.spec.owner,
                self.spec.job.critical,
                &self.irq_batch,
            ),
            None => queue.submit(self.spec.owner, &self.irq_batch),
        };
        self.irq_batch.clear();
    }

    /// Waits for completions and takes them, as the engine's call does.
    fn reap(&mut self, r: Reap) {
        if self.sleeper.is_some() {
            return self.sleep_reap(r);
        }
        if let Some(p) = self.sh.polled {
            return self.poll(p, r);
        }
        if let (Waiter::IoUring, Some(s @ host::uring::Strategy::MinWait(_))) =
            (self.waiter, self.sh.uring)
        {
            return self.reap_min_wait(s, r);
        }
        let Reap { min, max } = r;
        let min = min as usize;
        let wake_at = if self.waiter == Waiter::Libaio {
            1
        } else {
            min
        };
        let mut got = std::mem::take(&mut self.got);
        let (handler, clock) = (self.sh.handler, self.sh.clock);
        let mut irq_ns = 0;
        let wakeups = self
            .sh
            .mailbox
            .wait(min, max as usize, wake_at, &mut got, &mut || {
                if let Some(h) = handler {
                    irq_ns += h.service(clock);
                }
            });
        if self.issuing && self.sh.clock.now() >= self.issuer.measure_from() {
            self.out.irq_ns += irq_ns;
            self.out.wakeups += wakeups;
        }
        let now = self.sh.clock.now();
        for d in got.drain(..) {
            self.complete(d, now);
        }
        self.got = got;
    }

    /// io_uring's min-wait (`run --uring min-wait=...`): the wait's
    /// decisions are [`host::uring::Wait`]'s, the simulator's: the thread
    /// sleeps until the handler has delivered what the wait holds out for
    /// ([`host::uring::Wait::wakes_at`]) or its timer fires, tells the wait
    /// what came, and returns when the wait says so, with what is there (at
    /// most `max`; possibly none, and fio's loop asks again).
    fn reap_min_wait(&mut self, s: host::uring::Strategy, Reap { min, max }: Reap) {
        use host::uring::{Action, Wait};
        let (handler, clock) = (self.sh.handler, self.sh.clock);
        let nr = s.wait_nr(min.max(1), max.max(1)).min(self.in_flight.max(1));
        let mut seen = self.sh.mailbox.ready() as u32;
        let (mut w, mut a) = Wait::enter(s, clock.now(), nr, seen);
        let (mut wakeups, mut timed, mut irq_ns) = (0, false, 0);
        while !matches!(a, Action::Return { .. }) {
            let timeout = w.timer_at().map(|at| at.saturating_sub(clock.now()));
            let slept = self
                .sh
                .mailbox
                .sleep(w.wakes_at() as usize, timeout, &mut || {
                    if let Some(h) = handler {
                        irq_ns += h.service(clock);
                    }
                });
            if slept != crate::sys::Slept::Not {
                wakeups += 1;
            }
            let now = clock.now();
            // The timer first, as the simulator's replay orders them.
            if w.timer_at().is_some_and(|at| at <= now) {
                a = w.timer(now);
                timed = true;
            }
            let ready = self.sh.mailbox.ready() as u32;
            while seen < ready && !matches!(a, Action::Return { .. }) {
                seen += 1;
                a = w.posted(now);
            }
            seen = seen.max(ready);
        }
        if self.issuing && clock.now() >= self.issuer.measure_from() {
            self.out.irq_ns += irq_ns;
            self.out.wakeups += wakeups;
            self.out.uring_timeouts += u64::from(timed);
        }
        let mut got = std::mem::take(&mut self.got);
        self.sh.mailbox.take(max.max(1) as usize, &mut got);
        let now = clock.now();
        for d in got.drain(..) {
            self.complete(d, now);
        }
        self.got = got;
    }

    /// Polled completion: spins on its poll queue (no interrupt) until
    /// `min` completions are there, taking its core's interrupts for the
    /// other threads meanwhile; hybrid sleeps on the timer first.
    fn poll(&mut self, p: &Handler, Reap { min, max }: Reap) {
        let (min, max) = ((min as usize).max(1), (max as usize).max(1));
        let measuring = self.issuing && self.sh.clock.now() >= self.issuer.measure_from();
        if let Some(until) = self.hybrid_until.take() {
            self.hybrid_sleep(until, measuring);
        }
        let mut got = std::mem::take(&mut self.got);
        let (mut polls, mut irq_ns) = (0, 0);
        loop {
            self.sh.mailbox.take(max - got.len(), &mut got);
            if got.len() >= min {
                break;
            }
            polls += 1;
            if p.poll(self.sh.clock) == 0 {
                if let Some(h) = self.sh.handler {
                    irq_ns += h.service(self.sh.clock);
                }
                std::hint::spin_loop();
            }
        }
        if measuring {
            self.out.poll.polls += polls;
            self.out.irq_ns += irq_ns;
        }
        let now = self.sh.clock.now();
        for d in got.drain(..) {
            self.complete(d, now);
        }
        self.got = got;
    }

    /// A "sleep, then poll" strategy's wait (`worker/sleep.rs`): sleeps
    /// once if its requests were given a sleep since the last, then spins
    /// on its poll queue until `min` completions are there, taking its
    /// core's interrupts meanwhile (they deliver the requests it sent to
    /// interrupts); with none of its requests on the poll queue, it sleeps
    /// until the handler delivers, as an interrupt-driven thread does. Each
    /// completion taken tells the strategy how its wait went.
    fn sleep_reap(&mut self, Reap { min, max }: Reap) {
        let (min, max) = ((min as usize).max(1), (max as usize).max(1));
        let (clock, handler, mailbox) = (self.sh.clock, self.sh.handler, self.sh.mailbox);
        let p = self
            .sh
            .polled
            .expect("a sleep strategy's thread has a poll queue");
        let measuring = self.issuing && clock.now() >= self.issuer.measure_from();
        let wake_at = if self.waiter == Waiter::Libaio {
            1
        } else {
            min
        };
        let s = self.sleeper.as_mut().expect("a sleep strategy");
        let mut got = std::mem::take(&mut self.got);
        let (mut polls, mut irq_ns, mut wakeups) = (0, 0, 0);
        if s.polled_in_flight() > 0 {
            s.sleep(clock, measuring);
        }
        // The times of the last poll and of the one before it: what the
        // last delivered was posted before the poll after `prev`.
        let (mut prev, mut last) = (0, 0);
        loop {
            let before = got.len();
            mailbox.take(max - got.len(), &mut got);
            let now = clock.now();
            for d in &got[before..] {
                s.found(d.cookie, prev, now, measuring);
            }
            if got.len() >= min {
                break;
            }
            if s.polled_in_flight() == 0 {
                let before = got.len();
                let need = min - got.len();
                wakeups += mailbox.wait(
                    need,
                    max - got.len(),
                    wake_at.min(need),
                    &mut got,
                    &mut || {
                        if let Some(h) = handler {
                            irq_ns += h.service(clock);
                        }
                    },
                );
                let now = clock.now();
                for d in &got[before..] {
                    s.found(d.cookie, 0, now, measuring);
                }
                break;
            }
            polls += 1;
            (prev, last) = (last, clock.now());
            if p.poll(clock) == 0 {
                if let Some(h) = handler {
                    irq_ns += h.service(clock);
                }
                std::hint::spin_loop();
            }
        }
        if measuring {
            self.out.poll.polls += polls;
            self.out.irq_ns += irq_ns;
            self.out.wakeups += wakeups;
        }
        let now = clock.now();
        for d in got.drain(..) {
            self.complete(d, now);
        }
        self.got = got;
    }

    /// Hybrid polling's sleep (`blk_mq_poll_hybrid_sleep`) on this VM
    /// ([`crate::sys::HybridTimer`]).
    fn hybrid_sleep(&mut self, until: Nanos, measuring: bool) {
        let want = until.saturating_sub(self.sh.clock.now());
        let slept = self.timer.sleep(want);
        if !measuring {
            return;
        }
        let s = &mut self.out.poll;
        match slept {
            crate::sys::HybridSleep::Spun => s.hybrid_spun += 1,
            crate::sys::HybridSleep::Slept { asked, slept } => {
                s.hybrid_sleeps += 1;
                s.asked_ns += asked;
                s.slept_ns += slept;
            }
        }
    }

    fn complete(&mut self, d: Delivered, now: Nanos) {
        let slot = self.slots[d.cookie as usize];
        if let Some(h) = &mut self.hybrid {
            // Linux's poll statistics: each request ended on the queue, its
            // latency from issue (`blk_stat_add`).
            let b = host::poll::bucket(u64::from(slot.len), slot.write);
            h.stats().ended(now, b, now.saturating_sub(slot.submitted));
        }
        self.in_flight -= 1;
        self.out.consumed += 1;
        if slot.verify {
            self.check(d, slot);
        } else {
            let measuring = slot.submitted >= self.issuer.measure_from()
                && self.issuer.stop_at().map_or(true, |end| now <= end);
            let dir = if slot.write {
                &mut self.out.write
            } else {
                &mut self.out.read
            };
            if d.error {
                dir.errors += 1;
            } else if measuring {
                self.out
                    .by_mark
                    .count(slot.marks.urgent, slot.marks.barrier);
                dir.ops += 1;
                dir.bytes += u64::from(slot.len);
                let _ = dir.clat.record(now.saturating_sub(slot.submitted).max(1));
            }
            if slot.write && self.spec.verify && !d.error {
                self.written.insert(slot.offset, slot.len);
            }
        }
        self.free.push(d.cookie);
    }

    /// fio's verify phase: reads back every block written, at the job's
    /// depth, and checks it.
    fn verify_pass(&mut self) {
        let written = std::mem::take(&mut self.written);
        let depth = self.issuer.max_in_flight();
        let mut blocks = written.into_iter().peekable();
        while blocks.peek().is_some() && !self.sh.abort.load(Ordering::Relaxed) {
            let now = self.sh.clock.now();
            let n = depth.min(blocks.len() as u32).max(1);
            for i in 0..n {
                let Some((offset, len)) = blocks.next() else {
                    break;
                };
                let marks = self.spec.job.marks(IoKind::Read, i as usize, n as usize);
                self.push(false, offset, len, marks, now, true);
            }
            self.submit_batch();
            while self.in_flight > 0 {
                self.reap(self.issuer.wait_for_completions(self.in_flight));
            }
        }
    }

    fn check(&mut self, d: Delivered, slot: Slot) {
        self.out.verified += 1;
        let result = if d.error {
            Err(format!("read error {}", d.result))
        } else {
            let buf = self.buffers.get_mut(d.cookie as usize, slot.len as usize);
            verify::check(buf, slot.offset).map_err(|m| m.to_string())
        };
        if let Err(why) = result {
            self.out.mismatches += 1;
            if self.out.first_mismatch.is_none() {
                self.out.first_mismatch = Some(format!("offset {}: {why}", slot.offset));
            }
        }
    }
}

/// Whether `mode` is a "sleep, then poll" strategy ([`host::sleep`]), which
/// a job thread applies with its core's interrupt queue pair at hand.
pub(crate) fn sleeps_then_polls(mode: host::poll::Mode) -> bool {
    sleep::strategy(mode).is_some()
}
