//! The kernel calls the library makes on its own behalf, and the small
//! pieces `aio` and `uring` share: our system calls marked
//! [`shm::OWN_CALL`] (exec's seccomp filter lets them through), our
//! threads (every signal blocked), futex wake-ups, and reads of the
//! program's memory as the kernel's `copy_from_user` makes them.

use std::ffi::{c_int, c_long, c_void};
use std::sync::atomic::AtomicU32;

use libc::iovec;

/// FUTEX_WAIT and FUTEX_WAKE with FUTEX_PRIVATE_FLAG (128), for a word of
/// this process's own memory (include/uapi/linux/futex.h).
pub(crate) const FUTEX_WAIT_PRIVATE: c_int = libc::FUTEX_WAIT | 128;
pub(crate) const FUTEX_WAKE_PRIVATE: c_int = libc::FUTEX_WAKE | 128;

/// The kernel's aio or io_uring system call `n` made by the library itself, marked
/// [`shm::OWN_CALL`]: its result, or a negative errno.
pub(crate) fn sys(n: c_long, a1: usize, a2: usize, a3: usize, a4: usize, a5: usize) -> i64 {
    // SAFETY: an aio system call; the kernel validates every argument
    // (pointers are ours, or the program's as it passed them).
    let r = unsafe { libc::syscall(n, a1, a2, a3, a4, a5, shm::OWN_CALL) };
    if r < 0 {
        -i64::from(errno())
    } else {
        r
    }
}

/// Starts a thread of ours with every signal blocked (the program's
/// signals are for its own threads: a handler run on ours would surprise
/// it), by blocking them around the spawn so it inherits the mask.
pub(crate) fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> bool {
    // SAFETY: sigset_t is plain data; the calls fill and read it.
    let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    unsafe {
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
    }
    let r = std::thread::Builder::new()
        .name(name.to_string())
        // Small (the threads hold a 2 KiB event buffer); Rust's std adds
        // the program's static TLS (glibc's __pthread_get_minstack).
        .stack_size(256 * 1024)
        .spawn(f);
    // SAFETY: restores the caller's mask.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
    r.is_ok()
}

/// Wakes every waiter on a futex word of our private memory.
pub(crate) fn wake(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE on a word of our private mapping.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            FUTEX_WAKE_PRIVATE,
            i32::MAX,
            0,
            0,
            0,
        )
    };
}

/// Reads `n` bytes of the program's memory at `from` into `to`, as the
/// kernel's copy_from_user would: the bytes readable before the first
/// fault (`process_vm_readv` on ourselves).
pub(crate) fn read_user(from: usize, to: *mut u8, n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    let local = iovec {
        iov_base: to as *mut c_void,
        iov_len: n,
    };
    let remote = iovec {
        iov_base: from as *mut c_void,
        iov_len: n,
    };
    // SAFETY: `to` has room for n bytes; the kernel checks `from`.
    let r = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    if r < 0 && matches!(errno(), libc::ENOSYS | libc::EPERM) {
        // A sandbox that refuses the call (a container's seccomp profile
        // without CAP_SYS_PTRACE): read as a plain access, trusting the
        // program's pointer as libaio does.
        // SAFETY: the program's memory as it passed it.
        unsafe { std::ptr::copy_nonoverlapping(from as *const u8, to, n) };
        return n;
    }
    r.max(0) as usize
}

pub(crate) fn set_errno(e: c_int) {
    // SAFETY: errno is thread-local.
    unsafe { *libc::__errno_location() = e };
}

pub(crate) fn errno() -> c_int {
    // SAFETY: errno is thread-local.
    unsafe { *libc::__errno_location() }
}
