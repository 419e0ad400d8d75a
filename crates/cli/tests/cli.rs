//! The binary end to end: hand-made streams through `coalesce`, the listing,
//! job files, and one-line errors for bad input.

mod common;

use std::io::Write;
use std::process::{Output, Stdio};

use common::*;

fn run_stdin(args: &[&str], input: &str) -> Output {
    let mut child = bin()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The binary may refuse its arguments before reading stdin.
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    child.wait_with_output().unwrap()
}

const HEADER: &str = "time_ns,id,flags,event\n";

fn stream(rows: &[(u64, u64, &str, &str)]) -> String {
    let mut s = HEADER.to_string();
    for (t, id, f, e) in rows {
        s.push_str(&format!("{t},{id},{f},{e}\n"));
    }
    s
}

#[test]
fn adaptive_lone_completion_is_delivered_delta_later() {
    let o = run_stdin(
        &["coalesce", "--policy", "adaptive"],
        &stream(&[(1000, 7, "-", "complete")]),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "time_ns,kind,ids\n7000,full,7\n");
    let o = run_stdin(
        &["coalesce", "--policy", "adaptive", "--delta", "15us"],
        &stream(&[(0, 1, "-", "complete")]),
    );
    assert_eq!(stdout(&o), "time_ns,kind,ids\n15000,full,1\n");
}

#[test]
fn adaptive_burst_of_40_fires_at_32nd_then_last_plus_delta() {
    let rows: Vec<_> = (0..40u64).map(|i| (i * 1000, i, "-", "complete")).collect();
    let o = run_stdin(
        &["coalesce", "--policy", "adaptive", "--thr", "32"],
        &stream(&rows),
    );
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    let first: Vec<String> = (0..32).map(|i| i.to_string()).collect();
    assert_eq!(lines[1], format!("31000,full,{}", first.join(" ")));
    let rest: Vec<String> = (32..40).map(|i| i.to_string()).collect();
    assert_eq!(lines[2], format!("45000,full,{}", rest.join(" ")));
}

#[test]
fn cint_urgent_only_then_full_and_barrier() {
    let rows = [
        (0, 1, "-", "complete"),
        (1000, 2, "U", "complete"),
        (2000, 3, "-", "complete"),
        (30_000, 4, "-", "complete"),
        (31_000, 5, "B", "complete"),
    ];
    let o = run_stdin(&["coalesce"], &stream(&rows));
    assert_eq!(
        stdout(&o),
        "time_ns,kind,ids\n1000,urgent,2\n8000,full,1 3\n31000,full,4 5\n"
    );
    let o = run_stdin(&["coalesce", "--ooo", "off"], &stream(&rows));
    assert_eq!(
        stdout(&o),
        "time_ns,kind,ids\n1000,full,1 2\n8000,full,3\n31000,full,4 5\n"
    );
}

#[test]
fn strict_barrier_needs_submit_events() {
    let rows = [
        (0, 1, "-", "submit"),
        (0, 2, "B", "submit"),
        (5000, 2, "B", "complete"),
        (9000, 1, "-", "complete"),
    ];
    let o = run_stdin(&["coalesce", "--barrier", "strict"], &stream(&rows));
    assert_eq!(stdout(&o), "time_ns,kind,ids\n9000,full,2 1\n");
}

#[test]
fn errors_are_delivered_at_once() {
    let rows = [(0, 1, "-", "complete"), (2000, 2, "-", "error")];
    let o = run_stdin(&["coalesce", "--policy", "nvme100"], &stream(&rows));
    assert_eq!(stdout(&o), "time_ns,kind,ids\n2000,full,1 2\n");
}

#[test]
fn summary_reports_counts_delays_and_the_end() {
    let rows: Vec<_> = (0..40u64).map(|i| (i * 1000, i, "-", "complete")).collect();
    let o = run_stdin(
        &["coalesce", "--policy", "adaptive", "--summary"],
        &stream(&rows),
    );
    let out = stdout(&o);
    assert!(
        out.contains("interrupts:   2 (2 full, 0 urgent-only)"),
        "{out}"
    );
    assert!(out.contains("per interrupt: 20.00 completions"), "{out}");
    // The first completion waits 31 us; the last of the 8 waits delta.
    assert!(out.contains("max 31.00us"), "{out}");
    assert!(
        out.contains("input ended at 39.00us; pending completions were delivered by 45.00us"),
        "{out}"
    );
    assert!(!out.contains("time_ns,kind"), "summary replaces the CSV");
}

#[test]
fn storm_protection_caps_the_rate_from_the_cli() {
    // 150K Urgent completions per second for 200 ms.
    let rows: Vec<_> = (0..30_000u64)
        .map(|i| (i * 6_667, i, "U", "complete"))
        .collect();
    let o = run_stdin(
        &["coalesce", "--max-irq-rate", "100k", "--summary"],
        &stream(&rows),
    );
    let out = stdout(&o);
    let irqs: f64 = out
        .lines()
        .find_map(|l| l.strip_prefix("interrupts:"))
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .parse()
        .unwrap();
    let seconds = 30_000.0 * 6_667e-9;
    assert!(
        irqs / seconds <= 100_000.0,
        "{} interrupts/s\n{out}",
        irqs / seconds
    );
    let o = run_stdin(&["coalesce", "--summary"], &stream(&rows));
    assert!(
        stdout(&o).contains("interrupts:   30000 "),
        "unprotected: one per Urgent"
    );
}

#[test]
fn all_policies_side_by_side() {
    let rows: Vec<_> = (0..10u64).map(|i| (i * 1000, i, "-", "complete")).collect();
    let o = run_stdin(&["coalesce", "--policy", "all"], &stream(&rows));
    let out = stdout(&o);
    for s in [
        "default", "nvme100", "nvme20", "nvme6", "adaptive", "cint", "dynamic", "dim",
    ] {
        assert!(out.lines().any(|l| l.starts_with(s)), "{s} missing:\n{out}");
    }
    let default_line = out.lines().find(|l| l.starts_with("default ")).unwrap();
    assert!(
        default_line.split_whitespace().nth(1) == Some("10"),
        "{default_line}"
    );
    assert_one_line_error(
        &run_stdin(
            &["coalesce", "--policy", "all", "--thr", "4"],
            &stream(&rows),
        ),
        "takes no strategy options",
    );
}

#[test]
fn output_file_is_written_whole_and_not_on_error() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "in.csv", &stream(&[(0, 1, "U", "complete")]));
    let out = dir.path().join("irqs.csv");
    let o = run(&["coalesce", &input, "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "time_ns,kind,ids\n0,urgent,1\n"
    );
    // A bad stream leaves the previous file as it was and no temp file.
    let bad = write(
        dir.path(),
        "bad.csv",
        &format!("{HEADER}0,1,U,complete\n5,2,Q,complete\n"),
    );
    let o = run(&["coalesce", &bad, "-o", out.to_str().unwrap()]);
    assert_one_line_error(
        &o,
        "bad.csv:3: column 'flags': 'Q' is not one of -, U, B, UB",
    );
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "time_ns,kind,ids\n0,urgent,1\n"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
}

#[test]
fn bad_streams_give_one_line_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "h.csv",
            "time,id,flags\n".to_string(),
            "h.csv:1: header must be",
        ),
        (
            "t.csv",
            format!("{HEADER}10,1,-,complete\n5,2,-,complete\n"),
            "t.csv:3: column 'time_ns': 5 is before",
        ),
        (
            "e.csv",
            format!("{HEADER}10,1,-,finish\n"),
            "e.csv:2: column 'event'",
        ),
        (
            "d.csv",
            format!("{HEADER}10,1,-,complete\n11,1,-,complete\n"),
            "d.csv:3: id 1 completed again before it was delivered",
        ),
        (
            "s.csv",
            format!("{HEADER}10,1,-,submit\n11,1,-,submit\n"),
            "s.csv:3: id 1 submitted again while still outstanding",
        ),
    ];
    for (name, text, want) in cases {
        let p = write(dir.path(), name, &text);
        assert_one_line_error(&run(&["coalesce", &p, "--policy", "adaptive"]), want);
    }
    // An id may be reused once it was delivered.
    let p = write(
        dir.path(),
        "r.csv",
        &format!("{HEADER}10,1,-,complete\n20000,1,-,complete\n"),
    );
    assert!(run(&["coalesce", &p, "--policy", "adaptive"])
        .status
        .success());
    assert_one_line_error(
        &run(&["coalesce", "/nonexistent/x.csv"]),
        "/nonexistent/x.csv: cannot read",
    );
}

#[test]
fn bad_cli_values_give_one_line() {
    let s = stream(&[(0, 1, "-", "complete")]);
    assert_one_line_error(
        &run_stdin(&["coalesce", "--delta", "6"], &s),
        "needs a unit",
    );
    assert_one_line_error(
        &run_stdin(&["coalesce", "--delta", "6 parsecs"], &s),
        "--delta",
    );
    assert_one_line_error(
        &run_stdin(&["coalesce", "--policy", "fast"], &s),
        "unknown policy 'fast'",
    );
    assert_one_line_error(
        &run_stdin(&["coalesce", "--thr", "0"], &s),
        "--thr: 0 is outside",
    );
    assert_one_line_error(&run_stdin(&["coalesce", "--ooo", "maybe"], &s), "--ooo");
    assert_one_line_error(
        &run_stdin(&["coalesce", "--policy", "nvme", "--aggr-time", "20us"], &s),
        "not a multiple of 100us",
    );
    assert_one_line_error(
        &run_stdin(&["coalesce", "--policy", "adaptive", "--ooo", "on"], &s),
        "does not apply",
    );
}

#[test]
fn policies_lists_every_strategy_with_defaults() {
    let out = stdout(&run(&["policies"]));
    for s in policy::catalogue::STRATEGIES {
        assert!(
            out.lines().any(|l| l.starts_with(s.name)),
            "{} missing",
            s.name
        );
    }
    assert!(out.contains("--delta          6us"), "{out}");
    assert!(out.contains("--max-irq-rate   off"), "{out}");
    for s in host::uring::STRATEGIES {
        assert!(
            out.lines().any(|l| l.trim_start().starts_with(s.name)),
            "io_uring {} missing",
            s.name
        );
    }
}

#[test]
fn jobs_reads_paper_style_files_and_rejects_bad_ones() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(
        dir.path(),
        "mixed.fio",
        "[global]\nfilename=/dev/nvme0n1\ndirect=1\ncpus_allowed=1\nbs=4k\nruntime=60\ntime_based\ngtod_reduce=1\n;iodepth=32\n\n\
         [sync]\nrw=randread\nioengine=psync\n\n[async]\nrw=randread\nioengine=libaio\niodepth=16\niodepth_batch_submit=16\n",
    );
    let o = run(&["jobs", &good]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("read marks:  U"),
        "psync reads are Urgent:\n{out}"
    );
    assert!(
        out.contains("- - - ... B (batch of 16)"),
        "libaio: Barrier on the last:\n{out}"
    );
    assert!(
        stderr(&o).contains("mixed.fio:8: option 'gtod_reduce' ignored"),
        "{}",
        stderr(&o)
    );
    let bad = write(dir.path(), "bad.fio", "[job]\nrw=randread\nbs=4q\n");
    assert_one_line_error(&run(&["jobs", &bad]), "bad.fio:3");
    let unknown = write(dir.path(), "unk.fio", "[job]\nrw=randread\nfrobnicate=1\n");
    assert_one_line_error(&run(&["jobs", &unknown]), "unk.fio:3");
}
