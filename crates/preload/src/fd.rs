//! What the library knows of the program's descriptors (issue 24): which
//! are O_DIRECT, their page-cache twins with a modelled device, their
//! O_APPEND/O_DSYNC and access mode, their files' sizes and O_DIRECT
//! alignment, kept by number until the descriptor is closed.

use std::ffi::c_int;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicI32, AtomicU64};

use crate::state::modelled;

/// The size of each descriptor's file as last seen (0: not seen), so that
/// a read known to lie within it needs no `fstat`; looked again when a read
/// reaches past it, cleared at close.
static SIZES: [AtomicU64; FDS] = [const { AtomicU64::new(0) }; FDS];

/// Whether the file of `fd` holds `end` bytes.
pub(crate) fn within(fd: c_int, end: u64) -> bool {
    let Some(size) = usize::try_from(fd).ok().and_then(|i| SIZES.get(i)) else {
        return false;
    };
    if size.load(Relaxed) >= end {
        return true;
    }
    // SAFETY: fstat fills the struct; a bad fd returns -1.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return false;
    }
    size.store(st.st_size as u64, Relaxed);
    st.st_size as u64 >= end
}

/// What this process knows of its O_DIRECT descriptors, by number, so
/// that a routed call costs no system call of ours (each one ~0.5 us on
/// this VM, `cinterrupts bench exec`): whether it is direct, and with a
/// modelled device its page-cache twin. An entry holds from the first call
/// that looks the descriptor up until the descriptor is closed: `close`,
/// `dup2`, `dup3`, `close_range`, `closefrom`, `fclose` and their raw
/// `syscall` forms (interposed) clear it and close the twin, so a number
/// reused for another file, or for the same file opened another way, is
/// looked up again; a close none of them sees is found at the next call
/// ([`same`]). Descriptors found not direct are not
/// kept (they are looked up at every call, as before), nor are numbers of
/// [`FDS`] and above.
///
/// An entry: bit 63 valid, bit 62 direct, bit 61 twin looked up, bits
/// 32..61 the generation (bumped at each close, so a look-up that raced a
/// close is not stored), bits 0..32 the twin (`u32::MAX`: none could be
/// opened, the data moves through the descriptor itself).
const FDS: usize = 4096;
const VALID: u64 = 1 << 63;
const DIRECT: u64 = 1 << 62;
const TWINNED: u64 = 1 << 61;
/// The descriptor's O_APPEND and O_DSYNC (or O_SYNC) as last looked up.
const APPEND: u64 = 1 << 60;
const SYNC: u64 = 1 << 59;
/// Its access mode: read-only, write-only (neither: both).
const RDONLY: u64 = 1 << 58;
const WRONLY: u64 = 1 << 57;
const MODE: u64 = APPEND | SYNC | RDONLY | WRONLY;
const GEN: u64 = ((1 << 57) - 1) & !0xffff_ffff;
const NO_TWIN: u32 = u32::MAX;

static FD_CACHE: [AtomicU64; FDS] = [const { AtomicU64::new(0) }; FDS];
/// For a twin's number: 1 + the descriptor it is the twin of (0: none).
static TWIN_OF: [AtomicI32; FDS] = [const { AtomicI32::new(0) }; FDS];

fn entry(fd: c_int) -> Option<&'static AtomicU64> {
    usize::try_from(fd).ok().and_then(|i| FD_CACHE.get(i))
}

/// What an entry was made for (issue 24): the file (`st_ino`, and
/// `st_dev` folded to 32 bits) and the open file description's flags the
/// cache depends on ([`WATCH_FL`]), as `fstat` and `fcntl(F_GETFL)` said
/// when the entry was made. A descriptor can be closed or replaced without
/// the library seeing it (`fclose`, whose `close` is glibc's internal one;
/// a raw `close` system call), and its number reused: each routed call
/// compares the two with the descriptor as it is now ([`same`]), and a
/// stale entry goes, with its twin, before the call is looked up again.
static INO: [AtomicU64; FDS] = [const { AtomicU64::new(0) }; FDS];
static DEV_FL: [AtomicU64; FDS] = [const { AtomicU64::new(0) }; FDS];

/// The flags an entry and its twin depend on.
const WATCH_FL: c_int =
    libc::O_ACCMODE | libc::O_DIRECT | libc::O_APPEND | libc::O_DSYNC | libc::O_SYNC;

/// `fd`'s identity now, as [`INO`] and [`DEV_FL`] keep it (`fl`: its
/// F_GETFL); `None` for a descriptor not open.
fn identity(fd: c_int, fl: c_int) -> Option<(u64, u64)> {
    // SAFETY: fstat fills the struct; a bad fd returns -1. The system
    // call itself: glibc's `fstat` is `fstatat(fd, "", AT_EMPTY_PATH)`,
    // ~50 ns more here.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::syscall(libc::SYS_fstat, fd, &mut st) } != 0 {
        return None;
    }
    let dev = (st.st_dev ^ (st.st_dev >> 32)) & 0xffff_ffff;
    Some((st.st_ino, (dev << 32) | u64::from((fl & WATCH_FL) as u32)))
}

/// Records what `fd`'s entry is made for (before the entry is stored).
fn remember(fd: c_int, fl: c_int) {
    let Some(i) = usize::try_from(fd).ok().filter(|&i| i < FDS) else {
        return;
    };
    let (ino, dev_fl) = identity(fd, fl).unwrap_or((0, 0));
    INO[i].store(ino, Release);
    DEV_FL[i].store(dev_fl, Release);
}

/// Whether `fd` is still the file, with the flags, its entry was made for:
/// two system calls (`fstat`, `fcntl(F_GETFL)`) per routed call.
fn same(fd: c_int) -> bool {
    let i = fd as usize;
    // SAFETY: F_GETFL takes no pointer; a bad fd returns -1.
    let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    fl != -1 && identity(fd, fl) == Some((INO[i].load(Acquire), DEV_FL[i].load(Acquire)))
}

/// Drops `fd`'s entry if it still is `seen` (a stale one: the descriptor
/// was closed or replaced where the library did not see it), with its
/// twin, its size and its alignment.
fn forget(fd: c_int, seen: u64) {
    let Some(e) = entry(fd) else { return };
    let gone = ((seen & GEN) + (1 << 32)) & GEN;
    if e.compare_exchange(seen, gone, AcqRel, Relaxed).is_err() {
        return;
    }
    let twin = seen as u32;
    if seen & TWINNED != 0 && twin != NO_TWIN {
        close_pending(fd, twin as c_int);
        close_twin(twin as c_int);
    }
    SIZES[fd as usize].store(0, Relaxed);
    ALIGN[fd as usize].store(0, Relaxed);
}

/// Whether `fd` was opened with O_DIRECT (now). A cached entry is checked
/// first against the descriptor as it is ([`same`]).
pub(crate) fn is_direct(fd: c_int) -> bool {
    let e = entry(fd);
    let mut seen = e.map_or(0, |e| e.load(Acquire));
    if seen & VALID != 0 {
        if same(fd) {
            return seen & DIRECT != 0;
        }
        forget(fd, seen);
        seen = e.map_or(0, |e| e.load(Acquire));
        if seen & VALID != 0 && same(fd) {
            // Another thread made it afresh meanwhile.
            return seen & DIRECT != 0;
        }
        forget(fd, seen);
        seen = e.map_or(0, |e| e.load(Acquire));
    }
    // SAFETY: F_GETFL takes no pointer; a bad fd returns -1.
    let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    let direct = fl != -1 && fl & libc::O_DIRECT != 0;
    if let (true, Some(e)) = (direct, e) {
        if seen & VALID == 0 {
            remember(fd, fl);
            let now = (seen & GEN) | VALID | DIRECT | flag_bits(fl);
            let _ = e.compare_exchange(seen, now, AcqRel, Relaxed);
        }
    }
    direct
}

fn flag_bits(fl: c_int) -> u64 {
    let mut b = 0;
    if fl & libc::O_APPEND != 0 {
        b |= APPEND;
    }
    if fl & libc::O_DSYNC != 0 {
        b |= SYNC;
    }
    match fl & libc::O_ACCMODE {
        libc::O_RDONLY => b |= RDONLY,
        libc::O_WRONLY => b |= WRONLY,
        _ => {}
    }
    b
}

/// `fd`'s O_APPEND, O_DSYNC/O_SYNC and access mode bits ([`MODE`]), from
/// the cache when `fd` is a known direct descriptor.
fn flags_of(fd: c_int) -> u64 {
    let seen = entry(fd).map_or(0, |e| e.load(Acquire));
    if seen & (VALID | DIRECT) == VALID | DIRECT {
        return seen & MODE;
    }
    // SAFETY: F_GETFL takes no pointer; a bad fd returns -1.
    let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if fl == -1 {
        0
    } else {
        flag_bits(fl)
    }
}

/// Whether a write on `fd` must be durable when it returns (O_DSYNC or
/// O_SYNC): the device then sees a flush command after it.
pub(crate) fn syncs(fd: c_int) -> bool {
    flags_of(fd) & SYNC != 0
}

/// The O_DIRECT alignment of each descriptor's file, from
/// `statx(STATX_DIOALIGN)`: 0 not looked up, [`NO_ALIGN`] unknown (the
/// file system does not say), else the memory alignment << 32 | the offset
/// and length alignment. Cleared at close.
static ALIGN: [AtomicU64; FDS] = [const { AtomicU64::new(0) }; FDS];
const NO_ALIGN: u64 = u64::MAX;

fn dio_align(fd: c_int) -> Option<(u64, u64)> {
    let slot = usize::try_from(fd).ok().and_then(|i| ALIGN.get(i))?;
    let mut a = slot.load(Relaxed);
    if a == 0 {
        // SAFETY: statx fills our struct; an empty path with AT_EMPTY_PATH
        // is `fd` itself.
        let mut st: libc::statx = unsafe { std::mem::zeroed() };
        let r = unsafe {
            libc::statx(
                fd,
                c"".as_ptr(),
                libc::AT_EMPTY_PATH,
                libc::STATX_DIOALIGN,
                &mut st,
            )
        };
        a = if r == 0
            && st.stx_mask & libc::STATX_DIOALIGN != 0
            && st.stx_dio_mem_align != 0
            && st.stx_dio_offset_align != 0
        {
            (u64::from(st.stx_dio_mem_align) << 32) | u64::from(st.stx_dio_offset_align)
        } else {
            NO_ALIGN
        };
        slot.store(a, Relaxed);
    }
    (a != NO_ALIGN).then_some((a >> 32, a & 0xffff_ffff))
}

/// What an O_DIRECT call moves: its buffers (address, length) and offset.
pub(crate) enum Bufs {
    One(usize, usize),
    Vec(*const libc::iovec, c_int),
}

/// Whether the kernel's O_DIRECT would accept the call's alignment on
/// `fd`: the offset and every length a multiple of the file's offset
/// alignment, every buffer's address of its memory alignment (Linux's
/// `iomap_dio_rw` / `blkdev_dio_invalid`). False when the file system does
/// not say (`statx` without STATX_DIOALIGN).
fn aligned(fd: c_int, off: i64, bufs: &Bufs) -> bool {
    let Some((mem, len)) = dio_align(fd) else {
        return false;
    };
    let ok = |a: usize, n: usize| a as u64 % mem == 0 && n as u64 % len == 0;
    off >= 0
        && off as u64 % len == 0
        && match *bufs {
            Bufs::One(a, n) => ok(a, n),
            Bufs::Vec(iov, cnt) => {
                !iov.is_null()
                    && (1..=1024).contains(&cnt)
                    && (0..cnt as usize).all(|k| {
                        // SAFETY: the program's array of cnt iovecs.
                        let v = unsafe { *iov.add(k) };
                        ok(v.iov_base as usize, v.iov_len)
                    })
            }
        }
}

/// Whether a positioned O_DIRECT call on `fd` may have its command posted
/// before its data moves (issue 24): with a modelled device, an alignment
/// the kernel's O_DIRECT accepts (so its EINVAL is never hidden), no flags
/// beyond HIPRI/DSYNC/SYNC (RWF_NOWAIT, RWF_APPEND go to the kernel as
/// asked), a descriptor open for the call (its EBADF is the kernel's, with
/// no command) and, for a write, without O_APPEND (the kernel picks the end
/// of the file, and checks its alignment).
pub(crate) fn overlaps(fd: c_int, write: bool, off: i64, bufs: &Bufs, rwf: c_int) -> bool {
    const TWIN_RWF: c_int = 0x01 | 0x02 | 0x04;
    if !modelled() || rwf & !TWIN_RWF != 0 || !aligned(fd, off, bufs) {
        return false;
    }
    let refuse = if write { APPEND | RDONLY } else { WRONLY };
    flags_of(fd) & refuse == 0
}

/// The page-cache twin a positioned O_DIRECT read on `fd` moves its data
/// through for libaio and io_uring (issue 24: the kernel's own semantics,
/// the device's timing), only where it cannot change what the call does:
/// where it [`overlaps`], and every buffer is one the kernel's O_DIRECT
/// could pin for writing ([`reachable`]; a buffered read copies up to the
/// first page it cannot touch and returns that short count, where O_DIRECT
/// returns EFAULT: issue 38 item 6, measured on this VM's 6.18 and ext4 for
/// all eight vectored forms; one `madvise` per buffer: [`read_twin`] for
/// the blocking calls). Never for a write here: a libaio or io_uring
/// write's twin result arrives as an event, where [`written`] could not
/// start its write-back at once (the blocking writes: [`write_twin`]); the
/// program's own write on its own descriptor moves its data. `None`: the
/// program's own call on its own descriptor.
pub(crate) fn twin_for(fd: c_int, write: bool, off: i64, bufs: &Bufs, rwf: c_int) -> Option<c_int> {
    if write || !overlaps(fd, false, off, bufs, rwf) || !reachable(bufs) {
        return None;
    }
    let d = data_fd(fd);
    (d != fd).then_some(d)
}

/// As [`twin_for`] for a blocking read, whose caller checks the twin's
/// result instead of the buffers (`madvise` costs ~1 us per 4 KiB buffer
/// and ~9 us per 128 KiB here, against the profile's ~7 us read): where
/// the twin's copy stopped short ([`faulted`]), the caller repeats the read
/// on the program's own descriptor, whose result is the kernel's. Only
/// the buffer's contents may then differ from a native call's: the twin
/// filled the pages before the fault, where this kernel's O_DIRECT fills
/// none (POSIX leaves a buffer unspecified after EFAULT).
pub(crate) fn read_twin(fd: c_int, off: i64, bufs: &Bufs, rwf: c_int) -> Option<c_int> {
    if !overlaps(fd, false, off, bufs, rwf) {
        return None;
    }
    let d = data_fd(fd);
    (d != fd).then_some(d)
}

/// The twin a blocking positioned O_DIRECT write on `fd` moves its data
/// through under `--device` (issue 38 item 6): the page cache takes the
/// copy (~3 us per 4 KiB here) where the program's own O_DIRECT write waits
/// for this VM's disk (~40-540 us per 4 KiB), so that the completion is the
/// profile's. Where it [`overlaps`], and not on a write that must be
/// durable at its return (O_DSYNC/O_SYNC, RWF_DSYNC/RWF_SYNC: it would
/// wait for this disk through the twin as well; the program's own call
/// keeps its semantics exactly). The caller repeats the write on the
/// program's own descriptor unless the twin took all of it ([`written`]'s
/// caller: a fault part-way, a full disk, a read-only twin), and calls
/// [`written`] after a whole one.
pub(crate) fn write_twin(fd: c_int, off: i64, bufs: &Bufs, rwf: c_int) -> Option<c_int> {
    const RWF_SYNCS: c_int = 0x02 | 0x04;
    if rwf & RWF_SYNCS != 0 || !overlaps(fd, true, off, bufs, rwf) || syncs(fd) {
        return None;
    }
    let d = data_fd(fd);
    (d != fd).then_some(d)
}

/// The span of `fd`'s file its twin wrote whose pages may still be in the
/// page cache, `[lo, hi)` (`hi` 0: none), dropped once their write-back is
/// done ([`written`]), else at close ([`closing`]).
static PEND_LO: [AtomicU64; FDS] = [const { AtomicU64::new(0) }; FDS];
static PEND_HI: [AtomicU64; FDS] = [const { AtomicU64::new(0) }; FDS];

/// A span this large is dropped without waiting for its write-back to be
/// seen done (what is still under write-back stays cached, clean): it
/// bounds [`cachestat`]'s walk (~0.3 us for one 4 KiB page here; it walks
/// the span's cached pages) and the memory a stream of writes keeps.
const PEND_MAX: u64 = 8 << 20;

/// The twin `twin` of `fd` took a whole write of `len` bytes at `off`
/// (issue 38 item 6). Native O_DIRECT leaves no page of the range in the
/// page cache (it writes the blocks, then invalidates the range: mm/filemap.c
/// `kiocb_invalidate_post_direct_write`); the twin's write left them dirty.
/// `sync_file_range(SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE)`
/// starts their write-back now (`WAIT_BEFORE`: a page still under an
/// earlier write-back would otherwise be skipped, mm/page-writeback.c
/// `writeback_iter` with WB_SYNC_NONE, and stay dirty), so no page of a
/// write stays dirty and unscheduled at its return; only a rewrite of a
/// page still in flight waits here. It does not wait for the write-back
/// (`WAIT_AFTER` measured ~83 us per 4 KiB, this disk's time: what the
/// twin is there to avoid). The pages are dropped with
/// `posix_fadvise(POSIX_FADV_DONTNEED)` once `cachestat` (Linux 6.5) finds
/// none of the span dirty or under write-back, at a later write on `fd`
/// (DONTNEED cannot drop a page under write-back, and then drains every
/// CPU's LRU batches, mm/fadvise.c: so it is not asked at once). Measured
/// on this VM (2 vCPUs, load 9.5; /tmp bench, 2000 writes): buffered pwrite
/// 3.1 us, + this sync_file_range 9-27 us, + the gated drop 0.3-2 us per
/// 4 KiB; native O_DIRECT pwrite 38-100 us. So a 4 KiB write under
/// `--device optane` completes at ~this copy and write-back start (p50
/// 32-42 us at load 5.7, against 47-52 us on the program's own
/// descriptor), not the profile's ~7.5 us: the write-back's submission
/// (ext4 writepages, blk-mq, the virtio kick) is on the caller's thread.
/// A 128 KiB one: p50 74 us (the profile's mean 72-90 us; own descriptor
/// 132 us).
pub(crate) fn written(fd: c_int, twin: c_int, off: i64, len: u64) {
    let Some(i) = usize::try_from(fd).ok().filter(|&i| i < FDS) else {
        return;
    };
    if len == 0 || off < 0 {
        return;
    }
    let (lo, hi) = (off as u64, off as u64 + len);
    // SAFETY: takes no pointer; our own descriptor of the file.
    unsafe {
        libc::sync_file_range(
            twin,
            off,
            len as i64,
            libc::SYNC_FILE_RANGE_WAIT_BEFORE | libc::SYNC_FILE_RANGE_WRITE,
        )
    };
    let (plo, phi) = (PEND_LO[i].load(Relaxed), PEND_HI[i].load(Relaxed));
    let (lo, hi) = if phi == 0 {
        (lo, hi)
    } else if phi - plo >= PEND_MAX || cachestat(twin, plo, phi - plo) == Some(0) {
        dontneed(twin, plo, phi);
        (lo, hi)
    } else {
        (lo.min(plo), hi.max(phi))
    };
    PEND_LO[i].store(lo, Relaxed);
    PEND_HI[i].store(hi, Relaxed);
}

/// The pages of `[off, off + len)` of `fd`'s file dirty or under
/// write-back (`cachestat`, Linux 6.5, syscall 451 on every architecture);
/// `None` without it.
fn cachestat(fd: c_int, off: u64, len: u64) -> Option<u64> {
    let range = [off, len];
    let mut st = [0u64; 5];
    // SAFETY: cachestat reads the range and fills the five counters
    // (struct cachestat: cache, dirty, writeback, evicted, recently_evicted).
    let r = unsafe { libc::syscall(451, fd, range.as_ptr(), st.as_mut_ptr(), 0) };
    (r == 0).then(|| st[1] + st[2])
}

/// Drops the twin's clean pages of `[lo, hi)` (those under write-back stay).
fn dontneed(twin: c_int, lo: u64, hi: u64) {
    // SAFETY: takes no pointer.
    unsafe { libc::posix_fadvise(twin, lo as i64, (hi - lo) as i64, libc::POSIX_FADV_DONTNEED) };
}

/// `fd`'s twin `twin` goes: what it wrote and kept cached is dropped first.
fn close_pending(fd: c_int, twin: c_int) {
    let Some(i) = usize::try_from(fd).ok().filter(|&i| i < FDS) else {
        return;
    };
    let (lo, hi) = (PEND_LO[i].swap(0, Relaxed), PEND_HI[i].swap(0, Relaxed));
    if hi != 0 {
        dontneed(twin, lo, hi);
    }
}

/// Whether the twin's read of `len` bytes at `off` of `fd`, which returned
/// `r` (errno `err`), may have stopped at a buffer the program cannot
/// touch, where O_DIRECT's answer may differ: an EFAULT, or a short count
/// within the file (a short count at its end is the end's, as O_DIRECT's
/// is). No system call for a failed or a whole read.
pub(crate) fn faulted(fd: c_int, off: i64, len: u64, r: isize, err: c_int) -> bool {
    if r < 0 {
        return err == libc::EFAULT;
    }
    (r as u64) < len && within(fd, off as u64 + r as u64 + 1)
}

/// Whether the kernel could pin every page of the call's buffers for its
/// O_DIRECT read (writable: `iov_iter_extract_pages` with FOLL_WRITE,
/// block/bio.c): `madvise(MADV_POPULATE_WRITE)` (Linux 5.14) faults them in
/// writable, and fails (ENOMEM, EFAULT) for an unmapped or read-only page
/// as the pinning does. The read overwrites these pages anyway. One system
/// call per buffer; any failure (also EINVAL from a kernel without it):
/// not reachable, the program's own call decides.
fn reachable(bufs: &Bufs) -> bool {
    // SAFETY: sysconf takes no pointer.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
    let one = |a: usize, n: usize| {
        if n == 0 {
            return true;
        }
        let start = a & !(page - 1);
        let Some(end) = a.checked_add(n).and_then(|e| e.checked_add(page - 1)) else {
            return false;
        };
        let end = end & !(page - 1);
        // SAFETY: madvise only populates page tables of the range; it
        // moves no data and fails for pages not mapped.
        unsafe {
            libc::madvise(
                start as *mut libc::c_void,
                end - start,
                libc::MADV_POPULATE_WRITE,
            ) == 0
        }
    };
    match *bufs {
        Bufs::One(a, n) => one(a, n),
        Bufs::Vec(iov, cnt) => {
            !iov.is_null()
                && (0..cnt.max(0) as usize).all(|k| {
                    // SAFETY: the program's array of cnt iovecs (`aligned`
                    // checked the count).
                    let v = unsafe { *iov.add(k) };
                    one(v.iov_base as usize, v.iov_len)
                })
        }
    }
}

/// The descriptor the data moves through: `fd` itself, or with a modelled
/// device its twin without O_DIRECT (the page cache: this VM's disk takes
/// ~170 us per 4 KiB, the profile's device ~7 us), opened with `fd`'s
/// access mode at the first call on `fd` that may use it, and placed high
/// ([`high`]). `fd` itself when no twin
/// can be opened.
fn data_fd(fd: c_int) -> c_int {
    if !modelled() {
        return fd;
    }
    let Some(e) = entry(fd) else {
        return fd;
    };
    let seen = e.load(Acquire);
    if seen & (VALID | TWINNED) == VALID | TWINNED {
        let twin = seen as u32;
        return if twin == NO_TWIN { fd } else { twin as c_int };
    }
    // SAFETY: F_GETFL takes no pointer.
    let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if fl == -1 || fl & libc::O_DIRECT == 0 {
        return fd;
    }
    if seen & VALID == 0 {
        remember(fd, fl);
    }
    let path = std::ffi::CString::new(format!("/proc/self/fd/{fd}")).expect("no NUL");
    // SAFETY: a NUL-terminated path; `open` is not interposed. With the
    // program's access mode (blocking writes move through it too:
    // `write_twin`), else read-only (a write through it then fails, and is
    // repeated on the program's own descriptor); never O_DSYNC/O_SYNC (no
    // write that must be durable goes through it: `write_twin`).
    let mode = fl & libc::O_ACCMODE;
    let mut low = unsafe { libc::open(path.as_ptr(), mode | libc::O_CLOEXEC) };
    if low < 0 && mode != libc::O_RDONLY {
        // SAFETY: as above.
        low = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    }
    let twin = if low < 0 { low } else { high(low) };
    let bits = if twin < 0 { NO_TWIN } else { twin as u32 };
    if let Some(t) = TWIN_OF.get(twin.max(0) as usize).filter(|_| twin >= 0) {
        t.store(fd + 1, Release);
    }
    let now = (seen & GEN) | VALID | DIRECT | TWINNED | flag_bits(fl) | u64::from(bits);
    if e.compare_exchange(seen, now, AcqRel, Relaxed).is_ok() {
        return if twin < 0 { fd } else { twin };
    }
    // A close raced the look-up (or another thread stored its own twin):
    // this call moves its data through `fd` itself.
    if twin >= 0 {
        close_twin(twin);
    }
    fd
}

/// How many numbers [`high`] tries for a twin, above the program's
/// RLIMIT_NOFILE or below the top.
const HIGH_TRIES: u64 = 64;

/// `low` moved out of the program's way (issue 38 item 6): the kernel
/// gives an `open` the lowest free number (fs/file.c, `alloc_fd`), so a
/// twin left at `low` would shift every number the program opens after
/// it, and take one of the numbers its RLIMIT_NOFILE allows.
///
/// First choice, at or just above the soft RLIMIT_NOFILE: `alloc_fd`
/// refuses only numbers at or above the limit, so a descriptor there takes
/// neither a number the program could get nor any of its headroom. The
/// limit is raised for the one F_DUPFD_CLOEXEC (within the hard limit)
/// and set back at once; a program's own `setrlimit` or `open` racing that
/// instant would see the raised limit. Only where the number stays under
/// [`FDS`] (closing a twin's number must find its owner, `TWIN_OF`).
///
/// Else the highest free number under `min(soft limit, FDS)` (a limit of
/// [`FDS`] or more, or soft = hard): it shifts no number of the program's
/// until the program holds nearly that many, but it takes one number of
/// its headroom (a program that opens up to its limit gets EMFILE one
/// open earlier per twin). F_DUPFD_CLOEXEC gives the lowest free number at
/// or above its argument, so trying `top - 1`, `top - 2`, ... finds the
/// highest free one. Else (none of the top [`HIGH_TRIES`] free) `low`.
///
/// A twin above a limit the program lowers later stays open and usable
/// (Linux checks RLIMIT_NOFILE only when it hands out a number); twins
/// made after that go above or under the new limit.
fn high(low: c_int) -> c_int {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit fills the struct.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return low;
    }
    let moved = |hi: c_int| {
        // SAFETY: our own descriptor, the raw call (not interposed).
        unsafe { libc::syscall(libc::SYS_close, low) };
        hi
    };
    let cur = lim.rlim_cur;
    let above = cur
        .saturating_add(HIGH_TRIES)
        .min(lim.rlim_max)
        .min(FDS as u64);
    if above > cur {
        let raised = libc::rlimit {
            rlim_cur: above,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: setrlimit reads the struct; F_DUPFD_CLOEXEC takes a
        // number; the limit goes back as it was.
        unsafe {
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                let hi = libc::fcntl(low, libc::F_DUPFD_CLOEXEC, cur as c_int);
                libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
                if hi >= 0 {
                    return moved(hi);
                }
            }
        }
    }
    let top = cur.min(FDS as u64) as c_int;
    for k in 1..=(HIGH_TRIES as c_int).min(top) {
        let at = top - k;
        if at <= low {
            break;
        }
        // SAFETY: our own descriptor; F_DUPFD_CLOEXEC takes a number.
        let hi = unsafe { libc::fcntl(low, libc::F_DUPFD_CLOEXEC, at) };
        if hi >= 0 {
            return moved(hi);
        }
    }
    low
}

fn close_twin(twin: c_int) {
    if let Some(t) = TWIN_OF.get(twin as usize) {
        t.store(0, Release);
    }
    // SAFETY: our own descriptor; the raw call, not the interposed close.
    unsafe { libc::syscall(libc::SYS_close, twin) };
}

/// `fcntl(F_SETFL)` succeeded on `fd`: a descriptor still direct keeps its
/// entry and twin with its O_APPEND as it is now (O_DSYNC cannot change so);
/// one no longer direct is forgotten, as at close.
pub(crate) fn flags_changed(fd: c_int) {
    let Some(e) = entry(fd) else { return };
    // SAFETY: F_GETFL takes no pointer.
    let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if fl != -1 && fl & libc::O_DIRECT != 0 {
        if let Some((_, dev_fl)) = identity(fd, fl) {
            DEV_FL[fd as usize].store(dev_fl, Release);
        }
        let bit = flag_bits(fl) & APPEND;
        let _ = e.fetch_update(AcqRel, Acquire, |v| {
            (v & VALID != 0).then_some((v & !APPEND) | bit)
        });
    } else {
        closing(fd);
    }
}

/// `fd` is about to be closed (or replaced by `dup2`/`dup3`): its entry
/// goes, with its twin (a routed ring's descriptor is `uring::closing`'s,
/// which the interposed calls call first: `intercept::closing`). If `fd`
/// is a twin of ours the program closes (a program closing every
/// descriptor), the entry it belongs to goes.
pub(crate) fn closing(fd: c_int) {
    let Some(e) = entry(fd) else { return };
    let old = e.fetch_update(AcqRel, Acquire, |v| Some(((v & GEN) + (1 << 32)) & GEN));
    if let Ok(v) = old {
        let twin = v as u32;
        if v & TWINNED != 0 && twin != NO_TWIN {
            close_pending(fd, twin as c_int);
            close_twin(twin as c_int);
        }
    }
    SIZES[fd as usize].store(0, Relaxed);
    ALIGN[fd as usize].store(0, Relaxed);
    let owner = TWIN_OF[fd as usize].swap(0, AcqRel);
    if owner > 0 {
        if let Some(o) = entry(owner - 1) {
            let _ = o.fetch_update(AcqRel, Acquire, |v| Some(((v & GEN) + (1 << 32)) & GEN));
        }
    }
}
