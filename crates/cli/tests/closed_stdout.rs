//! A closed standard output (`cinterrupts ... | head`) ends every verb
//! quietly (issue 41 item 0): exit 0 as ripgrep exits on a broken pipe, no
//! panic, and the verb's files (`--report`, `--out`, `-o`, a store)
//! written whole.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;

const BOUND: Duration = Duration::from_secs(120);

/// `args` run with stdout a pipe whose reader is already gone: its first
/// write fails with EPIPE. The verb must end with 0 and no panic.
fn closed(args: &[&str], dir: &Path) -> String {
    let mut fds = [0; 2];
    // SAFETY: a new pipe; its read end closed at once, the write end owned
    // by the File the child's stdout takes (std::io::pipe is past our
    // rust-version, 1.80).
    let writer = unsafe {
        assert_eq!(libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC), 0);
        libc::close(fds[0]);
        <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fds[1])
    };
    let o = output_within(
        bin()
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(writer),
        BOUND,
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(!err.contains("Broken pipe"), "{args:?}: {err}");
    err
}

fn example(p: &str) -> String {
    format!("{}/../../examples/{p}", env!("CARGO_MANIFEST_DIR"))
}

fn nonempty(p: &Path) {
    let len = std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .len();
    assert!(len > 0, "{} is empty", p.display());
}

#[test]
fn every_verb_that_prints_ends_quietly_on_a_closed_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let blkparse = example("traces/sample.blkparse");
    let csv = example("traces/sample.alibaba.csv");
    let stream = example("streams/mixed.csv");
    let job = example("sync-read.fio");
    closed(&["policies"], d);
    closed(&["jobs", &job], d);
    closed(&["jobs", "--check", &job], d);
    closed(&["coalesce", &stream], d);
    closed(&["coalesce", &stream, "--summary"], d);
    closed(&["coalesce", &stream, "--policy", "all"], d);
    closed(
        &[
            "coalesce",
            "--trace",
            &blkparse,
            "--report",
            "coalesce-report",
        ],
        d,
    );
    nonempty(&d.join("coalesce-report/index.html"));
    closed(
        &["coalesce", "--trace", &blkparse, "--plan", "feature09"],
        d,
    );
    closed(&["sim", &job, "--runtime", "20ms", "--quiet"], d);
    closed(&["sim", "--trace", &csv, "--quiet"], d);
    closed(
        &["sim", "--trace", &csv, "--quiet", "--output-format", "json"],
        d,
    );
    // A fitted profile needs enough completions: the trace sim wrote
    // with --write... is not ours to make; a generated QD1 trace.
    let mut t = String::new();
    for i in 0..100u64 {
        let (a, b) = (i * 30_000, i * 30_000 + 20_000);
        t += &format!(
            "  8,0    0 {:>8}     0.{a:09}  42  D   R {} + 8 [fio]\n",
            2 * i + 1,
            8 * i
        );
        t += &format!(
            "  8,0    0 {:>8}     0.{b:09}   0  C   R {} + 8 [0]\n",
            2 * i + 2,
            8 * i
        );
    }
    std::fs::write(d.join("qd1.blkparse"), t).unwrap();
    closed(
        &[
            "calibrate",
            "--device-from",
            "qd1.blkparse",
            "-o",
            "fit.toml",
        ],
        d,
    );
    nonempty(&d.join("fit.toml"));
    closed(&["calibrate", "--device-from", "qd1.blkparse"], d);
    closed(&["calibrate", "--runtime", "20ms"], d);
    closed(
        &[
            "tune",
            &job,
            "--mode",
            "sim",
            "--runtime",
            "20ms",
            "--out",
            "tune-out",
        ],
        d,
    );
    nonempty(&d.join("tune-out/tune.json"));
    closed(&["bench", "sim", "--runtime", "20ms", "--cores", "1"], d);
    std::fs::copy(&job, d.join("sync-read.fio")).unwrap();
    write(
        d,
        "sweep.toml",
        "workloads = [\"sync-read.fio\"]\ndevices = [\"optane\"]\nseeds = [1]\nruntime = \"20ms\"\nstrategies = [{ name = \"cint\", grid = { delta = [\"2us\", \"6us\"] } }]\n",
    );
    closed(&["sweep", "run", "sweep.toml", "-q"], d);
    closed(&["sweep", "merge", "sweep-store", "--out", "merged"], d);
    for f in ["table.csv", "table.json", "fronts.json", "report.md"] {
        nonempty(&d.join("merged").join(f));
    }
    closed(&["sweep", "merge", "sweep-store"], d);
    closed(
        &[
            "sweep",
            "slurm",
            "sweep.toml",
            "--tasks",
            "2",
            "--binary",
            "cinterrupts",
        ],
        d,
    );
}

#[test]
fn the_emulator_and_exec_listings_end_quietly_too() {
    let _one = turn();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let job = example("sync-read.fio");
    closed(&["run", &job, "--runtime", "300ms", "--quiet"], d);
    closed(&["exec", "--print-rules", "--", "true"], d);
}

#[test]
fn a_reader_that_takes_one_line_ends_the_verb_with_0() {
    require("bash", "bash");
    require("head", "coreutils");
    let blkparse = example("traces/sample.blkparse");
    let bin = env!("CARGO_BIN_EXE_cinterrupts");
    // pipefail: the pipeline's status is the verb's, not head's.
    for cmd in [
        format!("{bin} sim --trace {blkparse} --quiet | head -n 1"),
        format!("{bin} coalesce --trace {blkparse} | head -n 1"),
        format!("{bin} policies | head -n 1"),
    ] {
        let o = output_within(
            Command::new("bash").args(["-c", &format!("set -o pipefail; {cmd}")]),
            BOUND,
        );
        assert_eq!(o.status.code(), Some(0), "{cmd}: {}", stderr(&o));
        assert_eq!(stdout(&o).lines().count(), 1, "{cmd}");
        assert!(!stderr(&o).contains("panicked"), "{cmd}: {}", stderr(&o));
    }
}
