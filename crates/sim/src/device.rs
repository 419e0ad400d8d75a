//! The NVMe controller: commands from the per-core submission queues go to
//! the device model (crate `service`: its units, ceilings and service-time
//! draws, the same model the emulator applies), whose started commands
//! become completion events; each completion is posted to its queue's CQ
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
            self.device_take(req);
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
        self.device_take(req);
    }

    /// Hands `req` to the device model: a free unit starts it at once
    /// (the IOPS and bandwidth ceilings bound only the sustained rate,
    /// [`service::Gate`]); otherwise it waits in arrival order.
    fn device_take(&mut self, req: u32) {
        let r = self.requests[req as usize];
        let command = service::Command {
            tag: req,
            write: r.write,
            bytes: r.bytes,
        };
        if let Some(s) = self.device.submit(self.now, command) {
            self.device_started(s);
        }
    }

    /// Schedules a started command's completion at its due time.
    fn device_started(&mut self, s: service::Started<u32>) {
        let req = s.tag;
        let core = self.threads[self.requests[req as usize].tid as usize]
            .spec
            .core as u32;
        self.events.push(s.due, Ev::ServiceDone { req, core });
        let owner = self.piece(req).map_or(req, |p| p.parent);
        self.path.started(owner, s.start);
    }

    /// The unit that served a command is free: it starts the next waiting
    /// one, if any.
    fn device_next(&mut self) {
        if let Some(s) = self.device.unit_freed(self.now) {
            self.device_started(s);
        }
    }

    pub(crate) fn service_done(&mut self, req: u32) {
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
            self.device_next();
            return;
        }
        let q = self.threads[self.requests[req as usize].tid as usize].queue;
        let q_ = &mut self.queues[q as usize];
        if q_.overflow.is_empty() {
            self.post(q, req);
        } else {
            q_.overflow.push_back(req);
        }
        self.device_next();
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
