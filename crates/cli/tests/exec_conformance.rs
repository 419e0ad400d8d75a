//! Issue 24: under `cinterrupts exec --device`, the program's own system
//! call, on its own descriptor, moves its data; the emulated device decides
//! only when the completion becomes visible. Each case below runs twice, as
//! this test binary's `child_conf` (ignored on its own): natively, then
//! under `exec --device optane`; the two must agree on every return value
//! and errno, the file offsets and the file's final contents.
//!
//! The files live in Cargo's target tmp directory, on the disk's file
//! system (ext4 on this VM), which enforces O_DIRECT's alignment (tmpfs
//! does not).

mod common;

use std::ffi::{c_int, c_void};
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{turn, IoEvent, Iocb, Libaio};
use serde_json::{json, Value};

use common::{run_child, How, CHILD_CASE as CASE, CHILD_FILE as FILE, CHILD_OUT as OUT};

const BLOCK: usize = 4096;
/// Writers sharing one descriptor, and the blocks each writes.
const WRITERS: usize = 8;
const PER_WRITER: usize = 32;

/// One run of `case` on a fresh file made by `setup`, natively or under
/// `exec --device optane` (`common::run_child`).
fn run_case(case: &str, exec: bool, setup: &dyn Fn(&Path)) -> (Value, Vec<u8>, Value) {
    let how = if exec { How::Device } else { How::Native };
    run_child("child_conf", case, how, setup, Duration::from_secs(120))
}

/// Runs `case` natively and under exec and asserts they agree; returns the
/// native record and contents for the case's own checks, and exec's
/// report.
fn differential(case: &str, setup: &dyn Fn(&Path)) -> (Value, Vec<u8>, Value) {
    let _one = turn();
    let (nv, nc, _) = run_case(case, false, setup);
    let (ev, ec, report) = run_case(case, true, setup);
    assert_eq!(nv, ev, "{case}: native (left) and exec --device (right)");
    assert!(
        nc == ec,
        "{case}: the final file differs ({} bytes native, {} under exec)",
        nc.len(),
        ec.len()
    );
    (nv, nc, report)
}

/// The commands the device served, from exec's report.
fn commands(report: &Value) -> u64 {
    report["cinterrupts"]["exec"]["routing"]["commands"]
        .as_u64()
        .unwrap_or_else(|| panic!("no device commands in {report}"))
}

/// The flush requests exec counted, by mark.
fn flushes(report: &Value) -> u64 {
    let f = &report["cinterrupts"]["exec"]["requests"]["flushes"];
    ["urgent", "barrier", "unmarked"]
        .iter()
        .map(|m| f[m].as_u64().unwrap())
        .sum()
}

/// As [`differential`] for concurrent writers, whose blocks interleave in
/// an order no run repeats: both runs' records must agree, and `check`
/// must hold of each run's file.
fn differential_unordered(case: &str, setup: &dyn Fn(&Path), check: &dyn Fn(&Value, &[u8])) {
    let _one = turn();
    let (nv, nc, _) = run_case(case, false, setup);
    check(&nv, &nc);
    let (ev, ec, _) = run_case(case, true, setup);
    assert_eq!(nv, ev, "{case}: native (left) and exec --device (right)");
    check(&ev, &ec);
}

fn fill(byte: u8, len: usize) -> impl Fn(&Path) {
    move |p: &Path| std::fs::write(p, vec![byte; len]).unwrap()
}

#[test]
fn misaligned_o_direct_is_einval_and_nothing_lands() {
    let (v, c, report) = differential("misaligned", &fill(b'a', 16 * BLOCK));
    // The device served the two aligned calls only: the kernel sends no
    // command for a call it refuses.
    assert_eq!(commands(&report), 2, "{report}");
    // Every misaligned call is the kernel's EINVAL.
    for r in v["calls"].as_array().unwrap() {
        if r["name"].as_str().unwrap().starts_with("misaligned") {
            assert_eq!(r["ret"], -1, "{r}");
            assert_eq!(r["errno"], libc::EINVAL, "{r}");
        }
    }
    assert!(c[..15 * BLOCK].iter().all(|&b| b == b'a'), "nothing landed");
    assert!(
        c[15 * BLOCK..].iter().all(|&b| b == b'z'),
        "the aligned write"
    );
}

#[test]
fn o_append_writes_append() {
    let (v, c, _) = differential("append", &fill(b'a', 2 * BLOCK));
    assert_eq!(c.len(), 4 * BLOCK, "{v}");
    assert!(c[..2 * BLOCK].iter().all(|&b| b == b'a'));
    assert!(c[2 * BLOCK..3 * BLOCK].iter().all(|&b| b == b'b'));
    assert!(c[3 * BLOCK..].iter().all(|&b| b == b'c'));
}

#[test]
fn o_append_set_by_fcntl_after_a_write_appends() {
    let (v, c, _) = differential("setfl-append", &fill(b'a', 2 * BLOCK));
    assert_eq!(c.len(), 3 * BLOCK, "{v}");
    assert!(c[..BLOCK].iter().all(|&b| b == b'b'));
    assert!(c[BLOCK..2 * BLOCK].iter().all(|&b| b == b'a'));
    assert!(c[2 * BLOCK..].iter().all(|&b| b == b'c'));
}

/// Issue 24 item 3: a descriptor closed where the library does not see it
/// (`syscall(SYS_close)`, `fclose(fdopen(fd))`) or replaced (`dup2`), its
/// number then reused for another file: a write on the number lands in the
/// new file (a stale cached twin would write the old one).
fn reused_number_writes_the_new_file(case: &str) {
    let (v, c, _) = differential(case, &fill(b'a', 2 * BLOCK));
    assert_eq!(v["same number"], true, "{v}");
    assert!(c[..BLOCK].iter().all(|&b| b == b'x'), "{case}: A's write");
    assert!(c[BLOCK..].iter().all(|&b| b == b'a'), "{case}: A unchanged");
    assert_eq!(v["b"], json!(["y", "b"]), "{case}: B has the write: {v}");
}

#[test]
fn a_number_reused_after_a_raw_close_writes_the_new_file() {
    reused_number_writes_the_new_file("reuse-syscall-close");
}

/// A close no library sees (the system call made by the program itself,
/// as a statically built helper or a runtime with its own system calls
/// would): only the check of the cached state at each call finds it.
#[test]
fn a_number_reused_after_an_unseen_close_writes_the_new_file() {
    reused_number_writes_the_new_file("reuse-asm-close");
}

#[test]
fn a_number_reused_after_fclose_writes_the_new_file() {
    reused_number_writes_the_new_file("reuse-fclose");
}

#[test]
fn a_number_replaced_by_dup2_writes_the_new_file() {
    reused_number_writes_the_new_file("reuse-dup2");
}

/// The same file reopened read-only on the number after an unseen close: a
/// write is the kernel's EBADF (a stale read-write twin would write it).
#[test]
fn the_same_file_reopened_read_only_after_an_unseen_close_refuses_a_write() {
    let (v, c, _) = differential("reopen-rdonly", &fill(b'a', 2 * BLOCK));
    assert_eq!(v["same number"], true, "{v}");
    let calls = v["calls"].as_array().unwrap();
    let last = calls.last().unwrap();
    assert_eq!(last["ret"], -1, "{v}");
    assert_eq!(last["errno"], libc::EBADF, "{v}");
    assert!(c[..BLOCK].iter().all(|&b| b == b'x'));
    assert!(c[BLOCK..].iter().all(|&b| b == b'a'));
}

/// The same with `syscall(SYS_fcntl)`, which the library does not
/// interpose: the check of the cached flags at the next call finds it.
#[test]
fn o_append_set_by_a_raw_fcntl_after_a_write_appends() {
    let (v, c, _) = differential("setfl-append-raw", &fill(b'a', 2 * BLOCK));
    assert_eq!(c.len(), 3 * BLOCK, "{v}");
    assert!(c[..BLOCK].iter().all(|&b| b == b'b'));
    assert!(c[BLOCK..2 * BLOCK].iter().all(|&b| b == b'a'));
    assert!(c[2 * BLOCK..].iter().all(|&b| b == b'c'));
}

#[test]
fn o_append_at_a_misaligned_end_is_the_kernels() {
    differential("append", &fill(b'a', 5000));
}

#[test]
fn threads_writing_one_shared_descriptor_lose_nothing() {
    differential_unordered("threads", &fill(b'a', 0), &shared_writers_intact);
}

#[test]
fn processes_writing_one_shared_descriptor_lose_nothing() {
    differential_unordered("forks", &fill(b'a', 0), &shared_writers_intact);
}

/// Every writer's blocks are in the file exactly once, in its own order,
/// and the shared offset is at their end.
fn shared_writers_intact(v: &Value, c: &[u8]) {
    let total = WRITERS * PER_WRITER * BLOCK;
    assert_eq!(v["offset"], total as i64, "{v}");
    assert_eq!(c.len(), total);
    let mut seen = vec![vec![0u32; PER_WRITER]; WRITERS];
    let mut last: [Option<usize>; WRITERS] = [None; WRITERS];
    for b in c.chunks(BLOCK) {
        let (w, k) = (b[0] as usize, b[1] as usize);
        assert!(w < WRITERS && k < PER_WRITER, "a stray block");
        assert!(b[2..].iter().all(|&x| x == (w * 31 + k) as u8));
        seen[w][k] += 1;
        assert!(
            last[w].map_or(true, |l| l < k),
            "writer {w}'s blocks in order"
        );
        last[w] = Some(k);
    }
    assert!(seen.iter().flatten().all(|&n| n == 1), "each block once");
}

#[test]
fn o_dsync_writes_are_durable_at_return() {
    let (v, c, report) = differential("dsync", &fill(b'a', 0));
    // Each of the 5 synchronous writes is followed by a flush command.
    assert_eq!((commands(&report), flushes(&report)), (10, 5), "{report}");
    assert_eq!(c.len(), 24 * BLOCK, "{v}");
    assert!(c.iter().all(|&b| b == b'd'));
    // cachestat (Linux 6.5): no page of the file dirty or under writeback
    // once the O_DSYNC/O_SYNC/RWF_DSYNC writes returned.
    for r in v["dirty"].as_array().unwrap() {
        assert!(r == 0 || r == -1, "{v}");
    }
}

#[test]
fn libaio_misaligned_is_einval_and_rwf_dsync_is_durable() {
    common::require_library(c"libaio.so.1", "libaio1");
    let (v, c, report) = differential("aio", &fill(b'a', 8 * BLOCK));
    // Only the aligned write reached the device.
    assert_eq!(commands(&report), 1, "{report}");
    assert_eq!(
        v["events"],
        json!([[1, -libc::EINVAL], [2, BLOCK], [3, -libc::EINVAL]])
    );
    assert_eq!(v["dirty"], 0, "{v}");
    assert!(c[..BLOCK].iter().all(|&b| b == b'a'), "nothing landed");
    assert!(c[4 * BLOCK..5 * BLOCK].iter().all(|&b| b == b'w'));
}

#[test]
fn a_read_at_the_end_of_the_file_is_short_then_empty() {
    let (v, _, report) = differential("eof", &fill(b'e', 10_000));
    // Commands for the reads that moved data only (none for EBADF).
    assert_eq!(commands(&report), 3, "{report}");
    let rets: Vec<i64> = v["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["ret"].as_i64().unwrap())
        .collect();
    assert_eq!(rets, [1808, 0, 0, 1808, 10_000, 0, -1], "{v}");
}

/// Every error the kernel returns for a direct call, returned as it is:
/// EBADF (a closed number, a write on a read-only descriptor, a read on a
/// write-only one), EINVAL (a negative offset, more than IOV_MAX vectors),
/// EFAULT (an aligned buffer the program cannot touch), a zero-length
/// write's 0; and an O_DIRECT open of a directory (EINVAL on ext4).
#[test]
fn every_error_of_a_direct_call_is_the_kernels() {
    let (v, c, report) = differential("errors", &fill(b'a', 4 * BLOCK));
    let by = |name: &str| {
        let calls = v["calls"].as_array().unwrap();
        let r = calls.iter().find(|r| r["name"] == name).unwrap();
        (r["ret"].as_i64().unwrap(), r["errno"].as_i64().unwrap())
    };
    let e = |n: c_int| (-1, i64::from(n));
    assert_eq!(by("pread closed"), e(libc::EBADF), "{v}");
    assert_eq!(by("pwrite read-only"), e(libc::EBADF), "{v}");
    assert_eq!(by("pread write-only"), e(libc::EBADF), "{v}");
    assert_eq!(by("pread negative offset"), e(libc::EINVAL), "{v}");
    assert_eq!(by("preadv IOV_MAX + 1"), e(libc::EINVAL), "{v}");
    assert_eq!(by("pwrite unreadable buffer"), e(libc::EFAULT), "{v}");
    assert_eq!(by("pread unwritable buffer"), e(libc::EFAULT), "{v}");
    assert_eq!(by("pwrite 0 bytes").0, 0, "{v}");
    assert_eq!(by("open a directory O_DIRECT"), e(libc::EINVAL), "{v}");
    assert!(c.iter().all(|&b| b == b'a'), "nothing landed");
    // The device saw the one read that moved data, and the two calls whose
    // buffer faulted: a positioned call's command is posted before its data
    // moves (through the page-cache twin for a read, the program's own
    // descriptor for a write), so that the copy overlaps the device's
    // service (`route::blocking_at`), and a fault is found only as the
    // data moves (the read is then repeated on the program's own
    // descriptor: `fd::faulted`). Their results are the kernel's all the
    // same. No command for the refused calls or the zero-length write.
    assert_eq!(commands(&report), 3, "{report}");
}

/// Writing past the end leaves a hole that reads as zeros; a truncation,
/// a punched hole and an extending fallocate read as the kernel's; the
/// sizes after each step agree.
#[test]
fn holes_truncation_and_fallocate_read_as_the_kernels() {
    let (v, c, _) = differential("extend", &fill(b'a', 2 * BLOCK));
    let s: Vec<i64> = v["sizes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect();
    let b = BLOCK as i64;
    assert_eq!(s, [6 * b, 3 * b, 3 * b, 8 * b], "{v}");
    assert_eq!(c.len(), 8 * BLOCK);
    assert!(c[..BLOCK].iter().all(|&x| x == 0), "the punched hole");
    assert!(c[BLOCK..2 * BLOCK].iter().all(|&x| x == b'a'));
    assert!(c[2 * BLOCK..].iter().all(|&x| x == 0), "holes and the cut");
}

/// RLIMIT_FSIZE applies to the program's writes as the kernel applies it:
/// a write straddling the limit is short, one at the limit EFBIG (SIGXFSZ
/// ignored), a read past it unaffected.
#[test]
fn the_file_size_limit_cuts_writes_as_the_kernel_does() {
    let (v, c, _) = differential("fsize", &fill(b'a', 2 * BLOCK));
    let rets: Vec<(i64, i64)> = v["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["ret"].as_i64().unwrap(), r["errno"].as_i64().unwrap()))
        .collect();
    let b = BLOCK as i64;
    let efbig = (-1, i64::from(libc::EFBIG));
    assert_eq!(rets, [(b, 0), efbig, efbig, (2 * b, 0)], "{v}");
    assert_eq!(c.len(), 3 * BLOCK, "the file ends at the limit");
    assert!(c[2 * BLOCK..].iter().all(|&x| x == b'f'));
}

/// preadv2/pwritev2's flags as the kernel takes them: RWF_HIPRI without
/// polled queues reads normally, RWF_APPEND appends whatever the offset,
/// offset -1 uses and moves the file offset, an unknown flag is
/// EOPNOTSUPP (bit 30: unassigned in Linux 6.18's
/// include/uapi/linux/fs.h, whose flags run to 0x100, RWF_NOSIGNAL; 0x20
/// and 0x40 are the authors' marks under exec).
#[test]
fn rwf_flags_and_offset_minus_one_are_the_kernels() {
    let (v, c, _) = differential("rwf", &fill(b'a', 2 * BLOCK));
    let rets: Vec<(i64, i64, i64)> = v["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let g = |k: &str| r[k].as_i64().unwrap();
            (g("ret"), g("errno"), g("offset"))
        })
        .collect();
    let b = BLOCK as i64;
    let nope = i64::from(libc::EOPNOTSUPP);
    assert_eq!(
        rets,
        [
            (b, 0, 0),
            (b, 0, 0),
            (b, 0, b),
            (-1, nope, b),
            (b, 0, 2 * b)
        ],
        "{v}"
    );
    assert_eq!(c.len(), 3 * BLOCK);
    assert!(c[2 * BLOCK..].iter().all(|&x| x == b'r'), "appended");
}

/// RWF 0x20 and 0x40, the authors' RWF_URGENT and RWF_BARRIER, are this
/// kernel's RWF_NOAPPEND (Linux 6.9) and RWF_ATOMIC (6.11): under exec's
/// default for such a kernel (`--rwf-marks kernel`) they reach the kernel
/// as the program passed them, so a positioned write on an O_APPEND
/// descriptor with 0x20, and an atomic write, do what they do natively
/// (on this VM's 6.18 and ext4: at the offset given; EOPNOTSUPP). Under
/// the authors' reading they would append and succeed.
#[test]
fn rwf_bits_the_kernel_owns_keep_their_meaning() {
    let (v, c, report) = differential("rwf-today", &fill(b'a', 2 * BLOCK));
    assert_eq!(
        report["cinterrupts"]["exec"]["rwf_marks"], "kernel",
        "{report}"
    );
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    if exec::RwfMarks::for_kernel(release.trim()) == exec::RwfMarks::Kernel {
        // RWF_NOAPPEND: the write landed at offset 0, the file kept its size.
        assert_eq!(c.len(), 2 * BLOCK, "{v}");
        assert!(c[..BLOCK].iter().all(|&x| x == b'n'), "{v}");
    }
}

// --- issue 38 item 6: the page-cache twin changes nothing --------------------

/// exec_conformance_twin.c: a program of its own, in C, that prints each
/// call's result (libaio and io_uring as a C program calls them).
const TWIN_PROGRAM: &str = include_str!("exec_conformance_twin.c");

/// How many times each twin case runs (issue 38: each fixed class is run
/// repeatedly, so that an answer that depends on timing shows).
const TWIN_ROUNDS: usize = 3;

/// The program in `mode` on a fresh file of 4 blocks of `a`, natively,
/// under `exec` and under `exec --device optane`, [`TWIN_ROUNDS`] times:
/// every line it prints must agree. The native output, and the last
/// device run's report.
fn twin_runs(mode: &str) -> (String, Value) {
    use std::process::Command;
    let _one = turn();
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let exe = common::compile_c(dir.path(), "twin", TWIN_PROGRAM, &["-O1", "-Wall", "-ldl"]);
    let file = dir.path().join("data");
    let rep = dir.path().join("report.json");
    let mut native = None;
    let mut report = Value::Null;
    for _ in 0..TWIN_ROUNDS {
        for how in [How::Native, How::Exec, How::Device] {
            std::fs::write(&file, vec![b'a'; 4 * BLOCK]).unwrap();
            let mut cmd = match how {
                How::Native => Command::new(&exe),
                How::Exec => {
                    let mut c = common::bin();
                    c.args(["exec", "--output-format", "json", "-o"])
                        .arg(&rep)
                        .arg("--")
                        .arg(&exe);
                    c
                }
                How::Device => {
                    let mut c = common::exec_device_json(&rep);
                    c.arg("--").arg(&exe);
                    c
                }
            };
            cmd.arg(mode).arg(&file);
            let o = common::output_within(&mut cmd, Duration::from_secs(60));
            let out = common::stdout(&o);
            assert!(
                o.status.success(),
                "{mode} ({how:?}): {out}\n{}",
                common::stderr(&o)
            );
            match &native {
                None => native = Some(out),
                Some(n) => {
                    assert_eq!(
                        without_blocks(n),
                        without_blocks(&out),
                        "{mode}: native (left) and {how:?} (right)"
                    );
                    // st_blocks: the same, or one 4 KiB block more. Open
                    // (issue 38 item 6): under plain exec, at load (two
                    // spinners beside the suite), 104 against native's 96
                    // once in about ten runs, 2026-12-07; natively 96 in 15
                    // of 15 runs at the same load. Not yet explained.
                    if let (Some(a), Some(b)) = (blocks(n), blocks(&out)) {
                        assert!(
                            b >= a && b <= a + 8,
                            "{mode}: st_blocks native {a}, {how:?} {b}\n{out}"
                        );
                    }
                }
            }
            if how == How::Device {
                report = serde_json::from_slice(&std::fs::read(&rep).unwrap()).unwrap();
            }
        }
    }
    (native.unwrap(), report)
}

/// The program's output without st_blocks's value (compared apart, by
/// [`blocks`]).
fn without_blocks(out: &str) -> String {
    out.lines()
        .map(|l| match l.split_once(" st_blocks ") {
            Some((head, _)) => format!("{head} st_blocks _"),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The st_blocks value the program printed, if it printed one.
fn blocks(out: &str) -> Option<u64> {
    out.lines()
        .find_map(|l| l.split_once(" st_blocks ")?.1.trim().parse().ok())
}

/// The value a line `NAME VALUE` of the program's output gives.
fn line_value(out: &str, name: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no line {name:?} in {out}"))
        .to_string()
}

/// Each of the eight vectored forms, and pread/pwrite of two pages, whose
/// second page is PROT_NONE or unmapped, return what the kernel's O_DIRECT
/// returns (on this VM's 6.18 and ext4: EFAULT, where a read through the
/// page cache returns 4096), and leave the file and the program's buffer as
/// it does; the reads that could be served were served by the device.
#[test]
fn a_partly_unreachable_buffer_is_the_kernels_answer_in_every_form() {
    common::require_library(c"libaio.so.1", "libaio1");
    let (out, report) = twin_runs("fault");
    let forms = [
        "preadv",
        "pwritev",
        "preadv2",
        "pwritev2",
        "libaio PREADV",
        "libaio PWRITEV",
        "io_uring READV",
        "io_uring WRITEV",
    ];
    for how in ["PROT_NONE", "unmapped"] {
        for f in forms {
            let v: i64 = line_value(&out, &format!("{how} {f}")).parse().unwrap();
            // The kernel's own answer: never the whole 8 KiB.
            assert!(v < 2 * BLOCK as i64, "{how} {f}: {v}\n{out}");
        }
    }
    assert_eq!(line_value(&out, "good preadv"), (2 * BLOCK).to_string());
    assert!(commands(&report) > 0, "{report}");
}

/// O_DIRECT writes of every form leave no page of the file dirty at their
/// return, and none dirty or under write-back after fsync (cachestat), and
/// the file's st_size is the kernel's and its st_blocks the kernel's or one
/// block more (an open difference, see `twin_runs`), under exec and exec
/// --device as natively.
///
/// What differs from native (issue 38 item 6), not compared: a blocking
/// write under --device moves through the page-cache twin (so that it
/// completes at the profile's time, not this disk's), which starts the
/// write-back of its pages before it returns (`fd::written`:
/// sync_file_range WAIT_BEFORE|WRITE) but does not wait for it; so pages
/// may still be under write-back at the check (native: none, O_DIRECT
/// wrote the blocks before returning), and clean pages stay cached until a
/// later write on the descriptor finds them written, or its close (native:
/// invalidated at once). The C program prints the write-back count on
/// stderr.
#[test]
fn o_direct_writes_leave_no_dirty_page_and_allocate_as_natively() {
    common::require_library(c"libaio.so.1", "libaio1");
    let (out, report) = twin_runs("dirty");
    let d: i64 = line_value(&out, "dirty pages").parse().unwrap();
    assert!(d == 0 || d == -1, "{out}");
    let w: i64 = line_value(&out, "dirty or writeback pages after fsync")
        .parse()
        .unwrap();
    assert!(w == 0 || w == -1, "{out}");
    assert!(commands(&report) >= 7, "{report}");
}

/// The twin's descriptor takes no number the program's next open() would
/// get, and none of its RLIMIT_NOFILE headroom when the program lowers the
/// limit (the twin then goes just above it).
#[test]
fn twins_take_no_number_the_program_would_get() {
    common::require_library(c"libaio.so.1", "libaio1");
    let (out, report) = twin_runs("fds");
    assert_eq!(line_value(&out, "next open"), "1", "{out}");
    assert!(commands(&report) >= 3, "{report}");
}

// --- the child ---------------------------------------------------------------

struct Rec(Vec<Value>);

impl Rec {
    fn call(&mut self, name: &str, ret: isize, fd: c_int) {
        let errno = if ret < 0 {
            std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
        } else {
            0
        };
        // SAFETY: lseek takes no pointer.
        let offset = unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) };
        self.0
            .push(json!({"name": name, "ret": ret, "errno": errno, "offset": offset}));
    }
}

/// A 4 KiB-aligned buffer of `n` bytes of `byte`, leaked (the child exits).
fn aligned(n: usize, byte: u8) -> *mut u8 {
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: posix_memalign fills p; we write n bytes into it.
    unsafe {
        assert_eq!(libc::posix_memalign(&mut p, BLOCK, n + BLOCK), 0);
        std::ptr::write_bytes(p as *mut u8, byte, n + BLOCK);
    }
    p as *mut u8
}

fn open(path: &Path, flags: c_int) -> c_int {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    let fd = unsafe { libc::open(c.as_ptr(), flags, 0o644) };
    assert!(fd >= 0, "open: {}", std::io::Error::last_os_error());
    fd
}

/// Dirty and writeback pages of the whole file (cachestat, Linux 6.5);
/// -1 when the kernel has no cachestat.
fn dirty(fd: c_int) -> i64 {
    #[repr(C)]
    struct Range {
        off: u64,
        len: u64,
    }
    #[repr(C)]
    #[derive(Default)]
    struct Stat {
        cache: u64,
        dirty: u64,
        writeback: u64,
        evicted: u64,
        recently_evicted: u64,
    }
    const SYS_CACHESTAT: libc::c_long = 451;
    let range = Range { off: 0, len: 0 };
    let mut st = Stat::default();
    // SAFETY: cachestat reads the range and fills the stat.
    let r = unsafe { libc::syscall(SYS_CACHESTAT, fd, &range, &mut st, 0) };
    if r != 0 {
        return -1;
    }
    (st.dirty + st.writeback) as i64
}

#[test]
#[ignore]
fn child_conf() {
    let (Ok(case), Ok(file), Ok(out)) =
        (std::env::var(CASE), std::env::var(FILE), std::env::var(OUT))
    else {
        return;
    };
    let file = PathBuf::from(file);
    let mut rec = Rec(Vec::new());
    let mut extra = json!({});
    let direct = libc::O_DIRECT;
    // SAFETY (the whole block): the program's own system calls on its own
    // descriptors and buffers of the sizes given.
    unsafe {
        match case.as_str() {
            "misaligned" => {
                let fd = open(&file, libc::O_RDWR | direct);
                let b = aligned(2 * BLOCK, b'x');
                let w = |p: *mut u8, n, off| libc::pwrite(fd, p as *const c_void, n, off);
                let r = |p: *mut u8, n, off| libc::pread(fd, p as *mut c_void, n, off);
                rec.call("misaligned pwrite offset", w(b, BLOCK, 100), fd);
                rec.call("misaligned pwrite length", w(b, 100, 0), fd);
                rec.call("misaligned pwrite buffer", w(b.add(1), BLOCK, 0), fd);
                rec.call("misaligned pread offset", r(b, BLOCK, 100), fd);
                rec.call("misaligned pread length", r(b, 100, 0), fd);
                rec.call("misaligned pread buffer", r(b.add(1), BLOCK, 0), fd);
                let iov = [
                    libc::iovec {
                        iov_base: b as *mut c_void,
                        iov_len: BLOCK,
                    },
                    libc::iovec {
                        iov_base: b.add(BLOCK) as *mut c_void,
                        iov_len: 10,
                    },
                ];
                rec.call(
                    "misaligned pwritev length",
                    libc::pwritev(fd, iov.as_ptr(), 2, 0),
                    fd,
                );
                rec.call(
                    "misaligned pwritev2 length",
                    libc::pwritev2(fd, iov.as_ptr(), 2, 0, 0),
                    fd,
                );
                rec.call(
                    "lseek 100",
                    libc::lseek(fd, 100, libc::SEEK_SET) as isize,
                    fd,
                );
                rec.call(
                    "misaligned write at offset 100",
                    libc::write(fd, b as *const c_void, BLOCK),
                    fd,
                );
                rec.call(
                    "misaligned read at offset 100",
                    libc::read(fd, b as *mut c_void, BLOCK),
                    fd,
                );
                rec.call("lseek 0", libc::lseek(fd, 0, libc::SEEK_SET) as isize, fd);
                rec.call(
                    "misaligned write length",
                    libc::write(fd, b as *const c_void, 10),
                    fd,
                );
                std::ptr::write_bytes(b, b'z', BLOCK);
                rec.call("aligned pwrite", w(b, BLOCK, 15 * BLOCK as i64), fd);
                rec.call("aligned pread", r(b, BLOCK, 0), fd);
                extra["read back"] = json!(*b as char);
            }
            "append" => {
                let fd = open(&file, libc::O_WRONLY | libc::O_APPEND | direct);
                let b = aligned(BLOCK, b'b');
                rec.call("write", libc::write(fd, b as *const c_void, BLOCK), fd);
                std::ptr::write_bytes(b, b'c', BLOCK);
                // Linux: pwrite on an O_APPEND descriptor appends.
                rec.call(
                    "pwrite at 0",
                    libc::pwrite(fd, b as *const c_void, BLOCK, 0),
                    fd,
                );
            }
            "setfl-append" | "setfl-append-raw" => {
                let fd = open(&file, libc::O_WRONLY | direct);
                let b = aligned(BLOCK, b'b');
                rec.call(
                    "pwrite at 0",
                    libc::pwrite(fd, b as *const c_void, BLOCK, 0),
                    fd,
                );
                let fl = libc::fcntl(fd, libc::F_GETFL);
                let set = if case == "setfl-append" {
                    libc::fcntl(fd, libc::F_SETFL, fl | libc::O_APPEND) as isize
                } else {
                    let fl = (fl | libc::O_APPEND) as libc::c_long;
                    libc::syscall(libc::SYS_fcntl, fd, libc::F_SETFL, fl) as isize
                };
                rec.call("F_SETFL O_APPEND", set, fd);
                std::ptr::write_bytes(b, b'c', BLOCK);
                rec.call(
                    "pwrite at 0, appending",
                    libc::pwrite(fd, b as *const c_void, BLOCK, 0),
                    fd,
                );
            }
            "threads" | "forks" => {
                let fd = open(&file, libc::O_RDWR | libc::O_TRUNC | direct);
                let bufs: Vec<Vec<usize>> = (0..WRITERS)
                    .map(|w| {
                        (0..PER_WRITER)
                            .map(|k| {
                                let b = aligned(BLOCK, (w * 31 + k) as u8);
                                *b = w as u8;
                                *b.add(1) = k as u8;
                                b as usize
                            })
                            .collect()
                    })
                    .collect();
                let writer = move |blocks: &[usize]| {
                    blocks
                        .iter()
                        .all(|&b| libc::write(fd, b as *const c_void, BLOCK) == BLOCK as isize)
                };
                if case == "threads" {
                    let ok = std::thread::scope(|s| {
                        let hs: Vec<_> = bufs.iter().map(|b| s.spawn(|| writer(b))).collect();
                        hs.into_iter().all(|h| h.join().unwrap())
                    });
                    extra["all written"] = json!(ok);
                } else {
                    let mut pids = Vec::new();
                    for b in &bufs {
                        let pid = libc::fork();
                        assert!(pid >= 0);
                        if pid == 0 {
                            let ok = writer(b);
                            libc::exit(if ok { 0 } else { 1 });
                        }
                        pids.push(pid);
                    }
                    let ok = pids.into_iter().all(|p| {
                        let mut st = 0;
                        libc::waitpid(p, &mut st, 0) == p
                            && libc::WIFEXITED(st)
                            && libc::WEXITSTATUS(st) == 0
                    });
                    extra["all written"] = json!(ok);
                }
                extra["offset"] = json!(libc::lseek(fd, 0, libc::SEEK_CUR));
            }
            "dsync" => {
                let b = aligned(8 * BLOCK, b'd');
                let mut d = Vec::new();
                for (name, flags) in [("O_DSYNC", libc::O_DSYNC), ("O_SYNC", libc::O_SYNC)] {
                    let fd = open(&file, libc::O_WRONLY | flags | direct);
                    let at = if flags == libc::O_DSYNC { 0 } else { 8 };
                    let off = (at * BLOCK) as i64;
                    let n = 4 * BLOCK;
                    rec.call(
                        &format!("{name} pwrite"),
                        libc::pwrite(fd, b as *const c_void, n, off),
                        fd,
                    );
                    libc::lseek(fd, off + n as i64, libc::SEEK_SET);
                    rec.call(
                        &format!("{name} write"),
                        libc::write(fd, b as *const c_void, n),
                        fd,
                    );
                    d.push(dirty(fd));
                    libc::close(fd);
                }
                let fd = open(&file, libc::O_WRONLY | direct);
                let iov = libc::iovec {
                    iov_base: b as *mut c_void,
                    iov_len: 8 * BLOCK,
                };
                const RWF_DSYNC: c_int = 0x02;
                rec.call(
                    "pwritev2 RWF_DSYNC",
                    libc::pwritev2(fd, &iov, 1, (16 * BLOCK) as i64, RWF_DSYNC),
                    fd,
                );
                d.push(dirty(fd));
                extra["dirty"] = json!(d);
            }
            "eof" => {
                let fd = open(&file, libc::O_RDONLY | direct);
                let b = aligned(4 * BLOCK, 0);
                let r = |n, off| libc::pread(fd, b as *mut c_void, n, off);
                rec.call("pread across the end", r(2 * BLOCK, 2 * BLOCK as i64), fd);
                rec.call("pread at the aligned end", r(BLOCK, 3 * BLOCK as i64), fd);
                rec.call("pread past the end", r(BLOCK, 8 * BLOCK as i64), fd);
                libc::lseek(fd, 2 * BLOCK as i64, libc::SEEK_SET);
                rec.call(
                    "read across the end",
                    libc::read(fd, b as *mut c_void, 2 * BLOCK),
                    fd,
                );
                libc::lseek(fd, 0, libc::SEEK_SET);
                rec.call(
                    "read the file",
                    libc::read(fd, b as *mut c_void, 4 * BLOCK),
                    fd,
                );
                rec.call(
                    "read at the end",
                    libc::read(fd, b as *mut c_void, BLOCK),
                    fd,
                );
                rec.call(
                    "pwrite on a read-only descriptor",
                    libc::pwrite(fd, b as *const c_void, BLOCK, 0),
                    fd,
                );
            }
            "reuse-syscall-close"
            | "reuse-asm-close"
            | "reuse-fclose"
            | "reuse-dup2"
            | "reopen-rdonly" => {
                // A: the case's file, written (so its entry and twin exist
                // under exec); then its number closed or replaced in the
                // case's way; B (another file) on the same number.
                let other = file.with_extension("b");
                std::fs::write(&other, vec![b'b'; 2 * BLOCK]).unwrap();
                let a = open(&file, libc::O_RDWR | direct);
                let buf = aligned(BLOCK, b'x');
                rec.call(
                    "pwrite A",
                    libc::pwrite(a, buf as *const c_void, BLOCK, 0),
                    a,
                );
                let fd = match case.as_str() {
                    "reuse-syscall-close" => {
                        rec.call(
                            "SYS_close A",
                            libc::syscall(libc::SYS_close, a) as isize,
                            -1,
                        );
                        open(&other, libc::O_RDWR | direct)
                    }
                    "reuse-asm-close" => {
                        rec.call("close A unseen", unseen_close(a), -1);
                        open(&other, libc::O_RDWR | direct)
                    }
                    "reuse-fclose" => {
                        let f = libc::fdopen(a, c"r+".as_ptr());
                        assert!(!f.is_null(), "fdopen");
                        rec.call("fclose A", libc::fclose(f) as isize, -1);
                        open(&other, libc::O_RDWR | direct)
                    }
                    "reuse-dup2" => {
                        let b = open(&other, libc::O_RDWR | direct);
                        rec.call("dup2 B onto A", libc::dup2(b, a) as isize, -1);
                        libc::close(b);
                        a
                    }
                    _ => {
                        rec.call("close A unseen", unseen_close(a), -1);
                        open(&file, libc::O_RDONLY | direct)
                    }
                };
                extra["same number"] = json!(fd == a);
                std::ptr::write_bytes(buf, b'y', BLOCK);
                rec.call(
                    "pwrite on the number",
                    libc::pwrite(fd, buf as *const c_void, BLOCK, 0),
                    fd,
                );
                if case != "reopen-rdonly" {
                    let got = aligned(BLOCK, 0);
                    rec.call(
                        "pread on the number",
                        libc::pread(fd, got as *mut c_void, BLOCK, 0),
                        fd,
                    );
                    extra["read back"] = json!((*got as char).to_string());
                    libc::close(fd);
                    let b = std::fs::read(&other).unwrap();
                    let firsts = [b[0], b[BLOCK]].map(|c| (c as char).to_string());
                    extra["b"] = json!(firsts);
                }
            }
            "aio" => {
                let (ev, d) = aio(&file);
                extra["events"] = json!(ev);
                extra["dirty"] = json!(d);
            }
            "errors" => errors(&file, &mut rec),
            "extend" => extra["sizes"] = json!(extend(&file, &mut rec)),
            "fsize" => fsize(&file, &mut rec),
            "rwf" => rwf(&file, &mut rec),
            "rwf-today" => rwf_today(&file, &mut rec),
            other => panic!("unknown case {other}"),
        }
    }
    extra["calls"] = json!(rec.0);
    std::fs::write(out, serde_json::to_vec(&extra).unwrap()).unwrap();
}

/// The "errors" case: each call the kernel refuses, on the case's file.
unsafe fn errors(file: &Path, rec: &mut Rec) {
    let b = aligned(BLOCK, b'x');
    let closed = open(file, libc::O_RDWR | libc::O_DIRECT);
    libc::close(closed);
    rec.call(
        "pread closed",
        libc::pread(closed, b as *mut c_void, BLOCK, 0),
        -1,
    );
    let ro = open(file, libc::O_RDONLY | libc::O_DIRECT);
    rec.call(
        "pwrite read-only",
        libc::pwrite(ro, b as *const c_void, BLOCK, 0),
        ro,
    );
    let wo = open(file, libc::O_WRONLY | libc::O_DIRECT);
    rec.call(
        "pread write-only",
        libc::pread(wo, b as *mut c_void, BLOCK, 0),
        wo,
    );
    let fd = open(file, libc::O_RDWR | libc::O_DIRECT);
    rec.call(
        "pread negative offset",
        libc::pread(fd, b as *mut c_void, BLOCK, -(BLOCK as i64)),
        fd,
    );
    let many = vec![
        libc::iovec {
            iov_base: b as *mut c_void,
            iov_len: 0,
        };
        1025
    ];
    rec.call(
        "preadv IOV_MAX + 1",
        libc::preadv(fd, many.as_ptr(), 1025, 0),
        fd,
    );
    // Aligned pages the program may not touch.
    let none = libc::mmap(
        std::ptr::null_mut(),
        BLOCK,
        libc::PROT_NONE,
        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
        -1,
        0,
    );
    assert_ne!(none, libc::MAP_FAILED);
    rec.call(
        "pwrite unreadable buffer",
        libc::pwrite(fd, none, BLOCK, 0),
        fd,
    );
    rec.call(
        "pread unwritable buffer",
        libc::pread(fd, none, BLOCK, 0),
        fd,
    );
    rec.call(
        "pwrite 0 bytes",
        libc::pwrite(fd, b as *const c_void, 0, 0),
        fd,
    );
    rec.call("pread", libc::pread(fd, b as *mut c_void, BLOCK, 0), fd);
    let dir =
        std::ffi::CString::new(file.parent().unwrap().as_os_str().as_encoded_bytes()).unwrap();
    let d = libc::open(dir.as_ptr(), libc::O_RDONLY | libc::O_DIRECT);
    rec.call("open a directory O_DIRECT", d as isize, -1);
}

/// The "extend" case: a write past the end, a truncation, a punched hole
/// and an extending fallocate; the file's size after each.
unsafe fn extend(file: &Path, rec: &mut Rec) -> Vec<i64> {
    let fd = open(file, libc::O_RDWR | libc::O_DIRECT);
    let size = || {
        let mut st: libc::stat = std::mem::zeroed();
        libc::fstat(fd, &mut st);
        st.st_size
    };
    let b = aligned(BLOCK, b'z');
    let mut sizes = Vec::new();
    rec.call(
        "pwrite past the end",
        libc::pwrite(fd, b as *const c_void, BLOCK, 5 * BLOCK as i64),
        fd,
    );
    sizes.push(size());
    rec.call(
        "ftruncate",
        libc::ftruncate(fd, 3 * BLOCK as i64) as isize,
        fd,
    );
    sizes.push(size());
    rec.call(
        "pread past the cut",
        libc::pread(fd, b as *mut c_void, BLOCK, 4 * BLOCK as i64),
        fd,
    );
    rec.call(
        "pread the hole",
        libc::pread(fd, b as *mut c_void, BLOCK, 2 * BLOCK as i64),
        fd,
    );
    let punch = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
    rec.call(
        "punch the first block",
        libc::fallocate(fd, punch, 0, BLOCK as i64) as isize,
        fd,
    );
    sizes.push(size());
    rec.call(
        "pread the punched block",
        libc::pread(fd, b as *mut c_void, BLOCK, 0),
        fd,
    );
    rec.call(
        "fallocate to 8 blocks",
        libc::fallocate(fd, 0, 0, 8 * BLOCK as i64) as isize,
        fd,
    );
    sizes.push(size());
    rec.call(
        "pread an allocated block",
        libc::pread(fd, b as *mut c_void, BLOCK, 7 * BLOCK as i64),
        fd,
    );
    sizes
}

/// The "fsize" case: writes against RLIMIT_FSIZE of 3 blocks.
unsafe fn fsize(file: &Path, rec: &mut Rec) {
    libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    let lim = libc::rlimit {
        rlim_cur: 3 * BLOCK as u64,
        rlim_max: libc::RLIM_INFINITY,
    };
    assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &lim), 0);
    let fd = open(file, libc::O_RDWR | libc::O_DIRECT);
    let b = aligned(2 * BLOCK, b'f');
    let w = |n, at: usize| libc::pwrite(fd, b as *const c_void, n, (at * BLOCK) as i64);
    rec.call("pwrite straddling the limit", w(2 * BLOCK, 2), fd);
    rec.call("pwrite at the limit", w(BLOCK, 3), fd);
    libc::lseek(fd, 4 * BLOCK as i64, libc::SEEK_SET);
    rec.call(
        "write past the limit",
        libc::write(fd, b as *const c_void, BLOCK),
        fd,
    );
    rec.call(
        "pread under the limit",
        libc::pread(fd, b as *mut c_void, 2 * BLOCK, 0),
        fd,
    );
}

/// The "rwf" case: preadv2/pwritev2 flags and offset -1.
unsafe fn rwf(file: &Path, rec: &mut Rec) {
    const RWF_HIPRI: c_int = 0x01;
    const RWF_APPEND: c_int = 0x10;
    const UNKNOWN: c_int = 0x4000_0000;
    let fd = open(file, libc::O_RDWR | libc::O_DIRECT);
    let b = aligned(BLOCK, b'r');
    let iov = libc::iovec {
        iov_base: b as *mut c_void,
        iov_len: BLOCK,
    };
    rec.call(
        "preadv2 RWF_HIPRI",
        libc::preadv2(fd, &iov, 1, 0, RWF_HIPRI),
        fd,
    );
    std::ptr::write_bytes(b, b'r', BLOCK);
    rec.call(
        "pwritev2 RWF_APPEND at 0",
        libc::pwritev2(fd, &iov, 1, 0, RWF_APPEND),
        fd,
    );
    rec.call("preadv2 at -1", libc::preadv2(fd, &iov, 1, -1, 0), fd);
    rec.call(
        "preadv2 an unknown flag",
        libc::preadv2(fd, &iov, 1, 0, UNKNOWN),
        fd,
    );
    rec.call("preadv2 at -1 again", libc::preadv2(fd, &iov, 1, -1, 0), fd);
}

/// The "rwf-today" case: 0x20 and 0x40 on an O_APPEND descriptor.
unsafe fn rwf_today(file: &Path, rec: &mut Rec) {
    let fd = open(file, libc::O_WRONLY | libc::O_APPEND | libc::O_DIRECT);
    let b = aligned(BLOCK, b'n');
    let iov = libc::iovec {
        iov_base: b as *mut c_void,
        iov_len: BLOCK,
    };
    rec.call(
        "pwritev2 0x20 at 0",
        libc::pwritev2(fd, &iov, 1, 0, 0x20),
        fd,
    );
    rec.call(
        "pwritev2 0x40 at 0",
        libc::pwritev2(fd, &iov, 1, 0, 0x40),
        fd,
    );
}

/// `close(fd)` as a system call of the program's own, through no libc
/// function (nothing a preloaded library can interpose).
#[cfg(target_arch = "x86_64")]
unsafe fn unseen_close(fd: c_int) -> isize {
    let r: isize;
    std::arch::asm!(
        "syscall",
        inlateout("rax") libc::SYS_close as isize => r,
        in("rdi") fd as isize,
        lateout("rcx") _,
        lateout("r11") _,
        options(nostack),
    );
    r
}

/// libaio through libaio.so.1's global symbols (as a program linked to it
/// calls them): a misaligned write, an aligned RWF_DSYNC write, a
/// misaligned read, submitted together; the events by `aio_data`, and the
/// file's dirty pages after.
unsafe fn aio(file: &Path) -> (Vec<(u64, i64)>, i64) {
    let aio = Libaio::load();
    let fd = open(file, libc::O_RDWR | libc::O_DIRECT);
    let b = aligned(2 * BLOCK, b'w');
    let mut ctx = 0usize;
    assert_eq!((aio.setup)(8, &mut ctx), 0);
    let cb = |data, opcode, buf: *mut u8, n, off, rw_flags| Iocb {
        data,
        opcode,
        rw_flags,
        fildes: fd as u32,
        buf: buf as u64,
        nbytes: n as u64,
        offset: off,
        ..Iocb::default()
    };
    const RWF_DSYNC: c_int = 0x02;
    let mut cbs = [
        cb(1, 1, b, BLOCK, 100, 0),
        cb(2, 1, b, BLOCK, 4 * BLOCK as i64, RWF_DSYNC),
        cb(3, 0, b.add(BLOCK + 1), BLOCK, 0, 0),
    ];
    let mut ptrs: Vec<*mut Iocb> = cbs.iter_mut().map(|c| c as *mut Iocb).collect();
    let n = (aio.submit)(ctx, 3, ptrs.as_mut_ptr());
    assert_eq!(n, 3, "io_submit");
    let mut ev = [IoEvent::default(); 3];
    aio.reap_all(ctx, &mut ev);
    let mut out: Vec<(u64, i64)> = ev.iter().map(|e| (e.data, e.res)).collect();
    out.sort();
    (out, dirty(fd))
}
