//! The ext4 fsync path and the page cache in the simulator (issue 15):
//! jobs with fio's `fsync=N` or `fdatasync=N` call fsync after every N
//! writes, and [`host::fsync`] decides what that costs (FR 2.1, Fig. 3;
//! FastResponse's fjournaling, FR 3.4). This module applies its decisions:
//! the model's I/Os go to the simulated device through the same path as the
//! threads' requests (the block layer, the device, its CQs, the interrupt
//! policy), the threads it wakes are woken through the scheduler (the
//! wake-up rule applies), and the JBD2 journal thread is a kernel thread of
//! its own on a core.
//!
//! Choices of ours, where the papers and Linux leave room:
//! - **JBD2's core** is the core of the first job that fsyncs: FR's T_Sched
//!   is the wait of JBD2 and the caller for a shared CPU (FR 2.2 "Root
//!   Cause 3"); kjournald2 is not pinned, and Linux wakes a thread on the
//!   waker's CPU when that is idle (`wake_affine`). A kernel thread: a
//!   switch to or from it keeps the address space (`context_switch`, never
//!   `process_switch`).
//! - **The page cache** is modelled only in runs where a job fsyncs (runs
//!   without fsync are unchanged: every request goes to the device, as
//!   before). There, a write of a `direct=0` job is buffered: it completes
//!   in its submit call, which pays `syscall` + `submit_per_request` +
//!   `buffered_write_per_kib` per KiB (the host profile's, measured with
//!   dd). Reads always go to the device (FR's datasets exceed memory, FR
//!   4.1: "all exceed 10 GB").
//! - **Dirty data.** A buffered write of a job that fsyncs dirties its own
//!   file (one file per job clone, fio's default `jobname.N.0`): its D1 at
//!   its next fsync. A buffered write of a job that does not fsync joins
//!   the running transaction as ordered data (`Fsync::dirtied`), which the
//!   next commit writes before the journal: D2 (FR 2.2 "Root Cause 2": the
//!   TO applications, HDFS, write through the page cache). Commits come
//!   from fsyncs and from JBD2's commit timer, every 5 s
//!   (`JBD2_DEFAULT_MAX_COMMIT_AGE`, include/linux/jbd2.h). The flusher
//!   (Documentation/admin-guide/sysctl/vm.rst: `dirty_writeback_centisecs`
//!   500, `dirty_expire_centisecs` 3000) writes back data older than 30 s,
//!   which the 5 s commits never leave; the background ratio (10% of
//!   memory) is not reached in a run's seconds at FR's rates (Bayes writes
//!   87 MB/s). So the flusher is not modelled.
//! - **Block size** 4 KiB (ext4's default, `mke2fs.conf`); a model I/O of
//!   more than 128 KiB goes to the device as 128 KiB requests (FR 4.1: TO
//!   requests are "all around 128 KB"), done at its last.
//! - **Criticality** (FR 3.2, 4.2, 4.4): the D1 and f-transaction I/Os of a
//!   critical caller are critical; JBD2's JD and JC are when
//!   `jbd2_critical` is set; D2 never is.
//! - **Marks** (calibrated interrupts): every model I/O carries the fsync
//!   marks of the job it serves (TOS Table 1: fsync Urgent); JBD2's carry
//!   those of the first job that fsyncs.
//! - Model I/Os complete by interrupt whatever the completion mode: the
//!   kernel waits for writeback and journal I/O in `wait_on_page_writeback`
//!   and `wait_on_buffer`, not by polling (Linux polls only `HIPRI` direct
//!   I/O). Unless the host sets `fsync_io_polls` (FR 4.4's SelectISR
//!   "polls the I/O completions for those I/Os"): then the model I/Os a
//!   thread issues are polled when the completion mode polls for it
//!   (`select-isr`: a critical job, JBD2 when `jbd2_critical`; `poll` and
//!   `hybrid`: every thread, spinning at once, no hybrid sleep). They go
//!   to the thread's polled queue (no interrupt, the policy never sees
//!   them, LD's pieces found by the poller as for a polled request), and
//!   where the thread would sleep in the path with such I/Os out it spins
//!   (`Kind::Spin`, its system time) until the device posts one; it then
//!   takes what it found (`per_completion` each) and applies the model's
//!   step in its own context (no wake-up of itself, no switch). A wake-up
//!   by another thread ends its spin too. The breakdown counts a polled
//!   I/O to when its thread finds it.
//! - An asynchronous engine drains what it has in flight before the fsync.
//! - `fsync` with `direct=1` is refused (the size change of an O_DIRECT
//!   append, a metadata-only commit, is not modelled), and so is
//!   `end_fsync`.
//! - The breakdown (FR Fig. 5b, 15b): a task's own I/Os (D1, the
//!   f-transaction) count for its fsync, JBD2's for every fsync under way
//!   when they complete, from when each began (issue to the interrupt
//!   handler's delivery, or to its poller finding it), and the wait of the
//!   thread that I/O's completion woke, to its getting the CPU, counts in
//!   the same part; T_Sched is the wait after the two hand-offs only, JBD2
//!   woken for the commit and the fsync thread woken after it (FR 2.2:
//!   "the waiting time for process scheduling after waking up JBD2 thread
//!   and fsync thread"; FR 4.4: the boost cuts T_D1, T_D2, T_JD and T_JC
//!   "because these four I/O operations all involve process scheduling").
//!   Until issue 36 T_Sched counted every wake-up. A critical caller
//!   under fjournaling never waits for JBD2: JBD2's part is not its. Under fjournaling the
//!   f-transaction's header and extent blocks count as JD and its commit
//!   block as JC (issued together, so they overlap).

use host::fsync::{IoId, IoKind, Step as FsStep, Thread as FsThread};
use policy::Nanos;

use crate::cause::{Cause, Mix};
use crate::events::Ev;
use crate::limits::MAX_SERVICE;
use crate::workload::Waiter;
use crate::world::{Kind, RState, Step, TState, World};

/// ext4's block size: 4 KiB (`mke2fs.conf` default `blocksize = 4096`).
pub const BLOCK: u64 = 4096;
/// The largest request a model I/O goes to the device as (FR 4.1: TO
/// requests are "all around 128 KB").
pub const MAX_IO: u64 = 128 * 1024;
/// JBD2's commit timer (`j_commit_interval`): 5 s,
/// `JBD2_DEFAULT_MAX_COMMIT_AGE` in include/linux/jbd2.h.
pub const COMMIT_INTERVAL: Nanos = 5 * policy::SEC;

impl World {
    /// The model I/O request slot `req` belongs to, if it is one.
    pub(crate) fn journal_io(&self, req: u32) -> Option<IoId> {
        self.journal.as_ref()?.io_of(req)
    }

    /// Whether the submit call serves `req` from the page cache.
    pub(crate) fn buffered(&self, req: u32) -> bool {
        let r = &self.requests[req as usize];
        r.write
            && self
                .journal
                .as_ref()
                .is_some_and(|j| j.buffers(r.tid as usize))
    }

    /// The submit call's extra cost for the batch's buffered writes.
    pub(crate) fn buffered_cost(&self, batch: &[u32]) -> Nanos {
        if self.journal.is_none() {
            return 0;
        }
        batch
            .iter()
            .filter(|&&r| self.buffered(r))
            .map(|&r| self.host.buffered_write_per_kib * self.requests[r as usize].bytes / 1024)
            .sum()
    }

    /// The submit call hands `req` on; counts the thread's writes towards
    /// its next fsync. True if the page cache served it.
    pub(crate) fn journal_submit(&mut self, req: u32) -> bool {
        let Some(j) = self.journal.as_mut() else {
            return false;
        };
        let r = self.requests[req as usize];
        let tid = r.tid as usize;
        if !r.write {
            return false;
        }
        let blocks = u32::try_from(r.bytes.div_ceil(BLOCK)).unwrap_or(u32::MAX);
        if !j.write_submitted(tid, blocks, self.now) {
            return false;
        }
        // Written into the page cache: done in the call.
        if let Some(b) = self.block.as_mut() {
            b.forget(req);
        }
        let r = &mut self.requests[req as usize];
        r.state = RState::Delivered;
        // Not a polled completion, whatever the completion mode.
        r.polled = false;
        self.audit.submitted += 1;
        self.audit.serviced += 1;
        self.audit.delivered += 1;
        self.audit.buffered += 1;
        self.threads[tid].ready.push_back(req);
        true
    }

    /// Before the thread asks fio's loop what next: an fsync if one is
    /// due (after draining what it has in flight). True if it took over.
    pub(crate) fn fsync_plan(&mut self, tid: u32, core: u32) -> bool {
        let Some(j) = self.journal.as_mut() else {
            return false;
        };
        let t = tid as usize;
        if !j.fsync_due(t) {
            return false;
        }
        let th = &mut self.threads[t];
        if th.in_flight > 0 {
            th.needed = th.in_flight;
            th.reap_max = th.in_flight;
            let next = match th.spec.waiter {
                Waiter::Blocking => Step::Reap,
                _ => Step::GetEvents,
            };
            self.step(tid, next);
            return true;
        }
        j.fsync_begins(t, self.now);
        // The fsync system call's entry.
        let cost = self.host.syscall;
        let mix = Mix::of(Cause::Syscall);
        self.start_seg(core, Kind::Kernel, mix, cost, Step::Fsync);
        true
    }

    /// `ext4_sync_file`: the thread enters the model.
    pub(crate) fn fsync_call(&mut self, tid: u32, core: u32) {
        let critical = self.threads[tid as usize].spec.job.critical;
        let j = self.journal.as_mut().expect("fsync without a journal");
        let step = j.fsync(tid, critical, self.now);
        self.journal_go_on(tid, core, step);
    }

    /// A thread the model woke has the CPU (the caller, or JBD2).
    pub(crate) fn journal_running(&mut self, tid: u32, core: u32) {
        let j = self
            .journal
            .as_mut()
            .expect("journal work without a journal");
        let step = j.running(tid, self.now);
        self.journal_go_on(tid, core, step);
    }

    /// Applies a step taken by thread `tid` on the CPU: it pays for the
    /// I/Os it issued and the threads it woke, then returns from fsync or
    /// sleeps.
    fn journal_go_on(&mut self, tid: u32, core: u32, step: FsStep) {
        let (issue, wake, done) = self.journal_apply(step, Some(tid), None, None);
        let then = if done { Step::Plan } else { Step::JournalSleep };
        let mix = Mix::two(Cause::Submit, issue, Cause::Wakeup);
        self.start_seg(core, Kind::Kernel, mix, issue + wake, then);
    }

    /// The thread waits in the path, unless it was woken meanwhile.
    pub(crate) fn journal_sleep(&mut self, tid: u32, core: u32) {
        let j = self
            .journal
            .as_mut()
            .expect("journal work without a journal");
        if j.take_rewake(tid) {
            self.journal_running(tid, core);
            return;
        }
        let t = tid as usize;
        let unfound = self.block.as_ref().is_some_and(|b| b.has_unfound(t));
        if j.has_found(t) || unfound {
            self.journal_poll(tid, core);
            return;
        }
        if j.polled_out(t) > 0 {
            // Polled I/Os out: spin until the device posts one.
            self.threads[t].spinning = true;
            let mix = Mix::of(Cause::Poll);
            self.start_seg(core, Kind::Spin, mix, MAX_SERVICE, Step::JournalPoll);
            return;
        }
        let th = &mut self.threads[tid as usize];
        th.state = TState::Blocked;
        th.next = Step::Journal;
        self.leave_cpu(core);
    }

    /// Issues, wakes and returns what the model asks. `running`: the thread
    /// on the CPU applying it; `handler`: the core whose interrupt handler
    /// does; `cause`: the kind of the I/O whose completion the step is
    /// (None: a hand-off or the commit timer), for the breakdown of the
    /// wake-ups' waits ([`crate::fs::FileSystem::running`]). Returns the CPU
    /// it costs the thread (the submits, the wake-ups) and whether
    /// `running`'s own fsync returned.
    fn journal_apply(
        &mut self,
        step: FsStep,
        running: Option<u32>,
        handler: Option<u32>,
        cause: Option<IoKind>,
    ) -> (Nanos, Nanos, bool) {
        let (mut issue, mut wake) = (0, 0);
        for io in step.issue {
            issue += self.journal_issue(io);
        }
        for t in step.wake {
            wake += self.host.wakeup;
            self.journal_wake(t, handler, cause);
        }
        let mut done = false;
        for task in step.done {
            done |= running == Some(task);
            self.fsync_done(task);
        }
        (issue, wake, done)
    }

    /// Sends one model I/O to the device (in requests of at most
    /// [`MAX_IO`]); returns the submit cost.
    fn journal_issue(&mut self, io: host::fsync::Io) -> Nanos {
        let j = self
            .journal
            .as_ref()
            .expect("journal I/O without a journal");
        let by = j.thread(io.by);
        let critical = match (io.kind, io.by) {
            (IoKind::D2, _) => false,
            (_, FsThread::Jbd2) => self.host.jbd2_critical,
            (_, FsThread::Task(_)) => self.threads[by as usize].spec.job.critical,
        };
        let bytes = u64::from(io.blocks).max(1) * BLOCK;
        let n = bytes.div_ceil(MAX_IO);
        let polled = self.host.fsync_io_polls
            && self
                .polling
                .mode()
                .polls(self.threads[by as usize].spec.job.critical);
        let j = self.journal.as_mut().expect("journal");
        let marks = j.issued(&io, n, polled, self.now);
        for i in 0..n {
            let mut m = marks;
            m.barrier &= i + 1 == n;
            let piece = MAX_IO.min(bytes - i * MAX_IO);
            let slot = self.new_request(by, m, true, piece, polled, critical);
            let j = self.journal.as_mut().expect("journal");
            j.track(slot, io.id);
            self.block_submit(slot);
        }
        self.host.submit_per_request * n
    }

    /// Wakes a thread of the path through the scheduler: from an interrupt
    /// handler (it becomes runnable when the handler returns) or from a
    /// running thread (at once).
    fn journal_wake(&mut self, t: FsThread, handler: Option<u32>, cause: Option<IoKind>) {
        let j = self.journal.as_mut().expect("journal");
        let tid = j.woken(t, self.now, cause);
        if self.threads[tid as usize].state != TState::Blocked {
            // Still on its way to sleep (or spinning for its polled I/Os):
            // it goes on instead.
            j.rewake(tid);
            self.journal_stop_spin(tid);
            return;
        }
        match handler {
            Some(core) => self.wake_by_handler(core, tid),
            None => {
                self.enqueue_woken(tid);
                let core = self.threads[tid as usize].spec.core as u32;
                self.kick(core);
            }
        }
    }

    /// A task's fsync returned.
    fn fsync_done(&mut self, tid: u32) {
        let measuring = self.measuring(self.now);
        let j = self.journal.as_mut().expect("journal");
        j.fsync_returned(tid, self.now, measuring);
    }

    /// The handler reaped a model I/O's request; at its last, the model
    /// learns the I/O completed. True if the handler must wake a thread.
    pub(crate) fn deliver_journal(&mut self, core: u32, req: u32, io: IoId) -> bool {
        let Some((kind, step)) = self.journal_reaped(req, io) else {
            return false;
        };
        let woke = !step.wake.is_empty();
        self.journal_apply(step, None, Some(core), Some(kind));
        woke
    }

    /// A model I/O's request was reaped (by the handler, or by its polling
    /// thread): at its last, the model's step for the I/O's completion.
    fn journal_reaped(&mut self, req: u32, io: IoId) -> Option<(IoKind, FsStep)> {
        let r = &mut self.requests[req as usize];
        if r.state != RState::Posted {
            self.audit.duplicates += 1;
            return None;
        }
        r.state = RState::Free;
        self.free.push(req);
        self.audit.delivered += 1;
        self.audit.consumed += 1;
        let j = self.journal.as_mut().expect("journal");
        j.reaped(req, io, self.now)
    }

    /// The device posts a polled model I/O's request (`fsync_io_polls`):
    /// its thread takes it at its next poll, now if it is spinning.
    pub(crate) fn journal_poll_post(&mut self, req: u32) {
        let r = &mut self.requests[req as usize];
        if r.state != RState::InDevice {
            self.audit.duplicates += 1;
            return;
        }
        r.state = RState::Posted;
        let tid = r.tid;
        let j = self.journal.as_mut().expect("journal");
        j.found(tid, req);
        self.journal_stop_spin(tid);
    }

    /// Ends the thread's spin for its polled model I/Os, if it is spinning
    /// for them: it takes what it found ([`Step::JournalPoll`]) now, or
    /// when it runs again if the spin was cut short.
    fn journal_stop_spin(&mut self, tid: u32) {
        if !self.threads[tid as usize].spinning {
            return;
        }
        let mix = Mix::of(Cause::Completion);
        if self.end_spin(tid, Step::JournalPoll, 0, mix, Step::JournalPoll) {
            self.threads[tid as usize].spinning = false;
        }
    }

    /// The thread polls for its model I/Os (`fsync_io_polls`): it takes
    /// what the device posted (`per_completion` each, as the handler
    /// would) and applies the model's steps in its own context, then goes
    /// on in the path (sleeps, spins again, or returns from fsync).
    pub(crate) fn journal_poll(&mut self, tid: u32, core: u32) {
        self.threads[tid as usize].spinning = false;
        if self.block.is_some() {
            self.find_polled_pieces(tid);
        }
        let j = self.journal.as_mut().expect("journal");
        let found = j.take_found(tid);
        if found.is_empty() {
            self.journal_sleep(tid, core);
            return;
        }
        let measuring = self.measuring(self.now);
        // The completions taken, then the submits and wake-ups the model's
        // steps for them cost (crate::cause).
        let (mut reap, mut issue, mut wake) = (0, 0, 0);
        let mut done = false;
        for &req in &found {
            reap += self.host.per_completion;
            if measuring {
                self.counts.polled += 1;
                self.threads[tid as usize].polled += 1;
            }
            let Some(io) = self.journal_io(req) else {
                self.audit.duplicates += 1;
                continue;
            };
            let Some((kind, mut step)) = self.journal_reaped(req, io) else {
                continue;
            };
            // Its own I/O's completion: no wake-up, it goes on.
            let j = self.journal.as_mut().expect("journal");
            let me = j.who(tid);
            if step.wake.contains(&me) {
                step.wake.retain(|&w| w != me);
                j.rewake(tid);
            }
            let (i, w, d) = self.journal_apply(step, Some(tid), None, Some(kind));
            issue += i;
            wake += w;
            done |= d;
        }
        let then = if done { Step::Plan } else { Step::JournalSleep };
        let mix = Mix::three(Cause::Completion, reap, Cause::Submit, issue, Cause::Wakeup);
        self.start_seg(core, Kind::Kernel, mix, reap + issue + wake, then);
    }

    /// JBD2's commit timer.
    pub(crate) fn commit_timer(&mut self) {
        let live = self.threads[..self.job_threads]
            .iter()
            .any(|t| t.state != TState::Done);
        if !live {
            return;
        }
        let j = self.journal.as_mut().expect("journal");
        let jbd2 = j.jbd2();
        let step = j.commit_timer(self.now);
        // The timer's softirq is not charged (one per 5 s).
        self.journal_apply(step, None, None, None);
        self.events
            .push(self.now + COMMIT_INTERVAL, Ev::Commit { tid: jbd2 });
    }
}

#[cfg(test)]
mod tests {
    use crate::Journal;

    #[test]
    fn parses_and_prints() {
        assert_eq!("ordered".parse(), Ok(Journal::Ordered));
        assert_eq!("fjournal".parse(), Ok(Journal::Fjournal));
        assert_eq!(Journal::Fjournal.to_string(), "fjournal");
        assert!("writeback".parse::<Journal>().is_err());
    }
}
