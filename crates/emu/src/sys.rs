//! The few OS services the emulator needs: CPU pinning, real-time priority
//! for the interrupt handler, per-thread CPU time, futexes, the clock.

use std::io;
use std::sync::atomic::AtomicU32;
use std::time::Instant;

use policy::{Nanos, SEC, US};

/// The calls the preload library's threads make too live in `wire` (issue
/// 38 item 1), so that the library links none of the emulator.
pub use wire::sys::{set_fifo, set_timer_slack_min, HybridSleep, HybridTimer, TIMER_OVERSHOOT};

/// Pins the calling thread to one CPU.
pub fn pin_to(cpu: usize) -> io::Result<()> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    // SAFETY: cpu_set_t is plain data; CPU_SET writes inside it, and
    // sched_setaffinity(0, ..) only reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The CPUs this process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: as in `pin_to`; sched_getaffinity fills the set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// Gives the calling thread SCHED_IDLE: it runs only when nothing else on
/// its CPU wants to (an idle poller).
pub fn set_idle() -> io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: as in `set_fifo`.
    let rc = unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_IDLE, &param) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// CPU time and context switches of the calling thread so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub user_ns: u64,
    pub sys_ns: u64,
    pub voluntary: u64,
    pub involuntary: u64,
}

impl Usage {
    pub fn of_this_thread() -> Usage {
        // SAFETY: getrusage fills the struct it is given.
        let ru = unsafe {
            let mut ru: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_THREAD, &mut ru);
            ru
        };
        let ns = |tv: libc::timeval| tv.tv_sec as u64 * SEC + tv.tv_usec as u64 * US;
        Usage {
            user_ns: ns(ru.ru_utime),
            sys_ns: ns(ru.ru_stime),
            voluntary: ru.ru_nvcsw as u64,
            involuntary: ru.ru_nivcsw as u64,
        }
    }

    /// What happened between `earlier` and `self`.
    pub fn since(self, earlier: Usage) -> Usage {
        Usage {
            user_ns: self.user_ns.saturating_sub(earlier.user_ns),
            sys_ns: self.sys_ns.saturating_sub(earlier.sys_ns),
            voluntary: self.voluntary.saturating_sub(earlier.voluntary),
            involuntary: self.involuntary.saturating_sub(earlier.involuntary),
        }
    }
}

/// Reads another thread's CPU time and context switches while it runs (the
/// interrupt handler's, whose time is the cores' interrupt time).
#[derive(Clone, Copy, Debug)]
pub struct ThreadProbe {
    tid: libc::pid_t,
    clock: libc::clockid_t,
}

impl ThreadProbe {
    /// A probe of the calling thread, for use from any thread of the process
    /// while this one lives.
    pub fn this_thread() -> ThreadProbe {
        let mut clock: libc::clockid_t = 0;
        // SAFETY: gettid has no preconditions; pthread_getcpuclockid writes
        // the id of the calling thread's CPU-time clock.
        unsafe {
            libc::pthread_getcpuclockid(libc::pthread_self(), &mut clock);
            ThreadProbe {
                tid: libc::gettid(),
                clock,
            }
        }
    }

    /// CPU time (user and system together; the clock does not split them)
    /// and context switches, from `/proc/self/task/TID/status`.
    pub fn read(&self) -> Usage {
        // SAFETY: clock_gettime writes the timespec; an invalid clock (the
        // thread is gone) returns an error and leaves it zeroed.
        let ts = unsafe {
            let mut ts: libc::timespec = std::mem::zeroed();
            libc::clock_gettime(self.clock, &mut ts);
            ts
        };
        let status = std::fs::read_to_string(format!("/proc/self/task/{}/status", self.tid))
            .unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0)
        };
        Usage {
            user_ns: ts.tv_sec as u64 * SEC + ts.tv_nsec as u64,
            sys_ns: 0,
            voluntary: field("voluntary_ctxt_switches:"),
            involuntary: field("nonvoluntary_ctxt_switches:"),
        }
    }
}

/// Sleeps on the futex word `word` while it holds `expected`, woken only by
/// a [`futex_wake_bits`] whose bits meet `bits` (FUTEX_WAIT_BITSET). May
/// return early (a signal, or the word changed): callers re-check.
pub fn futex_wait_bits(word: &AtomicU32, expected: u32, bits: u32) -> Slept {
    futex_wait_bits_for(word, expected, bits, None)
}

/// How a futex wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slept {
    /// Woken (or, rarely, spuriously): a sleep that ended.
    Woken,
    /// Its timeout ended it: a sleep that ended too.
    TimedOut,
    /// Never slept: the word had changed (or a signal came first).
    Not,
}

/// [`futex_wait_bits`], for at most `timeout` ns (`None`: no timeout).
pub fn futex_wait_bits_for(
    word: &AtomicU32,
    expected: u32,
    bits: u32,
    timeout: Option<u64>,
) -> Slept {
    // FUTEX_WAIT_BITSET's timeout is absolute, on CLOCK_MONOTONIC.
    let deadline = timeout.map(|ns| {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid timespec to fill.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        let total = ts.tv_nsec as u64 + ns;
        ts.tv_sec += (total / 1_000_000_000) as libc::time_t;
        ts.tv_nsec = (total % 1_000_000_000) as libc::c_long;
        ts
    });
    let ts_ptr = deadline
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: the word is a valid, aligned u32 for the call; the timeout,
    // if any, lives until the call returns.
    let r = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT_BITSET | libc::FUTEX_PRIVATE_FLAG,
            expected,
            ts_ptr,
            std::ptr::null::<u32>(),
            bits,
        )
    };
    if r == 0 {
        return Slept::Woken;
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::ETIMEDOUT) => Slept::TimedOut,
        _ => Slept::Not,
    }
}

/// Wakes every thread sleeping on `word` in [`futex_wait_bits`] with a bit
/// in `bits`, in one system call (FUTEX_WAKE_BITSET): they become runnable
/// together and the scheduler picks which runs first.
pub fn futex_wake_bits(word: &AtomicU32, bits: u32) {
    // SAFETY: as in `futex_wait_bits`.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE_BITSET | libc::FUTEX_PRIVATE_FLAG,
            i32::MAX,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            bits,
        );
    }
}

/// Sleeps `ns` on the calling thread's timer (`nanosleep`, through
/// `std::thread::sleep`) and returns how long it slept: the time asked
/// plus the timer's overshoot (about 25-40 us here with 1 ns of timer
/// slack, [`set_timer_slack_min`]; PLATFORM.md section 3) and any wait for
/// the CPU. A "sleep, then poll" strategy's sleep (`worker/sleep.rs`).
pub fn timer_sleep(ns: Nanos) -> Nanos {
    let start = Instant::now();
    std::thread::sleep(std::time::Duration::from_nanos(ns));
    start.elapsed().as_nanos() as Nanos
}

/// Nanoseconds since the run started, from the vDSO's monotonic clock
/// (about 33 ns a read here, PLATFORM.md section 3).
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    start: Instant,
}

impl Clock {
    pub fn new() -> Clock {
        Clock {
            start: Instant::now(),
        }
    }

    pub fn now(&self) -> Nanos {
        self.start.elapsed().as_nanos() as Nanos
    }

    /// Waits until `t`: sleeps while more than 200 us remain, then spins,
    /// because a sleep here overshoots by 40-90 us (PLATFORM.md section 3).
    pub fn wait_until(&self, t: Nanos) {
        const SPIN: Nanos = 200_000;
        loop {
            let now = self.now();
            if now >= t {
                return;
            }
            if t - now > SPIN {
                std::thread::sleep(std::time::Duration::from_nanos(t - now - SPIN));
            } else {
                std::hint::spin_loop();
            }
        }
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_grows_with_work_and_since_subtracts() {
        let a = Usage::of_this_thread();
        let clock = Clock::new();
        while clock.now() < 20_000_000 {
            std::hint::spin_loop();
        }
        let b = Usage::of_this_thread().since(a);
        assert!(b.user_ns + b.sys_ns > 1_000_000, "{b:?}");
    }

    #[test]
    fn a_probe_sees_another_threads_cpu_time_and_switches() {
        let (tx, rx) = std::sync::mpsc::channel();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            tx.send(ThreadProbe::this_thread()).unwrap();
            go_rx.recv().unwrap();
            // Spin for 20 ms of its own CPU time, not of wall time: on a
            // loaded machine 20 ms of wall time may hold little CPU.
            let from = Usage::of_this_thread();
            while Usage::of_this_thread().since(from).user_ns < 20_000_000 {
                std::hint::spin_loop();
            }
            done_tx.send(()).unwrap();
            go_rx.recv().unwrap();
        });
        let probe = rx.recv().unwrap();
        let a = probe.read();
        go_tx.send(()).unwrap();
        done_rx.recv().unwrap();
        // It next blocks in recv (a voluntary switch); give a loaded
        // machine time to get it there.
        let waited = Instant::now();
        let mut b = probe.read().since(a);
        while b.voluntary == 0 && waited.elapsed() < std::time::Duration::from_secs(5) {
            std::thread::sleep(std::time::Duration::from_millis(1));
            b = probe.read().since(a);
        }
        go_tx.send(()).unwrap();
        t.join().unwrap();
        assert!(b.user_ns >= 10_000_000, "{b:?}");
        assert!(b.voluntary >= 1, "it slept in recv: {b:?}");
    }

    #[test]
    fn wait_until_is_not_early() {
        let clock = Clock::new();
        for t in [50_000, 300_000, 2_000_000] {
            clock.wait_until(clock.now() + t);
        }
        let start = clock.now();
        clock.wait_until(start + 10_000);
        assert!(clock.now() >= start + 10_000);
    }

    #[test]
    fn pinning_to_an_allowed_cpu_works_and_to_a_missing_one_fails() {
        let cpus = allowed_cpus();
        assert!(!cpus.is_empty());
        std::thread::spawn(move || {
            pin_to(cpus[0]).unwrap();
            assert!(pin_to(1000).is_err(), "no VM here has CPU 1000");
            assert!(pin_to(100_000).is_err());
        })
        .join()
        .unwrap();
    }
}
