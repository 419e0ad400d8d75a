//! `cinterrupts capture` (issue 27 item 2): the kernel's block issue and
//! completion events of a real program's direct I/O, recorded in a tracefs
//! instance, written as blkparse text, every one of them (the kernel's own
//! counts beside); the program's exit code passed through; tracefs left as
//! found, even when capture is killed; root required.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::{assert_one_line_error, bin, output_within, require, stderr, stdout, turn};

const BOUND: Duration = Duration::from_secs(120);

fn tracefs_mounted() -> bool {
    std::fs::read_to_string("/proc/self/mounts")
        .unwrap()
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some("/sys/kernel/tracing"))
}

/// blkparse lines of `action` whose command name (issues) is `comm`.
fn lines<'a>(text: &'a str, action: &str) -> Vec<&'a str> {
    text.lines()
        .filter(|l| l.split_whitespace().nth(5) == Some(action))
        .collect()
}

fn fio_reads(dir: &Path, n: u32) -> Vec<String> {
    vec![
        "fio".into(),
        "--name=c".into(),
        format!("--filename={}", dir.join("data").display()),
        "--direct=1".into(),
        "--rw=randread".into(),
        "--bs=4k".into(),
        "--size=8m".into(),
        format!("--number_ios={n}"),
        "--output-format=terse".into(),
    ]
}

#[test]
fn a_programs_direct_reads_are_recorded_as_blkparse_issues_and_completions() {
    require("fio", "fio");
    let _one = turn();
    // On the disk's file system (O_DIRECT reaches the block layer).
    let dir = tempfile::Builder::new()
        .prefix("cinterrupts-capture.")
        .tempdir_in("/var/tmp")
        .unwrap();
    // The file laid out first, outside the capture.
    let lay = output_within(
        Command::new("fio")
            .args(&fio_reads(dir.path(), 1)[1..])
            .arg("--create_only=1"),
        BOUND,
    );
    assert!(lay.status.success(), "{lay:?}");
    let was = tracefs_mounted();
    let out = dir.path().join("cap.txt");
    let o = output_within(
        bin()
            .args(["capture", "-o"])
            .arg(&out)
            .arg("--")
            .args(fio_reads(dir.path(), 256)),
        BOUND,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(tracefs_mounted(), was, "tracefs left as found");
    let text = std::fs::read_to_string(&out).unwrap();
    // fio's own issues: at least its 256 reads (the first layout read and
    // its metadata reads may add some), each completed.
    let issued: Vec<&str> = lines(&text, "D")
        .into_iter()
        .filter(|l| l.ends_with("[fio]"))
        .collect();
    // Most of its 256 reads are issued in its own context (a plug flushed
    // by a kernel worker issues one as the worker: seen once in a run).
    assert!(
        issued.len() >= 240,
        "{} issues by fio: {text}",
        issued.len()
    );
    let completed = lines(&text, "C");
    // "MAJ,MIN CPU SEQ TIME PID D RWBS SECTOR + N [fio]". Every completion
    // written is one of an issued request (same device, sector and size),
    // and every one of fio's issues is completed.
    let key = |l: &str| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f[0].to_string(), f[7].to_string(), f[9].to_string())
    };
    let issued_keys: std::collections::HashSet<_> = lines(&text, "D")
        .into_iter()
        .chain(lines(&text, "Q"))
        .map(key)
        .collect();
    // A flush (RWBS "F...", 0 sectors: another program's fsync) is keyed
    // apart by the kernel (its completion prints sector -1). Another
    // program's request in flight when the capture began completes with
    // no issue in it (a 4 MiB write at 0.000000000 while CI's other tests
    // ran): a completion not issued is allowed only if it is not of fio's
    // shape (a read of 8 sectors) or came before fio's first issue.
    let time = |l: &str| l.split_whitespace().nth(3).unwrap().parse::<f64>().unwrap();
    let fio_from = issued.iter().map(|l| time(l)).fold(f64::INFINITY, f64::min);
    let fio_shape = |l: &str| {
        let f: Vec<&str> = l.split_whitespace().collect();
        f[6].contains('R') && f[9] == "8"
    };
    for c in completed.iter().filter(|c| key(c).2 != "0") {
        assert!(
            issued_keys.contains(&key(c)) || !fio_shape(c) || time(c) < fio_from,
            "a completion never issued: {c}"
        );
    }
    let completed_keys: std::collections::HashSet<_> = completed.iter().map(|l| key(l)).collect();
    for d in &issued {
        assert!(completed_keys.contains(&key(d)), "never completed: {d}");
    }
    // Times rise from 0 and sectors are 4 KiB reads (8 sectors).
    let first = text.lines().next().unwrap();
    assert!(
        first.split_whitespace().nth(3) == Some("0.000000000"),
        "{first}"
    );
    // The job's own direct reads; the page cache's readahead ("RA") and
    // metadata ("RM") reads made in fio's context (its binary's pages
    // evicted under CI's load: "D RA 27115600 + 16 [fio]") are not the
    // job's.
    let other: Vec<&&str> = issued
        .iter()
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            !f[6].contains('A') && !f[6].contains('M') && f[9] != "8"
        })
        .collect();
    assert!(other.is_empty(), "{other:?}");
    let irq = std::fs::read_to_string(format!("{}.irq.csv", out.display())).unwrap();
    assert!(irq.starts_with("time_ns,cpu,irq,name\n"), "{irq}");
    // Each interrupt line is well formed.
    for l in irq.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        assert!(
            f.len() == 4 && f[0].parse::<u64>().is_ok() && f[2].parse::<u32>().is_ok(),
            "{l}"
        );
    }
    assert!(stderr(&o).contains("issued"), "{}", stderr(&o));
    // The kernel's own count of interrupts in that time is beside the
    // recorded one, and is no smaller (it counts every line).
    let err = stderr(&o);
    let line = err
        .lines()
        .find(|l| l.contains("interrupts recorded"))
        .unwrap_or_else(|| panic!("{err}"));
    let nums: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    assert!(nums.len() >= 2, "{line}");
    assert!(nums[1] > 0, "the kernel counted interrupts: {line}");
    // Nothing the kernel counted while fio ran is missing: per device
    // ("...; while the program ran R completions recorded, K I/Os
    // completed by the kernel") and per interrupt line ("irq N: while the
    // program ran R recorded, K counted"). The recorded window holds the
    // counted one, so R >= K; other programs' I/O shares the disk.
    for l in err.lines().filter(|l| l.contains(": device ")) {
        let n = numbers(l);
        assert!(n.len() >= 7 && n[5] >= n[6], "completions lost: {l}");
    }
    let irq_lines: Vec<&str> = err.lines().filter(|l| l.contains(": irq ")).collect();
    assert!(!irq_lines.is_empty(), "{err}");
    for l in irq_lines {
        let n = numbers(l);
        assert!(n.len() >= 3 && n[1] >= n[2], "interrupts lost: {l}");
    }
}

#[test]
fn the_programs_exit_code_passes_through_and_bad_input_is_one_line() {
    require("sh", "dash");
    let _one = turn();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.txt");
    let o = output_within(
        bin()
            .args(["capture", "-o"])
            .arg(&out)
            .args(["--", "sh", "-c", "exit 3"]),
        BOUND,
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(out.is_file());
    for (args, want) in [
        (
            vec!["--device", "/etc/passwd", "--", "true"],
            "not a block device",
        ),
        (
            vec!["--device", "/nonexistent", "--", "true"],
            "/nonexistent",
        ),
        (vec![], "give a program after -- or --duration"),
    ] {
        let o = output_within(
            bin()
                .args(["capture", "-o"])
                .arg(dir.path().join("x.txt"))
                .args(&args),
            BOUND,
        );
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!dir.path().join("x.txt").exists());
    }
}

#[test]
fn a_killed_capture_leaves_no_recorder_and_tracefs_as_found() {
    require("sleep", "coreutils");
    let _one = turn();
    let dir = tempfile::tempdir().unwrap();
    let was = tracefs_mounted();
    let mut c = bin()
        .args(["capture", "-o"])
        .arg(dir.path().join("k.txt"))
        .args(["--", "sleep", "30"])
        .spawn()
        .unwrap();
    // Until it records (its tracefs instance is made).
    let instance =
        Path::new("/sys/kernel/tracing/instances").join(format!("cinterrupts-capture.{}", c.id()));
    let start = std::time::Instant::now();
    while !instance.join("tracing_on").exists() {
        assert!(start.elapsed() < BOUND, "capture never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    c.kill().unwrap();
    c.wait().unwrap();
    // The watcher cleans up: the instance (the recorder) goes, then
    // tracefs is unmounted if capture mounted it. Both happen after the
    // kill, in that order, so the test waits for the pair (checking the
    // mount as soon as the instance is gone raced the watcher's unmount).
    let start = std::time::Instant::now();
    while instance.exists() || tracefs_mounted() != was {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "not cleaned up: instance {}, tracefs mounted {} (was {was})",
            instance.exists(),
            tracefs_mounted()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!dir.path().join("k.txt").exists(), "no half-written output");
}

#[test]
fn capture_needs_root_and_says_so() {
    require("runuser", "util-linux");
    let _one = turn();
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let exe = common::reachable_cinterrupts(dir.path());
    let o = output_within(
        Command::new("runuser")
            .args(["-u", "nobody", "--"])
            .arg(&exe)
            .args(["capture", "-o", "/tmp/never.txt", "--", "true"]),
        BOUND,
    );
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(stderr(&o).contains("capture needs root"), "{}", stderr(&o));
}

/// A zram device of the test's own (`/sys/class/zram-control/hot_add`,
/// Documentation/admin-guide/blockdev/zram.rst), removed when dropped: a
/// fast real block device no other program touches.
struct Zram(u32);

impl Zram {
    fn new(size: &str) -> Zram {
        let id: u32 = std::fs::read_to_string("/sys/class/zram-control/hot_add")
            .expect("zram (modprobe zram): /sys/class/zram-control/hot_add")
            .trim()
            .parse()
            .unwrap();
        let z = Zram(id);
        std::fs::write(format!("/sys/block/zram{id}/disksize"), size).unwrap();
        z
    }

    fn dev(&self) -> String {
        format!("/dev/zram{}", self.0)
    }

    /// "MAJ,MIN" as blkparse prints it.
    fn numbers(&self) -> String {
        let mm = std::fs::read_to_string(format!("/sys/block/zram{}/dev", self.0)).unwrap();
        mm.trim().replace(':', ",")
    }
}

impl Drop for Zram {
    fn drop(&mut self) {
        let _ = std::fs::write("/sys/class/zram-control/hot_remove", self.0.to_string());
    }
}

/// Processes spinning beside the test (`yes > /dev/null`), killed when
/// dropped.
struct Load(Vec<std::process::Child>);

impl Load {
    fn new(n: usize) -> Load {
        Load(
            (0..n)
                .map(|_| {
                    Command::new("yes")
                        .stdout(std::process::Stdio::null())
                        .spawn()
                        .unwrap()
                })
                .collect(),
        )
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// The numbers of a summary line "...: A word, B word, ..." in order.
fn numbers(line: &str) -> Vec<u64> {
    line.split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect()
}

#[test]
fn every_direct_read_of_a_program_is_recorded_queued_and_completed_under_load() {
    require("dd", "coreutils");
    require("yes", "coreutils");
    let _one = turn();
    // 2,000 reads of 4 KiB: 8,000 KiB, inside a 16 MiB device.
    const N: usize = 2000;
    let z = Zram::new("16M");
    // Filled first, outside the capture.
    let fill = output_within(
        Command::new("dd")
            .args(["if=/dev/urandom", "bs=1M", "count=16", "oflag=direct"])
            .arg(format!("of={}", z.dev())),
        BOUND,
    );
    assert!(fill.status.success(), "{fill:?}");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("z.txt");
    // Two CPU hogs beside the capture on this 2-vCPU machine.
    let load = Load::new(2);
    let o = output_within(
        bin()
            .args(["capture", "-o"])
            .arg(&out)
            .args(["--device", &z.dev(), "--"])
            .args(["dd", "of=/dev/null", "iflag=direct", "bs=4k"])
            .arg(format!("if={}", z.dev()))
            .arg(format!("count={N}")),
        BOUND,
    );
    drop(load);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    // zram is bio-based: a read is a queued bio (Q) and its completion
    // (C), no request (crates/capture/src/lib.rs's EVENTS).
    let dev = z.numbers();
    let key = |l: &str| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f[7].to_string(), f[9].to_string())
    };
    let queued: Vec<&str> = lines(&text, "Q")
        .into_iter()
        .filter(|l| l.split_whitespace().next() == Some(dev.as_str()) && l.ends_with("[dd]"))
        .collect();
    assert_eq!(queued.len(), N, "dd's queued reads: {err}");
    assert!(queued.iter().all(|l| key(l).1 == "8"), "4 KiB reads");
    let mine: std::collections::HashSet<_> = queued.iter().map(|l| key(l)).collect();
    assert_eq!(mine.len(), N, "each read a sector of its own");
    let completed = lines(&text, "C")
        .into_iter()
        .filter(|l| mine.contains(&key(l)))
        .count();
    assert_eq!(completed, N, "dd's completed reads: {err}");
    // The summary: every completion the kernel counted on the device
    // (its stat file) while dd ran was recorded.
    let line = err
        .lines()
        .find(|l| l.contains(&format!("device {dev}:")))
        .unwrap_or_else(|| panic!("{err}"));
    let n = numbers(line);
    // "device MAJ,MIN: Q queued, D issued, C completed; while the program
    // ran R completions recorded, K I/Os completed by the kernel
    // (/sys/dev/block/MAJ:MIN/stat)"
    assert!(n.len() >= 7, "{line}");
    assert_eq!((n[2], n[4]), (N as u64, N as u64), "{line}");
    assert_eq!(n[5], n[6], "recorded and counted completions: {line}");
    // zram completes in the submitter's context and raises no interrupt
    // (zram_submit_bio, drivers/block/zram/zram_drv.c): no line of it in
    // /proc/interrupts to compare with.
}

/// dd's `n` direct 4 KiB writes to a file of `dir` (on the disk's file
/// system: O_DIRECT reaches the block layer).
fn dd_writes(dir: &Path, n: u32) -> Vec<String> {
    vec![
        "dd".into(),
        "if=/dev/zero".into(),
        format!("of={}", dir.join("dd.data").display()),
        "bs=4k".into(),
        format!("count={n}"),
        "oflag=direct".into(),
        "status=none".into(),
    ]
}

/// The last line on stderr.
fn last_line(o: &std::process::Output) -> String {
    stderr(o).lines().last().unwrap_or_default().to_string()
}

#[test]
fn a_capture_that_loses_events_fails_naming_the_loss_unless_allowed() {
    require("dd", "coreutils");
    let _one = turn();
    let dir = tempfile::Builder::new()
        .prefix("cinterrupts-capture-loss.")
        .tempdir_in("/var/tmp")
        .unwrap();
    let out = dir.path().join("lossy.txt");
    let partial = dir.path().join("lossy.txt.partial");
    // A one-page buffer per CPU holds some 70 events (57 bytes each, the
    // crate's BUFFER_KB note); 2,000 direct writes make at least 6,000
    // (a Q, D and C each): most are dropped, whatever the load.
    let capture = |extra: &[&str]| {
        output_within(
            bin()
                .args(["capture", "--buffer-size", "4K", "-o"])
                .arg(&out)
                .args(extra)
                .arg("--")
                .args(dd_writes(dir.path(), 2000)),
            BOUND,
        )
    };
    let o = capture(&[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let line = last_line(&o);
    assert!(
        line.starts_with("cinterrupts: error: capture lost ")
            && line.contains(" dropped)")
            && line.contains("--buffer-size")
            && line.contains("--allow-loss"),
        "{line}"
    );
    let lost = numbers(&line)[0];
    assert!(lost > 0, "{line}");
    // Nothing that could pass for a whole trace is left.
    assert!(!out.exists() && !partial.exists());
    assert!(!dir.path().join("lossy.txt.irq.csv").exists());

    let o = capture(&["--allow-loss"]);
    assert_eq!(o.status.code(), Some(0), "dd's own code: {}", stderr(&o));
    assert!(out.is_file());
    let mark = std::fs::read_to_string(&partial).unwrap();
    assert!(mark.starts_with("lost ") && numbers(&mark)[0] > 0, "{mark}");
    // Downstream, the trace says it is partial.
    let c = output_within(bin().args(["coalesce", "--trace"]).arg(&out), BOUND);
    assert!(c.status.success(), "{}", stderr(&c));
    assert!(stderr(&c).contains("is a partial trace"), "{}", stderr(&c));
    assert!(
        stdout(&c).contains("partial: true (lost "),
        "{}",
        stdout(&c)
    );

    // A whole capture over it (the default 64 MiB per CPU, a few writes)
    // is not partial any more.
    let o = output_within(
        bin()
            .args(["capture", "-o"])
            .arg(&out)
            .arg("--")
            .args(dd_writes(dir.path(), 20)),
        BOUND,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.is_file() && !partial.exists(), "{}", stderr(&o));

    // A size that is not whole KiB, or less than a page, is one line.
    for bad in ["1500", "1k", "lots"] {
        let o = output_within(
            bin()
                .args(["capture", "--buffer-size", bad, "-o"])
                .arg(&out)
                .args(["--", "true"]),
            BOUND,
        );
        assert_one_line_error(&o, "--buffer-size");
    }
}
