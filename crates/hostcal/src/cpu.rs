//! The processor's part: a system call, a switch with its wake-up on one
//! CPU, a wake-up across CPUs, a timer's sleep, an io_uring round trip and
//! a copy. Each function runs one round and returns its mean per
//! iteration, ns; the caller repeats rounds ([`crate::measure`]).

use std::hint::black_box;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// CLOCK_MONOTONIC, ns (the vDSO's: ~33 ns here, PLATFORM.md section 3).
pub fn now_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// The CPUs this process may run on (`sched_getaffinity`, what `nproc`
/// counts).
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is an empty set; the call fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: our set and its size.
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if r != 0 {
        return vec![0];
    }
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: i is below CPU_SETSIZE.
        .filter(|&i| unsafe { libc::CPU_ISSET(i, &set) })
        .collect()
}

/// Pins the calling thread to `cpu`.
pub fn pin(cpu: usize) -> Result<(), String> {
    // SAFETY: a zeroed set, then one CPU set in it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: cpu comes from allowed_cpus, below CPU_SETSIZE.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: pid 0 is the calling thread.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if r != 0 {
        return Err(format!(
            "cannot pin a thread to CPU {cpu}: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// Puts the calling thread (and the threads it starts, which inherit it)
/// in SCHED_FIFO at priority `prio`, or SCHED_OTHER with `prio` 0.
pub fn set_policy(prio: i32) -> Result<(), String> {
    let p = libc::sched_param {
        sched_priority: prio,
    };
    let policy = if prio > 0 {
        libc::SCHED_FIFO
    } else {
        libc::SCHED_OTHER
    };
    // SAFETY: pid 0 is the calling thread; a valid param.
    if unsafe { libc::sched_setscheduler(0, policy, &p) } != 0 {
        return Err(format!(
            "sched_setscheduler: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// `n` getppid system calls through `syscall(2)` (not glibc's wrapper,
/// which a libc could cache), as `perf bench syscall basic`; ns each.
pub fn syscall(n: u64) -> f64 {
    let t = now_ns();
    for _ in 0..n {
        // SAFETY: getppid takes nothing and cannot fail.
        black_box(unsafe { libc::syscall(libc::SYS_getppid) });
    }
    (now_ns() - t) as f64 / n as f64
}

/// A pipe, both ends (read, write), each closed when dropped.
fn pipe() -> Result<(OwnedFd, OwnedFd), String> {
    let mut fds = [0; 2];
    // SAFETY: a new pipe into our array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(format!("pipe: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: two new descriptors, owned here only.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Reads or writes one byte; false at the pipe's end or on an error.
fn byte(fd: &OwnedFd, write: bool) -> bool {
    let mut b = [0u8; 1];
    // SAFETY: one byte of our buffer on an open descriptor.
    let n = unsafe {
        if write {
            libc::write(fd.as_raw_fd(), b.as_ptr() as *const libc::c_void, 1)
        } else {
            libc::read(fd.as_raw_fd(), b.as_mut_ptr() as *mut libc::c_void, 1)
        }
    };
    n == 1
}

/// `n` round trips of one byte between two threads over two pipes, the
/// first thread pinned to `cpus.0` and the second to `cpus.1`, as `perf
/// bench sched pipe -T` (tools/perf/bench/sched-pipe.c): each round trip
/// is two writes, two reads and two wake-ups, each with its switch (on
/// one CPU) or its cross-CPU wake-up (on two). ns per round trip.
///
/// Each thread owns its two ends: if either stops, the other's read sees
/// the pipe's end, so neither waits for ever.
pub fn ping_pong(n: u64, cpus: (usize, usize)) -> Result<f64, String> {
    let (a_r, a_w) = pipe()?;
    let (b_r, b_w) = pipe()?;
    let echo = std::thread::spawn(move || -> Result<(), String> {
        pin(cpus.1)?;
        for _ in 0..n {
            if !byte(&a_r, false) || !byte(&b_w, true) {
                return Err("the echo thread's pipe failed".into());
            }
        }
        Ok(())
    });
    let ours = (|| {
        pin(cpus.0)?;
        let t = now_ns();
        for _ in 0..n {
            if !byte(&a_w, true) || !byte(&b_r, false) {
                return Err("the pipe failed".to_string());
            }
        }
        Ok((now_ns() - t) as f64 / n as f64)
    })();
    drop((a_w, b_r));
    let theirs = echo
        .join()
        .map_err(|_| "the echo thread panicked".to_string())?;
    theirs.and(ours)
}

/// `n` relative `clock_nanosleep(CLOCK_MONOTONIC)` of `asked` ns each: the
/// mean time slept beyond `asked`, ns (the timer's slack, 50 us by default
/// for a normal thread, `prctl(PR_GET_TIMERSLACK)`, plus its wake-up).
pub fn sleep_overshoot(n: u64, asked: u64) -> f64 {
    let ts = libc::timespec {
        tv_sec: (asked / 1_000_000_000) as libc::time_t,
        tv_nsec: (asked % 1_000_000_000) as libc::c_long,
    };
    let mut over = 0u64;
    for _ in 0..n {
        let t = now_ns();
        // SAFETY: a valid relative timespec; no remainder wanted.
        unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, 0, &ts, std::ptr::null_mut()) };
        over += (now_ns() - t).saturating_sub(asked);
    }
    over as f64 / n as f64
}

/// This thread's timer slack, ns (`prctl(PR_GET_TIMERSLACK)`).
pub fn timer_slack() -> u64 {
    // SAFETY: PR_GET_TIMERSLACK takes no pointer.
    let r = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) };
    r.max(0) as u64
}

/// A ring for [`uring_nop`].
pub fn uring() -> Result<io_uring::IoUring, String> {
    io_uring::IoUring::new(8).map_err(|e| format!("io_uring_setup: {e}"))
}

/// `n` io_uring round trips of one NOP: push, `io_uring_enter` with
/// to_submit 1 and min_complete 1, reap the CQE; ns each.
pub fn uring_nop(ring: &mut io_uring::IoUring, n: u64) -> Result<f64, String> {
    let nop = io_uring::opcode::Nop::new().build().user_data(7);
    let t = now_ns();
    for _ in 0..n {
        // SAFETY: a NOP refers to no memory.
        unsafe { ring.submission().push(&nop) }.map_err(|_| "io_uring: the SQ is full")?;
        ring.submit_and_wait(1)
            .map_err(|e| format!("io_uring_enter: {e}"))?;
        match ring.completion().next() {
            Some(c) if c.result() == 0 => {}
            other => return Err(format!("io_uring NOP completed as {other:?}")),
        }
    }
    Ok((now_ns() - t) as f64 / n as f64)
}

/// `n` copies of `kib` KiB between two buffers (memcpy, through
/// `copy_nonoverlapping`); ns per KiB.
pub fn copy_per_kib(n: u64, kib: usize) -> f64 {
    let src = vec![0x5au8; kib * 1024];
    let mut dst = vec![0u8; kib * 1024];
    let t = now_ns();
    for _ in 0..n {
        // SAFETY: two distinct buffers of the same length.
        unsafe {
            std::ptr::copy_nonoverlapping(black_box(src.as_ptr()), dst.as_mut_ptr(), src.len())
        };
        black_box(&mut dst);
    }
    (now_ns() - t) as f64 / (n as f64 * kib as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_system_call_costs_between_10ns_and_100us() {
        let ns = syscall(10_000);
        assert!((10.0..100_000.0).contains(&ns), "{ns} ns");
    }

    #[test]
    fn a_round_trip_is_dearer_than_its_four_system_calls() {
        let cpu = allowed_cpus()[0];
        let rtt = ping_pong(500, (cpu, cpu)).unwrap();
        // Two writes and two reads at least, each above 10 ns; below 10 ms
        // even on a loaded machine.
        assert!((40.0..10_000_000.0).contains(&rtt), "{rtt} ns");
    }

    #[test]
    fn a_sleep_never_ends_early() {
        // clock_nanosleep sleeps at least what it was asked (POSIX): the
        // overshoot is measured, not negative.
        let o = sleep_overshoot(5, 10_000);
        assert!((0.0..50_000_000.0).contains(&o), "{o} ns");
    }

    #[test]
    fn an_io_uring_nop_completes() {
        let mut r = uring().unwrap();
        let ns = uring_nop(&mut r, 100).unwrap();
        assert!((10.0..10_000_000.0).contains(&ns), "{ns} ns");
    }

    #[test]
    fn a_copy_per_kib_is_physical() {
        // 1 KiB below 1 ns would be over 1 TB/s; above 100 us, 10 MB/s.
        let ns = copy_per_kib(100, 16);
        assert!((1.0..100_000.0).contains(&ns), "{ns} ns/KiB");
    }
}
