//! `uring`: io_uring's own answer to the problem calibrated interrupts
//! solve, on the host side (issue 25, item 4). The device may interrupt
//! once per completion; io_uring decides how many of those completions
//! wake the waiting task, and when. Each strategy is one row of
//! [`STRATEGIES`] (name, parameters, help, source, parser), read by the
//! CLI (`sim --uring`, `run --uring`) and by the simulator, which applies
//! the decisions of one wait ([`Wait`]) to its threads, and the emulator,
//! whose io_uring job threads apply min-wait's (`crates/emu` worker).
//!
//! - [`Strategy::MinComplete`]: `io_uring_enter(GETEVENTS, min_complete)`
//!   with completions posted to the CQ ring by the interrupt's handler,
//!   and a waker that checks `min_complete` before it wakes the task
//!   (fs/io_uring.c of Linux 5.4-5.14: `io_cqring_wait` waits with
//!   `io_wake_function`, which wakes only `if (io_should_wake(iowq))`, the
//!   CQ tail at `min_complete` past the head). One wake-up per wait. This
//!   is what the simulator has always done for io_uring jobs (its default).
//! - [`Strategy::TaskWork`]: Linux 5.15 and later without DEFER_TASKRUN
//!   (8ef12efe26c8 "io_uring: run regular file completions from
//!   task_work", the 5.15 pull's "Funnel IRQ completions through
//!   task_work"; [`crate::era`]). A
//!   read or write completes through task_work (io_uring/rw.c
//!   `io_complete_rw` -> `io_req_task_work_add`; `io_req_normal_work_add`
//!   -> `task_work_add(..., ctx->notify_method)`), which wakes the task
//!   sleeping in `io_cqring_wait` (TWA_SIGNAL, or TWA_SIGNAL_NO_IPI under
//!   COOP_TASKRUN: both wake a TASK_INTERRUPTIBLE sleeper) so that it runs
//!   the work and posts the CQEs itself; short of `min_complete` it sleeps
//!   again (`io_cqring_wait`'s loop: `if (io_should_wake(&iowq)) break;`).
//!   So every interrupt that brings the task completions wakes it: a
//!   wake-up and two context switches each, as libaio's `io_getevents`.
//! - [`Strategy::DeferTaskrun`]: IORING_SETUP_DEFER_TASKRUN (Linux 6.1;
//!   fio 3.33 asks for it with SINGLE_ISSUER and COOP_TASKRUN,
//!   `fio_ioring_queue_init`, and drops it if the kernel says EINVAL). A
//!   completion is queued on the ring's local list and the task is woken
//!   only when the queue reaches what the wait needs
//!   (`io_req_local_work_add`: wake when the pending count reaches
//!   `ctx->cq_wait_nr`, which `io_cqring_wait` sets to the CQEs still
//!   missing); the completions are run, and their CQEs posted, only when
//!   the task is in the kernel (`io_run_local_work` at `io_cqring_wait`'s
//!   entry and after each sleep, and at any `io_uring_enter` with
//!   IORING_ENTER_GETEVENTS: fio's commit passes it). Between entries
//!   nothing wakes or interrupts the task, and the CQ ring it reads from
//!   user space holds only what its last entry ran.
//! - [`Strategy::MinWait`], liburing's
//!   `io_uring_submit_and_wait_min_timeout` (Linux 6.12+,
//!   IORING_FEAT_MIN_TIMEOUT; man/io_uring_submit_and_wait_min_timeout.3,
//!   liburing 2.8): wait for `wait_nr` completions for at most
//!   `min_wait_usec`; then "control is returned if any completions have
//!   been posted. If no completions have been posted, the kernel switches
//!   to a normal wait of up to ts ... If any completions are posted after
//!   this happens, control is returned immediately". The kernel
//!   (io_uring/io_uring.c, `io_cqring_min_timer_wakeup`) returns at the
//!   min timer also when there is no overall timeout ("no general timeout,
//!   or shorter (or equal), we are done"), then with nothing and -ETIME.
//!   Modelled on a DEFER_TASKRUN ring, as Linux 6.12's callers use it and
//!   as the kernel's own min timer resets `cq_wait_nr` to 1 for such rings.
//! - [`Strategy::IoPoll`]: IORING_SETUP_IOPOLL (fio's `hipri`): the task
//!   polls the device's poll queue in `io_uring_enter` (`io_iopoll_check`
//!   until `min_events`): no interrupt, no wake-up, the CPU busy for the
//!   whole wait (`poll`'s classic polling, per ring).
//! - [`Strategy::SqPoll`]: IORING_SETUP_SQPOLL (fio's `sqthread_poll`): a
//!   kernel thread takes the SQEs from the ring, so the task makes no
//!   system call to submit, and fio's getevents never calls
//!   `io_uring_enter` with an SQ thread (`fio_ioring_getevents`: `if
//!   (!o->sqpoll_thread) io_uring_enter(...)`): it spins on the CQ ring in
//!   user space until the CQEs are there. No wake-up, the task's CPU busy
//!   while it waits, and a core for the SQ thread, which spins while it
//!   has work and sleeps after `sq_thread_idle` without (the kernel's
//!   default when the caller gives 0, as fio does: `HZ`, one second,
//!   io_uring/sqpoll.c `io_sq_offload_create`).
//!
//! Pure: [`Wait`] is one waiting call, told when each completion reaches
//! the task and when its timer fires, answering whether the task sleeps
//! on, spins, is woken to run task work and sleeps again, or returns; time
//! is passed in. [`replay`] runs one task's waits over a list of
//! completion times with the wait's costs passed in ([`Costs`]), for
//! tests and for anyone asking "what would io_uring do with these
//! completions".

use std::fmt;

use policy::{format_nanos, Nanos, MS, SEC, US};

use crate::era::{self, Era};

/// min-wait's settings (`io_uring_submit_and_wait_min_timeout`'s
/// arguments).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MinWait {
    /// `min_wait_usec`: how long the wait holds out for `wait_nr`.
    pub min_wait: Nanos,
    /// `wait_nr`; `None`: as many as the caller takes at most (fio's
    /// `iodepth_batch_complete_max`), the batch it would like.
    pub nr: Option<u32>,
    /// `ts`, the overall timeout from the wait's start; `None`: no overall
    /// timeout (`ts` NULL), so the wait returns at `min_wait` even empty.
    pub timeout: Option<Nanos>,
}

/// One of io_uring's host-side completion strategies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Strategy {
    #[default]
    MinComplete,
    TaskWork,
    DeferTaskrun,
    MinWait(MinWait),
    IoPoll,
    SqPoll,
}

impl Strategy {
    /// Its name in [`STRATEGIES`].
    pub fn name(self) -> &'static str {
        match self {
            Strategy::MinComplete => "min-complete",
            Strategy::TaskWork => "task-work",
            Strategy::DeferTaskrun => "defer-taskrun",
            Strategy::MinWait(_) => "min-wait",
            Strategy::IoPoll => "iopoll",
            Strategy::SqPoll => "sqpoll",
        }
    }

    /// Completions wait on the ring's local list until the task enters the
    /// kernel (DEFER_TASKRUN, and min-wait on such a ring).
    pub fn defers(self) -> bool {
        matches!(self, Strategy::DeferTaskrun | Strategy::MinWait(_))
    }

    /// The task spins instead of sleeping (IOPOLL in the kernel, SQPOLL's
    /// task in user space).
    pub fn spins(self) -> bool {
        matches!(self, Strategy::IoPoll | Strategy::SqPoll)
    }

    /// The ring raises no interrupt for its requests (IOPOLL).
    pub fn polled(self) -> bool {
        self == Strategy::IoPoll
    }

    /// The task submits without a system call (SQPOLL).
    pub fn sq_thread(self) -> bool {
        self == Strategy::SqPoll
    }

    /// How many completions a wait holds out for when its caller asks for
    /// at least `min` and takes at most `max`: min-wait's `wait_nr`
    /// (default `max`), else `min`.
    pub fn wait_nr(self, min: u32, max: u32) -> u32 {
        match self {
            Strategy::MinWait(m) => m.nr.unwrap_or(max).max(min),
            _ => min,
        }
    }
}

impl fmt::Display for Strategy {
    /// As [`parse`] reads it back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Strategy::MinWait(m) => {
                write!(f, "min-wait={}", format_nanos(m.min_wait))?;
                if let Some(nr) = m.nr {
                    write!(f, ",nr={nr}")?;
                }
                if let Some(t) = m.timeout {
                    write!(f, ",timeout={}", format_nanos(t))?;
                }
                Ok(())
            }
            s => f.write_str(s.name()),
        }
    }
}

/// One row of the catalogue.
pub struct StrategySpec {
    /// As the CLI writes it.
    pub name: &'static str,
    /// Its parameters as written after the name, empty if none.
    pub params: &'static str,
    pub help: &'static str,
    /// Where its behaviour comes from.
    pub source: &'static str,
    /// The Linux releases it exists in, citing the commits
    /// ([`crate::era`]; issue 37 item 1).
    pub era: Era,
    parse: Parser,
}

/// A row's parser: its name and its `key=value` parameters (the value
/// after the name itself has the key "").
type Parser = fn(&str, &[(&str, &str)]) -> Result<Strategy, String>;

fn no_params(name: &str, params: &[(&str, &str)], s: Strategy) -> Result<Strategy, String> {
    match params.first() {
        None => Ok(s),
        Some((k, _)) => Err(format!("{name} takes no parameters ('{k}')")),
    }
}

/// Every strategy, in the order `--help` lists them.
pub static STRATEGIES: &[StrategySpec] = &[
    StrategySpec {
        name: "min-complete",
        params: "",
        help: "wait for min_complete CQEs, posted by the interrupt; one wake-up per wait (the simulator's default)",
        source: "Linux 5.4-5.14 fs/io_uring.c io_cqring_wait, io_wake_function",
        era: era::URING_MIN_COMPLETE,
        parse: |n, p| no_params(n, p, Strategy::MinComplete),
    },
    StrategySpec {
        name: "task-work",
        params: "",
        help: "completions through task_work: each interrupt bringing the task CQEs wakes it; it sleeps again short of min_complete",
        source: "Linux 5.15+ (8ef12efe26c8); 6.x io_uring/rw.c io_complete_rw, io_req_normal_work_add; io_cqring_wait's loop",
        era: era::URING_TASK_WORK,
        parse: |n, p| no_params(n, p, Strategy::TaskWork),
    },
    StrategySpec {
        name: "defer-taskrun",
        params: "",
        help: "IORING_SETUP_DEFER_TASKRUN: completions run only when the task enters the kernel; woken once, when min_complete are pending",
        source: "Linux 6.1 io_req_local_work_add, io_run_local_work; fio 3.33 fio_ioring_queue_init",
        era: era::URING_DEFER_TASKRUN,
        parse: |n, p| no_params(n, p, Strategy::DeferTaskrun),
    },
    StrategySpec {
        name: "min-wait",
        params: "=TIME[,nr=N][,timeout=TIME]",
        help: "io_uring_submit_and_wait_min_timeout on a DEFER_TASKRUN ring: wait for nr (default the caller's most) up to TIME, then return with what is there; none there: return at the first CQE, or empty at the timeout (at TIME without one)",
        source: "Linux 6.12 io_uring/io_uring.c io_cqring_min_timer_wakeup; liburing man/io_uring_submit_and_wait_min_timeout.3",
        era: era::URING_MIN_WAIT,
        parse: min_wait,
    },
    StrategySpec {
        name: "iopoll",
        params: "",
        help: "IORING_SETUP_IOPOLL (fio's hipri): the task polls the device; no interrupt, CPU busy while it waits",
        source: "io_uring/io_uring.c io_iopoll_check; fio engines/io_uring.c",
        era: era::URING_IOPOLL,
        parse: |n, p| no_params(n, p, Strategy::IoPoll),
    },
    StrategySpec {
        name: "sqpoll",
        params: "",
        help: "IORING_SETUP_SQPOLL (fio's sqthread_poll): a kernel thread submits; the task spins on the CQ ring; a core for the SQ thread",
        source: "io_uring/sqpoll.c; fio engines/io_uring.c fio_ioring_commit, fio_ioring_getevents",
        era: era::URING_SQPOLL,
        parse: |n, p| no_params(n, p, Strategy::SqPoll),
    },
];

/// The catalogue as `cinterrupts policies` prints it: one block per row,
/// its name and parameters, help and source.
pub fn listing() -> String {
    let mut out = String::from(
        "io_uring host-side strategies (sim --uring, host key uring, run --uring; ioengine=io_uring jobs):\n",
    );
    for r in STRATEGIES {
        out += &format!(
            "  {}{}\n      {}\n      source: {}\n      kernel: {}\n",
            r.name,
            r.params,
            r.help,
            r.source,
            era::brief(&r.era)
        );
    }
    out
}

/// The most a min-wait or timeout may be: a second. Longer would only
/// stall a run (the kernel takes any `timespec`; fio's jobs use none).
pub const MAX_WAIT: Nanos = SEC;

fn min_wait(name: &str, params: &[(&str, &str)]) -> Result<Strategy, String> {
    let mut m = MinWait {
        min_wait: 0,
        nr: None,
        timeout: None,
    };
    let mut given = false;
    for &(k, v) in params {
        match k {
            "" | "min_wait" => {
                m.min_wait = time(v).map_err(|e| format!("{name}: {e}"))?;
                given = true;
            }
            "nr" => {
                m.nr = Some(
                    v.parse::<u32>()
                        .ok()
                        .filter(|&n| n >= 1)
                        .ok_or_else(|| format!("{name}: nr={v}: want a whole number >= 1"))?,
                )
            }
            "timeout" => m.timeout = Some(time(v).map_err(|e| format!("{name}: timeout: {e}"))?),
            _ => {
                return Err(format!(
                    "{name}: unknown parameter '{k}' (min-wait=TIME[,nr=N][,timeout=TIME])"
                ))
            }
        }
    }
    if !given || m.min_wait == 0 {
        return Err(format!(
            "{name} needs a time above 0: min-wait=TIME, e.g. min-wait=50us"
        ));
    }
    Ok(Strategy::MinWait(m))
}

/// `50us`, `1ms`, `500ns`, `1s`: a unit is required, at most [`MAX_WAIT`].
fn time(v: &str) -> Result<Nanos, String> {
    let v = v.trim();
    let split = v
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(|| format!("'{v}' needs a unit (ns, us, ms, s)"))?;
    let (num, unit) = v.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{v}' is not a time (e.g. 50us)"))?;
    let mult = match unit {
        "ns" => 1,
        "us" => US,
        "ms" => MS,
        "s" => SEC,
        _ => return Err(format!("'{v}': unknown unit '{unit}' (ns, us, ms, s)")),
    };
    n.checked_mul(mult)
        .filter(|&t| t <= MAX_WAIT)
        .ok_or_else(|| format!("'{v}' is above {}", format_nanos(MAX_WAIT)))
}

/// Reads a strategy as the CLI writes it: a name of [`STRATEGIES`], then
/// its parameters: `min-wait=50us,nr=16,timeout=1ms` (the first value may
/// follow the name with `=`).
pub fn parse(s: &str) -> Result<Strategy, String> {
    let mut parts = s.split(',').map(str::trim);
    let head = parts.next().unwrap_or("");
    let (name, first) = match head.split_once('=') {
        Some((n, v)) => (n, Some(("", v))),
        None => (head, None),
    };
    let mut params: Vec<(&str, &str)> = first.into_iter().collect();
    for p in parts {
        params.push(p.split_once('=').unwrap_or((p, "")));
    }
    let names = || {
        STRATEGIES
            .iter()
            .map(|r| r.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let row = STRATEGIES
        .iter()
        .find(|r| r.name == name)
        .ok_or_else(|| format!("unknown io_uring strategy '{name}' ({})", names()))?;
    (row.parse)(name, &params)
}

/// What a waiting task does after an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Sleeps on (or keeps sleeping).
    Sleep,
    /// Spins on (IOPOLL in the kernel, SQPOLL's task on the CQ ring).
    Spin,
    /// Woken to run task work; it posts the CQEs and, short of what the
    /// wait needs, sleeps again (a wake-up and two context switches).
    Bounce,
    /// Returns to the caller with what is there; `timed_out`: the overall
    /// timeout (or, with none, the min timer) ended it, so it may return
    /// fewer than it asked for, even none.
    Return { timed_out: bool },
}

/// One waiting call: `io_uring_enter(GETEVENTS, nr)` (or SQPOLL's spin on
/// the ring).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wait {
    strategy: Strategy,
    started: Nanos,
    nr: u32,
    /// Completions for this wait: visible at entry, then each posted.
    seen: u32,
    /// min-wait's min timer has fired with nothing there: any completion
    /// now returns (the kernel's switch to the overall timeout).
    min_passed: bool,
    done: bool,
    /// The caller re-enters without blocking until it has what it needs
    /// ([`Wait::enter_busy`]).
    busy: bool,
}

impl Wait {
    /// The task enters the wait at `now` for `nr` completions with
    /// `ready` already there (for a deferring strategy, after the entry
    /// ran the pending ones). Returns the wait and what the task does.
    pub fn enter(strategy: Strategy, now: Nanos, nr: u32, ready: u32) -> (Wait, Action) {
        let mut w = Wait {
            strategy,
            started: now,
            nr,
            seen: ready,
            min_passed: false,
            done: false,
            busy: false,
        };
        let a = if ready >= nr {
            w.done = true;
            Action::Return { timed_out: false }
        } else if strategy.spins() {
            Action::Spin
        } else {
            Action::Sleep
        };
        (w, a)
    }

    /// A wait whose caller asks the kernel for nothing: fio's io_uring
    /// getevents with `iodepth_batch_complete_min=0` passes `actual_min`
    /// 0 (`fio_ioring_getevents`: `actual_min =
    /// td->o.iodepth_batch_complete_min == 0 ? 0 : min`), so its
    /// `io_uring_enter(0, 0, GETEVENTS)` returns at once and fio's loop
    /// calls it again: the task spins, in and out of the kernel, until
    /// `nr` are there. No sleep, no wake-up; each entry runs a deferred
    /// list, so nothing waits on it.
    pub fn enter_busy(strategy: Strategy, now: Nanos, nr: u32, ready: u32) -> (Wait, Action) {
        let (mut w, a) = Wait::enter(strategy, now, nr, ready);
        w.busy = true;
        let a = match a {
            Action::Return { .. } => a,
            _ => Action::Spin,
        };
        (w, a)
    }

    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// When its timer fires, if it has one running: min-wait's min timer,
    /// then the overall timeout.
    pub fn timer_at(&self) -> Option<Nanos> {
        let Strategy::MinWait(m) = self.strategy else {
            return None;
        };
        if self.done {
            return None;
        }
        if self.min_passed {
            m.timeout.map(|t| self.started + t)
        } else {
            Some(self.started + m.min_wait)
        }
    }

    /// One completion reached the task at `now` (the interrupt's handler
    /// delivered it, or queued its task work).
    pub fn posted(&mut self, _now: Nanos) -> Action {
        if self.done {
            return Action::Return { timed_out: false };
        }
        self.seen += 1;
        if self.seen >= self.nr || self.min_passed {
            self.done = true;
            return Action::Return { timed_out: false };
        }
        match self.strategy {
            _ if self.busy => Action::Spin,
            Strategy::TaskWork => Action::Bounce,
            s if s.spins() => Action::Spin,
            _ => Action::Sleep,
        }
    }

    /// Its timer fired at `now` ([`Wait::timer_at`]).
    pub fn timer(&mut self, now: Nanos) -> Action {
        let Strategy::MinWait(m) = self.strategy else {
            return Action::Sleep;
        };
        if self.done || self.timer_at().is_some_and(|at| now < at) {
            return Action::Sleep;
        }
        if self.min_passed {
            // The overall timeout.
            self.done = true;
            return Action::Return { timed_out: true };
        }
        // io_cqring_min_timer_wakeup: with no overall timeout, or one no
        // longer than the min, the wait is over.
        let no_timeout = match m.timeout {
            None => true,
            Some(t) => t <= m.min_wait,
        };
        if self.seen > 0 {
            self.done = true;
            return Action::Return { timed_out: false };
        }
        if no_timeout {
            self.done = true;
            return Action::Return { timed_out: true };
        }
        self.min_passed = true;
        Action::Sleep
    }

    /// The task, woken from this wait (task-work) and short of what it
    /// needs, sleeps in it again with `seen` completions taken so far
    /// (those that came while it was awake included).
    pub fn resync(&mut self, seen: u32) -> Action {
        self.seen = seen;
        if self.done || self.seen >= self.nr {
            self.done = true;
            return Action::Return { timed_out: false };
        }
        if self.busy || self.strategy.spins() {
            Action::Spin
        } else {
            Action::Sleep
        }
    }

    /// How many completions, in all, must have reached the task before
    /// its sleep ends: `nr`, or after min-wait's min timer passed with
    /// nothing there, the next one (the kernel's switch to the overall
    /// timeout). What an emulated waker checks before it wakes the task.
    pub fn wakes_at(&self) -> u32 {
        if self.min_passed {
            self.seen + 1
        } else {
            self.nr
        }
    }

    /// The caller spins on this wait (SQPOLL's ring, or a busy caller).
    pub fn spinning(&self) -> bool {
        self.busy || self.strategy.spins()
    }

    pub fn is_done(&self) -> bool {
        self.done
    }
}

/// The costs of a wait, measured elsewhere (the simulator's host profile).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Costs {
    /// One `io_uring_enter`.
    pub syscall: Nanos,
    /// A wake-up: the waker's part and the switch into the task.
    pub wakeup: Nanos,
    /// Reaping one CQE (running its task work, taking it from the ring).
    pub reap: Nanos,
}

/// One wait of a [`replay`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Returned {
    pub entered: Nanos,
    pub at: Nanos,
    pub taken: u32,
    pub timed_out: bool,
}

/// One task's waits over a list of completion times, as [`replay`] ran
/// them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Replay {
    /// Each wait: when it was entered (after its system call), when it
    /// returned, how many it took, whether it timed out.
    pub waits: Vec<Returned>,
    /// When each completion was taken, in arrival order.
    pub taken_at: Vec<Nanos>,
    pub wakeups: u64,
    /// Off the CPU and back: two per sleep that ends in a wake-up.
    pub context_switches: u64,
    pub syscalls: u64,
    /// CPU of the task's waits: system calls, wake-ups, reaping, spinning.
    pub cpu: Nanos,
    /// Of which spinning.
    pub spun: Nanos,
}

/// A task that waits for `nr` completions at a time (taking at most
/// `max`) from `start`, over completions reaching it at `arrivals`
/// (sorted), re-entering at once after each return until every one is
/// taken. For DEFER_TASKRUN the arrivals are its task work, run at the
/// task's entries. Timers fire before a completion at the same instant.
pub fn replay(
    strategy: Strategy,
    costs: Costs,
    nr: u32,
    max: u32,
    start: Nanos,
    arrivals: &[Nanos],
) -> Replay {
    let mut out = Replay::default();
    let max = max.max(1) as usize;
    let nr = strategy.wait_nr(nr.max(1), max as u32);
    let mut next = 0usize; // the first arrival not yet visible
    let mut taken = 0usize;
    let mut now = start;
    let bounded = |i: usize| -> u32 { i.min(u32::MAX as usize) as u32 };
    while taken < arrivals.len() {
        // Entering the kernel (SQPOLL: reading the ring) makes visible
        // what arrived by now.
        if !strategy.sq_thread() {
            out.syscalls += 1;
            out.cpu += costs.syscall;
            now += costs.syscall;
        }
        while next < arrivals.len() && arrivals[next] <= now {
            next += 1;
        }
        let want = nr.min(bounded(arrivals.len() - taken));
        let w_entered = now;
        let (mut w, mut a) = Wait::enter(strategy, now, want, bounded(next - taken));
        let mut slept = false;
        // Until when the task is awake running task work after a bounce: a
        // completion that comes meanwhile is run in the same pass, with no
        // wake-up of its own (io_run_task_work loops until the list is
        // empty), and time does not go back to it.
        let mut awake_until = now;
        let mut awake = false;
        while !matches!(a, Action::Return { .. }) {
            let arrival = arrivals.get(next).copied();
            let timer = w.timer_at();
            let (at, is_timer) = match (arrival, timer) {
                (Some(x), Some(t)) if t <= x => (t, true),
                (Some(x), _) => (x, false),
                (None, Some(t)) => (t, true),
                (None, None) => break,
            };
            awake = at < awake_until;
            if a == Action::Spin {
                out.spun += at - now;
                out.cpu += at - now;
            } else if !awake {
                slept = true;
            }
            now = now.max(at);
            a = if is_timer {
                w.timer(now)
            } else {
                next += 1;
                w.posted(now)
            };
            if a == Action::Bounce {
                if !awake {
                    out.wakeups += 1;
                    out.context_switches += 2;
                    out.cpu += costs.wakeup;
                    now += costs.wakeup;
                    awake_until = now;
                }
                a = Action::Sleep;
            }
        }
        let timed_out = matches!(a, Action::Return { timed_out: true });
        if slept && !awake {
            out.wakeups += 1;
            out.context_switches += 2;
            out.cpu += costs.wakeup;
            now += costs.wakeup;
        }
        let n = (next - taken).min(max);
        for _ in 0..n {
            out.taken_at.push(now);
        }
        out.cpu += costs.reap * n as u64;
        taken += n;
        out.waits.push(Returned {
            entered: w_entered,
            at: now,
            taken: n as u32,
            timed_out,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const COSTS: Costs = Costs {
        syscall: 500,
        wakeup: 2_000,
        reap: 100,
    };

    fn mw(min_wait: Nanos, nr: Option<u32>, timeout: Option<Nanos>) -> Strategy {
        Strategy::MinWait(MinWait {
            min_wait,
            nr,
            timeout,
        })
    }

    #[test]
    fn the_catalogue_parses_every_row_and_prints_it_back() {
        for row in STRATEGIES {
            let text = if row.params.is_empty() {
                row.name.to_string()
            } else {
                format!("{}=50us", row.name)
            };
            let s = parse(&text).unwrap();
            assert_eq!(s.name(), row.name);
            assert_eq!(parse(&s.to_string()).unwrap(), s);
        }
        assert_eq!(
            parse("min-wait=50us,nr=16,timeout=1ms").unwrap(),
            mw(50 * US, Some(16), Some(MS))
        );
        assert_eq!(
            parse("min-wait,min_wait=20us").unwrap(),
            mw(20 * US, None, None)
        );
    }

    #[test]
    fn the_listing_names_every_row_once() {
        let l = listing();
        for r in STRATEGIES {
            assert_eq!(
                l.matches(&format!("\n  {}", r.name)).count(),
                1,
                "{}",
                r.name
            );
        }
    }

    #[test]
    fn bad_strategies_say_why_in_one_line() {
        for (bad, says) in [
            ("spin", "unknown io_uring strategy 'spin'"),
            ("min-wait", "needs a time above 0"),
            ("min-wait=0us", "needs a time above 0"),
            ("min-wait=50", "needs a unit"),
            ("min-wait=5s", "above 1s"),
            ("min-wait=50us,nr=0", "nr=0"),
            ("min-wait=50us,depth=3", "unknown parameter 'depth'"),
            ("iopoll,x=1", "takes no parameters"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(says) && !e.contains('\n'), "{bad}: {e}");
        }
    }

    #[test]
    fn min_complete_wakes_once_when_enough_are_there() {
        let (mut w, a) = Wait::enter(Strategy::MinComplete, 0, 3, 1);
        assert_eq!(a, Action::Sleep);
        assert_eq!(w.posted(5), Action::Sleep);
        assert_eq!(w.posted(7), Action::Return { timed_out: false });
        // Enough already in the ring: no sleep at all.
        let (_, a) = Wait::enter(Strategy::MinComplete, 0, 2, 2);
        assert_eq!(a, Action::Return { timed_out: false });
    }

    #[test]
    fn task_work_bounces_the_sleeper_for_each_completion_short_of_min() {
        let (mut w, _) = Wait::enter(Strategy::TaskWork, 0, 3, 0);
        assert_eq!(w.posted(1), Action::Bounce);
        assert_eq!(w.posted(2), Action::Bounce);
        assert_eq!(w.posted(3), Action::Return { timed_out: false });
        let r = replay(
            Strategy::TaskWork,
            COSTS,
            3,
            3,
            0,
            &[10_000, 20_000, 30_000],
        );
        // Two bounces and the return's wake-up.
        assert_eq!(r.wakeups, 3);
        let d = replay(
            Strategy::DeferTaskrun,
            COSTS,
            3,
            3,
            0,
            &[10_000, 20_000, 30_000],
        );
        assert_eq!(d.wakeups, 1);
        let w = d.waits[0];
        assert_eq!(
            (w.entered, w.at, w.taken, w.timed_out),
            (500, 32_000, 3, false)
        );
    }

    #[test]
    fn min_wait_returns_what_is_there_at_the_min_timer() {
        let s = mw(50 * US, Some(16), None);
        let (mut w, a) = Wait::enter(s, 0, 16, 0);
        assert_eq!(a, Action::Sleep);
        assert_eq!(w.timer_at(), Some(50 * US));
        assert_eq!(w.posted(10 * US), Action::Sleep);
        assert_eq!(w.timer(50 * US), Action::Return { timed_out: false });
        assert_eq!(w.timer_at(), None);
    }

    #[test]
    fn min_wait_with_nothing_there_waits_for_the_first_completion_up_to_the_timeout() {
        let s = mw(50 * US, Some(16), Some(200 * US));
        let (mut w, _) = Wait::enter(s, 0, 16, 0);
        assert_eq!(w.timer(50 * US), Action::Sleep);
        assert_eq!(w.timer_at(), Some(200 * US));
        assert_eq!(w.posted(70 * US), Action::Return { timed_out: false });
        let (mut w, _) = Wait::enter(s, 0, 16, 0);
        w.timer(50 * US);
        assert_eq!(w.timer(200 * US), Action::Return { timed_out: true });
        // No overall timeout: the min timer ends the wait, even empty
        // (io_cqring_min_timer_wakeup, "no general timeout ... we are done").
        let (mut w, _) = Wait::enter(mw(50 * US, None, None), 0, 16, 0);
        assert_eq!(w.timer(50 * US), Action::Return { timed_out: true });
    }

    #[test]
    fn the_waker_wakes_at_nr_then_at_the_next_once_the_min_timer_passed_empty() {
        let s = mw(50 * US, Some(4), Some(200 * US));
        let (mut w, _) = Wait::enter(s, 0, 4, 0);
        assert_eq!(w.wakes_at(), 4);
        assert_eq!(w.timer(50 * US), Action::Sleep);
        assert_eq!(w.wakes_at(), 1);
    }

    #[test]
    fn polled_strategies_spin_and_never_wake() {
        for s in [Strategy::IoPoll, Strategy::SqPoll] {
            let r = replay(s, COSTS, 1, 1, 0, &[10_000, 25_000]);
            assert_eq!(r.wakeups, 0, "{s}");
            assert!(r.spun > 0, "{s}");
        }
        // SQPOLL's task makes no system call.
        assert_eq!(
            replay(Strategy::SqPoll, COSTS, 1, 1, 0, &[10_000]).syscalls,
            0
        );
    }

    #[test]
    fn a_busy_caller_spins_whatever_the_strategy() {
        for s in [
            Strategy::MinComplete,
            Strategy::TaskWork,
            Strategy::DeferTaskrun,
        ] {
            let (mut w, a) = Wait::enter_busy(s, 0, 1, 0);
            assert_eq!(a, Action::Spin, "{s}");
            assert!(w.spinning());
            assert_eq!(w.posted(3), Action::Return { timed_out: false }, "{s}");
        }
        let (_, a) = Wait::enter_busy(Strategy::MinComplete, 0, 1, 1);
        assert_eq!(a, Action::Return { timed_out: false });
    }

    #[test]
    fn wait_nr_is_the_callers_most_for_min_wait_only() {
        assert_eq!(mw(US, None, None).wait_nr(1, 16), 16);
        assert_eq!(mw(US, Some(4), None).wait_nr(1, 16), 4);
        assert_eq!(Strategy::DeferTaskrun.wait_nr(1, 16), 1);
    }
    #[test]
    fn only_defer_taskrun_rings_hold_completions_until_the_task_enters() {
        // DEFER_TASKRUN (Linux 6.1 io_req_local_work_add), and min-wait,
        // modelled on such a ring; the others post from the interrupt.
        for s in [Strategy::DeferTaskrun, mw(US, None, None)] {
            assert!(s.defers(), "{s}");
        }
        for s in [
            Strategy::MinComplete,
            Strategy::TaskWork,
            Strategy::IoPoll,
            Strategy::SqPoll,
        ] {
            assert!(!s.defers(), "{s}");
        }
    }

    #[test]
    fn only_an_iopoll_ring_raises_no_interrupt() {
        // IORING_SETUP_IOPOLL polls the device's poll queue; SQPOLL's task
        // spins on the CQ ring, but its completions still interrupt.
        assert!(Strategy::IoPoll.polled());
        for s in [
            Strategy::MinComplete,
            Strategy::TaskWork,
            Strategy::DeferTaskrun,
            mw(US, None, None),
            Strategy::SqPoll,
        ] {
            assert!(!s.polled(), "{s}");
        }
    }

    #[test]
    fn a_time_in_nanoseconds_is_read() {
        assert_eq!(parse("min-wait=500ns").unwrap(), mw(500, None, None));
    }

    #[test]
    fn a_wait_keeps_the_strategy_it_was_entered_with() {
        let (w, _) = Wait::enter(Strategy::TaskWork, 0, 2, 0);
        assert_eq!(w.strategy(), Strategy::TaskWork);
    }

    #[test]
    fn a_polling_wait_short_of_its_count_spins_on_after_a_completion() {
        // io_iopoll_check loops until min_events; SQPOLL's task spins on
        // the CQ ring (fio_ioring_getevents): neither sleeps in between.
        for s in [Strategy::IoPoll, Strategy::SqPoll] {
            let (mut w, a) = Wait::enter(s, 0, 2, 0);
            assert_eq!(a, Action::Spin, "{s}");
            assert_eq!(w.posted(1), Action::Spin, "{s}");
            assert_eq!(w.posted(2), Action::Return { timed_out: false }, "{s}");
        }
    }

    #[test]
    fn a_busy_caller_short_of_its_count_spins_on_after_a_completion() {
        // fio with iodepth_batch_complete_min=0 re-enters without blocking:
        // no sleep and no task-work bounce while it is short.
        for s in [Strategy::MinComplete, Strategy::TaskWork] {
            let (mut w, _) = Wait::enter_busy(s, 0, 2, 0);
            assert_eq!(w.posted(1), Action::Spin, "{s}");
            assert_eq!(w.posted(2), Action::Return { timed_out: false }, "{s}");
        }
    }
    #[test]
    fn a_min_wait_timer_firing_early_is_ignored() {
        // A stale or early timer event (the caller's timer queue) must not
        // end the wait before min_wait_usec.
        let (mut w, _) = Wait::enter(mw(50 * US, Some(4), None), 0, 4, 0);
        assert_eq!(w.timer(10 * US), Action::Sleep);
        assert!(!w.is_done());
        assert_eq!(w.timer_at(), Some(50 * US));
        assert_eq!(w.timer(50 * US), Action::Return { timed_out: true });
    }

    #[test]
    fn a_timer_after_the_wait_returned_does_nothing() {
        let (mut w, _) = Wait::enter(mw(50 * US, Some(2), None), 0, 2, 0);
        assert_eq!(w.posted(US), Action::Sleep);
        assert_eq!(w.posted(2 * US), Action::Return { timed_out: false });
        assert_eq!(w.timer(50 * US), Action::Sleep);
        assert!(w.is_done());
    }
    #[test]
    fn a_task_woken_for_task_work_short_of_its_count_sleeps_again() {
        // io_cqring_wait's loop: `if (io_should_wake(&iowq)) break;`, else
        // schedule() again.
        let (mut w, _) = Wait::enter(Strategy::TaskWork, 0, 3, 0);
        assert_eq!(w.posted(1), Action::Bounce);
        assert_eq!(w.resync(2), Action::Sleep);
        assert!(!w.is_done());
    }

    #[test]
    fn a_task_woken_for_task_work_with_its_count_returns() {
        // Completions that came while it was awake count: it has 3 of 3.
        let (mut w, _) = Wait::enter(Strategy::TaskWork, 0, 3, 0);
        assert_eq!(w.posted(1), Action::Bounce);
        assert_eq!(w.resync(3), Action::Return { timed_out: false });
        assert!(w.is_done());
    }

    #[test]
    fn a_spinning_wait_resyncs_to_spinning() {
        let (mut w, _) = Wait::enter(Strategy::IoPoll, 0, 3, 0);
        assert_eq!(w.resync(1), Action::Spin);
        let (mut w, _) = Wait::enter_busy(Strategy::MinComplete, 0, 3, 0);
        assert_eq!(w.resync(1), Action::Spin);
    }

    #[test]
    fn a_sleeping_wait_is_not_spinning() {
        // The simulator charges a spinning waiter's CPU (sim host.rs).
        for s in [
            Strategy::MinComplete,
            Strategy::TaskWork,
            Strategy::DeferTaskrun,
        ] {
            let (w, _) = Wait::enter(s, 0, 2, 0);
            assert!(!w.spinning(), "{s}");
        }
        assert!(Wait::enter(Strategy::SqPoll, 0, 2, 0).0.spinning());
    }
    #[test]
    fn a_completion_during_a_task_work_wake_up_runs_in_the_same_pass() {
        // Woken at 10 us for the first of two (task-work wake-ups take 2 us),
        // the second comes at 11 us while the task still runs its task work:
        // it is run then, no second wake-up, and time never goes back (the
        // old replay returned at 13 us with 2 wake-ups).
        let costs = Costs {
            syscall: 0,
            wakeup: 2_000,
            reap: 0,
        };
        let r = replay(Strategy::TaskWork, costs, 2, 2, 0, &[10_000, 11_000]);
        assert_eq!(r.wakeups, 1);
        assert_eq!(r.waits.len(), 1);
        assert_eq!(r.waits[0].at, 12_000);
        assert_eq!(r.taken_at, [12_000, 12_000]);
        // One that comes after the task went back to sleep wakes it again.
        let r = replay(Strategy::TaskWork, costs, 2, 2, 0, &[10_000, 13_000]);
        assert_eq!(r.wakeups, 2);
        assert_eq!(r.waits[0].at, 15_000);
    }

    #[test]
    fn a_replay_makes_one_system_call_per_wait() {
        // Each wait is one io_uring_enter(GETEVENTS).
        let r = replay(Strategy::MinComplete, COSTS, 1, 1, 0, &[10_000, 20_000]);
        assert_eq!(r.waits.len(), 2);
        assert_eq!(r.syscalls, 2);
    }

    #[test]
    fn a_replay_waits_for_no_more_completions_than_remain() {
        // The caller asks for at most what it has in flight (fio's
        // getevents): with one left, a min-wait for 2 returns at that one,
        // not at the min timer.
        let s = mw(50 * US, Some(2), None);
        let r = replay(s, COSTS, 1, 2, 0, &[US, 2 * US, 10 * US]);
        let waits: Vec<_> = r.waits.iter().map(|w| (w.at, w.taken)).collect();
        assert_eq!(waits, [(2 * US + 2_000, 2), (10 * US + 2_000, 1)]);
    }

    #[test]
    fn a_replay_reaps_each_completion_it_takes() {
        // One wait for 2 (min_complete): one system call, one wake-up at
        // the second completion, and a reap per CQE taken.
        let r = replay(Strategy::MinComplete, COSTS, 2, 2, 0, &[10_000, 20_000]);
        assert_eq!(r.waits.len(), 1);
        assert_eq!(r.waits[0].taken, 2);
        assert_eq!(r.cpu, 500 + 2_000 + 2 * 100);
        assert_eq!(r.taken_at, [22_000, 22_000]);
    }

    #[test]
    fn a_polling_replay_spins_from_its_entry_to_the_completion() {
        // IOPOLL: the task is on the CPU in io_iopoll_check from the end
        // of its system call until the completion is found.
        let r = replay(Strategy::IoPoll, COSTS, 1, 1, 0, &[10_000]);
        assert_eq!(r.spun, 10_000 - 500);
        assert_eq!(r.cpu, 500 + 9_500 + 100);
        assert_eq!(r.waits[0].at, 10_000);
    }
}
