//! What a job's thread does: fio's I/O loop for each engine, as a sequence
//! of CPU segments (user work, system calls) and waits.
//!
//! One round: user work for the next batch (`user_per_io` each), the submit
//! call (`syscall` + `submit_per_request` each; the batch reaches the device
//! when the call ends, as blk-mq's plug flushes it), then for a blocking
//! engine the same call sleeps until its request is delivered; an
//! asynchronous engine refills until `iodepth` is in flight, in batches of
//! `iodepth_batch_submit`, and then waits for
//! `iodepth_batch_complete_min` completions and takes up to `_max` (fio's
//! do_io / wait_for_completions). Completion latency runs from the start of
//! the submit call to the return of the call that hands the completion to
//! the thread, as fio's clat does for these engines.

use jobs::IoKind;
use policy::Nanos;
use rand::Rng;

use crate::events::Ev;
use crate::workload::Waiter;
use crate::world::{Kind, RState, Request, Step, TState, World};

impl World {
    /// Carries a thread on from `step` (it is on its core's CPU).
    pub(crate) fn step(&mut self, tid: u32, step: Step) {
        let core = self.threads[tid as usize].spec.core as u32;
        match step {
            Step::Resume => match self.threads[tid as usize].saved.pop() {
                Some(seg) => self.start_seg(core, seg.kind, seg.remaining, seg.then),
                None => {
                    let next = self.threads[tid as usize].next;
                    self.step(tid, next);
                }
            },
            Step::Plan => self.plan(tid, core),
            Step::Submit => {
                let th = &self.threads[tid as usize];
                for &req in &th.batch {
                    self.requests[req as usize].issued = self.now;
                }
                let cost = self.host.syscall + self.host.submit_per_request * th.batch.len() as u64;
                self.start_seg(core, Kind::Kernel, cost, Step::Submitted);
            }
            Step::Submitted => {
                let batch = std::mem::take(&mut self.threads[tid as usize].batch);
                for &req in &batch {
                    self.device_submit(req);
                }
                let th = &mut self.threads[tid as usize];
                th.in_flight += batch.len() as u32;
                th.batch = batch;
                th.batch.clear();
                if th.spec.waiter == Waiter::Blocking {
                    // The submitting call itself waits.
                    th.needed = 1;
                    self.step(tid, Step::Reap);
                } else {
                    self.plan(tid, core);
                }
            }
            Step::GetEvents => {
                let th = &mut self.threads[tid as usize];
                th.needed = th.spec.complete_min.min(th.in_flight).max(1);
                if th.spec.waiter == Waiter::IoUring && th.ready.len() >= th.needed as usize {
                    // Enough in the CQ ring: reaped without a system call.
                    self.step(tid, Step::Reap);
                } else {
                    let cost = self.host.syscall;
                    self.start_seg(core, Kind::Kernel, cost, Step::Reap);
                }
            }
            Step::Reap => self.reap(tid, core),
        }
    }

    /// Takes delivered completions; returns to the thread when enough have
    /// arrived, else sleeps in the call.
    fn reap(&mut self, tid: u32, core: u32) {
        let measuring = self.measuring(self.now);
        let th = &mut self.threads[tid as usize];
        let room = (th.spec.complete_max as usize).saturating_sub(th.got.len());
        let take = room.min(th.ready.len());
        th.got.extend(th.ready.drain(..take));
        if th.got.len() < th.needed as usize {
            th.state = TState::Blocked;
            th.next = Step::Reap;
            self.leave_cpu(core);
            return;
        }
        let got = std::mem::take(&mut th.got);
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
            if measuring {
                let dir = if r.write { &mut th.write } else { &mut th.read };
                dir.ops += 1;
                dir.bytes += r.bytes;
                dir.clat
                    .record((self.now - r.issued).max(1))
                    .expect("histogram bounds hold a latency");
            }
            self.requests[req as usize].state = RState::Free;
            self.free.push(req);
            self.audit.consumed += 1;
        }
        let th = &mut self.threads[tid as usize];
        th.got = got;
        th.got.clear();
        self.plan(tid, core);
    }

    fn limit_reached(&self, tid: u32) -> bool {
        let th = &self.threads[tid as usize];
        let s = &th.spec;
        th.stop_issuing
            || s.stop_at.is_some_and(|t| self.now >= t)
            || s.bytes_limit.is_some_and(|b| th.issued_bytes >= b)
            || s.ios_limit.is_some_and(|n| th.issued_ios >= n)
    }

    /// Decides the next move: issue a batch, wait for completions, sleep to
    /// honour a rate or think time, or finish.
    fn plan(&mut self, tid: u32, core: u32) {
        let done_issuing = self.limit_reached(tid);
        let th = &mut self.threads[tid as usize];
        if done_issuing {
            th.stop_issuing = true;
            if th.in_flight == 0 {
                th.state = TState::Done;
                self.cores[core as usize].threads -= 1;
                self.leave_cpu(core);
            } else {
                self.step(tid, Step::GetEvents);
            }
            return;
        }
        let s = &th.spec;
        if th.in_flight >= s.iodepth {
            th.draining = true;
        }
        if th.draining && th.in_flight > s.low_mark {
            self.step(tid, Step::GetEvents);
            return;
        }
        th.draining = false;

        // fio's thinktime: stall after every `thinktime_blocks` I/Os.
        let think = s.job.thinktime;
        if think > 0 && th.since_think >= s.job.thinktime_blocks.max(1) {
            th.since_think = 0;
            let until = self.now + think;
            self.sleep(tid, core, until);
            return;
        }

        let n = s.batch_submit.min(s.iodepth - th.in_flight).max(1);
        let n = match s.ios_limit {
            Some(limit) => n.min((limit - th.issued_ios).max(1) as u32),
            None => n,
        };
        // Choose the first request's direction to check the rate limit.
        let write = th.rng.random_range(0..100) >= s.job.read_percent();
        if let Some(until) = self.rate_wait(tid, write) {
            self.sleep(tid, core, until);
            return;
        }
        self.prepare_batch(tid, n, write);
        let cost = self.host.user_per_io * n as u64;
        self.start_seg(core, Kind::User, cost, Step::Submit);
    }

    /// When `rate_iops` allows the next I/O in this direction, if later than
    /// now (fio spaces them evenly from the job's start).
    fn rate_wait(&self, tid: u32, write: bool) -> Option<Nanos> {
        let th = &self.threads[tid as usize];
        let (r, w) = th.spec.job.rate_iops?;
        let (rate, issued) = if write {
            (w, th.issued_writes)
        } else {
            (r, th.issued_reads)
        };
        if rate == 0 {
            return None;
        }
        let at = th.spec.start + (issued as u128 * 1_000_000_000 / rate as u128) as Nanos;
        (at > self.now).then_some(at)
    }

    fn prepare_batch(&mut self, tid: u32, n: u32, first_write: bool) {
        for i in 0..n {
            let th = &mut self.threads[tid as usize];
            let write = if i == 0 {
                first_write
            } else {
                th.rng.random_range(0..100) >= th.spec.job.read_percent()
            };
            let kind = if write { IoKind::Write } else { IoKind::Read };
            let bytes = if write {
                th.spec.job.bs_write
            } else {
                th.spec.job.bs_read
            };
            let marks = th.spec.job.marks(kind, i as usize, n as usize);
            th.issued_ios += 1;
            th.issued_bytes += bytes;
            th.since_think += 1;
            if write {
                th.issued_writes += 1;
            } else {
                th.issued_reads += 1;
            }
            let req = Request {
                tid,
                marks,
                write,
                bytes,
                issued: self.now,
                state: RState::Prepared,
            };
            let slot = match self.free.pop() {
                Some(slot) => {
                    self.requests[slot as usize] = req;
                    slot
                }
                None => {
                    self.requests.push(req);
                    (self.requests.len() - 1) as u32
                }
            };
            self.threads[tid as usize].batch.push(slot);
        }
    }

    fn sleep(&mut self, tid: u32, core: u32, until: Nanos) {
        let th = &mut self.threads[tid as usize];
        th.state = TState::Sleeping;
        th.next = Step::Plan;
        th.sleep_gen = th.sleep_gen.wrapping_add(1);
        let gen = th.sleep_gen;
        self.events.push(until, Ev::Timer { tid, gen });
        self.leave_cpu(core);
    }
}
