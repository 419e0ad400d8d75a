//! IORING_ENTER_GETEVENTS: the caller waits until the CQ holds
//! `min_complete` CQEs (io_uring/io_uring.c `io_cqring_wait`), or the
//! extended argument's timeout passes (-ETIME when the CQ is still
//! empty), or a signal handler runs (-EINTR). With a min-wait (Linux
//! 6.12, `min_wait_usec`) it waits for `min_complete` only that long, then
//! returns as soon as there is one. The waiter is woken only once the CQ
//! holds what it needs, as the kernel's `io_wake_function` does.

use std::sync::atomic::Ordering::*;
use std::time::{Duration, Instant};

use super::abi::{self, GeteventsArg, Timespec};
use super::ring::Ring;
use crate::kernel::{read_user, sys};
use crate::route;

/// How long a waiter sleeps before it looks again unwoken (a device that
/// vanished is noticed).
const SLICE: Duration = Duration::from_secs(1);

/// What a GETEVENTS waits for, read from the program's arguments.
pub(crate) struct Wait {
    pub min: u32,
    /// The timeout's deadline (`None`: none).
    pub deadline: Option<Instant>,
    pub min_wait: Option<Duration>,
    /// The signal mask to wait with.
    pub mask: Option<libc::sigset_t>,
}

fn read_struct<T: Default>(at: u64) -> Result<T, i64> {
    let mut v = T::default();
    let n = std::mem::size_of::<T>();
    if read_user(at as usize, &mut v as *mut T as *mut u8, n) != n {
        return Err(-i64::from(libc::EFAULT));
    }
    Ok(v)
}

fn read_mask(at: u64, size: usize) -> Result<Option<libc::sigset_t>, i64> {
    if at == 0 {
        return Ok(None);
    }
    // The kernel's sigset_t is 8 bytes (`set_user_sigmask`: EINVAL else).
    if size != 8 {
        return Err(-i64::from(libc::EINVAL));
    }
    // SAFETY: sigset_t is plain data; its first 8 bytes are the kernel's.
    let mut m: libc::sigset_t = unsafe { std::mem::zeroed() };
    if read_user(at as usize, &mut m as *mut _ as *mut u8, 8) != 8 {
        return Err(-i64::from(libc::EFAULT));
    }
    Ok(Some(m))
}

/// The monotonic clock now, as a `Timespec`'s nanoseconds.
fn monotonic_ns() -> i128 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: fills `t`.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec)
}

impl Wait {
    /// Reads `io_uring_enter`'s `arg`/`argsz` as the kernel does
    /// (io_uring/io_uring.c `io_get_ext_arg`): a signal mask, or with
    /// IORING_ENTER_EXT_ARG a `struct io_uring_getevents_arg` (EINVAL for
    /// another size, EFAULT for an unreadable one).
    pub fn read(min: u32, flags: u32, arg: u64, argsz: usize) -> Result<Wait, i64> {
        let mut w = Wait {
            min,
            deadline: None,
            min_wait: None,
            mask: None,
        };
        if flags & abi::enter::EXT_ARG == 0 {
            w.mask = read_mask(arg, argsz)?;
            return Ok(w);
        }
        if arg == 0 {
            return Ok(w);
        }
        if argsz != std::mem::size_of::<GeteventsArg>() {
            return Err(-i64::from(libc::EINVAL));
        }
        let a: GeteventsArg = read_struct(arg)?;
        w.mask = read_mask(a.sigmask, a.sigmask_sz as usize)?;
        if a.min_wait_usec > 0 {
            w.min_wait = Some(Duration::from_micros(u64::from(a.min_wait_usec)));
        }
        if a.ts != 0 {
            let t: Timespec = read_struct(a.ts)?;
            if t.tv_sec < 0 || !(0..1_000_000_000).contains(&t.tv_nsec) {
                return Err(-i64::from(libc::EINVAL));
            }
            let ns = i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec);
            let rel = if flags & abi::enter::ABS_TIMER != 0 {
                (ns - monotonic_ns()).max(0)
            } else {
                ns
            };
            let rel = Duration::from_nanos(rel.min(i128::from(u64::MAX / 2)) as u64);
            w.deadline = Some(Instant::now() + rel);
        }
        Ok(w)
    }
}

/// The caller takes its completions from the ring's device slot itself
/// (issue 38 item 2): it spins on the slot as a blocking call's waiter
/// does (`shm::Slot::spin_first`: up to the region's budget, only while
/// commands are in flight), takes what the device delivered and publishes
/// it ([`Ring::take_slot`], under the one consumer lock the waiter thread
/// takes too), until the CQ holds `min`. The waiter thread is then not a
/// hop between the device's delivery and the program: it woke the caller
/// from the device's core, about 34 us on this VM (PLATFORM.md section
/// 3). Whether the CQ holds `min`; if not, the caller waits as before.
/// Only for a wait with no timeout, min-wait or signal mask: a spin in
/// user space would run a signal handler without the EINTR the kernel
/// returns, and could overrun a short timeout.
fn take_own(r: &Ring, min: u32) -> bool {
    let Some(s) = r.slot.zip(route::region()).map(|(i, g)| g.slot(i)) else {
        return false;
    };
    while s.spin_first(1) {
        r.take_slot(s);
        r.reap_shadow(false);
        let mut st = r.lock();
        if r.available(&st) >= min {
            r.flush(&mut st);
            if r.prog.cq_ready() >= min {
                return true;
            }
        }
    }
    false
}

/// Waits as `w` says: 0, -ETIME or -EINTR. The waiter polls the
/// shadow's eventfd (and reaps what the kernel posted) and the ring's
/// wake-up eventfd (a publication that gives it what it needs), with the
/// program's signal mask set atomically with the wait (`ppoll`), as
/// `io_cqring_wait` sets it.
pub(crate) fn wait(r: &Ring, w: &Wait) -> i64 {
    let min = w.min.min(r.prog.cq_entries);
    // The timeouts fired so far: one more ends the wait
    // (`State::cq_timeouts`).
    let seen;
    {
        let mut st = r.lock();
        seen = st.cq_timeouts;
        r.flush(&mut st);
        if r.prog.cq_ready() >= min.max(1) || min == 0 {
            return 0;
        }
    }
    if w.deadline.is_none() && w.min_wait.is_none() && w.mask.is_none() && take_own(r, min) {
        return 0;
    }
    let start = Instant::now();
    let min_until = w.min_wait.map(|d| start + d);
    let mut registered: Option<u32> = None;
    let mut result = 0;
    r.waiters.fetch_add(1, SeqCst);
    loop {
        let now = Instant::now();
        // Past the min-wait, one CQE is enough.
        let need = match min_until {
            Some(t) if now >= t => 1,
            _ => min,
        };
        if registered != Some(need) {
            r.need(registered, Some(need));
            registered = Some(need);
        }
        r.reap_shadow(false);
        {
            let mut st = r.lock();
            let fired = st.cq_timeouts != seen;
            if r.available(&st) >= need || fired {
                r.flush(&mut st);
                if r.prog.cq_ready() >= need || fired {
                    break;
                }
            }
        }
        if w.deadline.is_some_and(|d| now >= d) {
            result = if r.prog.cq_ready() == 0 {
                -i64::from(libc::ETIME)
            } else {
                0
            };
            break;
        }
        let until = [w.deadline, min_until.filter(|&t| t > now)]
            .into_iter()
            .flatten()
            .min();
        let slice = until.map_or(SLICE, |t| t.saturating_duration_since(now).min(SLICE));
        let ts = libc::timespec {
            tv_sec: slice.as_secs() as libc::time_t,
            tv_nsec: slice.subsec_nanos() as libc::c_long,
        };
        let mut fds = [
            libc::pollfd {
                fd: r.efd,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: r.wake_efd,
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        if r.flags & abi::setup::IOPOLL != 0 && r.lock().in_kernel > 0 {
            // An IOPOLL ring's completions are found only by polling: no
            // eventfd signal comes (io_uring/rw.c `io_complete_rw_iopoll`
            // only marks the request; `io_iopoll_check` posts it), and
            // the reaper thread stands aside while a waiter waits. The
            // waiter polls the shadow as the kernel's GETEVENTS would
            // (min_complete 1: `io_iopoll_check` spins until one, a
            // pending signal or need_resched).
            let rc = sys(
                libc::SYS_io_uring_enter,
                r.shadow_fd as usize,
                0,
                1,
                abi::enter::GETEVENTS as usize,
                0,
            );
            if rc == -i64::from(libc::EINTR) {
                result = rc;
                break;
            }
            continue;
        }
        let mask = w.mask.as_ref().map_or(std::ptr::null(), |m| m as *const _);
        // SAFETY: two pollfds of ours; the program's mask or none.
        let rc = unsafe { libc::ppoll(fds.as_mut_ptr(), 2, &ts, mask) };
        if rc < 0 && route::errno() == libc::EINTR {
            result = -i64::from(libc::EINTR);
            break;
        }
        for f in &fds {
            if f.revents & libc::POLLIN != 0 {
                let mut n: u64 = 0;
                // SAFETY: our nonblocking eventfd, 8 bytes.
                unsafe { libc::syscall(libc::SYS_read, f.fd, &mut n as *mut u64, 8) };
            }
        }
    }
    if registered.is_some() {
        r.need(registered, None);
    }
    r.waiters.fetch_sub(1, SeqCst);
    if r.lock().in_kernel > 0 {
        r.kernel_wait.notify_one();
    }
    result
}
