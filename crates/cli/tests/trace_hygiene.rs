//! A trace's integrity downstream (issue 41 item 0): a trace marked
//! partial (`TRACE.partial`, as `capture --allow-loss` leaves it) is
//! warned of by every verb that reads it and said in its output; times that
//! go backwards are one line naming the request, and `--sort` reorders
//! them, in `coalesce --trace`, `sim --trace` and `calibrate --device-from`.

mod common;

use std::path::{Path, PathBuf};

use common::*;

/// A blkparse trace of `n` QD1 4 KiB reads (issue, then completion 18 to
/// 22 us later); `back` moves request `back`'s completion line 1 ms
/// earlier than the completion before it.
fn blkparse(n: usize, back: Option<usize>) -> String {
    let mut s = String::new();
    let mut t: u64 = 1_000_000;
    let mut prev_done = 0;
    for i in 0..n {
        let lat = [18_000, 20_000, 22_000][i % 3];
        let mut done = t + lat;
        if back == Some(i) {
            done = prev_done - 1_000_000;
        }
        for (seq, at, act, tail) in [
            (2 * i + 1, t.min(done), "D", "[fio]"),
            (2 * i + 2, done, "C", "[0]"),
        ] {
            s += &format!(
                "  8,0    0 {seq:>8} {:>5}.{:09}  4242 {act:>2}   R {} + 8 {tail}\n",
                at / 1_000_000_000,
                at % 1_000_000_000,
                1000 + 8 * i
            );
        }
        prev_done = done;
        t = t.max(done) + 5_000;
    }
    s
}

const LOSS: &str =
    "lost 4242 events (per_cpu/cpuN/stats: 0 overrun, 0 commit overrun, 4242 dropped)";

/// A trace in `dir` marked partial by hand, as capture --allow-loss marks
/// one.
fn partial_trace(dir: &Path) -> PathBuf {
    let t = dir.join("cap.blkparse");
    std::fs::write(&t, blkparse(600, None)).unwrap();
    std::fs::write(dir.join("cap.blkparse.partial"), format!("{LOSS}\n")).unwrap();
    t
}

/// A success whose stderr warns of the partial trace, naming the loss.
fn warned(o: &std::process::Output, what: &str) -> String {
    assert!(o.status.success(), "{what}: {}", stderr(o));
    let err = stderr(o);
    let w: Vec<&str> = err.lines().filter(|l| l.contains("warning:")).collect();
    assert_eq!(w.len(), 1, "{what}: one warning: {err}");
    assert!(
        w[0].contains("is a partial trace") && w[0].contains(LOSS),
        "{what}: {err}"
    );
    stdout(o)
}

#[test]
fn every_verb_reading_a_partial_trace_warns_and_says_partial() {
    let dir = tempfile::tempdir().unwrap();
    let t = partial_trace(dir.path());
    let ts = t.to_str().unwrap();
    let said = format!("partial: true ({LOSS})");

    let out = warned(&run(&["coalesce", "--trace", ts]), "coalesce --trace");
    assert!(out.ends_with(&format!("{said}\n")), "{out}");

    let report = dir.path().join("report");
    let o = run(&[
        "coalesce",
        "--trace",
        ts,
        "--report",
        report.to_str().unwrap(),
    ]);
    let out = warned(&o, "coalesce --trace --report");
    assert!(out.contains(&said), "{out}");
    let page = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(
        page.contains("<b>partial: true</b> (lost 4242 events"),
        "{page}"
    );

    let out = warned(
        &run(&["coalesce", "--trace", ts, "--plan", "feature09"]),
        "coalesce --plan",
    );
    assert!(out.contains(&said), "{out}");

    let out = warned(&run(&["sim", "--trace", ts, "--quiet"]), "sim --trace");
    assert!(out.ends_with(&format!("{said}\n")), "{out}");

    let out = warned(
        &run(&["sim", "--trace", ts, "--quiet", "--output-format", "json"]),
        "sim --trace json",
    );
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["partial"], serde_json::Value::Bool(true), "{out}");
    assert_eq!(doc["partial_loss"].as_str(), Some(LOSS));

    let profile = dir.path().join("fit.toml");
    let o = run(&[
        "calibrate",
        "--device-from",
        ts,
        "-o",
        profile.to_str().unwrap(),
    ]);
    let out = warned(&o, "calibrate --device-from");
    assert!(out.contains(&said), "{out}");
    let p = std::fs::read_to_string(&profile).unwrap();
    assert!(p.starts_with(&format!("# partial trace: {LOSS}\n")), "{p}");

    let spec = write(
        dir.path(),
        "sweep.toml",
        "workloads = []\ntraces = [\"cap.blkparse\"]\ndevices = [\"optane\"]\nseeds = [1]\nruntime = \"20ms\"\nstrategies = [{ name = \"cint\" }]\n",
    );
    let out = warned(&run(&["sweep", "run", &spec, "-q"]), "sweep run");
    assert!(out.contains(&format!("cap.blkparse: {said}")), "{out}");

    // Unmarked, the same trace is read without a word.
    std::fs::remove_file(dir.path().join("cap.blkparse.partial")).unwrap();
    let o = run(&["coalesce", "--trace", ts]);
    assert!(
        o.status.success() && stderr(&o).is_empty(),
        "{}",
        stderr(&o)
    );
    assert!(!stdout(&o).contains("partial"));
}

#[test]
fn times_going_back_are_one_line_naming_the_request_unless_sorted() {
    let dir = tempfile::tempdir().unwrap();
    // Request 301's completion 1 ms before request 300's.
    let t = write(dir.path(), "back.blkparse", &blkparse(600, Some(300)));
    let csv = write(
        dir.path(),
        "back.alibaba.csv",
        "0,R,4096,4096,1000000\n0,R,8192,4096,1200000\n0,R,12288,4096,1100000\n0,R,16384,4096,1300000\n",
    );
    for (args, want) in [
        (
            vec!["coalesce", "--trace", &t],
            "request 301: completion time",
        ),
        (
            vec!["sim", "--trace", &t, "--quiet"],
            "request 301: completion time",
        ),
        (
            vec!["calibrate", "--device-from", &t],
            "request 301: completion time",
        ),
        (vec!["coalesce", "--trace", &csv], "request 3: issue time"),
        (
            vec!["sim", "--trace", &csv, "--quiet"],
            "request 3: issue time",
        ),
    ] {
        let o = run(&args);
        assert_one_line_error(&o, want);
        let err = stderr(&o);
        assert!(err.contains("back."), "names the file: {err}");
        assert!(err.contains("--sort"), "{err}");
        let mut sorted = args.clone();
        sorted.push("--sort");
        let o = run(&sorted);
        assert!(o.status.success(), "{sorted:?}: {}", stderr(&o));
    }
    // Sorted, the CSV replays its four requests in time order: the span is
    // 0.3 s (Alibaba times are microseconds), as written.
    let o = run(&[
        "sim",
        "--trace",
        &csv,
        "--quiet",
        "--sort",
        "--output-format",
        "json",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(doc["replay"]["requests"], 4, "{doc}");
    assert_eq!(doc["replay"]["trace_ns"], 300_000_000, "{doc}");
    // --sort needs a trace.
    let o = run(&["coalesce", "--sort"]);
    assert!(!o.status.success());
}
