//! io_uring's host-side completion batching (issue 25, item 4), applied:
//! [`host::uring`] decides, per waiting call, whether the thread sleeps,
//! spins, is woken to run task work or returns; this module carries its
//! decisions out on the simulator's threads.
//!
//! **Which strategy a job's thread uses.** A job's own ring flags come
//! first, as they set the ring up (fio 3.33 `fio_ioring_queue_init`):
//! `hipri` is IOPOLL, `sqthread_poll` SQPOLL. Every other `ioengine=io_uring`
//! job takes the run's strategy: `sim --uring NAME[...]`, else the host
//! profile's `uring` key, else `min-complete`, what the simulator has always
//! done (so a run that names none is unchanged). `--uring iopoll` and
//! `--uring sqpoll` set the ring flag on every io_uring job (its marks then
//! follow our io_uring row, `jobs::Sqe`). Other engines are not affected.
//!
//! **How each is applied.**
//! - `min-complete`: the interrupt's handler puts the completion in the
//!   thread's CQ ring (`ready`) and wakes the thread once the wait has what
//!   it needs; the thread takes what is already in its ring without a
//!   system call.
//! - `task-work`: the same, but the handler wakes the sleeping thread for
//!   every interrupt that brings it a completion; short of what it needs it
//!   goes back to sleep (a wake-up and two context switches each).
//! - `defer-taskrun`: the handler queues the completion on the thread's
//!   local list (`deferred`), not its CQ ring; the thread is woken once, when
//!   the list has what the wait needs; the list goes to the ring whenever the
//!   thread enters the kernel: its reaping `io_uring_enter`, its submitting
//!   one (fio commits with IORING_ENTER_GETEVENTS, which runs it), and the
//!   wake that ends a wait. So the thread's user-space check of its ring sees
//!   only what its last entry ran, and more of its reaps make a system call.
//! - `min-wait`: `defer-taskrun` with the min timer: the wait holds out for
//!   `nr` (default the job's `iodepth_batch_complete_max`, capped at what is
//!   in flight), and at `min_wait` returns what is there; with nothing there
//!   it returns at the next completion, or empty at the timeout (at
//!   `min_wait` without one). The timer's wake-up costs a timer interrupt and
//!   a wake-up, as hybrid polling's does. A wait that returns with fewer than
//!   fio's `iodepth_batch_complete_min` hands them to fio's loop, which asks
//!   again ([`jobs::Issuer`]).
//! - `iopoll`: the job polls, exactly as `hipri` ([`crate::world::completion`]).
//! - Whatever the strategy (min-wait aside), a job with
//!   `iodepth_batch_complete_min=0` never sleeps in its wait: fio's
//!   getevents passes `actual_min` 0 and calls `io_uring_enter` again until
//!   it has one ([`host::uring::Wait::enter_busy`]); the thread spins, and
//!   the handler's completion ends the spin.
//! - `sqpoll`: the submit costs the thread no system call (the SQ thread
//!   takes the SQEs; its own work runs on its own core, not modelled as a
//!   core of the host: its CPU is reported in the note as one core for the
//!   run, as it spins while it has work and sleeps only after
//!   `sq_thread_idle`, one second by default, io_uring/sqpoll.c); the
//!   thread never calls `io_uring_enter` to wait (fio's getevents with an SQ
//!   thread): it spins on its CQ ring until the handler has posted what it
//!   needs. Completions still come by interrupt.
//!
//! The costs are the host profile's: the handler's per completion, the
//! wake-up and context switch, the system call. How the kernel's work on a
//! completion divides between the handler and the task's task work under
//! DEFER_TASKRUN is not measured here, so the handler keeps all of it.

use host::uring::{Action, Strategy, Wait};

use crate::cause::{Cause, Mix};
use crate::events::Ev;
use crate::world::{Kind, Step, TState, World};

impl World {
    /// The thread's io_uring strategy, if it is an io_uring job's.
    pub(crate) fn uring(&self, tid: u32) -> Option<Strategy> {
        self.threads[tid as usize].spec.uring
    }

    /// Whether the thread's completions wait on its local list until it
    /// enters the kernel (DEFER_TASKRUN, min-wait).
    pub(crate) fn defers(&self, tid: u32) -> bool {
        self.uring(tid).is_some_and(Strategy::defers)
    }

    /// The thread enters the kernel: its deferred completions run and
    /// their CQEs reach its ring.
    pub(crate) fn run_deferred(&mut self, tid: u32) {
        let th = &mut self.threads[tid as usize];
        if !th.deferred.is_empty() {
            let d = std::mem::take(&mut th.deferred);
            th.ready.extend(d);
        }
    }

    /// The thread's waiting call has fewer than it needs (`got`): it
    /// sleeps or spins under its strategy, its wait entered now unless it
    /// is one it was woken from (task-work).
    pub(crate) fn uring_block(&mut self, tid: u32, core: u32, strategy: Strategy) {
        let now = self.now;
        let th = &mut self.threads[tid as usize];
        let have = th.got.len() as u32;
        let action = match th.uring_wait.as_mut() {
            Some(w) => w.resync(have),
            None => {
                // fio's iodepth_batch_complete_min=0: its getevents never
                // blocks (host::uring::Wait::enter_busy); min-wait's own
                // nr and timer stand.
                let busy = th.spec.job.iodepth_batch_complete_min == 0
                    && !matches!(strategy, Strategy::MinWait(_));
                let (w, a) = if busy {
                    Wait::enter_busy(strategy, now, th.needed, have)
                } else {
                    Wait::enter(strategy, now, th.needed, have)
                };
                th.uring_wait = Some(w);
                if let Some(at) = w.timer_at() {
                    th.sleep_gen = th.sleep_gen.wrapping_add(1);
                    let gen = th.sleep_gen;
                    self.events.push(at, Ev::Timer { tid, gen });
                }
                a
            }
        };
        match action {
            Action::Return { .. } => {
                // Enough already: carry on reaping.
                self.uring_done(tid);
                self.step(tid, Step::Reap);
            }
            Action::Spin => {
                let th = &mut self.threads[tid as usize];
                th.spinning = true;
                // Ends when the handler posts what it needs
                // ([`World::spin_found`]).
                let (mix, max) = (Mix::of(Cause::Poll), crate::limits::MAX_SERVICE);
                self.start_seg(core, Kind::Spin, mix, max, Step::Poll);
            }
            Action::Sleep | Action::Bounce => {
                let th = &mut self.threads[tid as usize];
                th.state = TState::Blocked;
                th.next = Step::Reap;
                self.leave_cpu(core);
            }
        }
    }

    /// The wait is over: the call returns what it has taken and what is
    /// in its ring (`needed` 0), its timer no longer counts.
    fn uring_done(&mut self, tid: u32) {
        self.run_deferred(tid);
        let th = &mut self.threads[tid as usize];
        th.uring_wait = None;
        th.needed = 0;
        th.sleep_gen = th.sleep_gen.wrapping_add(1);
    }

    /// A completion reached a blocked io_uring thread: whether the handler
    /// wakes it.
    pub(crate) fn uring_posted(&mut self, tid: u32) -> bool {
        let now = self.now;
        let th = &mut self.threads[tid as usize];
        // No wait in progress while blocked: its timer ended it and the
        // timer's interrupt, already raised, wakes the thread.
        let Some(w) = th.uring_wait.as_mut() else {
            return false;
        };
        match w.posted(now) {
            Action::Return { .. } => {
                self.uring_done(tid);
                true
            }
            Action::Bounce => true,
            Action::Sleep | Action::Spin => false,
        }
    }

    /// A thread spinning on its ring (SQPOLL's, or fio's busy getevents)
    /// got a completion from the handler: it finds it when it has what it
    /// needs.
    pub(crate) fn uring_spin_post(&mut self, tid: u32) {
        let now = self.now;
        let th = &mut self.threads[tid as usize];
        let Some(w) = th.uring_wait.as_mut() else {
            return;
        };
        if let Action::Return { .. } = w.posted(now) {
            self.uring_done(tid);
            self.spin_found(tid);
        }
    }

    /// The min-wait timer of a blocked thread fired.
    pub(crate) fn uring_timer(&mut self, tid: u32, gen: u32) {
        let now = self.now;
        let th = &mut self.threads[tid as usize];
        if th.sleep_gen != gen || th.state != TState::Blocked {
            return;
        }
        let Some(w) = th.uring_wait.as_mut() else {
            return;
        };
        match w.timer(now) {
            Action::Return { .. } => {
                if self.measuring(now) {
                    self.counts.uring_timeouts += 1;
                }
                self.uring_done(tid);
                let core = self.threads[tid as usize].spec.core as u32;
                self.raise(core, crate::world::IrqWork::Timer { tid });
            }
            _ => {
                if let Some(at) = w.timer_at() {
                    self.events.push(at, Ev::Timer { tid, gen });
                }
            }
        }
    }
}

/// One io_uring job's figures in the window (its clones together).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UringFigures {
    pub job: String,
    pub strategy: String,
    pub ios: u64,
    pub wakeups: u64,
    pub context_switches: u64,
    /// The job's threads' CPU (user and system, spinning included), ns.
    pub cpu: Nanos,
}

impl UringFigures {
    fn per_io(&self, x: u64) -> f64 {
        if self.ios == 0 {
            0.0
        } else {
            x as f64 / self.ios as f64
        }
    }
}

use policy::Nanos;

impl World {
    /// Each io_uring job's wake-ups, context switches and CPU in the
    /// window, in job order.
    pub(crate) fn uring_figures(&self) -> Vec<UringFigures> {
        let mut out: Vec<UringFigures> = Vec::new();
        for (tid, th) in self.threads[..self.job_threads].iter().enumerate() {
            let Some(s) = th.spec.uring else { continue };
            let a = self.cpu.account(tid as u32);
            let name = th.spec.job.name.as_str();
            let i = match out.iter().position(|f| f.job == name) {
                Some(i) => i,
                None => {
                    out.push(UringFigures {
                        job: name.to_string(),
                        strategy: s.to_string(),
                        ..UringFigures::default()
                    });
                    out.len() - 1
                }
            };
            let f = &mut out[i];
            f.ios += th.read.ops + th.write.ops;
            f.wakeups += a.wakeups;
            f.context_switches += a.ctx;
            f.cpu += a.usr + a.sys;
        }
        out
    }

    /// The note on the run's io_uring jobs, if it has any.
    pub(crate) fn uring_note(&self) -> Option<String> {
        let figures = self.uring_figures();
        if figures.is_empty() {
            return None;
        }
        let window = self.window_to.saturating_sub(self.window_from);
        let per_job: Vec<String> = figures
            .iter()
            .map(|f| {
                let mut s = format!(
                    "job '{}' {}: {} wake-ups ({:.3} per I/O), {} context switches ({:.3} per I/O), CPU {:.2}us per I/O",
                    f.job,
                    f.strategy,
                    f.wakeups,
                    f.per_io(f.wakeups),
                    f.context_switches,
                    f.per_io(f.context_switches),
                    f.per_io(f.cpu) / 1_000.0
                );
                if f.strategy == "sqpoll" {
                    s += &format!(
                        ", and its SQ thread one core for the window ({}: it spins while it has work, sq_thread_idle 1s)",
                        policy::time::readable(window)
                    );
                }
                s
            })
            .collect();
        let mut note = format!("io_uring (host::uring): {}", per_job.join("; "));
        if self.counts.uring_timeouts > 0 {
            note += &format!(
                "; {} wait(s) ended by min-wait's timer",
                self.counts.uring_timeouts
            );
        }
        let fixed = self.threads[..self.job_threads]
            .iter()
            .any(|t| t.spec.job.uring.registerfiles || t.spec.job.uring.fixedbufs);
        if fixed {
            note += "; registerfiles/fixedbufs: the per-request submit cost is the host profile's submit_per_request either way (what they save, an fget/fput and the page pinning per request, is not measured here)";
        }
        Some(note)
    }
}
