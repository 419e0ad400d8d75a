//! How a waiting thread learns that its request completed (issue 15, item
//! 1): by the device's interrupt (default), or by polling its completion
//! queue, with the decisions and statistics of [`host::poll`].
//!
//! - `interrupt`: today's path, the handler wakes the sleeping thread.
//! - `poll` ([`host::poll::Mode::Poll`]): the thread does not sleep after
//!   submitting; it spins in the kernel (its core busy, counted as the
//!   thread's system time) until the device posts the entry, reaps it
//!   (`per_completion`) and returns. A polled request goes to a queue with
//!   no interrupt (Linux's `HCTX_TYPE_POLL` queues): the policy never sees
//!   it and no interrupt is raised for it.
//! - `hybrid` ([`host::poll::Mode::Hybrid`]): sleeps on a timer for half
//!   the mean latency of the request's size bucket in the last statistics
//!   window ([`host::poll::HybridStats`], Linux's `io_poll_delay = 0`), is
//!   woken by the timer's interrupt, then spins.
//! - `select-isr` ([`host::poll::Mode::SelectIsr`]): the jobs with
//!   `critical=1` poll, the others take interrupts.
//!
//! - `pas`, `dpas`, `ehp` ([`host::pas`], [`host::dpas`], [`host::ehp`]):
//!   blocking engines (and pvsync2 `hipri` jobs) poll, each request
//!   sleeping what the strategy decides at its preparation, then spinning;
//!   DPAS in its INT mode and EHP for a size above its threshold send the
//!   request to the interrupt queue instead (its `polled` is false, the
//!   thread blocks and the handler wakes it), as the DPAS artifact clears
//!   `REQ_POLLED` at submission. io_uring `hipri` jobs poll classically
//!   under them: the artifact patches the synchronous paths only, and
//!   io_uring has not slept in its polling since 5.16 (d729cf9acb93).
//! - `hybrid-iopoll` ([`host::iopoll`]): an io_uring `hipri` job's ring
//!   sleeps half the least poll time it has seen, then polls. A blocking
//!   engine takes interrupts under it (applied, not refused: a job file
//!   may mix an io_uring ring with psync jobs, and on the 6.13+ kernels
//!   that have the flag a synchronous read does not poll, 9650b453a3d4);
//!   a pvsync2 `hipri` job polls classically, as under the other modes.
//!
//! The host-wide mode polls blocking engines only (psync, sync, pvsync...).
//!
//! **Per job, fio's `hipri`** ([`jobs::Job::hipri`]): as Linux polls per
//! request, not per host, a `hipri` job's requests poll whatever the mode
//! (classic, or hybrid when the host's mode is `hybrid`) and the other
//! jobs' completions follow the mode. pvsync2 passes `RWF_HIPRI` on each
//! `preadv2` (fio engines/sync.c), which sets `REQ_HIPRI` on the bio; the
//! blocking call then polls instead of sleeping (fs/block_dev.c
//! `__blkdev_direct_IO_simple`: `if (!(iocb->ki_flags & IOCB_HIPRI) ||
//! !blk_poll(...)) io_schedule()`). io_uring's ring is set up with
//! `IORING_SETUP_IOPOLL` (fio engines/io_uring.c): its completions reach the
//! CQ ring only through polling, which `io_uring_enter(GETEVENTS, min)`
//! does, spinning until `min` (fio's `iodepth_batch_complete_min`) are
//! there (fs/io_uring.c, Linux 5.3: `io_iopoll_check` calls
//! `io_iopoll_getevents`, which polls until `*nr_events >= min` or
//! `need_resched()`; the spin yielding on `need_resched` is not modelled,
//! as for the blocking call). So a polled io_uring thread always enters the
//! kernel to reap (nothing reaches its ring without it), and completions
//! posted while it does something else wait in the device's queue for its
//! next call. Under `hybrid` an io_uring thread's next waiting call sleeps
//! once, the longest sleep of the requests it submitted since it last
//! slept, then spins. libaio cannot poll: Linux's aio drops the flag on every request (fs/aio.c `aio_prep_rw`: `ki_flags &=
//! ~IOCB_HIPRI; /* no one is going to poll for this I/O */`) and
//! `io_getevents` sleeps (`read_events`); fio offers `hipri` only with
//! pvsync2 and io_uring, and the simulator refuses it with any other
//! engine.
//!
//! **Which queue.** Linux maps a `REQ_HIPRI` request to a poll hardware
//! queue (block/blk-mq.h `blk_mq_map_queue`: `HCTX_TYPE_POLL`), an NVMe
//! queue pair created with no interrupt vector (drivers/nvme/host/pci.c,
//! the `poll_queues` parameter, Linux 5.0 on). We model a host with poll
//! queues: beside each core's interrupt-driven SQ/CQ pair it has a polled
//! one, so a polled and an interrupted job sharing a core do not share a
//! CQ. A polled completion never enters the interrupt CQ, is never shown
//! to the interrupt policy and raises no interrupt; the other job's CQ, its
//! policy and its interrupts are as they would be without it (the device's
//! units, served in arrival order, are still shared). The polled CQ holds
//! what the thread has not found yet without bound (its depth is the
//! thread's iodepth, at most the device's queue depth, checked).
//!
//! **With a block-layer scheduler** (`ld`): a polled request's pieces go to
//! the polled queue too (LD's critical bypass sends a critical request
//! whole). A piece is completed, and its LD token passed on, when its
//! poller finds its entry (the completion runs in the poller's context,
//! `nvme_poll` -> `blk_mq_complete_request`, where LD frees the token):
//! at once if the thread is spinning for it, else at its next reaping call
//! (a hybrid sleep, an io_uring thread between calls). The request is
//! complete at its last piece. Finding a piece costs no CPU of its own
//! (the spin was busy anyway); the request's reap costs `per_completion`
//! as without `ld`. Hybrid's statistics see the thread's requests, not the
//! pieces.

use crate::cause::{Cause, Mix};
use crate::limits::MAX_SERVICE;
use crate::world::{Kind, RState, Step, World};

impl World {
    /// Whether `tid`'s requests complete by polling: a `hipri` job's always
    /// (pvsync2 and io_uring; the workload refuses it elsewhere), another
    /// blocking engine's when the host's mode polls for its job.
    pub(crate) fn polling(&self, tid: u32) -> bool {
        let spec = &self.threads[tid as usize].spec;
        self.polling.polls(&spec.job, spec.waiter)
    }

    /// A polling thread's call has nothing yet: hybrid sleeps first if it
    /// has not for this batch, else the thread spins on its queue.
    pub(crate) fn poll_wait(&mut self, tid: u32, core: u32) {
        let sleep = self.polling.take_sleep(tid);
        if sleep > 0 {
            if self.measuring(self.now) {
                self.counts.hybrid_sleeps += 1;
            }
            self.sleep_then(tid, core, self.now + sleep, Step::Reap);
            return;
        }
        self.threads[tid as usize].spinning = true;
        // Ends when the device posts the entry ([`World::poll_post`]); a
        // segment this long ending on its own only spins on.
        self.start_seg(
            core,
            Kind::Spin,
            Mix::of(Cause::Poll),
            MAX_SERVICE,
            Step::Poll,
        );
    }

    /// The device posts a polled request's entry: its thread finds it at
    /// its next poll. A spinning thread's spin ends now and it reaps the
    /// entry (`per_completion`, as the handler would); one sleeping (hybrid)
    /// or off its CPU finds it when it runs.
    pub(crate) fn poll_post(&mut self, req: u32) {
        if let Some(piece) = self.piece(req) {
            self.poll_post_piece(req, piece);
            return;
        }
        if self.journal_io(req).is_some() {
            self.journal_poll_post(req);
            return;
        }
        let r = &mut self.requests[req as usize];
        if r.state != RState::InDevice {
            self.audit.duplicates += 1;
            return;
        }
        r.state = RState::Delivered;
        self.audit.delivered += 1;
        let tid = r.tid;
        self.path.delivered(req, self.now);
        self.polling.posted(tid, req, self.now);
        let th = &mut self.threads[tid as usize];
        th.ready.push_back(req);
        if !th.spinning || th.got.len() + th.ready.len() < th.needed as usize {
            return;
        }
        self.spin_found(tid);
    }

    /// A spinning thread finds what it spins for: its spin ends now and it
    /// reaps (`per_completion`, as the handler would), or, cut short by a
    /// handler or a preemption, when it runs again.
    pub(crate) fn spin_found(&mut self, tid: u32) {
        self.threads[tid as usize].spinning = false;
        let reap = self.host.per_completion;
        let mix = Mix::of(Cause::Completion);
        self.end_spin(tid, Step::Poll, reap, mix, Step::Reap);
    }

    /// The device posts a polled piece of an `ld` request: a spinning
    /// thread finds it now (the piece completes, its token passes on, the
    /// request is posted at its last piece); any other finds it at its
    /// next reaping call ([`World::find_polled_pieces`]).
    fn poll_post_piece(&mut self, slot: u32, piece: crate::blk::Piece) {
        let r = &mut self.requests[slot as usize];
        if r.state != RState::InDevice {
            self.audit.duplicates += 1;
            return;
        }
        r.state = RState::Posted;
        let tid = r.tid;
        if self.threads[tid as usize].spinning {
            self.find_polled_piece(slot, piece);
        } else {
            let b = self.block.as_mut().expect("a piece has a block layer");
            b.unfound(tid as usize, slot);
        }
    }

    /// The thread's reaping call polls: it finds the pieces posted for it
    /// while it was not spinning.
    pub(crate) fn find_polled_pieces(&mut self, tid: u32) {
        loop {
            let Some(b) = self.block.as_mut() else { return };
            let Some((slot, piece)) = b.next_unfound(tid as usize) else {
                return;
            };
            self.find_polled_piece(slot, piece);
        }
    }

    /// A request of thread `tid` prepared now ([`World::new_request`]),
    /// `polled` if its thread polls: a sleep strategy decides first whether
    /// it polls, and how long its thread sleeps ([`crate::polling`]).
    pub(crate) fn new_routed_request(
        &mut self,
        tid: u32,
        marks: policy::Marks,
        write: bool,
        bytes: u64,
        polled: bool,
        critical: bool,
    ) -> u32 {
        let waiter = self.threads[tid as usize].spec.waiter;
        if !(polled && self.polling.decides(waiter)) {
            return self.new_request(tid, marks, write, bytes, polled, critical);
        }
        let core = self.threads[tid as usize].spec.core as u32;
        let (io, d) = self.polling.decide(tid, core, self.now, bytes, write);
        let slot = self.new_request(tid, marks, write, bytes, d.polled(), critical);
        let measuring = self.measuring(self.now);
        self.polling.record(tid, core, slot, io, d, measuring);
        slot
    }

    /// Whether `tid` spins for what it waits for: it polls, and a sleep
    /// strategy did not send all of it to interrupts.
    pub(crate) fn spins(&self, tid: u32) -> bool {
        self.polling(tid) && !self.polling.waits_by_interrupt(tid)
    }

    /// The thread's call took `got[from..]` now: if it slept, it woke now;
    /// each taken request decided by a sleep strategy is reported to it.
    pub(crate) fn sleep_found(&mut self, tid: u32, from: usize) {
        if self.polling.sleep_counts().is_none() {
            return;
        }
        let core = self.threads[tid as usize].spec.core as u32;
        let now = self.now;
        self.polling.polls_now(tid, core, now);
        let measuring = self.measuring(now);
        let th = &self.threads[tid as usize];
        for &req in &th.got[from..] {
            let issued = self.requests[req as usize].issued;
            self.polling.found(tid, core, req, issued, now, measuring);
        }
    }

    /// What the sleep strategy did, under its modes.
    pub(crate) fn sleep_counts(&self) -> Option<crate::polling::SleepCounts> {
        self.polling.sleep_counts()
    }

    /// Hybrid polling: the batch just submitted sleeps the longest of its
    /// requests' sleeps ([`host::poll::Completions::submitted`]).
    pub(crate) fn hybrid_submitted(&mut self, tid: u32, batch: &[u32]) {
        let requests = &self.requests;
        let polled = batch
            .iter()
            .map(|&req| requests[req as usize])
            .filter(|r| r.polled)
            .map(|r| (r.bytes, r.write));
        self.polling.submitted(tid, self.now, polled);
    }

    /// The thread's call took `got[from..]`: each polled one ended now, a
    /// sample of hybrid polling's statistics (from its submit call).
    pub(crate) fn hybrid_ended(&mut self, tid: u32, from: usize) {
        let th = &self.threads[tid as usize];
        for &req in &th.got[from..] {
            let r = self.requests[req as usize];
            if r.polled {
                let latency = self.now.saturating_sub(r.issued);
                self.polling.ended(self.now, r.bytes, r.write, latency);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Completion;

    #[test]
    fn parses_the_modes() {
        for c in [
            Completion::Interrupt,
            Completion::Poll,
            Completion::Hybrid,
            Completion::SelectIsr,
        ] {
            assert_eq!(c.as_str().parse::<Completion>(), Ok(c));
        }
        assert!("spin".parse::<Completion>().is_err());
        assert!(Completion::SelectIsr.polls(true));
        assert!(!Completion::SelectIsr.polls(false));
        assert!(!Completion::Interrupt.polls(true));
    }
}
