//! `reproduce` and `tune --out` against hostile destinations and a full
//! filesystem (issue 12): the destination checked before any run, the
//! report replaced whole or not at all. Runs stay short: one small
//! experiment, one seed, the shortest simulated runtime allowed.
mod common;
use common::*;

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::time::Duration;

/// A short report of one experiment into `out`.
fn args<'a>(out: &'a str, seeds: &'a str) -> Vec<&'a str> {
    args_for(out, seeds, "30ms")
}

fn args_for<'a>(out: &'a str, seeds: &'a str, runtime: &'a str) -> Vec<&'a str> {
    vec![
        "reproduce",
        "--quick",
        "--only",
        "fig17",
        "--sim-runtime",
        runtime,
        "--seeds",
        seeds,
        "--out",
        out,
        "--quiet",
    ]
}

/// Every file under `dir` and its bytes.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let name = p.strip_prefix(dir).unwrap().display().to_string();
                files.insert(name, std::fs::read(&p).unwrap());
            }
        }
    }
    files
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn reproduce_on_a_full_filesystem_leaves_the_previous_report_whole() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let o = out.to_str().unwrap();
    let b = hostile(&args(o, "2"), b"", 60);
    assert!(b.output.status.success(), "{}", stderr(&b.output));
    let before = snapshot(&out);
    assert!(before.contains_key("runs/sim/fig17/cint.seed2.json"));
    // The filesystem "fills" at 16 KiB a file: writes fail with EFBIG (the
    // signal it would raise ignored, as a full disk raises none). The runs'
    // JSON (8 KB) fit, the figure (18 KB) does not; a longer runtime makes
    // every new file differ from the old.
    let mut cmd = bin();
    cmd.args(args_for(o, "1", "40ms"));
    // SAFETY: async-signal-safe calls only, between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 16 * 1024,
                rlim_max: 16 * 1024,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
    let b = bounded(cmd, b"", Duration::from_secs(60));
    assert_one_line_error(&b.output, "File too large");
    assert_eq!(snapshot(&out), before, "the previous report changed");
    assert_eq!(
        names(dir.path()),
        ["report"],
        "something was left beside it"
    );
}

#[test]
fn reproduce_with_fewer_seeds_leaves_no_runs_of_the_old_seeds() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let o = out.to_str().unwrap();
    assert!(hostile(&args(o, "2"), b"", 60).output.status.success());
    assert!(out.join("runs/sim/fig17/cint.seed2.json").is_file());
    let b = hostile(&args(o, "1"), b"", 60);
    assert!(b.output.status.success(), "{}", stderr(&b.output));
    assert!(out.join("runs/sim/fig17/cint.seed1.json").is_file());
    assert!(
        !out.join("runs/sim/fig17/cint.seed2.json").exists(),
        "a run of the old report outlived it"
    );
    assert_eq!(names(dir.path()), ["report"]);
}

#[test]
fn reproduce_to_a_file_fails_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "results.txt", "mine\n");
    // The full plan would run for minutes: failing at once shows the check
    // comes first.
    let b = hostile(&["reproduce", "--out", &file, "--quiet"], b"", 10);
    assert_one_line_error(&b.output, "results.txt: exists and is not a directory");
    assert!(b.elapsed < Duration::from_secs(5), "{:?}", b.elapsed);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine\n");
}

#[test]
fn reproduce_to_an_unwritable_place_fails_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "plain", "x");
    let out = format!("{file}/report");
    let b = hostile(&["reproduce", "--out", &out, "--quiet"], b"", 10);
    assert_one_line_error(&b.output, "plain: not a directory");
    assert!(b.elapsed < Duration::from_secs(5), "{:?}", b.elapsed);
}

#[test]
fn reproduce_will_not_replace_a_directory_that_is_not_a_report() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "thesis.tex", "precious");
    let d = dir.path().to_str().unwrap();
    let b = hostile(&["reproduce", "--out", d, "--quiet"], b"", 10);
    assert_one_line_error(&b.output, "not a report directory (it holds 'thesis.tex')");
    assert_eq!(names(dir.path()), ["thesis.tex"]);
}

#[test]
fn reproduce_refuses_a_simulated_runtime_too_short_to_measure() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let b = hostile(
        &[
            "reproduce",
            "--quick",
            "--sim-runtime",
            "1ns",
            "--out",
            out.to_str().unwrap(),
        ],
        b"",
        10,
    );
    assert_one_line_error(
        &b.output,
        "invalid value '1ns' for '--sim-runtime <TIME>': shorter than 30ms",
    );
    assert!(!out.exists());
}

#[test]
fn tune_to_an_unwritable_place_fails_before_the_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "plain", "x");
    let job = write(
        dir.path(),
        "job.fio",
        "[j]\nioengine=libaio\niodepth=64\nrw=randread\nbs=4k\n",
    );
    let out = format!("{file}/tune");
    // 5 s a run: the sweep would take minutes.
    let b = hostile(&["tune", &job, "--runtime", "5s", "--out", &out], b"", 10);
    assert_one_line_error(&b.output, "cannot create");
    assert!(b.elapsed < Duration::from_secs(5), "{:?}", b.elapsed);
}

#[test]
fn a_killed_reproduce_leaves_the_previous_report_and_the_next_clears_its_leftover() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let o = out.to_str().unwrap();
    assert!(hostile(&args(o, "1"), b"", 60).output.status.success());
    let before = snapshot(&out);
    // The full plan runs for minutes: killed a moment in, mid-runs.
    let mut child = bin()
        .args(["reproduce", "--out", o, "--quiet"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let leftover = dir.path().join(format!(".report.part{}", child.id()));
    let start = std::time::Instant::now();
    while !leftover.exists() && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(snapshot(&out), before, "a killed run changed the report");
    assert!(
        leftover.is_dir(),
        "the unfinished report was where expected"
    );
    assert!(hostile(&args(o, "1"), b"", 60).output.status.success());
    assert_eq!(
        names(dir.path()),
        ["report"],
        "the leftover outlived the next run"
    );
}
