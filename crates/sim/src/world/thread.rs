//! What a job's thread does: fio's I/O loop for each engine, as a sequence
//! of CPU segments (user work, system calls) and waits.
//!
//! The loop's decisions are [`jobs::Issuer`]'s (batch sizes, draining to
//! `iodepth_low`, `rate_iops`, `thinktime`, when to stop); this module
//! charges them. One round: user work for the next batch (`user_per_io`
//! each), the submit call (`syscall` + `submit_per_request` each), then
//! for a blocking engine the same call sleeps until its request is
//! delivered; an asynchronous engine enters its completion call
//! (`io_getevents`, `io_uring_enter`) when the issuer says to reap. Completion
//! latency runs from the start of the submit call to the return of the call
//! that hands the completion to the thread, as fio's clat does for these
//! engines.
//!
//! A submit call of more than one request runs as Linux 5.0 runs it: one
//! segment per request, whose end is a voluntary preemption point (under
//! CONFIG_PREEMPT_VOLUNTARY `might_sleep()` is `_cond_resched()`,
//! include/linux/kernel.h, and every iocb's `aio_get_req` allocates with
//! GFP_KERNEL, fs/aio.c, whose `slab_pre_alloc_hook` calls `might_sleep_if`,
//! mm/slab.h), and the requests reach the device [`PLUG_MAX_REQUESTS`] at a
//! time, the rest when the call ends (`blk_finish_plug`). A one-request
//! call, an SQ thread's and one under the journal's model are one segment
//! whose requests reach the device at its end. A buffered write's
//! page-cache copy follows the call's entry as a segment of its own, which
//! the scheduler may preempt (Linux 5.3.7's `generic_perform_write` calls
//! `cond_resched()` after every page).

use jobs::{Batch, Decision, Reap};
use policy::Nanos;

use crate::cause::{Cause, Mix};
use crate::events::Ev;
use crate::workload::Waiter;
use crate::world::{Kind, RState, Request, Step, TState, World, CLAT_MAX};

/// Requests a task's plug holds before the next one flushes them to the
/// device: Linux 5.0's `BLK_MAX_REQUEST_COUNT` (include/linux/blkdev.h),
/// checked in `blk_mq_make_request` (block/blk-mq.c) on every request added
/// under a plug. fs/aio.c's io_submit plugs a call of more than 2 iocbs
/// (`AIO_PLUG_THRESHOLD`), so a batch of 512 reaches the device 16 at a
/// time while the call goes on, not all at its end.
pub(crate) const PLUG_MAX_REQUESTS: u32 = 16;

impl World {
    /// Carries a thread on from `step` (it is on its core's CPU).
    pub(crate) fn step(&mut self, tid: u32, step: Step) {
        let core = self.threads[tid as usize].spec.core as u32;
        match step {
            Step::Resume => match self.cpu.resume_saved(tid) {
                Some(seg) => self.start_seg(core, seg.kind, seg.mix, seg.remaining, seg.then),
                None => {
                    let next = self.threads[tid as usize].next;
                    self.step(tid, next);
                }
            },
            Step::Plan => self.plan(tid, core),
            Step::Submit => {
                let th = &mut self.threads[tid as usize];
                for &req in &th.batch {
                    self.requests[req as usize].issued = self.now;
                }
                th.built = 0;
                th.flushed = 0;
                let th = &self.threads[tid as usize];
                // SQPOLL: the SQ thread takes the SQEs; the thread makes
                // no system call ([`crate::world::uring`]).
                let sq_thread = th.spec.uring.is_some_and(|s| s.sq_thread());
                let per_request = self.per_request_call(tid);
                let syscall = if sq_thread { 0 } else { self.host.syscall };
                let call = if sq_thread {
                    0
                } else if per_request {
                    // The call is built one request at a time (below).
                    self.host.syscall + self.host.submit_per_request
                } else {
                    self.host.syscall + self.host.submit_per_request * th.batch.len() as u64
                };
                // The buffered writes' copy is a segment of its own: Linux
                // reschedules between its pages ([`Kind::KernelResched`]).
                let then = if self.buffered_cost(&th.batch) > 0 {
                    Step::SubmitCopy
                } else {
                    self.after_copy(tid)
                };
                let mix = Mix::two(Cause::Syscall, syscall, Cause::Submit);
                self.start_seg(core, Kind::Kernel, mix, call, then);
            }
            Step::SubmitCopy => {
                let cost = self.buffered_cost(&self.threads[tid as usize].batch);
                let then = self.after_copy(tid);
                self.start_seg(core, Kind::KernelResched, Mix::of(Cause::Copy), cost, then);
            }
            Step::SubmitNext => {
                let th = &mut self.threads[tid as usize];
                th.built += 1;
                if th.built as usize >= th.batch.len() {
                    self.step(tid, Step::Submitted);
                    return;
                }
                if th.built - th.flushed >= PLUG_MAX_REQUESTS {
                    // blk_mq_make_request: the plug holds 16, the next
                    // request flushes them to the device.
                    let (from, to) = (th.flushed as usize, th.built as usize);
                    th.flushed = th.built;
                    self.dispatch_built(tid, from, to);
                }
                // The segment's end is the preemption point (the request's
                // allocation, might_sleep): a pending resched is taken
                // there ([`crate::world::host`]'s `core_done`).
                let cost = self.host.submit_per_request;
                let mix = Mix::of(Cause::Submit);
                self.start_seg(core, Kind::Kernel, mix, cost, Step::SubmitNext);
            }
            Step::Submitted => {
                let batch = std::mem::take(&mut self.threads[tid as usize].batch);
                // fio commits with IORING_ENTER_GETEVENTS, which runs the
                // ring's deferred completions.
                self.run_deferred(tid);
                self.hybrid_submitted(tid, &batch);
                // What the plug still holds goes to the device as the call
                // ends (blk_finish_plug).
                let from = self.threads[tid as usize].flushed as usize;
                for &req in &batch[from..] {
                    if !self.journal_submit(req) {
                        self.block_submit(req);
                    }
                }
                let th = &mut self.threads[tid as usize];
                th.in_flight += (batch.len() - from) as u32;
                th.built = 0;
                th.flushed = 0;
                th.batch = batch;
                th.batch.clear();
                self.plan(tid, core);
            }
            Step::GetEvents => {
                let th = &self.threads[tid as usize];
                // A polled ring (IORING_SETUP_IOPOLL) gets its completions
                // only by polling in io_uring_enter ([`crate::world::completion`]).
                let ring = th.spec.waiter == Waiter::IoUring && !self.polling(tid);
                let sq_thread = th.spec.uring.is_some_and(|s| s.sq_thread());
                if ring && (sq_thread || th.ready.len() >= th.needed as usize) {
                    // Enough in the CQ ring: reaped without a system call;
                    // with an SQ thread fio never enters to wait, it spins
                    // on the ring ([`crate::world::uring`]).
                    self.step(tid, Step::Reap);
                } else {
                    // Entering the kernel runs the deferred completions.
                    self.run_deferred(tid);
                    let cost = self.host.syscall;
                    let mix = Mix::of(Cause::Syscall);
                    self.start_seg(core, Kind::Kernel, mix, cost, Step::Reap);
                }
            }
            Step::Reap => self.reap(tid, core),
            Step::Reaped => self.reaped(tid, core),
            Step::Poll => self.reap(tid, core),
            Step::Fsync => self.fsync_call(tid, core),
            Step::Journal => self.journal_running(tid, core),
            Step::JournalSleep => self.journal_sleep(tid, core),
            Step::JournalPoll => self.journal_poll(tid, core),
        }
    }

    /// Whether the thread's submit call is built one request at a time (a
    /// call of several requests, not an SQ thread's, not under the
    /// journal's model): see the module's header.
    fn per_request_call(&self, tid: u32) -> bool {
        let th = &self.threads[tid as usize];
        !(th.spec.uring.is_some_and(|s| s.sq_thread())
            || th.batch.len() < 2
            || self.journal.is_some())
    }

    /// Where the submit call goes once its entry (and a buffered write's
    /// page-cache copy) is done.
    fn after_copy(&self, tid: u32) -> Step {
        if self.per_request_call(tid) {
            Step::SubmitNext
        } else {
            Step::Submitted
        }
    }

    /// A plug flush in the middle of a submit call: `batch[from..to]` go
    /// to the device (or the block layer's scheduler) now.
    fn dispatch_built(&mut self, tid: u32, from: usize, to: usize) {
        let batch = std::mem::take(&mut self.threads[tid as usize].batch);
        for &req in &batch[from..to] {
            self.block_submit(req);
        }
        let th = &mut self.threads[tid as usize];
        th.in_flight += (to - from) as u32;
        th.batch = batch;
    }

    /// Takes delivered completions; returns to the thread when enough have
    /// arrived, else sleeps in the call (a polling thread spins instead,
    /// and first finds the `ld` pieces posted while it was not spinning).
    fn reap(&mut self, tid: u32, core: u32) {
        if self.block.is_some() && self.polling(tid) {
            self.find_polled_pieces(tid);
        }
        let th = &mut self.threads[tid as usize];
        let room = (th.reap_max as usize).saturating_sub(th.got.len());
        let take = room.min(th.ready.len());
        let from = th.got.len();
        th.got.extend(th.ready.drain(..take));
        if self.polling.mode() == crate::Completion::Hybrid {
            self.hybrid_ended(tid, from);
        } else {
            self.sleep_found(tid, from);
        }
        let th = &mut self.threads[tid as usize];
        if th.got.len() < th.needed as usize {
            if self.spins(tid) {
                self.poll_wait(tid, core);
                return;
            }
            if let Some(strategy) = self.uring(tid) {
                self.uring_block(tid, core, strategy);
                return;
            }
            let th = &mut self.threads[tid as usize];
            th.state = TState::Blocked;
            th.next = Step::Reap;
            self.leave_cpu(core);
            return;
        }
        // The call's part of each completion, in the thread's own context
        // (a woken blocking call's return path; io_getevents' copy).
        let cost = self.host.reap_per_completion * th.got.len() as u64;
        if cost > 0 {
            let mix = Mix::of(Cause::Completion);
            self.start_seg(core, Kind::Kernel, mix, cost, Step::Reaped);
        } else {
            self.reaped(tid, core);
        }
    }

    /// The waiting call returns what it took: each completion's latency is
    /// recorded now, as fio's clat ends at the call's return.
    fn reaped(&mut self, tid: u32, core: u32) {
        let spec = &self.threads[tid as usize].spec;
        // Serial groups: a thread counts from its own measured start (the
        // shared window opened with the first group).
        let own = !spec.serial || self.now >= spec.measure_from;
        let measuring = self.measuring(self.now) && own;
        let th = &mut self.threads[tid as usize];
        let got = std::mem::take(&mut th.got);
        // An application model is told which of its I/Os the call returned.
        let mut tags = match (th.program.takes_tags(), self.apps.as_mut()) {
            (true, Some(apps)) => Some(std::mem::take(&mut apps.tags_buf)),
            _ => None,
        };
        for &req in &got {
            let r = self.requests[req as usize];
            if r.state != RState::Delivered || r.tid != tid {
                // Taken twice or by the wrong thread: an engine bug the
                // audit reports rather than a number it silently skews.
                self.audit.duplicates += 1;
                continue;
            }
            let th = &mut self.threads[tid as usize];
            th.in_flight -= 1;
            if measuring && r.polled {
                self.counts.polled += 1;
                th.polled += 1;
            }
            if measuring {
                let dir = if r.write { &mut th.write } else { &mut th.read };
                dir.ops += 1;
                dir.bytes += r.bytes;
                let clat = (self.now - r.issued).max(1);
                if clat > CLAT_MAX {
                    // Above the histogram's range: counted at its top, and
                    // said in the report (a queue of 30 s commands).
                    self.audit.clat_above_max += 1;
                }
                dir.clat.saturating_record(clat);
            }
            self.path.taken(tid, req, measuring, r.issued, self.now);
            if let (Some(tags), Some(apps)) = (tags.as_mut(), self.apps.as_ref()) {
                tags.push(apps.tag(req));
            }
            self.requests[req as usize].state = RState::Free;
            self.free.push(req);
            self.audit.consumed += 1;
        }
        let th = &mut self.threads[tid as usize];
        th.got = got;
        th.got.clear();
        if let Some(tags) = tags {
            self.app_completed(tid, tags);
        }
        self.plan(tid, core);
    }

    /// The thread's program decides what it does next
    /// ([`crate::world::program`]).
    fn plan(&mut self, tid: u32, core: u32) {
        let program = self.threads[tid as usize].program;
        program.plan(self, tid, core);
    }

    /// Applies the issuer's next decision: issue a batch, wait for
    /// completions, sleep to honour a rate or think time, or finish (a
    /// job's thread, [`crate::world::program::JobLoop`]).
    pub(super) fn job_plan(&mut self, tid: u32, core: u32) {
        if self.fsync_plan(tid, core) {
            return;
        }
        let now = self.now;
        let th = &mut self.threads[tid as usize];
        match th.spec.issuer.next(now, th.in_flight, &mut th.rng) {
            Decision::Done => self.finished(tid, core),
            Decision::Reap(Reap { min, max }) => {
                // min-wait holds out for more than fio's minimum: its
                // wait_nr, at most what is in flight ([`crate::world::uring`]).
                th.needed = match th.spec.uring {
                    Some(s) => s.wait_nr(min, max).min(th.in_flight).max(min),
                    None => min,
                };
                th.reap_max = max;
                if th.spec.waiter == Waiter::Blocking {
                    // The submitting call itself waits.
                    self.step(tid, Step::Reap);
                } else {
                    self.step(tid, Step::GetEvents);
                }
            }
            Decision::SleepUntil(until) => self.sleep(tid, core, until),
            Decision::Issue(mut batch) if th.spec.job.ioengine.is_noio() => {
                // fio's cpuio (engines/cpu.c `fio_cpuio_queue`): each "I/O"
                // spins `cpuchunks` us in user space and completes at once;
                // the engine's think time (set from `cpuload`) follows.
                let mut spin = 0;
                while th.spec.issuer.take(&mut batch, &mut th.rng).is_some() {
                    spin += th.spec.job.cpuchunks * policy::US;
                }
                self.start_seg(core, Kind::User, Mix::of(Cause::User), spin, Step::Plan);
            }
            Decision::Issue(batch) => {
                let n = batch.len();
                self.prepare_batch(tid, batch);
                let cost = self.host.user_per_io * n as u64;
                self.start_seg(core, Kind::User, Mix::of(Cause::User), cost, Step::Submit);
            }
        }
    }

    /// The thread has nothing more to do: it leaves its core for good.
    pub(crate) fn finished(&mut self, tid: u32, core: u32) {
        let th = &mut self.threads[tid as usize];
        th.state = TState::Done;
        th.done_at = Some(self.now);
        self.thread_done();
        self.release_waiters();
        self.leave_cpu_for_good(core);
    }

    fn prepare_batch(&mut self, tid: u32, mut batch: Batch) {
        let polled = self.polling(tid);
        loop {
            let th = &mut self.threads[tid as usize];
            let Some(io) = th.spec.issuer.take(&mut batch, &mut th.rng) else {
                break;
            };
            let slot =
                self.new_routed_request(tid, io.marks, io.write, io.bytes, polled, io.critical);
            self.threads[tid as usize].batch.push(slot);
        }
    }

    /// A request of thread `tid` prepared now, in a free slot of the
    /// request table; a block layer learns whether it is critical. Every
    /// issuer of requests (fio's loop, an application model, the fsync
    /// path) makes its requests here.
    pub(crate) fn new_request(
        &mut self,
        tid: u32,
        marks: policy::Marks,
        write: bool,
        bytes: u64,
        polled: bool,
        critical: bool,
    ) -> u32 {
        let req = Request {
            tid,
            marks,
            write,
            bytes,
            issued: self.now,
            state: RState::Prepared,
            polled,
        };
        let slot = alloc(&mut self.requests, &mut self.free, req);
        if let Some(b) = self.block.as_mut() {
            b.prepared(slot, critical);
        }
        slot
    }

    /// Starts every thread whose `stonewall` or `wait_for` jobs have all
    /// finished (fio's run_threads, which starts them as they do).
    fn release_waiters(&mut self) {
        let now = self.now;
        for tid in 0..self.threads.len() {
            let th = &self.threads[tid];
            // Released threads have no one left to wait for.
            if th.state != TState::NotStarted || th.spec.after.is_empty() {
                continue;
            }
            let ready = th
                .spec
                .after
                .iter()
                .all(|&k| self.threads[k as usize].state == TState::Done);
            if ready {
                let spec = &mut self.threads[tid].spec;
                spec.after.clear();
                spec.release(now);
                let at = spec.start;
                self.events.push(at, Ev::Start { tid: tid as u32 });
            }
        }
    }

    fn sleep(&mut self, tid: u32, core: u32, until: Nanos) {
        self.sleep_then(tid, core, until, Step::Plan);
    }

    /// Sleeps on a timer until `until`, then carries on with `then`.
    pub(crate) fn sleep_then(&mut self, tid: u32, core: u32, until: Nanos, then: Step) {
        let th = &mut self.threads[tid as usize];
        th.state = TState::Sleeping;
        th.next = then;
        th.sleep_gen = th.sleep_gen.wrapping_add(1);
        let gen = th.sleep_gen;
        self.events.push(until, Ev::Timer { tid, gen });
        self.idle_timer(core, until);
        self.leave_cpu(core);
    }
}

/// A free slot of the request table for `req` (the last freed first).
pub(crate) fn alloc(requests: &mut Vec<Request>, free: &mut Vec<u32>, req: Request) -> u32 {
    match free.pop() {
        Some(slot) => {
            requests[slot as usize] = req;
            slot
        }
        None => {
            requests.push(req);
            (requests.len() - 1) as u32
        }
    }
}
