//! Volumes, queues and the replay transforms end to end (issue 41 items 4
//! and 6): `sim --trace --per-volume` on a generated 1,000-volume trace,
//! `--volume` selecting exactly one volume's requests, `--queues-by`, and
//! each transform's counts in the report (`coalesce --trace` and `sim
//! --trace`); bad options are one line.

mod common;

use std::collections::HashMap;

use common::{assert_one_line_error, run, stderr, stdout, write};
use serde_json::Value;

/// An Alibaba CSV (`device_id,opcode,offset,length,timestamp` in us) of
/// `n` requests 50 us apart over `volumes` volumes (the first `volumes`
/// one each, the rest drawn by a fixed LCG, Knuth's MMIX constants, so
/// every run is the same); and each volume's count.
fn alibaba(n: u64, volumes: u64) -> (String, HashMap<String, u64>) {
    let mut x: u64 = 42;
    let mut next = || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        x >> 33
    };
    let mut counts = HashMap::new();
    let mut s = String::new();
    for i in 0..n {
        let v = if i < volumes { i } else { next() % volumes };
        let op = if next() % 10 < 3 { "W" } else { "R" };
        let offset = (next() % (1 << 20)) * 4096;
        s += &format!(
            "{v},{op},{offset},4096,{}\n",
            1_577_808_000_000_000 + i * 50
        );
        *counts.entry(v.to_string()).or_insert(0) += 1;
    }
    (s, counts)
}

fn json(args: &[&str]) -> Value {
    let o = run(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

#[test]
fn per_volume_replays_a_thousand_volumes_with_a_fleet_summary_that_adds_up() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, counts) = alibaba(5_000, 1_000);
    assert_eq!(counts.len(), 1_000, "every volume drawn");
    let trace = write(dir.path(), "fleet.csv", &csv);
    let v = json(&[
        "sim",
        "--trace",
        &trace,
        "--per-volume",
        "--policy",
        "cint",
        "--output-format",
        "json",
        "--quiet",
    ]);
    let fleet = &v["fleet"];
    let rows = fleet["volumes"].as_array().unwrap();
    assert_eq!(rows.len(), 1_000);
    assert_eq!(fleet["strategies"], serde_json::json!(["default", "cint"]));
    let mut sum = 0;
    for row in rows {
        let n = row["requests"].as_u64().unwrap();
        assert_eq!(n, counts[row["volume"].as_str().unwrap()]);
        sum += n;
        for run in row["runs"].as_array().unwrap() {
            assert_eq!(run["completed"].as_u64().unwrap(), n, "{row}");
            assert!(run["interrupts"].as_u64().unwrap() >= 1, "{row}");
        }
    }
    assert_eq!(sum, 5_000);
    assert_eq!(fleet["requests"].as_u64().unwrap(), 5_000);
    let cint = &fleet["summary"][0];
    assert_eq!(cint["strategy"], "cint");
    assert_eq!(cint["interrupts_saved_pct"]["volumes"], 1_000);
    assert_eq!(cint["p99_added_us"]["volumes"], 1_000);
    let (lo, hi) = (
        cint["p99_added_us"]["min"].as_f64().unwrap(),
        cint["p99_added_us"]["max"].as_f64().unwrap(),
    );
    assert!(lo <= cint["p99_added_us"]["p50"].as_f64().unwrap() && lo <= hi);
    // The text: the rule, a header, one row per volume, the summary.
    let o = run(&["sim", "--trace", &trace, "--per-volume", "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].contains("queues: by process"), "{}", lines[0]);
    let fleet_at = lines.iter().position(|l| l.starts_with("fleet:")).unwrap();
    assert_eq!(fleet_at - 2, 1_000, "one row per volume");
    assert!(
        lines[fleet_at].contains("1000 volumes, 5000 requests"),
        "{}",
        lines[fleet_at]
    );
    assert!(lines[fleet_at + 1].contains("cint vs default"), "{text}");
}

#[test]
fn volume_selects_exactly_that_volumes_requests() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, counts) = alibaba(2_000, 20);
    let trace = write(dir.path(), "vols.csv", &csv);
    let v = json(&[
        "sim",
        "--trace",
        &trace,
        "--volume",
        "7",
        "--output-format",
        "json",
        "--quiet",
    ]);
    assert_eq!(v["replay"]["requests"].as_u64().unwrap(), counts["7"]);
    let step = &v["transforms"][0];
    assert_eq!(step["transform"], "volume");
    assert_eq!(step["kept"].as_u64().unwrap(), counts["7"]);
    assert_eq!(step["dropped"].as_u64().unwrap(), 2_000 - counts["7"]);
    // Two volumes, through coalesce: its request count.
    let o = run(&[
        "coalesce", "--trace", &trace, "--volume", "7", "--volume", "12", "--policy", "cint",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let want = counts["7"] + counts["12"];
    assert!(
        text.contains(&format!("kept {want} of 2000 requests")),
        "{text}"
    );
    assert!(
        text.contains(&format!("vols.csv: {want} requests")),
        "{text}"
    );
    // --per-volume with --volume: that volume's row alone.
    let v = json(&[
        "sim",
        "--trace",
        &trace,
        "--per-volume",
        "--volume",
        "3",
        "--output-format",
        "json",
        "--quiet",
    ]);
    let rows = v["fleet"]["volumes"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["requests"].as_u64().unwrap(), counts["3"]);
}

#[test]
fn transforms_report_what_they_kept_and_moved() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, _) = alibaba(4_000, 4);
    let trace = write(dir.path(), "t.csv", &csv);
    let writes = csv.lines().filter(|l| l.contains(",W,")).count() as u64;
    // 4,000 requests 50 us apart: 199.95 ms. The first 100 ms (2,000
    // requests), writes left out, at twice the rate.
    let v = json(&[
        "sim",
        "--trace",
        &trace,
        "--window",
        "0,100ms",
        "--skip",
        "write",
        "--time-scale",
        "200",
        "--output-format",
        "json",
        "--quiet",
    ]);
    let steps = v["transforms"].as_array().unwrap();
    let names: Vec<&str> = steps
        .iter()
        .map(|s| s["transform"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["window", "skip", "time-scale"]);
    assert_eq!(steps[0]["kept"], 2_000);
    assert_eq!(steps[0]["span_in_ns"], 199_950_000u64);
    let reads = steps[1]["kept"].as_u64().unwrap();
    let early_writes = csv
        .lines()
        .take(2_000)
        .filter(|l| l.contains(",W,"))
        .count() as u64;
    assert_eq!(reads, 2_000 - early_writes);
    assert!(writes > early_writes);
    let (before, after) = (
        steps[2]["span_in_ns"].as_u64().unwrap(),
        steps[2]["span_out_ns"].as_u64().unwrap(),
    );
    assert_eq!(after, before / 2, "gaps halved");
    assert_eq!(v["replay"]["requests"].as_u64().unwrap(), reads);
    assert_eq!(v["replay"]["trace_ns"].as_u64().unwrap(), after);
    assert!(v["queues"].as_str().unwrap().starts_with("by process"));
    // Sampling: about a tenth of the addresses (all distinct here).
    let v = json(&[
        "sim",
        "--trace",
        &trace,
        "--sample",
        "0.1",
        "--output-format",
        "json",
        "--quiet",
    ]);
    let kept = v["transforms"][0]["kept"].as_f64().unwrap();
    // Binomial(4000, 0.1): mean 400, sd 19; five sd either side.
    assert!((kept - 400.0).abs() < 5.0 * 19.0, "{kept}");
    // Merge: this trace with another at 50% for two iterations.
    let other = write(dir.path(), "o.csv", &alibaba(300, 2).0);
    let o = run(&[
        "coalesce",
        "--trace",
        &trace,
        "--merge",
        &format!("{other}:50:2"),
        "--policy",
        "cint",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("transform merge"), "{text}");
    assert!(text.contains("t.csv: 4600 requests"), "{text}");
    // The text report of sim --trace: a line per transform, after the drift.
    let o = run(&["sim", "--trace", &trace, "--time-scale", "50", "--quiet"]);
    let text = stdout(&o);
    let drift = text.find("replay (open loop)").unwrap();
    let line = text.find("transform time-scale 50% (gaps x2)").unwrap();
    assert!(line > drift, "{text}");
}

/// One process (pid 42) issuing `n` reads one at a time, 100 us apart,
/// dispatched from CPU `i mod 3`.
fn blkparse_on_three_cpus(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        let t = i as f64 * 100e-6;
        let sector = 1000 + 8 * i;
        let cpu = i % 3;
        s += &format!(
            "259,0 {cpu:4} {:8} {t:14.9}    42  D   R {sector} + 8 [app]\n",
            2 * i + 1
        );
        s += &format!(
            "259,0 {cpu:4} {:8} {:14.9}     0  C   R {sector} + 8 [0]\n",
            2 * i + 2,
            t + 20e-6
        );
    }
    s
}

#[test]
fn queues_by_names_the_replay_threads_and_says_its_rule() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write(dir.path(), "cpus.blkparse", &blkparse_on_three_cpus(300));
    let threads = |by: &str| {
        let v = json(&[
            "sim",
            "--trace",
            &trace,
            "--queues-by",
            by,
            "--output-format",
            "json",
            "--quiet",
        ]);
        let rule = v["queues"].as_str().unwrap().to_lowercase();
        assert!(rule.starts_with(&format!("by {by}")), "{rule}");
        v["replay"]["processes"].as_u64().unwrap()
    };
    assert_eq!(threads("process"), 1);
    assert_eq!(threads("cpu"), 3);
    assert_eq!(threads("volume"), 1);
}

#[test]
fn bad_transform_options_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write(dir.path(), "t.csv", &alibaba(10, 2).0);
    for (args, want) in [
        (vec!["--skip", "read,erase"], "--skip"),
        (vec!["--sample", "0.7"], "--sample"),
        (vec!["--window", "2s,1s"], "--window"),
        (vec!["--time-scale", "0"], "--time-scale"),
        (vec!["--merge", "/nonexistent/x.csv"], "/nonexistent/x.csv"),
        (vec!["--queues-by", "disk"], "--queues-by"),
    ] {
        let mut all = vec!["sim", "--trace", trace.as_str()];
        all.extend(args.iter());
        assert_one_line_error(&run(&all), want);
    }
    let o = run(&[
        "coalesce",
        "--trace",
        &trace,
        "--plan",
        "feature09",
        "--skip",
        "write",
    ]);
    assert_one_line_error(&o, "--plan");
}
