//! A job thread: fio's I/O loop (the same knobs as the simulator's,
//! [`jobs::IoLoop`]) on the emulated device. It builds each batch, submits
//! it through its core's queue pair, and sleeps until the interrupt handler
//! has delivered enough completions: one for a blocking engine (the call
//! waits for its own request), `iodepth_batch_complete_min` for libaio and
//! io_uring. Latency runs from the submission to the moment the thread has
//! the completion, as fio's clat does for these engines.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use hdrhistogram::Histogram;
use jobs::{Bounds, Engine, IoKind, IoLoop, Job};
use policy::Nanos;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::buffers::Buffers;
use crate::driver::Handler;
use crate::latency::latency_histogram;
use crate::mailbox::{Delivered, Mailbox};
use crate::queue::{QueuePair, Request};
use crate::sys::{Clock, Usage};
use crate::verify;

/// How the engine's completion call waits (the simulator's `Waiter`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waiter {
    Blocking,
    /// Woken by every delivery, re-checks `min` (fs/aio.c read_events).
    Libaio,
    /// The waker checks `min` before waking.
    IoUring,
}

impl Waiter {
    pub fn of(engine: Engine) -> Waiter {
        match engine {
            Engine::Libaio => Waiter::Libaio,
            Engine::IoUring => Waiter::IoUring,
            _ => Waiter::Blocking,
        }
    }
}

/// What one job thread does.
#[derive(Clone, Debug)]
pub struct WorkerSpec {
    /// Index of the thread's mailbox; the owner of its tags.
    pub owner: u32,
    pub job: Job,
    pub io: IoLoop,
    pub bounds: Bounds,
    /// Bytes of the file the job addresses: `[start, start + len)`.
    pub region: (u64, u64),
    pub seed: u64,
    /// Read back and check every block written (`verify=crc32c`).
    pub verify: bool,
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
    pub submitted: u64,
    pub consumed: u64,
    /// Times a submission waited for a free tag (back-pressure).
    pub tag_waits: u64,
    /// Time the thread spent running the interrupt handler (polled
    /// delivery) in the measured part: interrupt time, not the job's.
    pub irq_ns: Nanos,
    pub verified: u64,
    pub mismatches: u64,
    /// The first mismatch, for the report.
    pub first_mismatch: Option<String>,
}

#[derive(Clone, Copy, Default)]
struct Slot {
    write: bool,
    offset: u64,
    len: u32,
    submitted: Nanos,
    verify: bool,
}

/// What the run shares with every job thread.
pub struct Shared<'a> {
    pub clock: &'a Clock,
    pub queue: &'a QueuePair,
    pub mailbox: &'a Mailbox,
    /// Set when the run must stop early (another thread failed).
    pub abort: &'a AtomicBool,
    /// Counts job threads whose measured part is over.
    pub finished: &'a AtomicUsize,
    /// With polled delivery, the core's handler, which the thread runs
    /// itself when it finds the line raised (an interrupt taken in the
    /// running thread's context).
    pub handler: Option<&'a Handler>,
}

struct Worker<'a> {
    spec: WorkerSpec,
    sh: Shared<'a>,
    waiter: Waiter,
    buffers: Buffers,
    slots: Vec<Slot>,
    free: Vec<u32>,
    in_flight: u32,
    rng: Pcg64Mcg,
    seq_next: u64,
    issued_ios: u64,
    issued_bytes: u64,
    issued: [u64; 2],
    since_think: u32,
    start: Nanos,
    measure_from: Nanos,
    stop_at: Option<Nanos>,
    written: BTreeMap<u64, u32>,
    /// Still in the measured part (issuing), not draining or verifying.
    issuing: bool,
    batch: Vec<Request>,
    got: Vec<Delivered>,
    out: WorkerResult,
}

/// Runs one job thread to the end: its I/O, then its verify pass.
pub fn run(spec: WorkerSpec, sh: Shared<'_>, t0: Nanos) -> WorkerResult {
    let io = spec.io;
    let slot_len = spec.job.bs_read.max(spec.job.bs_write) as usize;
    let start = t0 + spec.job.startdelay;
    let measure_from = start + spec.job.ramp_time;
    let mut w = Worker {
        waiter: Waiter::of(spec.job.ioengine),
        buffers: Buffers::new(io.iodepth as usize, slot_len),
        slots: vec![Slot::default(); io.iodepth as usize],
        free: (0..io.iodepth).rev().collect(),
        in_flight: 0,
        rng: Pcg64Mcg::seed_from_u64(spec.seed ^ u64::from(spec.owner).wrapping_mul(0x9e37_79b9)),
        seq_next: spec.region.0,
        issued_ios: 0,
        issued_bytes: 0,
        issued: [0; 2],
        since_think: 0,
        start,
        measure_from,
        stop_at: spec.bounds.runtime.map(|r| measure_from + r),
        written: BTreeMap::new(),
        issuing: true,
        batch: Vec::with_capacity(io.batch_submit as usize),
        got: Vec::with_capacity(io.complete_max as usize),
        out: WorkerResult::default(),
        spec,
        sh,
    };
    w.sh.mailbox.attach(std::thread::current());
    w.main();
    if w.spec.verify {
        w.verify_pass();
    }
    w.out
}

impl Worker<'_> {
    fn limit_reached(&self, now: Nanos) -> bool {
        let b = &self.spec.bounds;
        self.sh.abort.load(Ordering::Relaxed)
            || self.stop_at.is_some_and(|t| now >= t)
            || b.bytes.is_some_and(|n| self.issued_bytes >= n)
            || b.ios.is_some_and(|n| self.issued_ios >= n)
    }

    fn main(&mut self) {
        self.sh.clock.wait_until(self.start);
        let io = self.spec.io;
        let mut usage_from = None;
        let mut draining = false;
        loop {
            self.take_interrupt(usage_from.is_some());
            let now = self.sh.clock.now();
            if usage_from.is_none() && now >= self.measure_from {
                usage_from = Some(Usage::of_this_thread());
            }
            if self.limit_reached(now) {
                break;
            }
            if self.in_flight >= io.iodepth {
                draining = true;
            }
            if draining && self.in_flight > io.low_mark {
                self.reap();
                continue;
            }
            draining = false;
            let think = self.spec.job.thinktime;
            if think > 0 && self.since_think >= self.spec.job.thinktime_blocks.max(1) {
                self.since_think = 0;
                self.sh.clock.wait_until(now + think);
                continue;
            }
            let mut n = io.batch_submit.min(io.iodepth - self.in_flight).max(1);
            if let Some(limit) = self.spec.bounds.ios {
                n = n.min((limit - self.issued_ios).max(1) as u32);
            }
            let write = self.rng.random_range(0..100) >= self.spec.job.read_percent();
            if let Some(at) = self.rate_wait(write, now) {
                self.sh.clock.wait_until(at);
                continue;
            }
            self.issue(n, write);
            if self.waiter == Waiter::Blocking {
                self.reap();
            }
        }
        // The measured part ends when the job stops issuing; what is still
        // in flight completes without being measured (as in the simulator).
        let from = usage_from.unwrap_or_else(Usage::of_this_thread);
        let mut usage = Usage::of_this_thread().since(from);
        usage.user_ns = usage.user_ns.saturating_sub(self.out.irq_ns);
        self.out.usage = usage;
        self.issuing = false;
        self.sh.finished.fetch_add(1, Ordering::Relaxed);
        while self.in_flight > 0 {
            self.reap();
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

    /// When `rate_iops` allows the next I/O in this direction, if later than
    /// `now` (fio spaces them evenly from the job's start).
    fn rate_wait(&self, write: bool, now: Nanos) -> Option<Nanos> {
        let (r, w) = self.spec.job.rate_iops?;
        let (rate, issued) = if write {
            (w, self.issued[1])
        } else {
            (r, self.issued[0])
        };
        if rate == 0 {
            return None;
        }
        let at = self.start + (u128::from(issued) * 1_000_000_000 / u128::from(rate)) as Nanos;
        (at > now).then_some(at)
    }

    fn next_offset(&mut self, len: u64) -> u64 {
        let (start, size) = self.spec.region;
        let blocks = (size / len).max(1);
        if self.spec.job.rw.is_random() {
            start + self.rng.random_range(0..blocks) * len
        } else {
            if self.seq_next + len > start + size.max(len) {
                self.seq_next = start;
            }
            let at = self.seq_next;
            self.seq_next += len;
            at
        }
    }

    /// Builds and submits a batch of `n`; the first request's direction was
    /// drawn by the caller (to apply the rate limit to it).
    fn issue(&mut self, n: u32, first_write: bool) {
        let now = self.sh.clock.now();
        let job = &self.spec.job;
        let (read_percent, bs_read, bs_write) = (job.read_percent(), job.bs_read, job.bs_write);
        for i in 0..n {
            let write = if i == 0 {
                first_write
            } else {
                self.rng.random_range(0..100) >= read_percent
            };
            let len = if write { bs_write } else { bs_read };
            let offset = self.next_offset(len);
            self.push(write, offset, len as u32, i, n, false, now);
        }
        self.submit_batch();
    }

    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        write: bool,
        offset: u64,
        len: u32,
        i: u32,
        n: u32,
        verify: bool,
        now: Nanos,
    ) {
        let job = &self.spec.job;
        let kind = if write { IoKind::Write } else { IoKind::Read };
        let marks = job.marks(kind, i as usize, n as usize);
        let cookie = self.free.pop().expect("a free slot per request in flight");
        if write && self.spec.verify {
            verify::fill(self.buffers.get_mut(cookie as usize, len as usize), offset);
        }
        self.slots[cookie as usize] = Slot {
            write,
            offset,
            len,
            submitted: now,
            verify,
        };
        self.batch.push(Request {
            cookie,
            write,
            offset,
            len,
            buf: self.buffers.addr(cookie as usize),
            marks,
        });
        if !verify {
            self.issued_ios += 1;
            self.issued_bytes += u64::from(len);
            self.issued[usize::from(write)] += 1;
            self.since_think += 1;
        }
    }

    fn submit_batch(&mut self) {
        self.in_flight += self.batch.len() as u32;
        self.out.submitted += self.batch.len() as u64;
        self.out.tag_waits += self.sh.queue.submit(self.spec.owner, &self.batch);
        self.batch.clear();
    }

    /// Waits for completions and takes them, as the engine's call does.
    fn reap(&mut self) {
        let io = self.spec.io;
        let min = match self.waiter {
            Waiter::Blocking => 1,
            _ => io.complete_min.min(self.in_flight).max(1),
        } as usize;
        let wake_at = if self.waiter == Waiter::Libaio {
            1
        } else {
            min
        };
        let mut got = std::mem::take(&mut self.got);
        let (handler, clock) = (self.sh.handler, self.sh.clock);
        let mut irq_ns = 0;
        self.sh.mailbox.wait(
            min,
            io.complete_max as usize,
            wake_at,
            &mut got,
            &mut || {
                if let Some(h) = handler {
                    irq_ns += h.service(clock);
                }
            },
        );
        if self.issuing && self.sh.clock.now() >= self.measure_from {
            self.out.irq_ns += irq_ns;
        }
        let now = self.sh.clock.now();
        for d in got.drain(..) {
            self.complete(d, now);
        }
        self.got = got;
    }

    fn complete(&mut self, d: Delivered, now: Nanos) {
        let slot = self.slots[d.cookie as usize];
        self.in_flight -= 1;
        self.out.consumed += 1;
        if slot.verify {
            self.check(d, slot);
        } else {
            let measuring =
                slot.submitted >= self.measure_from && self.stop_at.map_or(true, |end| now <= end);
            let dir = if slot.write {
                &mut self.out.write
            } else {
                &mut self.out.read
            };
            if d.error {
                dir.errors += 1;
            } else if measuring {
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
        let depth = self.spec.io.iodepth;
        let mut blocks = written.into_iter().peekable();
        while blocks.peek().is_some() && !self.sh.abort.load(Ordering::Relaxed) {
            let now = self.sh.clock.now();
            let n = depth.min(blocks.len() as u32).max(1);
            for i in 0..n {
                let Some((offset, len)) = blocks.next() else {
                    break;
                };
                self.push(false, offset, len, i, n, true, now);
            }
            self.submit_batch();
            while self.in_flight > 0 {
                self.reap();
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
