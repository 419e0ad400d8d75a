//! Submission: the program's SQEs, read from its SQ as the kernel reads
//! them (io_uring/io_uring.c `io_get_sqe`), are copied into the shadow's
//! SQ and submitted in one `io_uring_enter`, whose count the program gets.
//! A storage SQE on a direct file gets its device command first, with the
//! marks of our io_uring row for TOS Table 1 (`marks::Sqe`).

use std::ffi::c_int;
use std::sync::atomic::Ordering::*;

use libc::iovec;
use marks::{Call, Sqe as Row};
use shm::Cmd;
use wire::{Family, Kind};

use super::abi::{self, op, Sqe};
use super::ring::{Pend, Ring};
use crate::classify::{keep, tag_of, Tag};
use crate::fd::{is_direct, Bufs};
use crate::kernel::{read_user, sys};
use crate::route;
use crate::state::{config, LIVE};

/// How the SQEs of one submission reached the kernel (what our Table 1
/// row reads).
#[derive(Clone, Copy)]
pub(crate) enum How {
    /// An `io_uring_enter` that waits in the same call (GETEVENTS with
    /// `min_complete >= 1`) or not.
    Enter { waits: bool },
    /// Our SQ thread (IORING_SETUP_SQPOLL).
    SqPoll,
}

/// The request kind of a storage opcode.
fn kind_of(opcode: u8) -> Option<Kind> {
    match opcode {
        op::READ | op::READV | op::READ_FIXED => Some(Kind::Read),
        op::WRITE | op::WRITEV | op::WRITE_FIXED => Some(Kind::Write),
        op::FSYNC => Some(Kind::Flush),
        _ => None,
    }
}

fn vectored(opcode: u8) -> bool {
    matches!(opcode, op::READV | op::WRITEV)
}

/// The bytes a read or write SQE asks to move.
fn len_of(s: &Sqe) -> u32 {
    if !vectored(s.opcode()) {
        return s.len();
    }
    let n = (s.len() as usize).min(1024);
    let mut v = vec![
        iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0
        };
        n
    ];
    let size = std::mem::size_of::<iovec>();
    let got = read_user(s.addr() as usize, v.as_mut_ptr() as *mut u8, n * size) / size;
    v[..got]
        .iter()
        .fold(0u32, |a, i| a.wrapping_add(i.iov_len as u32))
}

/// The descriptor a SQE's file is: its own, or the registered table's.
fn file_of(r: &Ring, s: &Sqe) -> c_int {
    if s.flags() & abi::SQE_FIXED_FILE == 0 {
        return s.fd();
    }
    let files = r.files.lock().unwrap_or_else(|e| e.into_inner());
    files.get(s.fd() as usize).copied().unwrap_or(-1)
}

/// The row of our Table 1 (`marks::Sqe`) for the `i`th of `n` SQEs.
fn row(r: &Ring, how: How, i: usize, n: usize) -> Row {
    let last = i + 1 == n;
    if r.flags & abi::setup::IOPOLL != 0 {
        return Row::IoPoll;
    }
    match how {
        How::SqPoll => Row::SqPoll,
        How::Enter { waits: true } => Row::SubmitAndWait {
            alone: n == 1,
            last,
        },
        How::Enter { waits: false } => Row::Submit { last },
    }
}

/// Submits up to `want` SQEs of the program's SQ: how many the shadow
/// took, or its error when it took none.
pub(crate) fn submit(r: &Ring, want: u32, how: How) -> i64 {
    let mut head_g = r.sub.lock().unwrap_or_else(|e| e.into_inner());
    let head = *head_g;
    let tail = r.prog.sq_tail().load(Acquire);
    let n = tail.wrapping_sub(head).min(want).min(r.prog.sq_entries) as usize;
    if n == 0 {
        return 0;
    }
    // The program's SQEs, stopping at an invalid index (dropped and
    // counted, as io_get_sqe does).
    let mut sqes = Vec::with_capacity(n);
    let mut dropped = 0;
    for k in 0..n as u32 {
        let idx = r.prog.sq_index(head.wrapping_add(k));
        if idx >= r.prog.sq_entries {
            r.prog.sq_dropped().fetch_add(1, Relaxed);
            dropped = 1;
            break;
        }
        sqes.push(r.prog.read_sqe(idx));
    }
    let n = sqes.len();
    let cfg = config();
    let slot = r.slot.zip(route::region()).map(|(i, g)| g.slot(i));
    let polled = r.flags & abi::setup::IOPOLL != 0;
    let stail = r.shadow.sq_tail().load(Relaxed);
    let mut gated: Vec<Option<(u32, Kind, Tag)>> = Vec::with_capacity(n);
    {
        let mut st = r.lock();
        for (i, prog) in sqes.iter().enumerate() {
            let mut copy = *prog;
            let kind = kind_of(prog.opcode());
            let fd = file_of(r, prog);
            let direct = cfg.is_some() && kind.is_some() && fd >= 0 && is_direct(fd);
            let rw = kind.is_some_and(|k| k != Kind::Flush);
            let rwf = if rw { prog.op_flags() as c_int } else { 0 };
            if rw {
                copy.set_op_flags((rwf & keep()) as u32);
            }
            if prog.opcode() == op::MSG_RING && prog.flags() & abi::SQE_FIXED_FILE == 0 {
                if let Some(t) = super::lookup(prog.fd()) {
                    copy.set_fd(t.shadow_fd);
                }
            }
            if prog.opcode() == op::CLOSE
                && prog.flags() & abi::SQE_FIXED_FILE == 0
                && (super::lookup(prog.fd()).is_some() || super::is_shadow(prog.fd()))
            {
                // A ring's own descriptor is not closed by a request: the
                // kernel answers -EBADF (io_uring/openclose.c `io_close`:
                // `if (!file || io_is_uring_fops(file))`). The program's
                // ring is our memfd, which the kernel would close, so the
                // shadow gets a descriptor no process has (-1), whose
                // answer is the same -EBADF.
                copy.set_fd(-1);
            }
            if prog.opcode() == op::TIMEOUT {
                *st.timeouts.entry(prog.user_data()).or_default() += 1;
            }
            if prog.opcode() == op::TIMEOUT && prog.off() > 0 {
                *st.counted.entry(prog.user_data()).or_default() += 1;
            }
            if prog.opcode() == op::FILES_UPDATE {
                super::register::files_update_sqe(r, prog);
            }
            let mut g = None;
            if let (true, Some(cfg), Some(kind)) = (direct, cfg, kind) {
                let write = kind == Kind::Write;
                let off = prog.off() as i64;
                // Not on an IOPOLL ring: the kernel polls only O_DIRECT
                // files there, and a page-cache twin's request fails
                // with -EOPNOTSUPP (io_uring/rw.c `io_rw_init_file`: on
                // an IOPOLL ring, no IOCB_DIRECT or no `f_op->iopoll` is
                // -EOPNOTSUPP), so the data moves through the program's
                // own descriptor.
                if rw
                    && !polled
                    && prog.flags() & abi::SQE_FIXED_FILE == 0
                    && off >= 0
                    && slot.is_some()
                {
                    let bufs = if vectored(prog.opcode()) {
                        Bufs::Vec(prog.addr() as *const iovec, prog.len() as c_int)
                    } else {
                        Bufs::One(prog.addr() as usize, prog.len() as usize)
                    };
                    if let Some(t) = crate::fd::twin_for(fd, write, off, &bufs, rwf & keep()) {
                        copy.set_fd(t);
                    }
                }
                let tag = tag_of(cfg, fd, rwf, Call::Ring(row(r, how, i, n)), kind);
                let cookie = st.next;
                st.next = st.next.wrapping_add(1);
                let skip = prog.flags() & abi::SQE_CQE_SKIP_SUCCESS != 0;
                if skip {
                    copy.set_flags(prog.flags() & !abi::SQE_CQE_SKIP_SUCCESS);
                }
                let len = if rw { len_of(prog) } else { 0 };
                let cmd = slot.is_some_and(|s| {
                    s.post(Cmd {
                        cookie,
                        write: kind != Kind::Read,
                        marks: route::bits(tag.marks),
                        critical: tag.critical,
                        polled,
                        len,
                        offset: if rw { off.max(0) as u64 } else { 0 },
                    })
                });
                st.pend.insert(
                    cookie,
                    Pend {
                        ud: prog.user_data(),
                        kernel: None,
                        cmd,
                        delivered: false,
                        dev_error: false,
                        skip,
                        orphan: false,
                    },
                );
                st.by_ud
                    .entry(prog.user_data())
                    .or_default()
                    .push_back(cookie);
                g = Some((cookie, kind, tag));
            }
            gated.push(g);
            let pos = stail.wrapping_add(i as u32);
            let idx = pos & (r.shadow.sq_entries - 1);
            r.shadow.write_sqe(idx, &copy);
            r.shadow.set_sq_index(pos, idx);
        }
        st.in_kernel += n as u32;
    }
    r.shadow
        .sq_tail()
        .store(stail.wrapping_add(n as u32), Release);
    // The reaper thread reads no CQE until this call's inline ones are
    // read below as such (`Ring::complete`: posted at once even on a
    // DEFER_TASKRUN ring), whatever its wake-up by the eventfd.
    let reap = r.reap.lock().unwrap_or_else(|e| e.into_inner());
    let res = sys(libc::SYS_io_uring_enter, r.shadow_fd as usize, n, 0, 0, 0);
    let taken = res.max(0) as usize;
    // What the shadow did not take leaves its SQ (only we submit to it).
    let shead = r.shadow.sq_head().load(Acquire);
    r.shadow.sq_tail().store(shead, Release);
    {
        let mut st = r.lock();
        let left: Vec<u32> = gated[taken..]
            .iter()
            .flatten()
            .map(|&(k, _, _)| k)
            .collect();
        r.orphan(&mut st, &left);
        st.in_kernel = st.in_kernel.saturating_sub((n - taken - left.len()) as u32);
    }
    let consumed = taken + if taken == n { dropped } else { 0 };
    *head_g = head.wrapping_add(consumed as u32);
    r.prog.sq_head().store(*head_g, Release);
    drop(head_g);
    let mut any = false;
    for &(_, kind, tag) in gated[..taken].iter().flatten() {
        LIVE.request(kind, tag.marks);
        any = true;
    }
    if any {
        LIVE.call(Family::IoUring);
    }
    if taken > 0 {
        // Completions the kernel posted inside the call (a failed SQE, a
        // page-cache copy) are taken here, as this call's own
        // (`Ring::complete`).
        r.reap_locked(true);
    }
    drop(reap);
    // The reaper is woken only for what is still in the kernel (a
    // wake-up per submission cost the other CPU a context switch per
    // I/O, as in `aio`).
    if taken > 0 && r.lock().in_kernel > 0 {
        r.kernel_wait.notify_one();
    }
    match (taken, res) {
        (0, e) if e < 0 => e,
        (t, _) => t as i64,
    }
}
