//! The ring logic without a program and without exec (issue 38 item 1):
//! the test is the program. Its rings are anonymous memory laid out at the
//! offsets a real `io_uring_setup` of this kernel reports, exactly as
//! `make` lays out the memfd (so the layout is the kernel's, not ours);
//! the shadow is a real kernel ring of this test process, as `aio`'s tests
//! use a real kernel context. The program's side below (push an SQE,
//! reap CQEs) reads the rings through the kernel's offsets on its own,
//! as liburing does (src/queue.c `io_uring_get_sqe`, `io_uring_cq_advance`),
//! not through `abi::Rings`, so that a fault in `Rings` shows here.
//!
//! Every CQE comes from the kernel's IORING_OP_NOP (res 0, completed
//! inside the submitting call) or IORING_OP_TIMEOUT/ASYNC_CANCEL; no
//! file, no device (`route::region()` is `None` in a test process, so a
//! request is never gated on a device command: that half is exercised by
//! crates/cli/tests/exec*.rs).

use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering::*};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use super::abi::{self, op, setup as fl, Cqe, Params, Rings, Sqe, SQE};
use super::ring::{Pend, Ring};
use super::submit::{submit, How};
use crate::kernel::sys;

/// include/uapi/linux/io_uring.h: IORING_OP_NOP, IORING_OP_ASYNC_CANCEL.
const OP_NOP: u8 = 0;
const OP_ASYNC_CANCEL: u8 = 14;
/// include/uapi/linux/io_uring.h: IORING_FEAT_NODROP.
const FEAT_NODROP: u32 = 1 << 1;

/// `io_uring_setup(entries, p)`: the descriptor (asserted to exist).
fn kernel_ring(entries: u32, p: &mut Params) -> c_int {
    let fd = sys(
        libc::SYS_io_uring_setup,
        entries as usize,
        p as *mut Params as usize,
        0,
        0,
        0,
    );
    assert!(
        fd >= 0,
        "io_uring_setup({entries}) = {fd} (io_uring disabled? see scripts/setup)"
    );
    fd as c_int
}

/// The kernel's answer for a ring of `sq` SQEs and `cq` CQEs
/// (IORING_SETUP_CQSIZE, and `flags`), the ring closed at once: what
/// `setup` gives the program.
fn kernel_params(sq: u32, cq: u32, flags: u32) -> Params {
    let mut p = Params {
        flags: fl::CQSIZE | flags,
        cq_entries: cq,
        ..Params::default()
    };
    super::close(kernel_ring(sq, &mut p));
    p
}

/// Anonymous zeroed memory of `len` bytes (unmapped by the Ring's drop).
fn anon(len: usize) -> usize {
    // SAFETY: a fresh private mapping.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    assert_ne!(p, libc::MAP_FAILED);
    p as usize
}

/// The program's view of its rings: the kernel's offsets, read on their
/// own (liburing's way), and the entries it fills and reaps.
struct Prog {
    base: usize,
    sqes: usize,
    p: Params,
}

impl Prog {
    fn word(&self, off: u32) -> &AtomicU32 {
        // SAFETY: an offset the kernel reported, inside the ring memory.
        unsafe { &*((self.base + off as usize) as *const AtomicU32) }
    }

    /// Puts `s` in SQE slot `idx`, with no array (IORING_SETUP_NO_SQARRAY):
    /// the slot must be the SQ position's.
    fn push_at_tail(&self, s: &Sqe) {
        let tail = self.word(self.p.sq_off.tail).load(Relaxed);
        let idx = tail & (self.p.sq_entries - 1);
        // SAFETY: slot `idx` < sq_entries of the SQE memory.
        unsafe {
            std::ptr::copy_nonoverlapping(
                s.0.as_ptr(),
                (self.sqes + idx as usize * SQE) as *mut u8,
                SQE,
            )
        };
        self.word(self.p.sq_off.tail)
            .store(tail.wrapping_add(1), Release);
    }

    /// Puts `s` in SQE slot `idx` and publishes it at the SQ tail through
    /// the array (`array[tail & mask] = idx`), as liburing's
    /// `io_uring_submit` fills the array and stores the tail with release.
    fn push(&self, idx: u32, s: &Sqe) {
        // SAFETY: slot `idx` < sq_entries of the SQE memory.
        unsafe {
            std::ptr::copy_nonoverlapping(
                s.0.as_ptr(),
                (self.sqes + idx as usize * SQE) as *mut u8,
                SQE,
            )
        };
        let tail = self.word(self.p.sq_off.tail).load(Relaxed);
        let slot = tail & (self.p.sq_entries - 1);
        self.word(self.p.sq_off.array + slot * 4)
            .store(idx, Relaxed);
        self.word(self.p.sq_off.tail)
            .store(tail.wrapping_add(1), Release);
    }

    /// Every CQE between head and tail, the head advanced past them (the
    /// program reaps: `io_uring_cq_advance`).
    fn reap(&self, most: u32) -> Vec<Cqe> {
        let head = self.word(self.p.cq_off.head).load(Relaxed);
        let tail = self.word(self.p.cq_off.tail).load(Acquire);
        let n = tail.wrapping_sub(head).min(most);
        let got = (0..n)
            .map(|k| {
                let slot = head.wrapping_add(k) & (self.p.cq_entries - 1);
                let at = self.base + self.p.cq_off.cqes as usize + slot as usize * abi::CQE;
                // SAFETY: a published CQE slot of the ring memory.
                unsafe {
                    Cqe {
                        user_data: std::ptr::read_volatile(at as *const u64),
                        res: std::ptr::read_volatile((at + 8) as *const i32),
                        flags: std::ptr::read_volatile((at + 12) as *const u32),
                    }
                }
            })
            .collect();
        self.word(self.p.cq_off.head)
            .store(head.wrapping_add(n), Release);
        got
    }

    fn ready(&self) -> u32 {
        let t = self.word(self.p.cq_off.tail).load(Acquire);
        t.wrapping_sub(self.word(self.p.cq_off.head).load(Acquire))
    }

    fn sq_flags(&self) -> u32 {
        self.word(self.p.sq_off.flags).load(SeqCst)
    }
}

/// A routed ring as `make` builds it (the program's rings at the kernel's
/// offsets for `sq`/`cq` entries, a shadow with a CQ twice as large), with
/// the program's setup `flags`, but no threads, no eventfds, no device.
fn routed(sq: u32, cq: u32, flags: u32) -> (Ring, Prog) {
    let k = kernel_params(sq, cq, flags & fl::NO_SQARRAY);
    let rings_len = Rings::rings_len(&k);
    let sqes_len = k.sq_entries as usize * SQE;
    let (base, sqes) = (anon(rings_len), anon(sqes_len));
    let prog = super::rings_of(base, sqes, &k);
    // The constant words, as `make` (and io_uring_create) writes them.
    for (off, v) in [
        (k.sq_off.ring_mask, k.sq_entries - 1),
        (k.sq_off.ring_entries, k.sq_entries),
        (k.cq_off.ring_mask, k.cq_entries - 1),
        (k.cq_off.ring_entries, k.cq_entries),
    ] {
        // SAFETY: a word of our fresh mapping at the kernel's offset.
        unsafe { ((base + off as usize) as *mut u32).write(v) };
    }
    let mut s = Params {
        flags: fl::CQSIZE,
        cq_entries: (k.cq_entries.max(k.sq_entries) * 2).min(1 << 16),
        ..Params::default()
    };
    let sfd = kernel_ring(sq, &mut s);
    let s_rings_len = Rings::rings_len(&s);
    let s_sqes_len = s.sq_entries as usize * SQE;
    let sbase = super::map(sfd, s_rings_len, abi::OFF_SQ_RING).expect("shadow rings");
    let ssqes = super::map(sfd, s_sqes_len, abi::OFF_SQES).expect("shadow SQEs");
    let r = Ring {
        maps: [(base, rings_len), (sqes, sqes_len)],
        prog,
        flags: k.flags | flags,
        shadow_fd: sfd,
        shadow: super::rings_of(sbase, ssqes, &s),
        shadow_maps: [(sbase, s_rings_len), (ssqes, s_sqes_len)],
        efd: -1,
        file: (0, 0),
        slot: None,
        owner: AtomicI32::new(0),
        sub: Mutex::new(0),
        st: Mutex::default(),
        reap: Mutex::new(()),
        consume: Mutex::new(()),
        kernel_wait: Condvar::new(),
        wake_efd: -1,
        waiters: AtomicU32::new(0),
        want: AtomicU32::new(u32::MAX),
        needs: Mutex::new(Vec::new()),
        user_efd: Mutex::new(None),
        files: Mutex::new(Vec::new()),
        sq_wake: AtomicU32::new(0),
        stop: AtomicBool::new(false),
        disabled: AtomicBool::new(false),
    };
    (r, Prog { base, sqes, p: k })
}

fn sqe(opcode: u8, user_data: u64) -> Sqe {
    let mut s = Sqe([0; SQE]);
    s.0[0] = opcode;
    s.0[32..40].copy_from_slice(&user_data.to_le_bytes());
    s
}

fn nop(user_data: u64) -> Sqe {
    sqe(OP_NOP, user_data)
}

fn uds(c: &[Cqe]) -> Vec<u64> {
    c.iter().map(|c| c.user_data).collect()
}

fn enter(r: &Ring, n: u32) -> i64 {
    submit(r, n, How::Enter { waits: false })
}

/// The kernel's `struct io_rings` offsets (include/linux/io_uring_types.h:
/// `struct io_uring { u32 head; u32 tail; }`, then `sq, cq`, the masks,
/// the entries, `sq_dropped`, `sq_flags`, `cq_flags`, `cq_overflow`, and
/// `cqes[] ____cacheline_aligned_in_smp`), as io_uring/io_uring.c
/// `io_uring_fill_params` reports them with `offsetof`, and the SQ array
/// after the CQEs at a cache line (`rings_size`: `struct_size(rings,
/// cqes, cq_entries)` then `ALIGN(off, SMP_CACHE_BYTES)`): what this
/// kernel answers, and what `abi::Rings` reads.
#[test]
fn the_kernels_ring_offsets_are_the_layout_read_here() {
    let p = kernel_params(4, 8, 0);
    let s = p.sq_off;
    let c = p.cq_off;
    assert_eq!(
        (s.head, s.tail, c.head, c.tail),
        (0, 4, 8, 12),
        "struct io_uring sq, cq"
    );
    assert_eq!((s.ring_mask, c.ring_mask), (16, 20));
    assert_eq!((s.ring_entries, c.ring_entries), (24, 28));
    assert_eq!((s.dropped, s.flags, c.flags, c.overflow), (32, 36, 40, 44));
    assert_eq!(c.cqes, 64, "cqes[] at a 64-byte cache line");
    assert_eq!(s.array, 64 + 8 * 16, "the SQ array after 8 CQEs");
    assert_eq!((p.sq_entries, p.cq_entries), (4, 8));
    assert_ne!(p.features & FEAT_NODROP, 0, "IORING_FEAT_NODROP");
    assert_eq!(Rings::rings_len(&p), 64 + 8 * 16 + 4 * 4);
    // IORING_SETUP_NO_SQARRAY (Linux 6.6): no array, the mapping ends
    // with the CQEs.
    let n = kernel_params(4, 8, fl::NO_SQARRAY);
    assert_eq!(Rings::rings_len(&n), 64 + 8 * 16);
    // A ring built on these offsets reads its words where the program's
    // side writes them.
    let (r, prog) = routed(4, 8, 0);
    prog.word(prog.p.sq_off.tail).store(3, Release);
    prog.word(prog.p.cq_off.head).store(5, Release);
    prog.word(prog.p.cq_off.tail).store(7, Release);
    assert_eq!(r.prog.sq_tail().load(Acquire), 3);
    assert_eq!(r.prog.cq_ready(), 2);
}

/// SQEs are taken from the program's SQ in SQ order through the array's
/// indirection (`sqes[array[head & mask]]`, io_uring/io_uring.c
/// `io_get_sqe`), over several wraps of the 4-entry SQ and 8-entry CQ;
/// the SQ head the program sees advances by what was consumed and the
/// CQEs reach the CQ at `tail & mask` in completion order.
#[test]
fn sqes_are_fetched_through_the_array_and_cqes_published_across_the_wrap() {
    let (r, prog) = routed(4, 8, 0);
    let mut next = 0u64;
    for round in 0..7u32 {
        // Three SQEs per round: positions wrap the SQ; the slots used go
        // backwards so that the array, not the position, names the SQE.
        let mut want = Vec::new();
        for k in 0..3u32 {
            let pos = round * 3 + k;
            let idx = 3 - (pos % 4);
            next += 1;
            prog.push(idx, &nop(1000 + next));
            want.push(1000 + next);
        }
        assert_eq!(enter(&r, 3), 3, "round {round}");
        assert_eq!(
            prog.word(prog.p.sq_off.head).load(Acquire),
            (round + 1) * 3,
            "the program's SQ head"
        );
        let got = prog.reap(u32::MAX);
        assert_eq!(uds(&got), want, "round {round}: in SQ order");
        assert!(got.iter().all(|c| c.res == 0));
    }
    // 21 CQEs through an 8-entry CQ: it wrapped twice.
    assert_eq!(prog.word(prog.p.cq_off.tail).load(Acquire), 21);
    assert_eq!(prog.word(prog.p.sq_off.dropped).load(Acquire), 0);
}

/// IORING_SETUP_NO_SQARRAY: the SQ position (masked) is the SQE's index
/// (io_uring/io_uring.c `io_get_sqe`: the array is read only without the
/// flag), across wraps.
#[test]
fn without_an_sq_array_the_position_names_the_sqe() {
    let (r, prog) = routed(4, 8, fl::NO_SQARRAY);
    assert!(r.prog.no_array);
    for round in 0..3u64 {
        for k in 0..3 {
            prog.push_at_tail(&nop(round * 10 + k));
        }
        assert_eq!(enter(&r, 3), 3);
        let want: Vec<u64> = (0..3).map(|k| round * 10 + k).collect();
        assert_eq!(uds(&prog.reap(u32::MAX)), want, "round {round}");
    }
}

/// `to_submit` bounds what is taken: the rest stays in the SQ for the
/// next call.
#[test]
fn only_to_submit_sqes_are_taken() {
    let (r, prog) = routed(8, 16, 0);
    for i in 0..5 {
        prog.push(i, &nop(i as u64));
    }
    assert_eq!(enter(&r, 2), 2);
    assert_eq!(prog.word(prog.p.sq_off.head).load(Acquire), 2);
    assert_eq!(enter(&r, 10), 3);
    assert_eq!(uds(&prog.reap(u32::MAX)), vec![0, 1, 2, 3, 4]);
    assert_eq!(enter(&r, 10), 0, "nothing left");
}

/// An array entry naming no SQE (>= sq_entries) ends the submission; it
/// is consumed and counted in `sq_dropped`, and the call answers the
/// SQEs before it (io_uring/io_uring.c `io_get_sqe`: "drop invalid
/// entries", `sq_dropped` + 1, the cached head already past it).
#[test]
fn an_invalid_sq_index_is_dropped_and_counted() {
    let (r, prog) = routed(4, 8, 0);
    prog.push(0, &nop(1));
    // An entry with index 9 in a 4-entry SQ.
    let tail = prog.word(prog.p.sq_off.tail).load(Relaxed);
    prog.word(prog.p.sq_off.array + (tail & 3) * 4)
        .store(9, Relaxed);
    prog.word(prog.p.sq_off.tail).store(tail + 1, Release);
    prog.push(2, &nop(3));
    assert_eq!(enter(&r, 3), 1, "the SQE before the invalid one");
    assert_eq!(prog.word(prog.p.sq_off.dropped).load(Acquire), 1);
    assert_eq!(prog.word(prog.p.sq_off.head).load(Acquire), 2);
    assert_eq!(enter(&r, 3), 1, "the one after, at the next call");
    assert_eq!(uds(&prog.reap(u32::MAX)), vec![1, 3]);
    assert_eq!(prog.word(prog.p.sq_off.head).load(Acquire), 3);
}

/// A full CQ: the library, like a kernel with IORING_FEAT_NODROP, keeps
/// the CQEs on an overflow list, sets IORING_SQ_CQ_OVERFLOW in the SQ
/// flags and loses none (`cq_overflow`, the count of CQEs lost, stays 0:
/// io_uring/io_uring.c `io_cqring_event_overflow` counts only a failed
/// allocation). Once the program reaps, a GETEVENTS
/// (`__io_cqring_overflow_flush`) moves them in order as far as there is
/// room, and the flag clears when the list is empty.
#[test]
fn a_full_cq_keeps_cqes_in_order_until_the_program_reaps() {
    let (r, prog) = routed(8, 8, 0);
    for i in 0..8 {
        prog.push(i, &nop(u64::from(i)));
    }
    assert_eq!(enter(&r, 8), 8);
    assert_eq!(prog.ready(), 8, "the CQ is full");
    assert_eq!(prog.sq_flags() & abi::SQ_CQ_OVERFLOW, 0);
    for i in 0..4 {
        prog.push(i, &nop(u64::from(8 + i)));
    }
    assert_eq!(enter(&r, 4), 4);
    assert_eq!(prog.ready(), 8, "no CQE past a full CQ");
    assert_ne!(prog.sq_flags() & abi::SQ_CQ_OVERFLOW, 0);
    assert_eq!(prog.word(prog.p.cq_off.overflow).load(Acquire), 0);
    assert_eq!(r.available(&r.lock()), 12, "kept, not lost");
    // The program reaps three: a GETEVENTS then finds room for three.
    assert_eq!(uds(&prog.reap(3)), vec![0, 1, 2]);
    r.flush(&mut r.lock());
    assert_eq!(prog.ready(), 8);
    assert_ne!(prog.sq_flags() & abi::SQ_CQ_OVERFLOW, 0, "one still kept");
    assert_eq!(uds(&prog.reap(u32::MAX)), (3..11).collect::<Vec<_>>());
    r.flush(&mut r.lock());
    assert_eq!(prog.sq_flags() & abi::SQ_CQ_OVERFLOW, 0, "list empty");
    assert_eq!(uds(&prog.reap(u32::MAX)), vec![11]);
    assert_eq!(r.available(&r.lock()), 0);
}

/// A submission's own CQEs go behind those kept on the overflow list: the
/// next batch posts the list first (the order the kernel keeps:
/// `io_cqring_event_overflow` queues behind the list while it is not
/// empty).
#[test]
fn a_later_batch_is_posted_after_the_kept_cqes() {
    let (r, prog) = routed(4, 4, 0);
    for i in 0..4 {
        prog.push(i, &nop(u64::from(i)));
    }
    assert_eq!(enter(&r, 4), 4);
    prog.push(0, &nop(4));
    assert_eq!(enter(&r, 1), 1);
    assert_eq!(uds(&prog.reap(2)), vec![0, 1]);
    // No GETEVENTS: the next submission's batch finds the room.
    prog.push(1, &nop(5));
    assert_eq!(enter(&r, 1), 1);
    assert_eq!(prog.sq_flags() & abi::SQ_CQ_OVERFLOW, 0);
    assert_eq!(uds(&prog.reap(u32::MAX)), vec![2, 3, 4, 5]);
}

/// IORING_SETUP_DEFER_TASKRUN (with TASKRUN_FLAG): a completion found
/// outside the submitting call waits for a GETEVENTS, with
/// IORING_SQ_TASKRUN set meanwhile (io_uring/io_uring.c
/// `io_req_local_work_add`, `io_run_local_work`); one found inside it is
/// posted at once (`__io_submit_flush_completions`).
#[test]
fn defer_taskrun_cqes_reach_the_cq_only_at_getevents() {
    let (r, prog) = routed(4, 8, fl::DEFER_TASKRUN | fl::TASKRUN_FLAG);
    let c = |ud| Cqe {
        user_data: ud,
        res: 0,
        flags: 0,
    };
    {
        let mut st = r.lock();
        r.complete(&mut st, c(1), false);
        r.post(&mut st);
    }
    assert_eq!(prog.ready(), 0);
    assert_ne!(prog.sq_flags() & abi::SQ_TASKRUN, 0);
    assert_eq!(r.available(&r.lock()), 1);
    {
        let mut st = r.lock();
        r.complete(&mut st, c(2), true);
        r.post(&mut st);
    }
    assert_eq!(uds(&prog.reap(u32::MAX)), vec![2], "inline: at once");
    r.flush(&mut r.lock());
    assert_eq!(prog.sq_flags() & abi::SQ_TASKRUN, 0);
    assert_eq!(uds(&prog.reap(u32::MAX)), vec![1]);
}

/// Reaps the shadow until the program's CQ holds `n` CQEs (the reaper
/// thread's job, done here by hand), for at most 5 s.
fn reap_until(r: &Ring, prog: &Prog, n: u32) {
    let end = Instant::now() + Duration::from_secs(5);
    while prog.ready() < n && Instant::now() < end {
        r.reap_shadow(false);
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(prog.ready(), n, "CQEs published within 5 s");
}

/// A timeout SQE of `ns` nanoseconds on `ts` (kept alive by the caller).
fn timeout(ts: &abi::Timespec, user_data: u64) -> Sqe {
    let mut s = sqe(op::TIMEOUT, user_data);
    s.0[16..24].copy_from_slice(&(ts as *const abi::Timespec as u64).to_le_bytes());
    s.0[24..28].copy_from_slice(&1u32.to_le_bytes());
    s
}

/// Cancellation is the kernel's, by the program's own user_data (the
/// shadow's SQEs carry it unchanged): an IORING_OP_ASYNC_CANCEL of a
/// pending timeout gives the cancel's CQE (res 0) and the timeout's
/// (-ECANCELED), both published; the library forgets the timeout and does
/// not count it as fired (a GETEVENTS waiter is not woken by it:
/// io_uring/timeout.c counts `cq_timeouts` only in `io_timeout_fn` and
/// `io_kill_timeout`, not for a cancel). A timeout that expires (-ETIME)
/// does count.
#[test]
fn a_cancelled_timeout_is_published_and_not_counted_as_fired() {
    let (r, prog) = routed(4, 8, 0);
    let long = abi::Timespec {
        tv_sec: 30,
        tv_nsec: 0,
    };
    prog.push(0, &timeout(&long, 7));
    assert_eq!(enter(&r, 1), 1);
    assert_eq!(r.lock().timeouts.get(&7), Some(&1));
    let mut cancel = sqe(OP_ASYNC_CANCEL, 8);
    // `addr`: the user_data of the request to cancel.
    cancel.0[16..24].copy_from_slice(&7u64.to_le_bytes());
    prog.push(1, &cancel);
    assert_eq!(enter(&r, 1), 1);
    reap_until(&r, &prog, 2);
    let mut got: Vec<(u64, i32)> = prog
        .reap(u32::MAX)
        .iter()
        .map(|c| (c.user_data, c.res))
        .collect();
    got.sort();
    assert_eq!(got, vec![(7, -libc::ECANCELED), (8, 0)]);
    {
        let st = r.lock();
        assert!(st.timeouts.is_empty(), "the timeout ended");
        assert_eq!(st.cq_timeouts, 0, "a cancel is no firing");
    }
    let short = abi::Timespec {
        tv_sec: 0,
        tv_nsec: 1_000_000,
    };
    prog.push(2, &timeout(&short, 9));
    assert_eq!(enter(&r, 1), 1);
    reap_until(&r, &prog, 1);
    let c = prog.reap(u32::MAX)[0];
    assert_eq!((c.user_data, c.res), (9, -libc::ETIME));
    assert_eq!(r.lock().cq_timeouts, 1, "an expiry is a firing");
}

fn pend(ud: u64, cmd: bool, skip: bool) -> Pend {
    Pend {
        ud,
        kernel: None,
        cmd,
        delivered: false,
        dev_error: false,
        skip,
        orphan: false,
    }
}

/// Requests the shadow did not take: one with a device command becomes an
/// orphan (its delivery is then dropped), one without is forgotten;
/// neither is matched to a later shadow CQE with its user_data, and
/// neither counts as in the kernel.
#[test]
fn requests_the_shadow_did_not_take_become_orphans() {
    let (r, prog) = routed(4, 8, 0);
    let mut st = r.lock();
    st.pend.insert(1, pend(5, true, false));
    st.pend.insert(2, pend(6, false, false));
    st.by_ud.entry(5).or_default().push_back(1);
    st.by_ud.entry(6).or_default().push_back(2);
    st.in_kernel = 2;
    r.orphan(&mut st, &[1, 2]);
    assert!(st.pend[&1].orphan);
    assert!(!st.pend.contains_key(&2));
    assert!(st.by_ud.values().all(|q| q.is_empty()));
    assert_eq!(st.in_kernel, 0);
    drop(st);
    // A shadow CQE with user_data 5 is nobody's gated request: posted.
    r.kernel_cqes(
        &[Cqe {
            user_data: 5,
            res: 0,
            flags: 0,
        }],
        false,
    );
    assert_eq!(uds(&prog.reap(u32::MAX)), vec![5]);
    assert!(r.lock().pend[&1].kernel.is_none(), "not matched");
}

/// Gated requests with one user_data are matched oldest first; one the
/// program asked IOSQE_CQE_SKIP_SUCCESS for gets no CQE on success but
/// does on failure (include/uapi/linux/io_uring.h: "don't post CQE if
/// request succeeded").
#[test]
fn shadow_cqes_match_the_oldest_gated_request_and_skip_success() {
    let (r, prog) = routed(4, 8, 0);
    {
        let mut st = r.lock();
        for (k, skip) in [(1, false), (2, true), (3, true)] {
            st.pend.insert(k, pend(5, false, skip));
            st.by_ud.entry(5).or_default().push_back(k);
        }
        st.in_kernel = 3;
    }
    let c = |res| Cqe {
        user_data: 5,
        res,
        flags: 0,
    };
    r.kernel_cqes(&[c(10)], false);
    {
        let st = r.lock();
        assert!(!st.pend.contains_key(&1), "the oldest took it");
        assert_eq!(st.by_ud[&5], [2, 3]);
    }
    r.kernel_cqes(&[c(20), c(-libc::EIO)], false);
    let got: Vec<i32> = prog.reap(u32::MAX).iter().map(|c| c.res).collect();
    assert_eq!(got, vec![10, -libc::EIO], "the skipped success is absent");
    let st = r.lock();
    assert!(st.pend.is_empty() && st.by_ud.is_empty());
    assert_eq!(st.in_kernel, 0);
}

/// The heads and tails are free-running u32 counters (only the slot is
/// masked: include/uapi/linux/io_uring.h's rings, liburing's
/// `io_uring_cq_ready` `tail - head`): SQ fetch, publication and the
/// full-CQ test hold across their wrap past u32::MAX.
#[test]
fn indices_wrap_past_u32_max() {
    let (r, prog) = routed(4, 4, 0);
    let start = u32::MAX - 1;
    *r.sub.lock().unwrap() = start;
    for off in [
        prog.p.sq_off.head,
        prog.p.sq_off.tail,
        prog.p.cq_off.head,
        prog.p.cq_off.tail,
    ] {
        prog.word(off).store(start, Release);
    }
    for i in 0..4 {
        prog.push(i, &nop(u64::from(i)));
    }
    assert_eq!(enter(&r, 4), 4);
    assert_eq!(prog.word(prog.p.sq_off.head).load(Acquire), 2);
    assert_eq!(prog.ready(), 4, "a full CQ across the wrap");
    prog.push(0, &nop(4));
    assert_eq!(enter(&r, 1), 1);
    assert_ne!(prog.sq_flags() & abi::SQ_CQ_OVERFLOW, 0);
    assert_eq!(uds(&prog.reap(u32::MAX)), vec![0, 1, 2, 3]);
    r.flush(&mut r.lock());
    assert_eq!(uds(&prog.reap(u32::MAX)), vec![4]);
    assert_eq!(prog.word(prog.p.cq_off.tail).load(Acquire), 3);
}

/// An IORING_OP_TIMEOUT with a completion count that fires by its count
/// (res 0) while a request it counted still waits for its device command
/// is held, and posted only after that request's CQE: natively it
/// follows the CQEs it counted (io_uring/timeout.c `io_flush_timeouts`,
/// run as they are committed). Only then does it count as fired.
#[test]
fn a_counted_timeout_is_posted_after_the_requests_it_counted() {
    let (r, prog) = routed(4, 8, 0);
    let done = Cqe {
        user_data: 5,
        res: 4096,
        flags: 0,
    };
    {
        let mut st = r.lock();
        st.counted.insert(77, 1);
        st.timeouts.insert(77, 1);
        // The shadow completed request 1; its device command is not yet
        // delivered (the state a device with latency leaves).
        let mut p = pend(5, true, false);
        p.kernel = Some(done);
        st.pend.insert(1, p);
    }
    let fired = Cqe {
        user_data: 77,
        res: 0,
        flags: 0,
    };
    r.kernel_cqes(&[fired], false);
    assert_eq!(prog.ready(), 0, "held behind request 1");
    assert_eq!(r.lock().cq_timeouts, 0);
    {
        // The device delivers: request 1 is published (as `delivered`
        // does), and the batch's post releases the timeout behind it.
        let mut st = r.lock();
        let p = st.pend.remove(&1).expect("pending");
        r.complete(&mut st, p.kernel.expect("completed"), false);
        r.post(&mut st);
        assert_eq!(st.cq_timeouts, 1);
        assert!(st.held.is_empty() && st.counted.is_empty());
    }
    assert_eq!(uds(&prog.reap(u32::MAX)), vec![5, 77]);
}
