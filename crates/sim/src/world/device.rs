//! The host's side of the NVMe controller ([`crate::nvme`]): which request
//! a command is, the I/O path's records and the audit's counts around each
//! of the controller's calls, and the interrupts it decides on raised on
//! their cores.

use policy::Nanos;

use crate::nvme::{Irq, Post, Tag};
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
        let r = *r;
        if r.polled && self.central_owns(r.tid) {
            self.central_submitted(r.tid);
        }
        let th = &self.threads[r.tid as usize];
        // A polled queue: no interrupt, nothing for the policy.
        let queue = (!r.polled).then_some(th.queue);
        let command = service::Command {
            tag: Tag {
                req,
                core: th.spec.core as u32,
            },
            write: r.write,
            bytes: r.bytes,
        };
        if let Some(start) = self
            .nvme
            .submit(self.now, queue, command, r.marks, &mut self.events)
        {
            self.path.started(owner, start);
        }
    }

    /// The unit that served a command is free: it starts the next waiting
    /// one, if any.
    fn device_next(&mut self) {
        if let Some((req, start)) = self.nvme.unit_freed(self.now, &mut self.events) {
            let owner = self.piece(req).map_or(req, |p| p.parent);
            self.path.started(owner, start);
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
        let r = self.requests[req as usize];
        if r.polled {
            self.poll_post(req);
            self.device_next();
            return;
        }
        let q = self.threads[r.tid as usize].queue;
        if !self.nvme.behind_held(q, req) {
            self.post(q, req);
        }
        self.device_next();
    }

    /// Writes the CQE (or the controller holds it while the CQ is full),
    /// raises the interrupt the policy decided on, and rearms its timer.
    fn post(&mut self, q: u32, req: u32) {
        let marks = self.requests[req as usize].marks;
        let measuring = self.measuring(self.now);
        match self.nvme.post(self.now, q, req, marks, measuring) {
            Post::Held => self.audit.cq_full += 1,
            Post::Written(irq) => {
                self.requests[req as usize].state = RState::Posted;
                self.interrupt(irq);
                self.nvme.rearm(q, self.now, &mut self.events);
            }
        }
    }

    fn interrupt(&mut self, irq: Option<Irq>) {
        if let Some(Irq { core, queue, kind }) = irq {
            // A masked queue holds it ([`crate::world::suspend`]).
            if let Some(kind) = self.suspend_interrupt(queue, kind) {
                self.raise(core, IrqWork::Device { queue, kind });
            }
        }
    }

    /// The handler freed CQ slots: post what the device held back.
    pub(crate) fn drain_overflow(&mut self, q: u32) {
        while let Some(req) = self.nvme.held(q) {
            self.post(q, req);
        }
    }

    pub(crate) fn deadline(&mut self, q: u32, now: Nanos) {
        self.suspend_timer(q, now);
        let irq = self.nvme.deadline(q, now);
        self.interrupt(irq);
        self.nvme.rearm(q, now, &mut self.events);
    }
}
