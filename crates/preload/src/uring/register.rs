//! `io_uring_register` on a routed ring. Most opcodes act on the shadow,
//! which holds the program's registered buffers, files, personalities and
//! restrictions, so the kernel's own checks and errors answer them. The
//! library keeps a copy of the file table (a fixed file's descriptor says
//! whether its I/O is direct), answers the eventfd and ring-descriptor
//! registrations itself (they name the program's ring), and refuses what
//! it cannot provide (resizing the rings, memory regions, zero-copy
//! receive queues, cloning another ring's buffers) with EINVAL, the
//! kernel's answer to an opcode it does not have.

use std::cell::RefCell;
use std::ffi::c_int;

use super::abi::{self, reg, Sqe};
use super::ring::Ring;
use crate::kernel::{read_user, sys};
use crate::route;

fn einval() -> i64 {
    -i64::from(libc::EINVAL)
}

fn read_fds(at: u64, n: usize) -> Option<Vec<c_int>> {
    let mut v = vec![-1; n];
    let bytes = n * 4;
    (read_user(at as usize, v.as_mut_ptr() as *mut u8, bytes) == bytes).then_some(v)
}

fn read_u32s<const N: usize>(at: u64) -> Option<[u32; N]> {
    let mut v = [0u32; N];
    (read_user(at as usize, v.as_mut_ptr() as *mut u8, N * 4) == N * 4).then_some(v)
}

fn update(r: &Ring, offset: usize, fds: &[c_int]) {
    let mut files = r.files.lock().unwrap_or_else(|e| e.into_inner());
    if files.len() < offset + fds.len() {
        files.resize(offset + fds.len(), -1);
    }
    files[offset..offset + fds.len()].copy_from_slice(fds);
}

/// IORING_OP_FILES_UPDATE's table change, mirrored at submission.
pub(crate) fn files_update_sqe(r: &Ring, s: &Sqe) {
    let n = (s.len() as usize).min(1 << 16);
    let off = s.off() as usize;
    if s.off() as i32 >= 0 {
        if let Some(fds) = read_fds(s.addr(), n) {
            update(r, off, &fds);
        }
    }
}

/// The opcode on the shadow, the kernel's answer.
fn forward(r: &Ring, opcode: u32, arg: u64, nr: u32) -> i64 {
    sys(
        libc::SYS_io_uring_register,
        r.shadow_fd as usize,
        opcode as usize,
        arg as usize,
        nr as usize,
        0,
    )
}

/// The program's descriptors with each routed ring's (our memfd, which
/// the kernel would take) replaced by its shadow's, an io_uring file the
/// kernel refuses as it refuses the program's ring (io_uring/rsrc.c
/// `io_sqe_files_register`, `__io_sqe_files_update`: `io_is_uring_fops`,
/// -EBADF). `None`: no ring among them, the program's array as it is.
fn rings_as_shadows(fds: &[c_int]) -> Option<Vec<c_int>> {
    let mut any = false;
    let out = fds
        .iter()
        .map(|&fd| match super::lookup(fd) {
            Some(t) => {
                any = true;
                t.shadow_fd
            }
            None => fd,
        })
        .collect();
    any.then_some(out)
}

/// `io_uring_register(ring, opcode, arg, nr)` on a routed ring.
pub(crate) fn register(r: &Ring, opcode: u32, arg: u64, nr: u32) -> i64 {
    match opcode {
        reg::REGISTER_FILES => {
            // At most the kernel's IORING_MAX_FIXED_FILES (1 << 20); past
            // it the kernel's own -EMFILE on the program's array.
            let swapped = (nr <= 1 << 20)
                .then(|| read_fds(arg, nr as usize))
                .flatten()
                .as_deref()
                .and_then(rings_as_shadows);
            let res = match &swapped {
                Some(v) => forward(r, opcode, v.as_ptr() as u64, nr),
                None => forward(r, opcode, arg, nr),
            };
            if res >= 0 {
                let fds = read_fds(arg, nr as usize).unwrap_or_default();
                *r.files.lock().unwrap_or_else(|e| e.into_inner()) = fds;
            }
            res
        }
        reg::REGISTER_FILES2 => {
            // struct io_uring_rsrc_register { nr, flags, resv2, data, tags }.
            let res = forward(r, opcode, arg, nr);
            if let (true, Some(w)) = (res >= 0, read_u32s::<6>(arg)) {
                let (n, flags, data) =
                    (w[0] as usize, w[1], u64::from(w[4]) | u64::from(w[5]) << 32);
                let fds = if flags & reg::RSRC_REGISTER_SPARSE != 0 {
                    vec![-1; n]
                } else {
                    read_fds(data, n).unwrap_or_default()
                };
                *r.files.lock().unwrap_or_else(|e| e.into_inner()) = fds;
            }
            res
        }
        reg::UNREGISTER_FILES => {
            let res = forward(r, opcode, arg, nr);
            if res >= 0 {
                r.files.lock().unwrap_or_else(|e| e.into_inner()).clear();
            }
            res
        }
        reg::REGISTER_FILES_UPDATE => {
            // struct io_uring_files_update { offset, resv, fds }.
            let res = forward(r, opcode, arg, nr);
            if let (true, Some(w)) = (res > 0, read_u32s::<4>(arg)) {
                let fds_at = u64::from(w[2]) | u64::from(w[3]) << 32;
                if let Some(fds) = read_fds(fds_at, res as usize) {
                    update(r, w[0] as usize, &fds);
                }
            }
            res
        }
        reg::REGISTER_FILES_UPDATE2 => {
            // struct io_uring_rsrc_update2 { offset, resv, data, tags, nr, resv2 }.
            let res = forward(r, opcode, arg, nr);
            if let (true, Some(w)) = (res > 0, read_u32s::<8>(arg)) {
                let data = u64::from(w[2]) | u64::from(w[3]) << 32;
                if let Some(fds) = read_fds(data, res as usize) {
                    update(r, w[0] as usize, &fds);
                }
            }
            res
        }
        reg::REGISTER_EVENTFD | reg::REGISTER_EVENTFD_ASYNC => eventfd(r, arg, nr),
        reg::UNREGISTER_EVENTFD => {
            let mut e = r.user_efd.lock().unwrap_or_else(|e| e.into_inner());
            match e.take() {
                Some(fd) => {
                    // SAFETY: our duplicate.
                    unsafe { libc::syscall(libc::SYS_close, fd) };
                    0
                }
                None => -i64::from(libc::ENXIO),
            }
        }
        reg::REGISTER_RING_FDS => ring_fds(arg, nr, true),
        reg::UNREGISTER_RING_FDS => ring_fds(arg, nr, false),
        reg::REGISTER_CLONE_BUFFERS
        | reg::REGISTER_ZCRX_IFQ
        | reg::REGISTER_RESIZE_RINGS
        | reg::REGISTER_MEM_REGION => {
            super::refused(&format!("io_uring_register opcode {opcode}"));
            einval()
        }
        _ => forward(r, opcode, arg, nr),
    }
}

/// IORING_REGISTER_EVENTFD(_ASYNC): the kernel's checks (io_uring/
/// eventfd.c: `nr_args` 1, EBUSY when one is registered, the descriptor an
/// eventfd), then our duplicate, signalled at each CQE posted.
fn eventfd(r: &Ring, arg: u64, nr: u32) -> i64 {
    if nr != 1 {
        return einval();
    }
    let Some([fd]) = read_u32s::<1>(arg) else {
        return -i64::from(libc::EFAULT);
    };
    let mut e = r.user_efd.lock().unwrap_or_else(|e| e.into_inner());
    if e.is_some() {
        return -i64::from(libc::EBUSY);
    }
    // SAFETY: F_DUPFD_CLOEXEC takes an integer; EBADF for a closed one.
    let d = unsafe { libc::fcntl(fd as c_int, libc::F_DUPFD_CLOEXEC, 0) };
    if d < 0 {
        return -i64::from(libc::EBADF);
    }
    let ok = std::fs::read_link(format!("/proc/self/fd/{d}"))
        .is_ok_and(|l| l.as_os_str() == "anon_inode:[eventfd]");
    if !ok {
        // SAFETY: our duplicate.
        unsafe { libc::syscall(libc::SYS_close, d) };
        return einval();
    }
    *e = Some(super::high(d));
    0
}

thread_local! {
    /// The registered ring descriptors of this thread (the kernel's are
    /// per task: io_uring/tctx.c `io_ringfd_register`): the ring's
    /// descriptor, -1 for an empty index.
    static RING_FDS: RefCell<[c_int; abi::RINGFD_REG_MAX]> =
        const { RefCell::new([-1; abi::RINGFD_REG_MAX]) };
}

/// The ring a registered index names on this thread.
pub(crate) fn registered(index: u32) -> Option<c_int> {
    RING_FDS
        .with(|t| t.borrow().get(index as usize).copied())
        .filter(|&fd| fd >= 0)
}

/// IORING_(UN)REGISTER_RING_FDS: `nr` `struct io_uring_rsrc_update`
/// {offset, resv, data}; an offset of -1 asks for the first free index,
/// written back. The count done, or the first one's error.
fn ring_fds(arg: u64, nr: u32, add: bool) -> i64 {
    if nr as usize > abi::RINGFD_REG_MAX {
        return einval();
    }
    let mut done = 0i64;
    for i in 0..nr as u64 {
        let at = arg + i * 16;
        let Some(w) = read_u32s::<4>(at) else {
            return if done > 0 {
                done
            } else {
                -i64::from(libc::EFAULT)
            };
        };
        let (offset, fd) = (w[0], w[2] as c_int);
        let r = RING_FDS.with(|t| {
            let mut t = t.borrow_mut();
            if !add {
                return match t.get_mut(offset as usize) {
                    Some(s) => {
                        *s = -1;
                        Ok(offset)
                    }
                    None => Err(einval()),
                };
            }
            if super::lookup(fd).is_none() {
                return Err(-i64::from(libc::EOPNOTSUPP));
            }
            let idx = if offset == u32::MAX {
                t.iter()
                    .position(|&x| x < 0)
                    .ok_or(-i64::from(libc::EBUSY))?
            } else if (offset as usize) < t.len() {
                offset as usize
            } else {
                return Err(einval());
            };
            t[idx] = fd;
            Ok(idx as u32)
        });
        match r {
            Ok(idx) => {
                if add {
                    // SAFETY: the program's struct, which it gave to be
                    // written (the kernel's copy_to_user of the offset).
                    unsafe { std::ptr::write_unaligned(at as *mut u32, idx) };
                }
                done += 1;
            }
            Err(e) => return if done > 0 { done } else { e },
        }
    }
    route::set_errno(0);
    done
}
