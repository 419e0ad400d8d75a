//! `reproduce --store` (issue 28 item 4): every simulated run kept, so a
//! rerun reads them, a reproduce with runs removed from its store runs
//! only those, and shards each run their share; every way writes the
//! report of one run without a store (its runs and its summary, but for
//! the wall time).

use std::path::{Path, PathBuf};

use policy::MS;
use report::Mode;
use repro::run::{Keep, KeptCounts, Plan};
use store::{Shard, Store, Tally};

/// Fig 10 (mixed workloads) and Fig 15 (its bottom row throttled to
/// another run's IOPS), short.
fn opts(out: &Path) -> repro::Options {
    repro::Options {
        only: vec!["fig10".into(), "fig15".into()],
        plan: Plan {
            modes: vec![Mode::Sim],
            sim_runtime: 30 * MS,
            sim_seeds: 2,
            emu_runtime: 100 * MS,
            emu_reps: 1,
        },
        out: out.to_path_buf(),
        command: "test".into(),
    }
}

fn kept(out: &Path, store: &Store, shard: Shard) -> (Option<repro::write::Tally>, KeptCounts) {
    repro::reproduce_kept(&opts(out), Keep { store, shard }, &|_, _| {}).unwrap()
}

fn counts(runs: usize, before: usize, now: usize) -> KeptCounts {
    KeptCounts {
        tally: Tally {
            runs,
            before,
            now,
            failed: 0,
        },
        missing: 0,
    }
}

/// `v` without its `made_by` objects (what made it: the time and load
/// differ from run to run, the results must not), each checked present.
fn results_only(mut v: serde_json::Value) -> serde_json::Value {
    fn strip(v: &mut serde_json::Value) -> usize {
        match v {
            serde_json::Value::Object(m) => {
                let here = usize::from(m.remove("made_by").is_some());
                here + m.values_mut().map(strip).sum::<usize>()
            }
            serde_json::Value::Array(a) => a.iter_mut().map(strip).sum(),
            _ => 0,
        }
    }
    assert!(strip(&mut v) > 0, "no made_by in {v}");
    v
}

/// A report's runs (file name and JSON) and its summary without the wall
/// time and what made them: what must not change.
fn written(out: &Path) -> (Vec<(PathBuf, serde_json::Value)>, serde_json::Value) {
    fn walk(root: &Path, dir: &Path, into: &mut Vec<(PathBuf, serde_json::Value)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, into);
            } else {
                let text = std::fs::read_to_string(&p).unwrap();
                let v = serde_json::from_str(&text).unwrap();
                into.push((p.strip_prefix(root).unwrap().into(), results_only(v)));
            }
        }
    }
    let mut runs = Vec::new();
    walk(&out.join("runs"), &out.join("runs"), &mut runs);
    assert!(!runs.is_empty());
    runs.sort_by(|a, b| a.0.cmp(&b.0));
    let text = std::fs::read_to_string(out.join("summary.json")).unwrap();
    let mut summary: serde_json::Value = serde_json::from_str(&text).unwrap();
    summary.as_object_mut().unwrap().remove("wall_secs");
    (runs, results_only(summary))
}

fn stored(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

#[test]
fn a_kept_reproduce_resumes_and_shards_into_the_one_machine_report() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    repro::reproduce(&opts(&d.join("plain")), &|_, _| {}).unwrap();
    let want = written(&d.join("plain"));

    let store = Store::open(&d.join("store")).unwrap();
    let (tally, c) = kept(&d.join("first"), &store, Shard::ALL);
    assert!(tally.is_some());
    let n = c.tally.runs;
    assert!(n > 10, "{c:?}");
    assert_eq!(c, counts(n, 0, n));
    assert_eq!(
        c.line(),
        format!("{n} runs: 0 stored before, {n} run now, 0 failed")
    );
    assert_eq!(written(&d.join("first")), want);
    let all = stored(&store.dir);
    assert_eq!(all.len(), n);

    // As a killed reproduce leaves it: three runs missing; only they run.
    for p in &all[..3] {
        std::fs::remove_file(p).unwrap();
    }
    let (_, c) = kept(&d.join("resumed"), &store, Shard::ALL);
    assert_eq!(c, counts(n, n - 3, 3));
    assert_eq!(written(&d.join("resumed")), want);
    assert_eq!(stored(&store.dir), all);

    // Three shards into a fresh store: none writes a report, each run is
    // run once (the throttled ones, whose cap is another shard's run, by
    // the final assembly if their own shard came too early).
    let shared = Store::open(&d.join("shared")).unwrap();
    let mut ran = 0;
    for k in 0..3 {
        let out = d.join(format!("t{k}"));
        let (tally, c) = kept(&out, &shared, Shard::new(k, 3).unwrap());
        assert_eq!(c.tally.failed, 0);
        ran += c.tally.now;
        if c.missing > 0 {
            assert!(tally.is_none() && !out.exists(), "shard {k}: no report");
        }
    }
    let (tally, c) = kept(&d.join("last"), &shared, Shard::ALL);
    assert!(tally.is_some());
    assert_eq!((c.tally.runs, c.missing), (n, 0));
    assert_eq!(ran + c.tally.now, n, "every run once");
    assert_eq!(written(&d.join("last")), want);
}

#[test]
fn a_corrupt_stored_run_is_one_line_naming_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("store")).unwrap();
    kept(&dir.path().join("a"), &store, Shard::ALL);
    let victim = stored(&store.dir).pop().unwrap();
    std::fs::write(&victim, "{\"key\": ").unwrap();
    let keep = Keep {
        store: &store,
        shard: Shard::ALL,
    };
    let e = repro::reproduce_kept(&opts(&dir.path().join("b")), keep, &|_, _| {})
        .unwrap_err()
        .to_string();
    assert!(e.starts_with(&victim.display().to_string()), "{e}");
    assert!(!e.contains('\n'), "{e}");
}

#[test]
fn the_emulator_is_refused_a_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("store")).unwrap();
    let mut o = opts(&dir.path().join("a"));
    o.plan.modes = vec![Mode::Sim, Mode::Emu];
    let keep = Keep {
        store: &store,
        shard: Shard::ALL,
    };
    let e = repro::reproduce_kept(&o, keep, &|_, _| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("--mode sim") && e.contains("measurement"), "{e}");
    assert!(stored(&store.dir).is_empty());
}
