//! `tune --store` (issue 28 item 4): a tuning kept in a store resumes
//! where it stopped, array tasks each run their shard of the candidates,
//! and every way prints and writes the tuning of one run without a store.

mod common;

use std::path::Path;
use std::process::Output;

use common::*;

fn example(name: &str) -> String {
    format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// `tune` on the paper's workload at 10 ms a run, with `extra` options and
/// `env` (a cluster's array variables), none inherited from the test's.
/// One candidate delta (p90's, as --percentile's), so the candidates are
/// TOS 5.2's 14 thr points; several deltas in a store: crates/tune's
/// tests/kept.rs.
fn tune(out: &Path, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = bin_outside_array();
    cmd.envs(env.iter().copied())
        .args(["tune", &example("tune-libaio.fio"), "--runtime", "10ms"])
        .args(["--delta-percentiles", "90"])
        .args(["--out", out.to_str().unwrap()])
        .args(extra);
    succeeds(&mut cmd)
}

/// tune.json's results, apart from what made them (their command lines
/// and loads differ).
fn json(path: &Path) -> serde_json::Value {
    results_of(&std::fs::read_to_string(path).unwrap())
}

/// The stored runs' files, sorted.
fn runs(store: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(store)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    v.sort();
    v
}

/// A tune of `extra` options (and `env`) writing into `d/name`, which
/// must print `want` as its counts.
fn kept(d: &Path, name: &str, extra: &[&str], env: &[(&str, &str)], want: &str) -> Output {
    let o = tune(&d.join(name), extra, env);
    assert_eq!(store_counts(&o, "tune"), want, "{name}");
    o
}

/// `o`, written into `d/name`, tuned as `plain` did into `d/plain`.
fn tuned_alike(d: &Path, name: &str, o: &Output, plain: &Output) {
    assert_eq!(stdout(o), stdout(plain), "{name}");
    assert_eq!(
        json(&d.join(name).join("tune.json")),
        json(&d.join("plain/tune.json")),
        "{name}"
    );
}

#[test]
fn a_stored_tuning_resumes_and_shards_into_the_one_machine_tuning() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let plain = tune(&d.join("plain"), &[], &[]);

    // Kept: the same tuning, every run stored (the baseline and 14 thrs).
    let store = d.join("store");
    let s = store.to_str().unwrap();
    let want = "15 runs: 0 stored before, 15 run now, 0 failed";
    let first = kept(d, "first", &["--store", s], &[], want);
    tuned_alike(d, "first", &first, &plain);
    let all = runs(&store);
    assert_eq!(all.len(), 15);

    // As a killed tuning leaves it: three runs missing; only they run.
    for p in &all[..3] {
        std::fs::remove_file(p).unwrap();
    }
    let want = "15 runs: 12 stored before, 3 run now, 0 failed";
    let resumed = kept(d, "resumed", &["--store", s], &[], want);
    tuned_alike(d, "resumed", &resumed, &plain);
    assert_eq!(runs(&store), all);

    // Three array tasks into a fresh store (the last named by Slurm's
    // variables), then a final assembly that runs nothing.
    let shared = d.join("shared");
    let sh = shared.to_str().unwrap();
    let want = "6 runs: 0 stored before, 6 run now, 0 failed";
    let t0 = kept(d, "t0", &["--store", sh, "--shard", "0/3"], &[], want);
    assert_eq!(stdout(&t0), "", "a shard alone cannot tune");
    let err = stderr(&t0);
    assert!(err.contains("9 of 14 candidates are not in"), "{err}");
    assert!(!d.join("t0").join("tune.json").exists());
    let want = "6 runs: 1 stored before, 5 run now, 0 failed";
    kept(d, "t1", &["--store", sh, "--shard", "1/3"], &[], want);
    let slurm = [
        ("SLURM_ARRAY_TASK_ID", "2"),
        ("SLURM_ARRAY_TASK_COUNT", "3"),
    ];
    let want = "5 runs: 1 stored before, 4 run now, 0 failed";
    let t2 = kept(d, "t2", &["--store", sh], &slurm, want);
    tuned_alike(d, "t2", &t2, &plain);
    let want = "15 runs: 15 stored before, 0 run now, 0 failed";
    let last = kept(d, "last", &["--store", sh], &[], want);
    tuned_alike(d, "last", &last, &plain);
    // The same runs, whichever way they were made.
    let names = |v: Vec<std::path::PathBuf>| -> Vec<_> {
        v.iter()
            .map(|p| p.file_name().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names(runs(&shared)), names(all));
}

#[test]
fn bad_stores_and_shards_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let job = example("tune-libaio.fio");
    let store = d.join("store");
    let s = store.to_str().unwrap();
    let with = |extra: &[&str]| {
        let mut a = vec!["tune", job.as_str(), "--runtime", "5ms"];
        a.extend_from_slice(extra);
        run(&a)
    };
    assert_one_line_error(&with(&["--store", s, "--shard", "3/2"]), "0-based");
    assert_one_line_error(&with(&["--shard", "0/2"]), "give --store DIR");
    assert_one_line_error(
        &with(&["--store", s, "--shard", "0/2", "--shards", "3"]),
        "they disagree",
    );
    assert_one_line_error(
        &with(&["--mode", "emu", "--backend", "null:10us", "--store", s]),
        "an emulator run is a measurement",
    );
    let file = write(d, "a-file", "");
    assert_one_line_error(&with(&["--store", &file]), "a-file");

    // A stored run that does not read: named, not run over.
    let o = with(&["--store", s, "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let victim = runs(&store).pop().unwrap();
    std::fs::write(&victim, "{\"key\": ").unwrap();
    assert_one_line_error(&with(&["--store", s]), &victim.display().to_string());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "{\"key\": ");
}
