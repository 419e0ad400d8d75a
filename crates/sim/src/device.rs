//! The NVMe controller: commands from the per-core submission queues are
//! served by `parallelism` internal units, in arrival order, a free unit at
//! once and the sustained rate bounded by the profile's IOPS ceiling (a
//! token bucket, one token per unit) and its bandwidth ceiling if it has
//! one (a bucket of bytes); each completion is posted to its queue's CQ
//! and shown to that queue's policy, which decides when to interrupt.

use policy::{Command, Completion, Nanos};

use crate::events::Ev;
use crate::world::{IrqWork, RState, World};

impl World {
    /// The host rang the SQ doorbell for `req`.
    pub(crate) fn device_submit(&mut self, req: u32) {
        let owner = self.piece(req).map_or(req, |p| p.parent);
        let window = self.window();
        self.path.at_device(owner, self.now, window);
        if self.is_piece(req) {
            self.audit.pieces_submitted += 1;
        } else {
            self.audit.submitted += 1;
        }
        let r = &mut self.requests[req as usize];
        r.state = RState::InDevice;
        let (marks, tid) = (r.marks, r.tid);
        if r.polled {
            // A polled queue: no interrupt, nothing for the policy.
            self.device.pending.push_back(req);
            self.device_start();
            return;
        }
        let q = self.threads[tid as usize].queue;
        self.queues[q as usize].policy.submitted(
            self.now,
            Command {
                id: req as u64,
                marks,
            },
        );
        self.rearm(q);
        self.device.pending.push_back(req);
        self.device_start();
    }

    /// Starts as many waiting commands as there are free units. A free unit
    /// starts its command at once; the IOPS ceiling bounds only the
    /// sustained rate ([`service::Gate`], a token bucket of one token per
    /// unit), and so does the bandwidth ceiling where the profile has one
    /// (a bucket of bytes, 4 KiB per unit). A start held by the bucket is taken at the bucket's time,
    /// which changes nothing, since in arrival order no other command could
    /// start before.
    pub(crate) fn device_start(&mut self) {
        loop {
            let d = &mut self.device;
            if d.busy >= d.parallelism {
                return;
            }
            let Some(req) = d.pending.pop_front() else {
                return;
            };
            d.busy += 1;
            let r = self.requests[req as usize];
            let (spacing, per_byte, sampler) = if r.write {
                (d.write_spacing, d.write_per_byte, &d.write)
            } else {
                (d.read_spacing, d.read_per_byte, &d.read)
            };
            let start = d.gate.start_sized(self.now, spacing, r.bytes, per_byte);
            let took = sampler.sample(&mut d.rng, r.bytes).max(1);
            let begins = service::ceil(start);
            let core = self.threads[r.tid as usize].spec.core as u32;
            self.events
                .push(begins + took, Ev::ServiceDone { req, core });
            let owner = self.piece(req).map_or(req, |p| p.parent);
            self.path.started(owner, begins);
        }
    }

    pub(crate) fn service_done(&mut self, req: u32) {
        self.device.busy -= 1;
        let owner = self.piece(req).map_or(req, |p| p.parent);
        let window = self.window();
        self.path.serviced(owner, self.now, window);
        if self.is_piece(req) {
            self.audit.pieces_serviced += 1;
        } else {
            self.audit.serviced += 1;
        }
        if self.requests[req as usize].polled {
            self.poll_post(req);
            self.device_start();
            return;
        }
        let q = self.threads[self.requests[req as usize].tid as usize].queue;
        let q_ = &mut self.queues[q as usize];
        if q_.overflow.is_empty() {
            self.post(q, req);
        } else {
            q_.overflow.push_back(req);
        }
        self.device_start();
    }

    /// Writes the CQE (or holds it while the CQ is full) and asks the policy.
    fn post(&mut self, q: u32, req: u32) {
        let r = self.requests[req as usize];
        let cqe = Completion::ok(req as u64, r.marks);
        let measuring = self.measuring(self.now);
        let queue = &mut self.queues[q as usize];
        if queue.cq.post(self.now, cqe).is_err() {
            queue.overflow.push_back(req);
            self.audit.cq_full += 1;
            return;
        }
        self.requests[req as usize].state = RState::Posted;
        // The gap ends at a post in the window; it may start before it.
        if let Some(last) = queue.last_post.replace(self.now) {
            if measuring {
                self.gaps.saturating_record(self.now - last);
            }
        }
        if let Some(kind) = queue.policy.completed(self.now, cqe) {
            let core = queue.irq_core;
            self.raise(core, IrqWork::Device { queue: q, kind });
        }
        self.rearm(q);
    }

    /// The handler freed CQ slots: post what the device held back.
    pub(crate) fn drain_overflow(&mut self, q: u32) {
        while let Some(&req) = self.queues[q as usize].overflow.front() {
            if self.queues[q as usize].cq.occupied() >= self.queues[q as usize].cq.capacity() {
                return;
            }
            self.queues[q as usize].overflow.pop_front();
            self.post(q, req);
        }
    }

    /// Keeps an event scheduled no later than the policy's deadline. A
    /// deadline pushed later (adaptive extends its timer on every
    /// completion) does not add an event: the earlier one, when it comes,
    /// schedules the next.
    pub(crate) fn rearm(&mut self, q: u32) {
        let queue = &mut self.queues[q as usize];
        queue.armed = queue.policy.deadline();
        if let Some(t) = queue.armed {
            let t = t.max(self.now);
            if !matches!(queue.scheduled, Some(s) if s <= t) {
                queue.scheduled = Some(t);
                self.events.push(t, Ev::Deadline { queue: q });
            }
        }
    }

    pub(crate) fn deadline(&mut self, q: u32, now: Nanos) {
        let queue = &mut self.queues[q as usize];
        if queue.scheduled == Some(now) {
            queue.scheduled = None;
        }
        if queue.armed.is_some_and(|t| t <= now) {
            queue.armed = None;
            if let Some(kind) = queue.policy.deadline_reached(now) {
                let core = queue.irq_core;
                self.raise(core, IrqWork::Device { queue: q, kind });
            }
        }
        self.rearm(q);
    }
}
