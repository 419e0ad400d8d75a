//! `reproduce --store` on the command line (issue 28 item 4): the counts
//! it prints, a rerun that runs nothing and writes the same report, two
//! array tasks and a final assembly, and one-line errors. What is kept and
//! how shards split it: `crates/repro/tests/kept.rs`.

mod common;

use std::path::Path;
use std::process::Output;

use common::*;

fn reproduce(out: &Path, extra: &[&str]) -> Output {
    let mut cmd = bin_outside_array();
    cmd.args(["reproduce", "--quick", "--only", "fig10,fig15"])
        .args(["--sim-runtime", "30ms", "--seeds", "1"])
        .args(["--out", out.to_str().unwrap()])
        .args(extra);
    succeeds(&mut cmd)
}

/// summary.json without the wall time and the command line.
fn summary(out: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(out.join("summary.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let m = v.as_object_mut().unwrap();
    m.remove("wall_secs");
    m.remove("command");
    results_only(v)
}

#[test]
fn a_stored_reproduce_reruns_nothing_and_shards_assemble_the_same_report() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let plain = reproduce(&d.join("plain"), &[]);
    let store = d.join("store");
    let s = store.to_str().unwrap();
    let first = reproduce(&d.join("first"), &["--store", s]);
    let n = std::fs::read_dir(&store).unwrap().count();
    assert!(n > 3);
    assert_eq!(
        store_counts(&first, "reproduce"),
        format!("{n} runs: 0 stored before, {n} run now, 0 failed")
    );
    let again = reproduce(&d.join("again"), &["--store", s]);
    assert_eq!(
        store_counts(&again, "reproduce"),
        format!("{n} runs: {n} stored before, 0 run now, 0 failed")
    );
    for (o, name) in [(&first, "first"), (&again, "again")] {
        assert_eq!(summary(&d.join(name)), summary(&d.join("plain")), "{name}");
        // The verdict line but for where the report is.
        let line = |o: &Output| stdout(o).split("; report:").next().unwrap().to_string();
        assert_eq!(line(o), line(&plain), "{name}");
    }

    // Two array tasks into a fresh store (the second from Slurm's
    // variables), then the final assembly.
    let shared = d.join("shared");
    let sh = shared.to_str().unwrap();
    let t0 = reproduce(&d.join("t0"), &["--store", sh, "--shard", "0/2"]);
    assert_eq!(stdout(&t0), "", "a shard alone writes no report");
    assert!(stderr(&t0).contains("not in"), "{}", stderr(&t0));
    assert!(!d.join("t0").exists());
    let mut cmd_env = bin_outside_array();
    cmd_env
        .env("SLURM_ARRAY_TASK_ID", "1")
        .env("SLURM_ARRAY_TASK_COUNT", "2")
        .args(["reproduce", "--quick", "--only", "fig10,fig15"])
        .args(["--sim-runtime", "30ms", "--seeds", "1", "--store", sh])
        .args(["--out", d.join("t1").to_str().unwrap()]);
    let t1 = succeeds(&mut cmd_env);
    assert!(stderr(&t1).contains("shard 1/2"), "{}", stderr(&t1));
    let last = reproduce(&d.join("last"), &["--store", sh]);
    let before: usize = store_counts(&last, "reproduce")
        .split(": ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|k| k.parse().ok())
        .unwrap();
    assert!(before > 0, "{}", store_counts(&last, "reproduce"));
    assert_eq!(summary(&d.join("last")), summary(&d.join("plain")));
}

#[test]
fn bad_stores_and_shards_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("out");
    let o = out.to_str().unwrap();
    let s = d.join("store");
    let s = s.to_str().unwrap();
    let with = |extra: &[&str]| {
        let mut a = vec!["reproduce", "--quick", "--only", "fig10,fig15", "--out", o];
        a.extend_from_slice(extra);
        run(&a)
    };
    assert_one_line_error(&with(&["--store", s, "--shard", "3/2"]), "0-based");
    assert_one_line_error(&with(&["--shard", "0/2"]), "give --store DIR");
    assert_one_line_error(
        &with(&["--store", s, "--mode", "both"]),
        "an emulator run is a measurement",
    );
    let file = write(d, "a-file", "");
    assert_one_line_error(&with(&["--store", &file]), "a-file");
}
