//! `cinterrupts sim --trace` (issue 27 item 5): a hand-made blkparse trace
//! replayed on the simulator, open loop (at the trace's times: near-zero
//! drift when the device is faster than the gaps) and closed loop (each
//! process keeps as many in flight as recorded); bad input is one line.

mod common;

use common::{assert_one_line_error, run, stdout, write};
use serde_json::Value;

/// One process (pid 42) issuing `n` 4 KiB reads: `depth` at a time, a new
/// group every `gap_us`, each completing `service_us` after its issue.
fn blkparse(n: usize, depth: usize, gap_us: f64, service_us: f64) -> String {
    let mut s = String::new();
    let mut seq = 1;
    for i in 0..n {
        let t = (i / depth) as f64 * gap_us * 1e-6;
        let sector = 1000 + 8 * i;
        for (at, pid, act, comm) in [
            (t, 42, "Q", "[app]"),
            (t, 42, "D", "[app]"),
            (t + service_us * 1e-6, 0, "C", "[0]"),
        ] {
            s += &format!("259,0    0 {seq:8} {at:14.9} {pid:5}  {act}   R {sector} + 8 {comm}\n");
            seq += 1;
        }
    }
    s
}

fn replay(trace: &str, mode: &str) -> Value {
    let o = run(&[
        "sim",
        "--trace",
        trace,
        "--loop",
        mode,
        "--output-format",
        "json",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

/// The mean number in flight by Little's law: IOPS times mean latency.
fn in_flight(v: &Value) -> f64 {
    let read = &v["jobs"][0]["read"];
    read["iops"].as_f64().unwrap() * read["clat_ns"]["mean"].as_f64().unwrap() / 1e9
}

#[test]
fn open_loop_at_qd1_with_fixed_gaps_has_near_zero_drift() {
    let dir = tempfile::tempdir().unwrap();
    // 200 us gaps, 50 us recorded service; optane serves in about 10 us.
    let trace = write(dir.path(), "qd1.blkparse", &blkparse(200, 1, 200.0, 50.0));
    let v = replay(&trace, "open");
    let r = &v["replay"];
    assert_eq!(r["loop"], "open");
    assert_eq!(
        (r["requests"].as_u64(), r["issued"].as_u64()),
        (Some(200), Some(200))
    );
    assert_eq!(r["processes"], 1);
    // Each submit is late only by the timer's wake-up (a few us at most).
    assert!(r["late_max_ns"].as_u64().unwrap() < 5_000, "{r}");
    assert!(r["late_p99_ns"].as_u64().unwrap() < 5_000, "{r}");
    let ratio = r["iops_ratio"].as_f64().unwrap();
    assert!((ratio - 1.0).abs() < 0.01, "{r}");
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 200);
    assert!(in_flight(&v) < 0.1, "{}", in_flight(&v));
}

#[test]
fn closed_loop_keeps_the_recorded_in_flight_count() {
    let dir = tempfile::tempdir().unwrap();
    // QD1: one in flight at a time, so the replay runs back to back (far
    // faster than the trace's 200 us gaps) and never has two out.
    let trace = write(dir.path(), "qd1.blkparse", &blkparse(200, 1, 200.0, 50.0));
    let v = replay(&trace, "closed");
    let r = &v["replay"];
    assert_eq!(r["loop"], "closed");
    assert_eq!(r["issued"], 200);
    assert!(r["iops_ratio"].as_f64().unwrap() > 2.0, "{r}");
    let l = in_flight(&v);
    assert!(l > 0.5 && l <= 1.0 + 1e-9, "mean in flight {l}");
    // QD4: four out at once, recorded; the replay keeps about four.
    let trace = write(dir.path(), "qd4.blkparse", &blkparse(400, 4, 200.0, 50.0));
    let v = replay(&trace, "closed");
    let l = in_flight(&v);
    assert!(l > 2.0 && l <= 4.0 + 1e-9, "mean in flight {l}");
}

#[test]
fn bad_trace_input_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(
        dir.path(),
        "bad.blkparse",
        "259,0    0        1     0.000000000    42  D   R x + 8 [app]\n",
    );
    let o = run(&[
        "sim",
        "--trace",
        &bad,
        "--trace-format",
        "blkparse",
        "--quiet",
    ]);
    assert_one_line_error(&o, "bad.blkparse");
    let empty = write(dir.path(), "empty.blkparse", "");
    let o = run(&[
        "sim",
        "--trace",
        &empty,
        "--trace-format",
        "blkparse",
        "--quiet",
    ]);
    assert_one_line_error(&o, "no requests");
    let o = run(&["sim", "--trace", "/nonexistent/trace.txt", "--quiet"]);
    assert_one_line_error(&o, "/nonexistent/trace.txt");
}

#[test]
fn comm_keeps_one_programs_requests() {
    let dir = tempfile::tempdir().unwrap();
    // A second program (pid 77, `other`) interleaved with the first.
    let other = blkparse(50, 1, 300.0, 40.0)
        .replace("    42  ", "    77  ")
        .replace("[app]", "[other]")
        .replace(" R 1", " R 9");
    let first = blkparse(100, 1, 200.0, 50.0);
    let mut lines: Vec<&str> = first.lines().collect();
    lines.extend(other.lines());
    let time = |l: &&str| l.split_whitespace().nth(3).unwrap().parse::<f64>().unwrap();
    lines.sort_by(|a, b| time(a).total_cmp(&time(b)));
    let trace = write(dir.path(), "two.blkparse", &(lines.join("\n") + "\n"));
    let v = replay(&trace, "open");
    assert_eq!(
        (
            v["replay"]["requests"].as_u64(),
            v["replay"]["processes"].as_u64()
        ),
        (Some(150), Some(2))
    );
    let o = run(&[
        "sim",
        "--trace",
        &trace,
        "--comm",
        "other",
        "--output-format",
        "json",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        (
            v["replay"]["requests"].as_u64(),
            v["replay"]["processes"].as_u64()
        ),
        (Some(50), Some(1))
    );
    assert_eq!(v["jobs"][0]["jobname"], "pid77");
}
