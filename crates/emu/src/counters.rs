//! CPU counters from `perf_event_open(2)` (issue 37 item 3): cycles and
//! instructions retired (hardware), and the task clock (software, CPU time
//! in ns), each counted in user and kernel mode for one thread, or one
//! process and the threads and children it starts after the counter opens
//! (`inherit`).
//!
//! A minimal wrapper over the system call (libc has the call's number but
//! not its `struct perf_event_attr`): the first 64 bytes of the struct,
//! `PERF_ATTR_SIZE_VER0` (include/uapi/linux/perf_event.h), which every
//! kernel since 2.6.31 takes. Where the machine has no hardware counters
//! (a VM without a virtual PMU: on this project's VM `perf stat -e cycles
//! true` says `<not supported>`, and the call fails with ENOENT), the
//! counter is missing and [`Reading::unsupported`] says why, once.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `perf_event_attr.type` (include/uapi/linux/perf_event.h).
const PERF_TYPE_HARDWARE: u32 = 0;
const PERF_TYPE_SOFTWARE: u32 = 1;
/// `perf_hw_id`.
const PERF_COUNT_HW_CPU_CYCLES: u64 = 0;
const PERF_COUNT_HW_INSTRUCTIONS: u64 = 1;
/// `perf_sw_ids`.
const PERF_COUNT_SW_TASK_CLOCK: u64 = 1;
/// `perf_event_read_format`: the value, then the time the counter was
/// enabled and running (to scale a multiplexed count).
const PERF_FORMAT_TOTAL_TIME_ENABLED: u64 = 1 << 0;
const PERF_FORMAT_TOTAL_TIME_RUNNING: u64 = 1 << 1;
/// The attribute flags' bit-field, in the struct's order: `disabled` is
/// bit 0, `inherit` bit 1, `exclude_hv` bit 6, `enable_on_exec` bit 12.
/// User and kernel are both counted (`exclude_user`, `exclude_kernel`
/// clear); the hypervisor's time is not ours.
const FLAG_DISABLED: u64 = 1 << 0;
const FLAG_INHERIT: u64 = 1 << 1;
const FLAG_EXCLUDE_HV: u64 = 1 << 6;
const FLAG_ENABLE_ON_EXEC: u64 = 1 << 12;
/// `PERF_FLAG_FD_CLOEXEC` (the call's `flags`; not in libc).
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;
/// `PERF_ATTR_SIZE_VER0`.
const ATTR_SIZE_VER0: u32 = 64;

/// `struct perf_event_attr` up to `config1` (`PERF_ATTR_SIZE_VER0`).
#[repr(C)]
#[derive(Default)]
struct Attr {
    type_: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

/// What a counter counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Cycles,
    Instructions,
    /// CPU time, ns (software: every kernel with perf events has it).
    TaskClock,
}

impl Event {
    fn type_config(self) -> (u32, u64) {
        match self {
            Event::Cycles => (PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES),
            Event::Instructions => (PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS),
            Event::TaskClock => (PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Event::Cycles => "cycles",
            Event::Instructions => "instructions",
            Event::TaskClock => "task-clock",
        }
    }
}

/// One open counter.
#[derive(Debug)]
pub struct Counter {
    fd: OwnedFd,
}

impl Counter {
    /// Counts `event` for `pid` (0: the calling thread) on any CPU, user
    /// and kernel, from now; `inherit`: also the threads and processes it
    /// starts from now on.
    pub fn open(event: Event, pid: libc::pid_t, inherit: bool) -> io::Result<Counter> {
        let flags = if inherit { FLAG_INHERIT } else { 0 };
        Counter::open_with(event, pid, flags)
    }

    /// Counts `event` for the programs the calling thread starts from now
    /// on, from their `execve` (`perf stat`'s way): the counter opens
    /// disabled on this thread, inherited by its children, and each child's
    /// copy enables itself when the child execs (`enable_on_exec`). A child
    /// that never execs, and this thread, count nothing; the children's
    /// counts reach this counter as they exit.
    pub fn open_for_exec(event: Event) -> io::Result<Counter> {
        Counter::open_with(event, 0, FLAG_DISABLED | FLAG_INHERIT | FLAG_ENABLE_ON_EXEC)
    }

    fn open_with(event: Event, pid: libc::pid_t, flags: u64) -> io::Result<Counter> {
        let (type_, config) = event.type_config();
        let attr = Attr {
            type_,
            size: ATTR_SIZE_VER0,
            config,
            read_format: PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
            flags: FLAG_EXCLUDE_HV | flags,
            ..Attr::default()
        };
        // SAFETY: the attribute struct outlives the call, which reads
        // `size` bytes of it; the returned descriptor is ours to own.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                &attr as *const Attr,
                pid,
                -1 as libc::c_int,
                -1 as libc::c_int,
                PERF_FLAG_FD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a new descriptor the call just returned.
        Ok(Counter {
            fd: unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) },
        })
    }

    /// The count so far, scaled up by enabled over running time when the
    /// kernel multiplexed the counter (as `perf stat` does).
    pub fn read(&self) -> io::Result<u64> {
        let mut buf = [0u64; 3];
        // SAFETY: reads at most the buffer's 24 bytes into it.
        let n = unsafe {
            libc::read(
                self.fd.as_raw_fd(),
                buf.as_mut_ptr().cast(),
                std::mem::size_of_val(&buf),
            )
        };
        if n != std::mem::size_of_val(&buf) as isize {
            return Err(if n < 0 {
                io::Error::last_os_error()
            } else {
                io::Error::new(io::ErrorKind::UnexpectedEof, "a short perf counter read")
            });
        }
        let [value, enabled, running] = buf;
        if running == 0 || running >= enabled {
            return Ok(value);
        }
        let scaled = u128::from(value) * u128::from(enabled) / u128::from(running);
        Ok(u64::try_from(scaled).unwrap_or(u64::MAX))
    }
}

/// What a set of counters read: `None` where a counter could not be opened
/// or read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reading {
    pub cycles: Option<u64>,
    pub instructions: Option<u64>,
    pub task_clock_ns: Option<u64>,
    /// The counters missing and why (`cycles, instructions: not supported
    /// by this machine (perf_event_open: ENOENT)`), once.
    pub unsupported: Option<String>,
}

impl Reading {
    /// What happened between `earlier` and `self` (counters both have).
    pub fn since(&self, earlier: &Reading) -> Reading {
        let d = |a: Option<u64>, b: Option<u64>| Some(a?.saturating_sub(b?));
        Reading {
            cycles: d(self.cycles, earlier.cycles),
            instructions: d(self.instructions, earlier.instructions),
            task_clock_ns: d(self.task_clock_ns, earlier.task_clock_ns),
            unsupported: self.unsupported.clone(),
        }
    }

    /// The sum of two threads' readings: a counter counts only where both
    /// have it.
    pub fn add(&self, other: &Reading) -> Reading {
        let s = |a: Option<u64>, b: Option<u64>| Some(a?.saturating_add(b?));
        Reading {
            cycles: s(self.cycles, other.cycles),
            instructions: s(self.instructions, other.instructions),
            task_clock_ns: s(self.task_clock_ns, other.task_clock_ns),
            unsupported: self
                .unsupported
                .clone()
                .or_else(|| other.unsupported.clone()),
        }
    }

    /// As the report shows it, over `ios` I/Os of what `scope` counted.
    pub fn to_report(&self, ios: u64, scope: &str) -> report::Counters {
        report::Counters {
            ios,
            scope: scope.to_string(),
            cycles: self.cycles,
            instructions: self.instructions,
            task_clock_ns: self.task_clock_ns,
            unsupported: self.unsupported.clone(),
        }
    }
}

/// Cycles, instructions and the task clock of one thread or process.
#[derive(Debug)]
pub struct Counters {
    counters: Vec<(Event, io::Result<Counter>)>,
}

impl Counters {
    /// Opens the three counters for `pid` (0: the calling thread); see
    /// [`Counter::open`].
    pub fn open(pid: libc::pid_t, inherit: bool) -> Counters {
        Counters::open_each(|e| Counter::open(e, pid, inherit))
    }

    /// The three counters for the programs the calling thread starts from
    /// now on ([`Counter::open_for_exec`]).
    pub fn open_for_exec() -> Counters {
        Counters::open_each(Counter::open_for_exec)
    }

    fn open_each(open: impl Fn(Event) -> io::Result<Counter>) -> Counters {
        let counters = [Event::Cycles, Event::Instructions, Event::TaskClock]
            .into_iter()
            .map(|e| (e, open(e)))
            .collect();
        Counters { counters }
    }

    /// The counts so far.
    pub fn read(&self) -> Reading {
        let mut r = Reading::default();
        let mut missing: Vec<(&str, String)> = Vec::new();
        for (event, counter) in &self.counters {
            let read = counter.as_ref().map(Counter::read);
            let value = match read {
                Ok(Ok(v)) => Some(v),
                Ok(Err(ref e)) => {
                    missing.push((event.name(), why(e)));
                    None
                }
                Err(e) => {
                    missing.push((event.name(), why(e)));
                    None
                }
            };
            match event {
                Event::Cycles => r.cycles = value,
                Event::Instructions => r.instructions = value,
                Event::TaskClock => r.task_clock_ns = value,
            }
        }
        if !missing.is_empty() {
            // One line: the counters that share a reason named together.
            let mut groups: Vec<(Vec<&str>, String)> = Vec::new();
            for (name, reason) in missing {
                match groups.iter_mut().find(|g| g.1 == reason) {
                    Some(g) => g.0.push(name),
                    None => groups.push((vec![name], reason)),
                }
            }
            let parts: Vec<String> = groups
                .into_iter()
                .map(|(names, reason)| format!("{}: {reason}", names.join(", ")))
                .collect();
            r.unsupported = Some(parts.join("; "));
        }
        r
    }
}

/// Why a counter is missing, in the user's words.
fn why(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV) => format!(
            "not supported by this machine (perf_event_open: {}; no hardware counters, as in a VM without a virtual PMU)",
            errno_name(e)
        ),
        Some(libc::EACCES) | Some(libc::EPERM) => format!(
            "not permitted (perf_event_open: {}; see /proc/sys/kernel/perf_event_paranoid)",
            errno_name(e)
        ),
        _ => format!("unavailable (perf_event_open: {e})"),
    }
}

fn errno_name(e: &io::Error) -> &'static str {
    match e.raw_os_error() {
        Some(libc::ENOENT) => "ENOENT",
        Some(libc::EOPNOTSUPP) => "EOPNOTSUPP",
        Some(libc::ENODEV) => "ENODEV",
        Some(libc::EACCES) => "EACCES",
        Some(libc::EPERM) => "EPERM",
        _ => "error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This thread's CPU time, ns (CLOCK_THREAD_CPUTIME_ID).
    fn thread_cpu() -> u64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: fills the timespec it is given.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }

    /// Burns `ms` of this thread's CPU time (not wall time: the machine
    /// may be loaded).
    fn burn(ms: u64) -> u64 {
        let start = thread_cpu();
        let mut x = 1u64;
        while thread_cpu() - start < ms * 1_000_000 {
            for _ in 0..1000 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
        }
        x
    }

    #[test]
    fn the_task_clock_counts_this_threads_cpu_time() {
        // The software task clock is there wherever perf events are (no
        // PMU needed): the counter-reading code is tested on it.
        let c = Counter::open(Event::TaskClock, 0, false).expect("task-clock counter");
        let before = c.read().unwrap();
        let cpu0 = crate::sys::Usage::of_this_thread();
        burn(30);
        let after = c.read().unwrap();
        let cpu = crate::sys::Usage::of_this_thread().since(cpu0);
        let counted = after - before;
        let rusage = cpu.user_ns + cpu.sys_ns;
        // Both are the thread's sum_exec_runtime (getrusage's in us).
        // (The two clocks are read at slightly different points.)
        assert!(counted >= 25_000_000, "{counted} ns counted for 30 ms");
        let diff = counted.abs_diff(rusage);
        assert!(
            diff <= 2_000_000,
            "task-clock {counted} ns against getrusage {rusage} ns"
        );
    }

    #[test]
    fn a_set_reads_what_it_has_and_names_what_it_lacks_once() {
        let set = Counters::open(0, false);
        let a = set.read();
        burn(5);
        let b = set.read().since(&a);
        assert!(b.task_clock_ns.is_some_and(|ns| ns > 0), "{b:?}");
        // Hardware counters: either counted, or named as missing, never a
        // number beside a reason.
        for (name, v) in [("cycles", b.cycles), ("instructions", b.instructions)] {
            let said = b.unsupported.as_deref().is_some_and(|u| u.contains(name));
            assert!(v.is_some() != said, "{name}: {v:?} and {:?}", b.unsupported);
            if let Some(v) = v {
                assert!(v > 0, "{name} counted nothing");
            }
        }
    }

    #[test]
    fn a_program_started_after_open_for_exec_is_counted_and_we_are_not() {
        let set = Counters::open_for_exec();
        // Our own CPU is not counted: the counter is disabled here.
        burn(5);
        assert_eq!(set.read().task_clock_ns, Some(0));
        // A child that execs and burns CPU: its count arrives as it exits.
        let status = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"])
            .status()
            .expect("sh runs");
        assert!(status.success());
        let ns = set.read().task_clock_ns.expect("task clock");
        assert!(ns > 1_000_000, "{ns} ns counted for the child");
    }

    #[test]
    fn readings_add_only_what_both_have() {
        let a = Reading {
            cycles: Some(10),
            task_clock_ns: Some(5),
            ..Reading::default()
        };
        let b = Reading {
            cycles: None,
            task_clock_ns: Some(7),
            unsupported: Some("cycles: x".into()),
            ..Reading::default()
        };
        let s = a.add(&b);
        assert_eq!((s.cycles, s.task_clock_ns), (None, Some(12)));
        assert_eq!(s.unsupported.as_deref(), Some("cycles: x"));
    }
}
