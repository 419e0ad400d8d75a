//! io_uring at the kernel's ABI (issue 25 item 1), on the principle of
//! libaio's (`crate::aio`): the kernel moves the program's data with its
//! own semantics, and the emulated device decides only when each
//! completion becomes visible.
//!
//! - `io_uring_setup` first asks the kernel with the program's own
//!   parameters (every error, the entries, the ring offsets and the
//!   IORING_FEAT_* bits the program checks are the kernel's). The program
//!   then gets a memfd as its ring descriptor, whose pages are the SQ and
//!   CQ rings at the kernel's offsets (IORING_OFF_SQ_RING and
//!   IORING_OFF_CQ_RING map the same pages, as IORING_FEAT_SINGLE_MMAP
//!   says; IORING_OFF_SQES maps the SQEs), and a *shadow* ring of ours
//!   moves the data.
//! - `io_uring_enter` copies the SQEs into the shadow's SQ and submits
//!   them in one call ([`submit`]); the shadow's CQEs are published into
//!   the program's CQ by [`ring`]'s rule; GETEVENTS waits as the kernel
//!   does ([`wait`]).
//! - `io_uring_register` goes to the shadow except what names the
//!   program's ring ([`register`]).
//! - Programs reach these through glibc's `syscall()` (fio's setup and
//!   register), or inline `syscall` instructions (liburing's stubs, fio's
//!   `io_uring_enter`), which [`trap`] turns into SIGSYS in the library.
//!
//! Refused with EINVAL at setup, the kernel's answer to a flag it does not
//! have, and named in the report: IORING_SETUP_SQE128 and CQE32 (NVMe
//! passthrough), NO_MMAP (rings in the program's memory),
//! REGISTERED_FD_ONLY. IORING_SETUP_SQPOLL is provided by a thread of
//! ours that polls the SQ; COOP_TASKRUN's completions are published when
//! ready (as if the task entered the kernel at once).

mod abi;
mod register;
mod ring;
mod submit;
#[cfg(test)]
mod tests;
pub(crate) mod trap;
mod wait;

use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicUsize, Ordering::*};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use abi::{enter, setup as fl, Params, Rings};
use ring::Ring;

use crate::kernel::{read_user, spawn, sys, wake, FUTEX_WAIT_PRIVATE};
use crate::route;

/// The process's routed rings by the program's descriptor.
static RINGS: Mutex<Option<HashMap<c_int, Arc<Ring>>>> = Mutex::new(None);
/// How many there are (mmap and close look only when some exist).
static COUNT: AtomicUsize = AtomicUsize::new(0);
/// The shadow descriptors (the exit report skips them).
static SHADOWS: Mutex<Vec<c_int>> = Mutex::new(Vec::new());

pub(crate) fn lookup(fd: c_int) -> Option<Arc<Ring>> {
    if COUNT.load(Acquire) == 0 || fd < 0 {
        return None;
    }
    let g = RINGS.lock().ok()?;
    let m = g.as_ref()?;
    if let Some(r) = m.get(&fd) {
        return Some(r.clone());
    }
    // A duplicate of a ring's descriptor (dup, dup2, fcntl F_DUPFD, or
    // one received over a socket) is the same ring: the kernel finds the
    // ring by the file, not the number (io_uring/io_uring.c
    // `io_uring_enter`: fdget, then `io_is_uring_fops`).
    let f = file_of(fd)?;
    m.values().find(|r| r.file == f).cloned()
}

/// Whether `fd` is a routed ring's descriptor as the program got it (a
/// memfd, whose read and write the kernel would allow: an io_uring file
/// has neither, and `read`/`write` on it are -EINVAL, fs/read_write.c
/// `vfs_read`: no `f_op->read` nor `read_iter`). Only the descriptor
/// itself, not a duplicate: one map look-up, and only while rings exist.
pub(crate) fn is_ring(fd: c_int) -> bool {
    COUNT.load(Acquire) > 0
        && fd >= 0
        && RINGS
            .lock()
            .is_ok_and(|g| g.as_ref().is_some_and(|m| m.contains_key(&fd)))
}

/// The (st_dev, st_ino) of the file `fd` is open on.
fn file_of(fd: c_int) -> Option<(u64, u64)> {
    // SAFETY: fstat fills the stat; `fd` is only read.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let r = sys(
        libc::SYS_fstat,
        fd as usize,
        &mut st as *mut libc::stat as usize,
        0,
        0,
        0,
    );
    (r == 0).then_some((st.st_dev, st.st_ino))
}

/// Another descriptor of this process open on `file` than `fd`.
fn other_descriptor(file: (u64, u64), fd: c_int) -> Option<c_int> {
    std::fs::read_dir("/proc/self/fd")
        .ok()?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<c_int>().ok())
        .find(|&n| n != fd && file_of(n) == Some(file))
}

/// Whether `fd` is one of the library's shadow rings.
pub(crate) fn is_shadow(fd: c_int) -> bool {
    SHADOWS.lock().is_ok_and(|s| s.contains(&fd))
}

/// The shadow `fd` is closed (the ring's last reference went).
fn forget_shadow(fd: c_int) {
    if let Ok(mut s) = SHADOWS.lock() {
        s.retain(|&x| x != fd);
    }
}

/// The features refused in this process, and how often (the exit record
/// names them).
static REFUSED: Mutex<Vec<(String, u64)>> = Mutex::new(Vec::new());

/// Counts a refusal of `what`, said once per feature on stderr.
pub(crate) fn refused(what: &str) {
    let mut s = REFUSED.lock().unwrap_or_else(|e| e.into_inner());
    match s.iter_mut().find(|(x, _)| x == what) {
        Some((_, n)) => *n += 1,
        None => {
            s.push((what.to_string(), 1));
            route::say(&format!(
                "io_uring: {what} refused with EINVAL (the routed ring cannot provide it)"
            ));
        }
    }
}

/// The features refused so far, for the exit record.
pub(crate) fn refusals() -> Vec<(String, u64)> {
    REFUSED.lock().map(|s| s.clone()).unwrap_or_default()
}

/// Why the trap of inline calls is not installed, if it is not.
pub(crate) static UNTRAPPED: OnceLock<String> = OnceLock::new();

/// Our descriptor moved to a high number (the program's own numbering
/// stays as the kernel would give it, and a program closing "its" low
/// descriptors leaves ours alone); the same one if that fails.
pub(crate) fn high(fd: c_int) -> c_int {
    // SAFETY: F_DUPFD_CLOEXEC on our descriptor.
    let h = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 900) };
    if h < 0 {
        return fd;
    }
    // SAFETY: the original, ours.
    unsafe { libc::syscall(libc::SYS_close, fd) };
    h
}

fn map(fd: c_int, len: usize, off: i64) -> Option<usize> {
    // SAFETY: a shared mapping of a descriptor of ours.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_POPULATE,
            fd,
            off,
        )
    };
    (p != libc::MAP_FAILED).then_some(p as usize)
}

fn rings_of(base: usize, sqes: usize, p: &Params) -> Rings {
    Rings {
        base,
        sqes,
        sq: p.sq_off,
        cq: p.cq_off,
        sq_entries: p.sq_entries,
        cq_entries: p.cq_entries,
        no_array: p.flags & fl::NO_SQARRAY != 0,
    }
}

fn close(fd: c_int) {
    // SAFETY: our descriptor.
    unsafe { libc::syscall(libc::SYS_close, fd) };
}

/// `io_uring_setup(entries, params)`: the ring descriptor or a negative
/// errno. Not routed (the kernel's own ring, named) when the library
/// cannot make its side.
pub(crate) fn setup(entries: u32, params: *mut c_void) -> i64 {
    let size = std::mem::size_of::<Params>();
    let mut p = Params::default();
    if read_user(params as usize, &mut p as *mut Params as *mut u8, size) != size {
        return -i64::from(libc::EFAULT);
    }
    let asked = p;
    if p.flags & fl::ATTACH_WQ != 0 {
        if let Some(t) = lookup(p.wq_fd as c_int) {
            if p.flags & fl::SQPOLL != 0 {
                // Sharing the target's SQ thread: the kernel wants the
                // target to have one (io_uring/sqpoll.c
                // `io_attach_sq_data`: no `sq_data`, -EINVAL). Ours are
                // threads of the library, one per ring, and the shadow has
                // none to attach to: the attach is answered here and not
                // passed on (liburing's sq-poll-dup and sq-poll-share got
                // -EINVAL under exec).
                if t.flags & fl::SQPOLL == 0 {
                    return -i64::from(libc::EINVAL);
                }
                p.flags &= !fl::ATTACH_WQ;
                p.wq_fd = 0;
            } else {
                p.wq_fd = t.shadow_fd as u32;
            }
        }
    }
    let mut k = p;
    let probe = sys(
        libc::SYS_io_uring_setup,
        entries as usize,
        &mut k as *mut Params as usize,
        0,
        0,
        0,
    );
    if probe < 0 {
        return probe;
    }
    close(probe as c_int);
    // The program's own flags and wq_fd, as the kernel copies them back.
    k.flags |= asked.flags & fl::ATTACH_WQ;
    k.wq_fd = asked.wq_fd;
    for (flag, name) in [
        (fl::SQE128, "IORING_SETUP_SQE128"),
        (fl::CQE32, "IORING_SETUP_CQE32"),
        (fl::NO_MMAP, "IORING_SETUP_NO_MMAP"),
        (fl::REGISTERED_FD_ONLY, "IORING_SETUP_REGISTERED_FD_ONLY"),
    ] {
        if k.flags & flag != 0 {
            refused(name);
            return -i64::from(libc::EINVAL);
        }
    }
    match make(entries, &p, &k) {
        Some(fd) => {
            // The kernel's answer, as io_uring_create copies it out.
            // SAFETY: the program's params, read above.
            unsafe { std::ptr::write_unaligned(params as *mut Params, k) };
            route::set_errno(0);
            i64::from(fd)
        }
        None => {
            route::say_once_io_uring();
            sys(
                libc::SYS_io_uring_setup,
                entries as usize,
                params as usize,
                0,
                0,
                0,
            )
        }
    }
}

/// Our side of a ring the kernel accepted with parameters `k` (the
/// program asked `p`): the memfd, the shadow, the threads. `None`, with
/// nothing left behind, when any of it cannot be had.
fn make(entries: u32, p: &Params, k: &Params) -> Option<c_int> {
    route::region()?;
    crate::state::config()?;
    // The memfd first: it takes the number the kernel's ring would have.
    // SAFETY: a NUL-terminated name.
    let fd = unsafe { libc::memfd_create(c"[io_uring]".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return None;
    }
    let rings_len = Rings::rings_len(k);
    let sqes_len = k.sq_entries as usize * abi::SQE;
    let guard = Guard(vec![fd]);
    let file = file_of(fd)?;
    // SAFETY: our memfd.
    if unsafe { libc::ftruncate(fd, abi::OFF_SQES + sqes_len as i64) } != 0 {
        return None;
    }
    let base = map(fd, rings_len, 0)?;
    let sqes = map(fd, sqes_len, abi::OFF_SQES)?;
    let prog = rings_of(base, sqes, k);
    // The ring's constant words, as io_uring_create writes them.
    // SAFETY: words of our fresh mapping at the kernel's offsets.
    unsafe {
        let w = |off: u32, v: u32| ((base + off as usize) as *mut u32).write(v);
        w(k.sq_off.ring_mask, k.sq_entries - 1);
        w(k.sq_off.ring_entries, k.sq_entries);
        w(k.cq_off.ring_mask, k.cq_entries - 1);
        w(k.cq_off.ring_entries, k.cq_entries);
    }
    // The shadow: the program's flags that change how the kernel moves
    // data (IOPOLL, R_DISABLED, SUBMIT_ALL, ATTACH_WQ...), not those that
    // say who submits or when completions become visible (we do that),
    // and a CQ large enough that the kernel rarely keeps CQEs back.
    let keep = fl::IOPOLL | fl::R_DISABLED | fl::ATTACH_WQ | (1 << 4) | (1 << 7) | (1 << 17);
    let mut s = Params {
        flags: (p.flags & keep) | fl::CQSIZE,
        cq_entries: (k.cq_entries.max(k.sq_entries) * 2).min(1 << 16),
        wq_fd: p.wq_fd,
        ..Params::default()
    };
    let sfd = sys(
        libc::SYS_io_uring_setup,
        entries as usize,
        &mut s as *mut Params as usize,
        0,
        0,
        0,
    );
    if sfd < 0 {
        unmap(&[(base, rings_len), (sqes, sqes_len)]);
        return None;
    }
    let sfd = high(sfd as c_int);
    let mut guard = guard;
    guard.0.push(sfd);
    let s_rings_len = Rings::rings_len(&s);
    let s_sqes_len = s.sq_entries as usize * abi::SQE;
    let (Some(sbase), Some(ssqes)) = (
        map(sfd, s_rings_len, abi::OFF_SQ_RING),
        map(sfd, s_sqes_len, abi::OFF_SQES),
    ) else {
        unmap(&[(base, rings_len), (sqes, sqes_len)]);
        return None;
    };
    let shadow = rings_of(sbase, ssqes, &s);
    // SAFETY: a new eventfd of ours.
    let efd = high(unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) });
    let registered = efd >= 0
        && sys(
            libc::SYS_io_uring_register,
            sfd as usize,
            abi::reg::REGISTER_EVENTFD as usize,
            &efd as *const c_int as usize,
            1,
            0,
        ) == 0;
    let maps = [(base, rings_len), (sqes, sqes_len)];
    let smaps = [(sbase, s_rings_len), (ssqes, s_sqes_len)];
    if !registered {
        if efd >= 0 {
            close(efd);
        }
        unmap(&maps);
        unmap(&smaps);
        return None;
    }
    // SAFETY: a new eventfd of ours.
    let wake_efd = high(unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) });
    if wake_efd < 0 {
        close(efd);
        unmap(&maps);
        unmap(&smaps);
        return None;
    }
    std::mem::forget(guard);
    // SAFETY: gettid cannot fail.
    let me = unsafe { libc::gettid() };
    let r = Arc::new(Ring {
        maps,
        prog,
        flags: k.flags,
        shadow_fd: sfd,
        shadow,
        shadow_maps: smaps,
        efd,
        file,
        slot: route::claim(),
        owner: AtomicI32::new(if k.flags & fl::R_DISABLED != 0 { 0 } else { me }),
        sub: Mutex::new(0),
        st: Mutex::default(),
        reap: Mutex::new(()),
        consume: Mutex::new(()),
        kernel_wait: Condvar::new(),
        wake_efd,
        waiters: AtomicU32::new(0),
        want: AtomicU32::new(u32::MAX),
        needs: Mutex::new(Vec::new()),
        user_efd: Mutex::new(None),
        files: Mutex::new(Vec::new()),
        sq_wake: AtomicU32::new(0),
        stop: AtomicBool::new(false),
        disabled: AtomicBool::new(k.flags & fl::R_DISABLED != 0),
    });
    let idle = k.sq_thread_idle;
    let threads_ok = {
        let a = r.clone();
        spawn("cint-uring-kernel", move || ring::kernel_reaper(&a))
    } && (r.slot.is_none() || {
        let a = r.clone();
        spawn("cint-uring-device", move || ring::device_waiter(&a))
    }) && (k.flags & fl::SQPOLL == 0 || {
        let a = r.clone();
        spawn("cint-uring-sqpoll", move || sq_thread(&a, idle))
    });
    if !threads_ok {
        r.stop.store(true, SeqCst);
        r.kernel_wait.notify_all();
        // The threads that did start end at once; the Ring's drop closes
        // the shadow and unmaps. The memfd is the program's to close no
        // more: it gets the kernel's own ring instead.
        close(fd);
        return None;
    }
    if let Ok(mut s) = SHADOWS.lock() {
        s.push(sfd);
    }
    if let Ok(mut g) = RINGS.lock() {
        g.get_or_insert_with(HashMap::new).insert(fd, r);
        COUNT.fetch_add(1, Release);
    }
    Some(fd)
}

/// Closes the descriptors it holds unless forgotten.
struct Guard(Vec<c_int>);

impl Drop for Guard {
    fn drop(&mut self) {
        for &fd in &self.0 {
            close(fd);
        }
    }
}

fn unmap(maps: &[(usize, usize)]) {
    for &(p, len) in maps {
        // SAFETY: our mappings, unused.
        unsafe { libc::munmap(p as *mut c_void, len) };
    }
}

/// IORING_SETUP_SQPOLL: our SQ thread takes the program's SQEs as the
/// kernel's does (io_uring/sqpoll.c `io_sq_thread`): it polls the SQ, and
/// after `idle` ms without work (the kernel's default: one second) sets
/// IORING_SQ_NEED_WAKEUP and sleeps until an `io_uring_enter` with
/// IORING_ENTER_SQ_WAKEUP.
fn sq_thread(r: &Ring, idle_ms: u32) {
    let idle = if idle_ms == 0 {
        Duration::from_secs(1)
    } else {
        Duration::from_millis(u64::from(idle_ms))
    };
    let mut last = Instant::now();
    while !r.stop.load(Acquire) {
        let pending = {
            let head = *r.sub.lock().unwrap_or_else(|e| e.into_inner());
            r.prog.sq_tail().load(Acquire) != head
        };
        if pending {
            submit::submit(r, u32::MAX, submit::How::SqPoll);
            last = Instant::now();
            continue;
        }
        if last.elapsed() < idle {
            std::hint::spin_loop();
            std::thread::yield_now();
            continue;
        }
        let seen = r.sq_wake.load(SeqCst);
        r.prog.sq_flags().fetch_or(abi::SQ_NEED_WAKEUP, SeqCst);
        let head = *r.sub.lock().unwrap_or_else(|e| e.into_inner());
        if r.prog.sq_tail().load(SeqCst) == head {
            let ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 100_000_000,
            };
            // SAFETY: FUTEX_WAIT on our word, with a timeout.
            unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    r.sq_wake.as_ptr(),
                    FUTEX_WAIT_PRIVATE,
                    seen,
                    &ts as *const libc::timespec,
                    0,
                    0,
                )
            };
        }
        r.prog.sq_flags().fetch_and(!abi::SQ_NEED_WAKEUP, SeqCst);
        last = Instant::now();
    }
}

/// The ring an `io_uring_enter`/`io_uring_register` descriptor names
/// (IORING_ENTER_REGISTERED_RING: an index of this thread's table).
fn ring_for(fd: u32, registered: bool) -> Option<Arc<Ring>> {
    let fd = if registered {
        register::registered(fd)?
    } else {
        fd as c_int
    };
    lookup(fd)
}

/// `io_uring_enter(fd, to_submit, min_complete, flags, arg, argsz)`.
/// `None`: not a routed ring, for the kernel.
pub(crate) fn enter(
    fd: u32,
    to_submit: u32,
    min: u32,
    flags: u32,
    arg: u64,
    argsz: usize,
) -> Option<i64> {
    let r = ring_for(fd, flags & enter::REGISTERED_RING != 0)?;
    if r.disabled.load(SeqCst) {
        // A ring set up IORING_SETUP_R_DISABLED and not yet enabled
        // (io_uring/io_uring.c `io_uring_enter`: -EBADFD first; our
        // GETEVENTS never reaches the shadow, which would say it).
        return Some(-i64::from(libc::EBADFD));
    }
    if flags & !enter::KNOWN != 0 {
        if flags & enter::EXT_ARG_REG != 0 {
            refused("IORING_ENTER_EXT_ARG_REG");
        }
        return Some(-i64::from(libc::EINVAL));
    }
    // SAFETY: gettid cannot fail.
    let me = unsafe { libc::gettid() };
    let single = r.flags & fl::SINGLE_ISSUER != 0;
    let mut submitted = 0i64;
    if r.flags & fl::SQPOLL != 0 {
        if flags & enter::SQ_WAKEUP != 0 {
            r.sq_wake.fetch_add(1, SeqCst);
            wake(&r.sq_wake);
        }
        if flags & enter::SQ_WAIT != 0 {
            while r
                .prog
                .sq_tail()
                .load(Acquire)
                .wrapping_sub(*r.sub.lock().unwrap_or_else(|e| e.into_inner()))
                >= r.prog.sq_entries
                && !r.stop.load(Acquire)
            {
                std::thread::sleep(Duration::from_micros(10));
            }
        }
        submitted = i64::from(to_submit);
    } else if to_submit > 0 {
        if single && r.owner.load(SeqCst) != me && r.owner.load(SeqCst) != 0 {
            return Some(-i64::from(libc::EEXIST));
        }
        let waits = flags & enter::GETEVENTS != 0 && min >= 1;
        let res = submit::submit(&r, to_submit, submit::How::Enter { waits });
        if res < 0 {
            return Some(res);
        }
        submitted = res;
    }
    if flags & enter::GETEVENTS == 0 {
        return Some(submitted);
    }
    if r.flags & fl::DEFER_TASKRUN != 0 && r.owner.load(SeqCst) != me {
        return Some(if submitted > 0 {
            submitted
        } else {
            -i64::from(libc::EEXIST)
        });
    }
    let w = match wait::Wait::read(min, flags, arg, argsz) {
        Ok(w) => w,
        Err(e) => return Some(if submitted > 0 { submitted } else { e }),
    };
    let r2 = wait::wait(&r, &w);
    Some(if submitted > 0 { submitted } else { r2 })
}

/// `io_uring_register(fd, opcode, arg, nr)`. `None`: not a routed ring.
pub(crate) fn register(fd: u32, opcode: u32, arg: u64, nr: u32) -> Option<i64> {
    let reg_ring = opcode & abi::reg::USE_REGISTERED_RING != 0;
    let r = ring_for(fd, reg_ring)?;
    let opcode = opcode & !abi::reg::USE_REGISTERED_RING;
    if opcode == 12 && r.flags & fl::SINGLE_ISSUER != 0 {
        // IORING_REGISTER_ENABLE_RINGS fixes a disabled ring's issuer.
        // SAFETY: gettid cannot fail.
        let _ = r
            .owner
            .compare_exchange(0, unsafe { libc::gettid() }, SeqCst, SeqCst);
    }
    let res = register::register(&r, opcode, arg, nr);
    if opcode == 12 && res >= 0 {
        r.disabled.store(false, SeqCst);
    }
    Some(res)
}

/// The program closes `fd`: a routed ring leaves the table; its threads
/// end once what is in flight completed, and the shadow closes after
/// (the kernel too finishes a closed ring's requests:
/// io_uring/io_uring.c `io_ring_exit_work`).
pub(crate) fn closing(fd: c_int) {
    if let Ok(mut i) = INHERITED.try_lock() {
        i.retain(|&(x, _)| x != fd);
    }
    if COUNT.load(Acquire) == 0 {
        return;
    }
    let r = RINGS.lock().ok().and_then(|mut g| {
        let m = g.as_mut()?;
        let r = m.remove(&fd)?;
        // The ring lives on while a duplicate of its descriptor is open
        // (the kernel frees it at the file's last reference): the
        // duplicate names it in the table from now on.
        match other_descriptor(r.file, fd) {
            Some(d) => {
                m.insert(d, r);
                None
            }
            None => Some(r),
        }
    });
    if let Some(r) = r {
        COUNT.fetch_sub(1, Release);
        r.stop.store(true, SeqCst);
        r.kernel_wait.notify_all();
        r.sq_wake.fetch_add(1, SeqCst);
        wake(&r.sq_wake);
    }
}

/// The offset a program's `mmap` of a routed ring descriptor maps:
/// IORING_OFF_CQ_RING is the SQ ring's pages (one `struct io_rings`),
/// the SQEs are where they are; any other offset (a provided-buffer
/// ring's, IORING_OFF_PBUF_RING) is the shadow's own, mapped from its
/// descriptor. `None`: not a routed ring.
pub(crate) fn mmap_target(fd: c_int, off: i64) -> Option<(c_int, i64)> {
    let r = lookup(fd)?;
    Some(match off {
        abi::OFF_SQ_RING | abi::OFF_CQ_RING => (fd, 0),
        abi::OFF_SQES => (fd, abi::OFF_SQES),
        other => (r.shadow_fd, other),
    })
}

/// In a forked child: the table is forgotten (leaked: the child has none
/// of the threads); the child's calls on an inherited ring then reach the
/// kernel, which refuses a memfd (EOPNOTSUPP).
pub(crate) fn forget_in_child() {
    if let Ok(mut g) = RINGS.try_lock() {
        if let Some(m) = g.take() {
            if let Ok(mut i) = INHERITED.try_lock() {
                *i = m.iter().map(|(&fd, r)| (fd, r.flags)).collect();
            }
            std::mem::forget(m);
        }
        COUNT.store(0, Release);
    }
}

/// The routed rings' descriptors a forked child inherited: its calls on
/// them are refused.
static INHERITED: Mutex<Vec<(c_int, u32)>> = Mutex::new(Vec::new());

/// The line a forked child's call on an inherited ring is refused with.
pub(crate) const FORKED_LINE: &str = "io_uring: a ring used from a forked child is refused with EOPNOTSUPP (the routed ring's threads and state live in the parent)";

/// A forked child's `io_uring_enter`/`io_uring_register` on a ring it
/// inherited: -EOPNOTSUPP (the kernel's answer to these calls on a memfd,
/// which the descriptor is), said once in one line so that the refusal is
/// never silent. `None`: not an inherited ring.
fn refuse_inherited(fd: u32, registered: bool, submits: bool) -> Option<i64> {
    if registered || COUNT.load(Acquire) > 0 && lookup(fd as c_int).is_some() {
        return None;
    }
    let flags = INHERITED
        .lock()
        .ok()?
        .iter()
        .find(|&&(x, _)| x == fd as c_int)?
        .1;
    if submits && flags & fl::SINGLE_ISSUER != 0 && flags & fl::SQPOLL == 0 {
        // The kernel's own answer to a task that is not a SINGLE_ISSUER
        // ring's submitter, which a forked child never is
        // (io_uring/tctx.c `__io_uring_add_tctx_node_from_submit`).
        return Some(-i64::from(libc::EEXIST));
    }
    static SAID: AtomicBool = AtomicBool::new(false);
    if !SAID.swap(true, SeqCst) {
        route::say(FORKED_LINE);
    }
    Some(-i64::from(libc::EOPNOTSUPP))
}

/// The io_uring system call `nr` with arguments `a`, made by the program
/// (through glibc's `syscall()` or trapped): the answer, a negative errno
/// or the result. `None`: not routed, for the kernel.
pub(crate) fn dispatch(nr: libc::c_long, a: [u64; 6]) -> Option<i64> {
    match nr {
        libc::SYS_io_uring_setup if routing() => Some(setup(a[0] as u32, a[1] as *mut c_void)),
        libc::SYS_io_uring_enter => enter(
            a[0] as u32,
            a[1] as u32,
            a[2] as u32,
            a[3] as u32,
            a[4],
            a[5] as usize,
        )
        .or_else(|| {
            let reg = a[3] as u32 & enter::REGISTERED_RING != 0;
            refuse_inherited(a[0] as u32, reg, a[1] > 0)
        }),
        libc::SYS_io_uring_register => register(a[0] as u32, a[1] as u32, a[2], a[3] as u32)
            .or_else(|| {
                let reg = a[1] as u32 & abi::reg::USE_REGISTERED_RING != 0;
                refuse_inherited(a[0] as u32, reg, false)
            }),
        _ => None,
    }
}

/// Whether io_uring rings are routed in this process.
pub(crate) fn routing() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| crate::state::config().is_some() && route::route_io_uring())
}
