//! The scheduling and timer calls a thread makes for itself, which the
//! emulator's job threads and the preload library's program threads make
//! alike (issue 38 item 1: here, so that the library links none of the
//! emulator; `emu::sys` and `emu::config` re-export them): FastResponse's
//! critical boost, SCHED_FIFO and EEVDF's custom slice, the timer slack,
//! and hybrid polling's timer.

use std::io;

use policy::{Nanos, US};

/// FastResponse's critical wake-up boost (FR 3.5, Algorithm 1: a critical
/// task's wake-up preempts the running task) on this machine's own kernel,
/// for the threads of jobs with `critical=1`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Boost {
    /// Every job thread is a plain SCHED_OTHER task.
    #[default]
    None,
    /// EEVDF's custom slice (`sched_setattr`, `sched_runtime` =
    /// `sys::SLICE_MIN`, 0.1 ms): still a fair-class task, so it
    /// cannot starve the others, as FR's guard intends; it preempts at
    /// wake-up through its earlier deadline.
    Slice,
    /// SCHED_FIFO priority 1: preempts every normal task at once, and
    /// could starve them (the handler threads run at priority 50, above).
    Fifo,
}

impl Boost {
    pub fn as_str(self) -> &'static str {
        match self {
            Boost::None => "none",
            Boost::Slice => "slice",
            Boost::Fifo => "fifo",
        }
    }

    /// Gives the calling thread this boost (`none` does nothing): the one
    /// way `run`'s job threads and `exec`'s program threads get it.
    pub fn apply(self) -> std::io::Result<()> {
        match self {
            Boost::None => Ok(()),
            Boost::Slice => set_slice(SLICE_MIN),
            Boost::Fifo => set_fifo(1),
        }
    }

    /// `none`, `slice` or `fifo`.
    pub fn parse(s: &str) -> Option<Boost> {
        match s {
            "none" => Some(Boost::None),
            "slice" => Some(Boost::Slice),
            "fifo" => Some(Boost::Fifo),
            _ => None,
        }
    }
}

/// Gives the calling thread SCHED_FIFO at `priority`, so that waking it
/// preempts whatever normal thread runs on its CPU, as an interrupt does.
pub fn set_fifo(priority: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: pthread_self is always valid; param outlives the call.
    let rc = unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// The shortest custom slice Linux accepts from `sched_setattr` for a
/// normal task: `SCHED_SLICE_MIN`, 0.1 ms (kernel/sched/syscalls.c, Linux
/// 6.12 and later, where EEVDF takes `sched_runtime` as the task's slice).
pub const SLICE_MIN: Nanos = 100 * US;

/// Asks EEVDF for a short slice for the calling thread: `sched_setattr`
/// with SCHED_OTHER and `sched_runtime = slice` (Linux 6.12+). A task with
/// a shorter slice has an earlier virtual deadline, so at its wake-up it
/// preempts a running task with the default slice (the scheduler feature
/// PREEMPT_SHORT) instead of waiting for the current one's slice to end.
pub fn set_slice(slice: Nanos) -> io::Result<()> {
    let attr = libc::sched_attr {
        size: std::mem::size_of::<libc::sched_attr>() as u32,
        sched_policy: libc::SCHED_OTHER as u32,
        sched_flags: 0,
        sched_nice: 0,
        sched_priority: 0,
        sched_runtime: slice,
        sched_deadline: 0,
        sched_period: 0,
    };
    // SAFETY: attr is a valid sched_attr whose size field says its size;
    // pid 0 is the calling thread.
    let rc = unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr as *const _, 0) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sets the calling thread's timer slack to 1 ns (`PR_SET_TIMERSLACK`; the
/// default is 50 us): a short sleep then ends as early as the timer can end
/// it. PLATFORM.md section 3: a 10 us nanosleep takes 90.6 us with the
/// default slack, 39.0 us with 1 ns.
pub fn set_timer_slack_min() -> io::Result<()> {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument.
    let rc = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// What a sleep overshoots by on this VM before it is measured: PLATFORM.md
/// section 3, a 10 us nanosleep with 1 ns timer slack takes 39.0 us (29 us
/// over); a 1 us one 24.6 us. A [`HybridTimer`] then keeps a running mean
/// of its own sleeps' overshoot.
pub const TIMER_OVERSHOOT: Nanos = 29_000;

/// Hybrid polling's sleep (`blk_mq_poll_hybrid_sleep`) on this VM, for one
/// thread: a timer sleep overshoots by tens of microseconds (PLATFORM.md
/// section 3), so the thread asks the timer for the sleep less the
/// overshoot it has measured, and spins from the start when the sleep is
/// shorter than that (it would wake too late): the CPU is freed only where
/// the timer can give it back in time. `run`'s job threads and `exec`'s
/// program threads use it alike.
#[derive(Clone, Copy, Debug)]
pub struct HybridTimer {
    overshoot: Nanos,
}

/// What one hybrid wait's sleep did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HybridSleep {
    /// The sleep was not longer than the overshoot: spin from the start.
    Spun,
    /// Asked the timer for `asked` ns and slept `slept`.
    Slept { asked: Nanos, slept: Nanos },
}

impl Default for HybridTimer {
    fn default() -> Self {
        HybridTimer::new()
    }
}

impl HybridTimer {
    pub fn new() -> HybridTimer {
        HybridTimer {
            overshoot: TIMER_OVERSHOOT,
        }
    }

    /// As [`HybridTimer::new`], and sets the calling thread's timer slack
    /// to 1 ns (`set_timer_slack_min`): the thread that sleeps must call it.
    pub fn for_this_thread() -> HybridTimer {
        let _ = set_timer_slack_min();
        HybridTimer::new()
    }

    /// Sleeps `want` ns less the overshoot, if that is anything.
    pub fn sleep(&mut self, want: Nanos) -> HybridSleep {
        if want <= self.overshoot {
            return HybridSleep::Spun;
        }
        let ask = want - self.overshoot;
        let start = std::time::Instant::now();
        std::thread::sleep(std::time::Duration::from_nanos(ask));
        let slept = start.elapsed().as_nanos() as Nanos;
        // A running mean, weight 1/8, of how far past the asked time the
        // timer woke the thread.
        let over = slept.saturating_sub(ask);
        self.overshoot = (self.overshoot * 7 + over) / 8;
        HybridSleep::Slept { asked: ask, slept }
    }
}
