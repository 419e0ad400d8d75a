//! The blocking calls on a direct descriptor (the pread and pwrite
//! families, read/write at the file offset, fsync/fdatasync): each one
//! counted and classified, then routed (`route`) through the program's own
//! call or, where it cannot change the call's result, the page-cache
//! twin (`fd::read_twin`, `fd::write_twin`). The interposed symbols (`intercept`) call these.

use std::ffi::c_int;

use libc::iovec;
use marks::Call;
use wire::{Family, Kind};

use crate::classify::{tag_of, Tag};
use crate::fd;
use crate::route;
use crate::state::{config, LIVE};

/// RWF_NOWAIT (Linux uapi fs.h).
const RWF_NOWAIT: c_int = 0x08;

/// Counts one blocking call on `fd` if it is direct, and returns its
/// request's tag then.
pub(crate) fn blocking(fd: c_int, kind: Kind, family: Family, flags: c_int) -> Option<Tag> {
    let c = config()?;
    if !fd::is_direct(fd) {
        return None;
    }
    if route::inside() {
        // A signal handler's call inside a routed call of its thread: to
        // the kernel as made, counted as not routed (no classification,
        // which may allocate).
        LIVE.nested();
        return None;
    }
    let call = Call::Blocking {
        nowait: flags & RWF_NOWAIT != 0,
    };
    LIVE.call(family);
    let tag = tag_of(c, fd, flags, call, kind);
    LIVE.request(kind, tag.marks);
    Some(tag)
}

pub(crate) fn flush(fd: c_int) -> Option<Tag> {
    let c = config()?;
    if !fd::is_direct(fd) {
        return None;
    }
    if route::inside() {
        LIVE.nested();
        return None;
    }
    LIVE.call(Family::Flush);
    let tag = tag_of(c, fd, 0, Call::Flush, Kind::Flush);
    LIVE.request(Kind::Flush, tag.marks);
    Some(tag)
}

/// The file offset of `fd` (for `read`/`write`, which use it).
fn offset_of(fd: c_int) -> i64 {
    // SAFETY: lseek takes no pointer; `lseek` is not interposed.
    unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) }
}

/// A call at the file offset, routed: the program's own call on its own
/// descriptor moves the data (issue 24), so the kernel keeps the file
/// offset (serialised between threads and processes sharing it), O_APPEND,
/// O_DSYNC, the alignment's EINVAL and the end of the file; the device
/// times the completion. The command's offset is the file offset before
/// the call.
pub(crate) fn at_offset(
    fd: c_int,
    tag: Tag,
    write: bool,
    rwf: c_int,
    direct: impl Fn() -> isize,
) -> Option<isize> {
    let off = offset_of(fd);
    let r = route::blocking(tag, write, off.max(0) as u64, direct)?;
    Some(synced(fd, write, rwf, r))
}

/// RWF_DSYNC and RWF_SYNC (Linux uapi fs.h).
const RWF_DSYNC: c_int = 0x02;
const RWF_SYNC: c_int = 0x04;

/// A routed write that moved data on a descriptor with O_DSYNC/O_SYNC, or
/// with RWF_DSYNC/RWF_SYNC: the kernel made it durable in the call (such a
/// write moves through the program's own descriptor, `fd::write_twin`);
/// the device sees what Linux sends a drive
/// without FUA for it, a flush command (a zero-length write, Urgent under
/// Table 1) after the write, and the call returns once that completes.
fn synced(fd: c_int, write: bool, rwf: c_int, r: isize) -> isize {
    if !write || r <= 0 || (rwf & (RWF_DSYNC | RWF_SYNC) == 0 && !fd::syncs(fd)) {
        return r;
    }
    let Some(c) = config() else { return r };
    let tag = tag_of(c, fd, 0, Call::Flush, Kind::Flush);
    LIVE.request(Kind::Flush, tag.marks);
    match route::flush_blocking(tag, || 0) {
        Some(f) if f < 0 => f,
        _ => r,
    }
}

/// A positioned call routed: through the page-cache twin where it cannot
/// change the call's result, its command posted as its data moves; else
/// the program's own call on its own descriptor, whose command is posted
/// only if the kernel did it (or, for a write the twin may not carry, as
/// its data moves where `fd::overlaps` allows).
///
/// A read (`fd::read_twin`) is repeated on the program's own descriptor
/// where the twin's copy stopped at a buffer it could not touch
/// (`fd::faulted`). A write (`fd::write_twin`, issue 38 item 6) is
/// repeated on the program's own descriptor unless the twin took all of
/// it: its result is then the kernel's O_DIRECT answer (EFAULT for a
/// buffer partly unmapped; measured on 6.18/ext4, the native call lands
/// the same first block the twin's did, `exec_conformance`'s fault case),
/// at no cost on the hot path (a readability check of the buffers,
/// MADV_POPULATE_READ, costs ~0.9 us per 4 KiB and ~12 us per 128 KiB
/// here). A whole one starts its write-back at once (`fd::written`).
pub(crate) fn positioned_at(
    fd: c_int,
    tag: Tag,
    write: bool,
    off: i64,
    bufs: fd::Bufs,
    rwf: c_int,
    call: impl Fn(c_int) -> isize,
) -> Option<isize> {
    let len = match bufs {
        fd::Bufs::One(_, n) => n as u64,
        fd::Bufs::Vec(iov, cnt) => iov_len(iov, cnt),
    };
    let twin = if write {
        fd::write_twin(fd, off, &bufs, rwf)
    } else {
        fd::read_twin(fd, off, &bufs, rwf)
    };
    let r = match twin {
        Some(twin) if write => route::blocking_at(tag, write, fd, off as u64, len, || {
            let r = call(twin);
            if r >= 0 && r as u64 == len {
                fd::written(fd, twin, off, len);
                return r;
            }
            // EFBIG at RLIMIT_FSIZE: the same check in both paths
            // (mm/filemap.c `generic_write_check_limits`), which sent the
            // program SIGXFSZ already; a repeat would send a second one.
            let err = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
            if r < 0 && err == libc::EFBIG {
                return r;
            }
            call(fd)
        })?,
        Some(twin) => route::blocking_at(tag, write, fd, off as u64, len, || {
            let r = call(twin);
            let err = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
            // `faulted` makes no system call for a failed call: the
            // twin's errno stands.
            if fd::faulted(fd, off, len, r, err) {
                call(fd)
            } else {
                r
            }
        })?,
        None if write && fd::overlaps(fd, write, off, &bufs, rwf) => {
            route::blocking_at(tag, write, fd, off as u64, len, || call(fd))?
        }
        None => route::blocking(tag, write, off.max(0) as u64, || call(fd))?,
    };
    Some(synced(fd, write, rwf, r))
}

/// The bytes of `cnt` iovecs (0 for a bad count: routed as before).
fn iov_len(iov: *const iovec, cnt: c_int) -> u64 {
    if iov.is_null() || !(1..=1024).contains(&cnt) {
        return 0;
    }
    // SAFETY: the program's array of cnt iovecs (the call's contract).
    (0..cnt as usize)
        .map(|k| unsafe { (*iov.add(k)).iov_len as u64 })
        .sum()
}
