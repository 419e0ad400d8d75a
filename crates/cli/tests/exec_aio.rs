//! Issue 24 items 1-2: libaio at the kernel's ABI under `exec`. Each case
//! runs as this test binary's `child_aio` (ignored on its own) three
//! times: natively, under `exec` (the program's own O_DIRECT descriptor
//! moves the data) and under `exec --device optane` (the page-cache twin
//! where it cannot change the result); the three records (every return
//! value, errno, event and the file's final contents) must be identical.
//! The aio calls go through glibc's `syscall()`, as MariaDB's tpool and
//! ioping make them (libaio's exported functions are covered by
//! `exec.rs`, `exec_conformance.rs` and fio in `exec_fio.rs`).
//!
//! Then real programs: fio with `userspace_reap=1` (it reads the ring in
//! memory) and `ioping -A` finish under exec within a bound.

mod common;

use std::ffi::{c_int, c_long, c_void};
use std::path::Path;
use std::time::Duration;

use common::{bin, bounded, exec_device_json, require, stderr, turn, IoEvent, Iocb};
use serde_json::{json, Value};

use common::{run_child, How, CHILD_CASE as CASE, CHILD_FILE as FILE, CHILD_OUT as OUT};
const BLOCK: usize = 4096;
/// IOCB_CMD_* and IOCB_FLAG_RESFD (include/uapi/linux/aio_abi.h).
const PREAD: u16 = 0;
const PWRITE: u16 = 1;
const POLL: u16 = 5;
const RESFD: u32 = 1;
/// io_pgetevents on x86_64 (arch/x86/entry/syscalls/syscall_64.tbl).
const SYS_IO_PGETEVENTS: c_long = 333;
/// No run of a case may take longer (each takes well under a second on a
/// quiet machine; this bounds a hang, not a speed).
const LIMIT: Duration = Duration::from_secs(60);

/// One run of `case` on a fresh 64-block file of 'a' (`common::run_child`).
fn run_case(case: &str, how: How) -> (Value, Vec<u8>, Value) {
    let setup = |f: &std::path::Path| std::fs::write(f, vec![b'a'; 64 * BLOCK]).unwrap();
    run_child("child_aio", case, how, &setup, LIMIT)
}

/// Runs `case` natively, under exec and under exec --device optane;
/// asserts all three agree and that the device served `commands` commands
/// in each exec run (the direct iocbs the kernel accepted and did not fail
/// at once); returns the native record.
fn differential(case: &str, commands: u64) -> Value {
    let _one = turn();
    let (nv, nc, _) = run_case(case, How::Native);
    for how in [How::Exec, How::Device] {
        let (v, c, r) = run_case(case, how);
        assert_eq!(nv, v, "{case}: native (left) and {how:?} (right)");
        assert!(nc == c, "{case}: the final file differs under {how:?}");
        let served = r["cinterrupts"]["exec"]["routing"]["commands"].as_u64();
        assert_eq!(served, Some(commands), "{case} ({how:?}): {r}");
    }
    nv
}

fn sys(n: c_long, a: [usize; 5]) -> (i64, c_int) {
    // SAFETY: an aio system call through glibc's syscall(), as a program
    // makes it; the arguments are the case's own.
    let r = unsafe { libc::syscall(n, a[0], a[1], a[2], a[3], a[4]) };
    let e = if r < 0 {
        std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
    } else {
        0
    };
    (r, e)
}

fn setup(nr: usize) -> usize {
    let mut ctx = 0usize;
    let (r, e) = sys(
        libc::SYS_io_setup,
        [nr, &mut ctx as *mut usize as usize, 0, 0, 0],
    );
    assert_eq!((r, e), (0, 0), "io_setup");
    ctx
}

fn submit(ctx: usize, cbs: &mut [Iocb]) -> (i64, c_int) {
    let mut ptrs: Vec<*mut Iocb> = cbs.iter_mut().map(|c| c as *mut Iocb).collect();
    sys(
        libc::SYS_io_submit,
        [ctx, ptrs.len(), ptrs.as_mut_ptr() as usize, 0, 0],
    )
}

/// Reaps exactly `n` events (waiting for each), as `(aio_data, res)`
/// sorted, each event's obj checked against its iocb.
fn reap(ctx: usize, n: usize, cbs: &[Iocb]) -> Vec<(u64, i64)> {
    let mut ev = vec![IoEvent::default(); n];
    let mut got = 0;
    while got < n {
        let (r, e) = sys(
            libc::SYS_io_getevents,
            [ctx, 1, n - got, ev[got..].as_mut_ptr() as usize, 0],
        );
        assert!(r > 0, "io_getevents: {r} errno {e}");
        got += r as usize;
    }
    let mut out: Vec<(u64, i64)> = ev
        .iter()
        .map(|e| {
            let cb = &cbs[e.data as usize % cbs.len()];
            assert_eq!(e.obj, cb as *const Iocb as u64, "obj is the program's iocb");
            (e.data, e.res)
        })
        .collect();
    out.sort();
    out
}

fn aligned(n: usize, byte: u8) -> *mut u8 {
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: posix_memalign fills p; the memory is leaked (a child).
    assert_eq!(unsafe { libc::posix_memalign(&mut p, 4096, n) }, 0);
    unsafe { std::ptr::write_bytes(p as *mut u8, byte, n) };
    p as *mut u8
}

fn open_direct(file: &Path) -> c_int {
    let c = std::ffi::CString::new(file.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDWR | libc::O_DIRECT) };
    assert!(fd >= 0, "open {file:?}");
    fd
}

fn cb(data: u64, op: u16, fd: c_int, buf: *mut u8, n: usize, off: usize) -> Iocb {
    Iocb {
        data,
        opcode: op,
        fildes: fd as u32,
        buf: buf as u64,
        nbytes: n as u64,
        offset: off as i64,
        ..Iocb::default()
    }
}

#[test]
fn raw_syscall_libaio_submits_and_reaps() {
    let v = differential("raw", 16);
    assert_eq!(v["submit"], json!([16, 0]), "{v}");
    assert_eq!(v["reads"], json!(vec![BLOCK; 8]), "{v}");
}

#[test]
fn a_poll_iocb_stays_in_flight_while_fifteen_reads_complete() {
    let v = differential("inflight", 15);
    assert_eq!(v["submit"], json!([16, 0]), "{v}");
    assert_eq!(v["reads done"], 15, "{v}");
    assert_eq!(v["poll pending"], json!([0, 0]), "{v}");
    assert_eq!(v["poll"].as_array().unwrap().len(), 1, "{v}");
}

#[test]
fn resfd_eventfd_is_signalled_once_per_iocb() {
    let v = differential("resfd", 6);
    assert_eq!(v["count"], 6, "{v}");
    assert_eq!(v["again"], json!([-1, libc::EAGAIN]), "{v}");
}

#[test]
fn the_ring_can_be_reaped_in_user_space() {
    let v = differential("ureap", 8);
    assert_eq!(v["magic"], 0xa10a10a1u32, "{v}");
    assert_eq!(v["events"].as_array().unwrap().len(), 8, "{v}");
}

#[test]
fn io_cancel_is_the_kernels_einval_for_reads_and_einprogress_for_a_poll() {
    let v = differential("cancel", 1);
    assert_eq!(v["cancel read"], json!([-1, libc::EINVAL]), "{v}");
    assert_eq!(v["cancel poll"], json!([-1, libc::EINPROGRESS]), "{v}");
}

#[test]
fn io_pgetevents_with_a_mask() {
    let v = differential("pgetevents", 2);
    assert_eq!(v["bad size"], json!([-1, libc::EINVAL]), "{v}");
    assert_eq!(v["signal let in"], json!([-1, libc::EINTR]), "{v}");
}

#[test]
fn invalid_contexts_and_arguments_are_the_kernels_errors() {
    let v = differential("invalid", 1);
    assert_eq!(v["setup nr 0"], json!([-1, libc::EINVAL]), "{v}");
    assert_eq!(v["getevents bogus"], json!([-1, libc::EINVAL]), "{v}");
    assert_eq!(v["destroy twice"], json!([-1, libc::EINVAL]), "{v}");
}

#[test]
fn io_destroy_wakes_a_blocked_io_getevents_with_einval() {
    let v = differential("destroy-wakes", 0);
    assert_eq!(v["destroy"], json!([0, 0]), "{v}");
    assert_eq!(v["waiter"], json!([-1, libc::EINVAL]), "{v}");
}

#[test]
fn a_forked_child_has_none_of_its_parents_contexts() {
    let v = differential("fork", 1);
    assert_eq!(v["child"], 0, "{v}");
    assert_eq!(v["events"], json!([[0, BLOCK]]), "{v}");
}

#[test]
fn a_misaligned_o_direct_iocb_completes_with_einval() {
    let v = differential("misaligned", 1);
    assert_eq!(
        v["events"],
        json!([[0, -libc::EINVAL], [1, BLOCK], [2, -libc::EINVAL]]),
        "{v}"
    );
}

/// The cases `differential` runs (ignored on their own).
#[test]
#[ignore]
fn child_aio() {
    let Ok(case) = std::env::var(CASE) else {
        return;
    };
    let file = std::path::PathBuf::from(std::env::var(FILE).unwrap());
    let out = std::env::var(OUT).unwrap();
    let fd = open_direct(&file);
    let mut rec = json!({});
    match case.as_str() {
        "raw" => {
            // 8 writes of 'w'..., 8 reads of other blocks, in one call.
            let ctx = setup(32);
            let b = aligned(16 * BLOCK, b'w');
            let mut cbs: Vec<Iocb> = (0..16)
                .map(|i| {
                    let op = if i < 8 { PWRITE } else { PREAD };
                    // SAFETY: within the 16 blocks.
                    let buf = unsafe { b.add(i * BLOCK) };
                    cb(i as u64, op, fd, buf, BLOCK, (i * 2) * BLOCK)
                })
                .collect();
            rec["submit"] = json!(submit(ctx, &mut cbs));
            let ev = reap(ctx, 16, &cbs);
            rec["events"] = json!(ev);
            rec["reads"] = json!(ev[8..].iter().map(|e| e.1).collect::<Vec<_>>());
            rec["destroy"] = json!(sys(libc::SYS_io_destroy, [ctx, 0, 0, 0, 0]));
        }
        "inflight" => {
            // A POLL iocb on an empty pipe (it completes only once the
            // pipe is written) and 15 reads in one call: the reads
            // complete while it waits, so the context holds more than one
            // request in flight and completes them in any order.
            let ctx = setup(32);
            let mut p = [0 as c_int; 2];
            // SAFETY: fills p.
            assert_eq!(unsafe { libc::pipe(p.as_mut_ptr()) }, 0);
            let b = aligned(15 * BLOCK, 0);
            let mut cbs: Vec<Iocb> = (0..16)
                .map(|i| {
                    if i == 0 {
                        let mut c = cb(0, POLL, p[0], std::ptr::null_mut(), 0, 0);
                        c.buf = libc::POLLIN as u64;
                        c
                    } else {
                        // SAFETY: within the 15 blocks.
                        let buf = unsafe { b.add((i - 1) * BLOCK) };
                        cb(i as u64, PREAD, fd, buf, BLOCK, i * BLOCK)
                    }
                })
                .collect();
            rec["submit"] = json!(submit(ctx, &mut cbs));
            let reads = reap(ctx, 15, &cbs);
            rec["reads done"] = json!(reads.iter().filter(|e| e.1 == BLOCK as i64).count());
            // Nothing more yet: the poll waits for the pipe.
            let mut ev = [IoEvent::default(); 1];
            let zero = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            let (r, _) = sys(
                libc::SYS_io_getevents,
                [
                    ctx,
                    0,
                    1,
                    ev.as_mut_ptr() as usize,
                    &zero as *const _ as usize,
                ],
            );
            rec["poll pending"] = json!([r, 0]);
            // SAFETY: one byte into our pipe.
            assert_eq!(
                unsafe { libc::write(p[1], b"x".as_ptr() as *const c_void, 1) },
                1
            );
            let poll = reap(ctx, 1, &cbs);
            rec["poll"] = json!(poll.iter().map(|e| e.0).collect::<Vec<_>>());
        }
        "resfd" => {
            let ctx = setup(16);
            // SAFETY: a new eventfd.
            let efd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK) };
            assert!(efd >= 0);
            let b = aligned(6 * BLOCK, b'r');
            let mut cbs: Vec<Iocb> = (0..6)
                .map(|i| {
                    let op = if i % 2 == 0 { PREAD } else { PWRITE };
                    // SAFETY: within the 6 blocks.
                    let buf = unsafe { b.add(i * BLOCK) };
                    let mut c = cb(i as u64, op, fd, buf, BLOCK, (10 + i) * BLOCK);
                    c.flags = RESFD;
                    c.resfd = efd as u32;
                    c
                })
                .collect();
            rec["submit"] = json!(submit(ctx, &mut cbs));
            rec["events"] = json!(reap(ctx, 6, &cbs));
            // Every event reaped: each one's signal comes (the kernel
            // writes the eventfd just after the event is in the ring, so
            // the last may still be on its way: read until six, bounded),
            // and no more.
            let mut total = 0u64;
            let start = std::time::Instant::now();
            while total < 6 && start.elapsed() < Duration::from_secs(10) {
                let mut n = 0u64;
                // SAFETY: 8 bytes into n.
                let r = unsafe { libc::read(efd, &mut n as *mut u64 as *mut c_void, 8) };
                if r == 8 {
                    total += n;
                } else {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            rec["count"] = json!(total);
            std::thread::sleep(Duration::from_millis(50));
            let mut n = 0u64;
            // SAFETY: 8 bytes into n.
            let r = unsafe { libc::read(efd, &mut n as *mut u64 as *mut c_void, 8) };
            let e = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
            rec["again"] = json!([r, e]);
            // A descriptor that is not an eventfd: EINVAL; a closed one: EBADF.
            let mut bad = [cb(9, PREAD, fd, b, BLOCK, 0)];
            bad[0].flags = RESFD;
            bad[0].resfd = fd as u32;
            rec["not an eventfd"] = json!(submit(ctx, &mut bad));
            bad[0].resfd = 999;
            rec["closed resfd"] = json!(submit(ctx, &mut bad));
        }
        "ureap" => {
            // fio's userspace_reap: the ring's head and tail, read in memory.
            let ctx = setup(16);
            let b = aligned(8 * BLOCK, 0);
            let mut cbs: Vec<Iocb> = (0..8)
                .map(|i| {
                    // SAFETY: within the 8 blocks.
                    let buf = unsafe { b.add(i * BLOCK) };
                    cb(i as u64, PREAD, fd, buf, BLOCK, i * BLOCK)
                })
                .collect();
            rec["submit"] = json!(submit(ctx, &mut cbs));
            let ring = ctx as *mut u32;
            // SAFETY: the context id is the address of struct aio_ring
            // (fs/aio.c): id, nr, head, tail, magic, compat, incompat,
            // header_length, then the events.
            let (nr, magic, compat, incompat, hlen) = unsafe {
                (
                    ring.add(1).read_volatile(),
                    ring.add(4).read_volatile(),
                    ring.add(5).read_volatile(),
                    ring.add(6).read_volatile(),
                    ring.add(7).read_volatile(),
                )
            };
            rec["magic"] = json!(magic);
            rec["header"] = json!([nr, compat, incompat, hlen]);
            let mut events = vec![];
            let start = std::time::Instant::now();
            while events.len() < 8 {
                assert!(
                    start.elapsed() < Duration::from_secs(20),
                    "the ring never filled"
                );
                // SAFETY: as above; the events follow the 32-byte header.
                unsafe {
                    let head = (*(ring.add(2) as *const std::sync::atomic::AtomicU32))
                        .load(std::sync::atomic::Ordering::Acquire);
                    let tail = (*(ring.add(3) as *const std::sync::atomic::AtomicU32))
                        .load(std::sync::atomic::Ordering::Acquire);
                    if head == tail {
                        std::hint::spin_loop();
                        continue;
                    }
                    let e = ((ctx + 32) as *const IoEvent)
                        .add(head as usize)
                        .read_volatile();
                    events.push((e.data, e.res));
                    (*(ring.add(2) as *const std::sync::atomic::AtomicU32))
                        .store((head + 1) % nr, std::sync::atomic::Ordering::Release);
                }
            }
            events.sort();
            rec["events"] = json!(events);
        }
        "cancel" => {
            let ctx = setup(8);
            let b = aligned(BLOCK, 0);
            let mut cbs = [cb(0, PREAD, fd, b, BLOCK, 0)];
            rec["submit"] = json!(submit(ctx, &mut cbs));
            let mut ev = IoEvent::default();
            let p = &mut cbs[0] as *mut Iocb as usize;
            let evp = &mut ev as *mut IoEvent as usize;
            rec["cancel read"] = json!(sys(libc::SYS_io_cancel, [ctx, p, evp, 0, 0]));
            rec["events"] = json!(reap(ctx, 1, &cbs));
            rec["cancel done"] = json!(sys(libc::SYS_io_cancel, [ctx, p, evp, 0, 0]));
            // SAFETY: the iocb's aio_key, through the pointer the call reads.
            unsafe { std::ptr::addr_of_mut!((*(p as *mut Iocb)).key).write_volatile(7) };
            rec["cancel bad key"] = json!(sys(libc::SYS_io_cancel, [ctx, p, evp, 0, 0]));
            rec["cancel bogus ctx"] = json!(sys(libc::SYS_io_cancel, [12345, p, evp, 0, 0]));
            // A POLL iocb can be cancelled (fs/aio.c aio_poll_cancel):
            // EINPROGRESS, then its event comes through the ring.
            let mut pipe = [0 as c_int; 2];
            // SAFETY: fills pipe.
            assert_eq!(unsafe { libc::pipe(pipe.as_mut_ptr()) }, 0);
            let mut poll = [cb(7, POLL, pipe[0], std::ptr::null_mut(), 0, 0)];
            poll[0].buf = libc::POLLIN as u64;
            rec["submit poll"] = json!(submit(ctx, &mut poll));
            let pp = &mut poll[0] as *mut Iocb as usize;
            rec["cancel poll"] = json!(sys(libc::SYS_io_cancel, [ctx, pp, evp, 0, 0]));
            rec["poll event"] = json!(reap(ctx, 1, &poll));
        }
        "pgetevents" => {
            let ctx = setup(8);
            let b = aligned(2 * BLOCK, 0);
            let mut cbs = [
                cb(0, PREAD, fd, b, BLOCK, 0),
                // SAFETY: the second block.
                cb(1, PREAD, fd, unsafe { b.add(BLOCK) }, BLOCK, BLOCK),
            ];
            rec["submit"] = json!(submit(ctx, &mut cbs));
            // SAFETY: sigset_t is plain data, filled by the calls.
            let mut mask: libc::sigset_t = unsafe { std::mem::zeroed() };
            unsafe {
                libc::sigemptyset(&mut mask);
                libc::sigaddset(&mut mask, libc::SIGUSR1);
            }
            let usig = [&mask as *const libc::sigset_t as usize, 8];
            let mut ev = [IoEvent::default(); 2];
            let mut got = 0usize;
            while got < 2 {
                let r = pgetevents(ctx, 2 - got, 2 - got, ev[got..].as_mut_ptr(), &usig);
                assert!(r.0 > 0, "io_pgetevents {r:?}");
                got += r.0 as usize;
            }
            let mut res: Vec<(u64, i64)> = ev.iter().map(|e| (e.data, e.res)).collect();
            res.sort();
            rec["events"] = json!(res);
            let bad = [&mask as *const libc::sigset_t as usize, 7];
            rec["bad size"] = json!(pgetevents(ctx, 0, 1, ev.as_mut_ptr(), &bad));
            rec["bad min"] = json!(pgetevents(ctx, 2, 1, ev.as_mut_ptr(), &usig));
            rec["none"] = json!(pgetevents(ctx, 0, 1, ev.as_mut_ptr(), &usig));
            // A signal pending and blocked, which the call's mask lets in:
            // delivered as the wait begins, it ends it with EINTR (no
            // event is coming: without the mask set atomically with the
            // wait, this would sleep for ever).
            extern "C" fn on_usr1(_: c_int) {}
            // SAFETY: a handler that does nothing; our own thread's mask.
            unsafe {
                libc::signal(libc::SIGUSR1, on_usr1 as *const () as libc::sighandler_t);
                libc::pthread_sigmask(libc::SIG_BLOCK, &mask, std::ptr::null_mut());
                libc::raise(libc::SIGUSR1);
            }
            let mut open: libc::sigset_t = unsafe { std::mem::zeroed() };
            unsafe { libc::sigemptyset(&mut open) };
            let lets_in = [&open as *const libc::sigset_t as usize, 8];
            rec["signal let in"] = json!(pgetevents(ctx, 1, 1, ev.as_mut_ptr(), &lets_in));
        }
        "invalid" => {
            let mut ctx = 0usize;
            let p = &mut ctx as *mut usize as usize;
            rec["setup nr 0"] = json!(sys(libc::SYS_io_setup, [0, p, 0, 0, 0]));
            // SAFETY: our variable, written through the pointer the call reads.
            unsafe { (p as *mut usize).write_volatile(5) };
            rec["setup ctx set"] = json!(sys(libc::SYS_io_setup, [8, p, 0, 0, 0]));
            let mut ev = [IoEvent::default(); 4];
            let evp = ev.as_mut_ptr() as usize;
            rec["getevents bogus"] = json!(sys(libc::SYS_io_getevents, [12345, 0, 4, evp, 0]));
            rec["submit bogus"] = json!(sys(libc::SYS_io_submit, [12345, 0, 0, 0, 0]));
            rec["destroy bogus"] = json!(sys(libc::SYS_io_destroy, [12345, 0, 0, 0, 0]));
            let ctx = setup(8);
            rec["min > nr"] = json!(sys(libc::SYS_io_getevents, [ctx, 3, 2, evp, 0]));
            rec["min < 0"] = json!(sys(libc::SYS_io_getevents, [ctx, usize::MAX, 2, evp, 0]));
            rec["nothing"] = json!(sys(libc::SYS_io_getevents, [ctx, 0, 4, evp, 0]));
            rec["submit nr < 0"] = json!(sys(libc::SYS_io_submit, [ctx, usize::MAX, 0, 0, 0]));
            rec["submit none"] = json!(sys(libc::SYS_io_submit, [ctx, 0, 0, 0, 0]));
            let b = aligned(BLOCK, 0);
            let mut bad = [cb(0, PREAD, fd, b, BLOCK, 0)];
            bad[0].reserved2 = 1;
            rec["reserved2"] = json!(submit(ctx, &mut bad));
            bad[0].reserved2 = 0;
            bad[0].opcode = 99;
            rec["bad opcode"] = json!(submit(ctx, &mut bad));
            bad[0].opcode = PREAD;
            bad[0].fildes = 999;
            rec["bad fd"] = json!(submit(ctx, &mut bad));
            // The second of two refused: the first's count.
            let mut two = [cb(0, PREAD, fd, b, BLOCK, 0), cb(1, 99, fd, b, BLOCK, 0)];
            rec["second refused"] = json!(submit(ctx, &mut two));
            rec["events"] = json!(reap(ctx, 1, &two));
            rec["destroy"] = json!(sys(libc::SYS_io_destroy, [ctx, 0, 0, 0, 0]));
            rec["destroy twice"] = json!(sys(libc::SYS_io_destroy, [ctx, 0, 0, 0, 0]));
            rec["getevents destroyed"] = json!(sys(libc::SYS_io_getevents, [ctx, 0, 4, evp, 0]));
        }
        "destroy-wakes" => {
            // MariaDB's tpool stops its reaper so: a thread blocked in
            // io_getevents with nothing in flight, then io_destroy from
            // another: the waiter returns EINVAL (fs/aio.c: the context is
            // dead), and io_destroy 0.
            let ctx = setup(8);
            let waiter = std::thread::spawn(move || {
                let mut ev = [IoEvent::default(); 1];
                sys(
                    libc::SYS_io_getevents,
                    [ctx, 1, 1, ev.as_mut_ptr() as usize, 0],
                )
            });
            std::thread::sleep(Duration::from_millis(200));
            rec["destroy"] = json!(sys(libc::SYS_io_destroy, [ctx, 0, 0, 0, 0]));
            rec["waiter"] = json!(waiter.join().unwrap());
        }
        "fork" => {
            // The kernel gives a forked child none of its parent's
            // contexts: the parent's id is EINVAL there; the parent's
            // context still works.
            let ctx = setup(8);
            let b = aligned(BLOCK, 0);
            let mut cbs = [cb(0, PREAD, fd, b, BLOCK, 0)];
            // SAFETY: the child makes system calls only, then _exit.
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                let mut ev = [IoEvent::default(); 1];
                let (r, e) = sys(
                    libc::SYS_io_getevents,
                    [ctx, 0, 1, ev.as_mut_ptr() as usize, 0],
                );
                let (r2, e2) = submit(ctx, &mut cbs);
                let code = if (r, e, r2, e2) == (-1, libc::EINVAL, -1, libc::EINVAL) {
                    0
                } else {
                    1
                };
                // SAFETY: ends the child without the harness's handlers.
                unsafe { libc::_exit(code) };
            }
            let mut status = 0;
            // SAFETY: our child.
            unsafe { libc::waitpid(pid, &mut status, 0) };
            rec["child"] = json!(libc::WEXITSTATUS(status));
            rec["submit"] = json!(submit(ctx, &mut cbs));
            rec["events"] = json!(reap(ctx, 1, &cbs));
        }
        "misaligned" => {
            let ctx = setup(8);
            let b = aligned(3 * BLOCK, b'm');
            let mut cbs = [
                cb(0, PWRITE, fd, b, BLOCK, 100),
                // SAFETY: within the 3 blocks.
                cb(1, PWRITE, fd, unsafe { b.add(BLOCK) }, BLOCK, 5 * BLOCK),
                cb(2, PREAD, fd, unsafe { b.add(2 * BLOCK + 1) }, BLOCK, 0),
            ];
            rec["submit"] = json!(submit(ctx, &mut cbs));
            rec["events"] = json!(reap(ctx, 3, &cbs));
        }
        other => panic!("unknown case {other}"),
    }
    std::fs::write(out, serde_json::to_vec(&rec).unwrap()).unwrap();
}

/// `io_pgetevents(ctx, min, nr, events, NULL, usig)` through syscall().
fn pgetevents(
    ctx: usize,
    min: usize,
    nr: usize,
    ev: *mut IoEvent,
    usig: &[usize; 2],
) -> (i64, c_int) {
    // SAFETY: the kernel's arguments; usig is struct __aio_sigset.
    let r = unsafe {
        libc::syscall(
            SYS_IO_PGETEVENTS,
            ctx,
            min,
            nr,
            ev,
            std::ptr::null::<libc::timespec>(),
            usig.as_ptr(),
        )
    };
    let e = if r < 0 {
        std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
    } else {
        0
    };
    (r, e)
}

/// fio's libaio engine with `userspace_reap=1` reads the ring at the
/// context's address (struct aio_ring): it must see the completions there
/// and finish.
#[test]
fn fio_userspace_reap_finishes_under_exec() {
    require("fio", "fio");
    let _one = turn();
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let data = dir.path().join("f");
    std::fs::write(&data, vec![0u8; 4 << 20]).unwrap();
    let job = dir.path().join("ur.fio");
    std::fs::write(
        &job,
        format!(
            "[ur]\nfilename={}\nsize=4m\ndirect=1\nbs=4k\nrw=randread\nioengine=libaio\n\
             iodepth=8\nuserspace_reap=1\niodepth_batch_complete_min=0\nnumber_ios=512\n",
            data.display()
        ),
    )
    .unwrap();
    for device in [false, true] {
        let report = dir.path().join("r.json");
        let mut c = if device {
            exec_device_json(&report)
        } else {
            let mut c = bin();
            c.args(["exec", "--output-format", "json", "-o"])
                .arg(&report);
            c
        };
        c.args(["--", "fio", "--output-format=json"]).arg(&job);
        let b = bounded(c, b"", LIMIT);
        assert!(b.output.status.success(), "{}", stderr(&b.output));
        let fio: Value = serde_json::from_slice(&b.output.stdout).unwrap();
        let ios = fio["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
        assert!(ios >= 512, "device {device}: {ios} reads");
        let r: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
        let reads = &r["cinterrupts"]["exec"]["requests"]["reads"];
        let n: u64 = ["urgent", "barrier", "unmarked"]
            .iter()
            .map(|m| reads[m].as_u64().unwrap())
            .sum();
        assert!(n >= 512, "device {device}: every read routed: {r}");
    }
}

/// ioping -A (libaio through syscall(): its own io_setup/io_submit/
/// io_getevents wrappers) finishes under exec, each request routed.
#[test]
fn ioping_async_finishes_under_exec() {
    require("ioping", "ioping");
    let _one = turn();
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let data = dir.path().join("f");
    std::fs::write(&data, vec![0u8; 1 << 20]).unwrap();
    let report = dir.path().join("r.json");
    let mut c = exec_device_json(&report);
    c.args([
        "--", "ioping", "-A", "-D", "-c", "5", "-i", "0", "-q", "-s", "4k", "-S", "1m",
    ])
    .arg(&data);
    let b = bounded(c, b"", LIMIT);
    assert!(b.output.status.success(), "{}", stderr(&b.output));
    let r: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let reads = &r["cinterrupts"]["exec"]["requests"]["reads"];
    let n: u64 = ["urgent", "barrier", "unmarked"]
        .iter()
        .map(|m| reads[m].as_u64().unwrap())
        .sum();
    assert!(n >= 5, "ioping's reads routed: {r}");
    assert!(
        r["cinterrupts"]["exec"]["routing"]["commands"]
            .as_u64()
            .unwrap()
            >= 5,
        "{r}"
    );
}
