//! `cinterrupts sweep` end to end on a tiny spec (2 strategies x 2 deltas
//! x 2 seeds on examples/mixed-16.fio, 20 ms each): the counts line, a
//! resumed run, shards from --shard and from Slurm's environment merged
//! into the unsharded table, the sbatch script, one-line errors.

mod common;

use std::path::Path;

use common::*;

const TINY: &str = r#"
workloads = ["mixed-16.fio"]
devices = ["optane"]
seeds = [1, 2]
runtime = "20ms"
strategies = [
  { name = "adaptive", grid = { delta = ["2us", "6us"] } },
  { name = "cint", grid = { delta = ["2us", "6us"] } },
]
"#;

/// The tiny spec in `dir`, the job file beside it; its path.
fn tiny(dir: &Path) -> String {
    let example = format!("{}/../../examples/mixed-16.fio", env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(example, dir.join("mixed-16.fio")).unwrap();
    write(dir, "sweep.toml", TINY)
}

fn ok(o: &std::process::Output) -> String {
    assert!(o.status.success(), "{}", stderr(o));
    stdout(o)
}

#[test]
fn a_rerun_after_losing_two_results_runs_exactly_two() {
    let dir = tempfile::tempdir().unwrap();
    let spec = tiny(dir.path());
    let out = ok(&run(&["sweep", "run", &spec, "-q"]));
    assert_eq!(out, "8 points: 0 finished before, 8 run now, 0 failed\n");
    // The default store is beside the spec, a file per point.
    let store = dir.path().join("sweep-store");
    let mut files: Vec<_> = std::fs::read_dir(&store)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 8);
    std::fs::remove_file(&files[0]).unwrap();
    std::fs::remove_file(&files[5]).unwrap();
    let out = ok(&run(&["sweep", "run", &spec, "-q"]));
    assert_eq!(out, "8 points: 6 finished before, 2 run now, 0 failed\n");
    let out = ok(&run(&["sweep", "run", &spec, "-q"]));
    assert_eq!(out, "8 points: 8 finished before, 0 run now, 0 failed\n");
}

#[test]
fn four_shards_merge_into_the_unsharded_table() {
    let dir = tempfile::tempdir().unwrap();
    let spec = tiny(dir.path());
    let whole = dir.path().join("whole");
    ok(&run(&[
        "sweep",
        "run",
        &spec,
        "--store",
        whole.to_str().unwrap(),
    ]));
    // Shards 0 and 1 from --shard, 2 from Slurm's array variables, 3 from
    // an Indexed Job's: each its own store.
    let mut stores = Vec::new();
    for k in 0..4 {
        let store = dir.path().join(format!("shard{k}"));
        let s = store.to_str().unwrap().to_string();
        let shard = format!("{k}/4");
        let mut cmd = bin();
        cmd.args(["sweep", "run", &spec, "--store", &s]);
        match k {
            0 | 1 => {
                cmd.args(["--shard", &shard]);
            }
            2 => {
                cmd.env("SLURM_ARRAY_TASK_ID", "2")
                    .env("SLURM_ARRAY_TASK_COUNT", "4");
            }
            _ => {
                cmd.env("JOB_COMPLETION_INDEX", "3").args(["--shards", "4"]);
            }
        }
        let o = cmd.output().unwrap();
        assert_eq!(
            ok(&o),
            "2 points: 0 finished before, 2 run now, 0 failed\n",
            "shard {k}"
        );
        assert!(
            stderr(&o).contains(&format!("shard {k}/4")),
            "{}",
            stderr(&o)
        );
        stores.push(s);
    }
    let merged_whole = dir.path().join("merged-whole");
    let merged_shards = dir.path().join("merged-shards");
    let out = ok(&run(&[
        "sweep",
        "merge",
        whole.to_str().unwrap(),
        "--out",
        merged_whole.to_str().unwrap(),
    ]));
    assert!(out.starts_with("8 points from 1 stores"), "{out}");
    assert!(
        out.contains("mixed-16.fio on optane (xeon-e5-2660v4):"),
        "{out}"
    );
    let mut args = vec!["sweep", "merge"];
    args.extend(stores.iter().map(String::as_str));
    args.extend(["--out", merged_shards.to_str().unwrap()]);
    let out = ok(&run(&args));
    assert!(out.starts_with("8 points from 4 stores"), "{out}");
    for name in MERGED_FILES {
        let a = merged_results(&merged_whole, name);
        let b = merged_results(&merged_shards, name);
        assert_eq!(a, b, "{name}");
    }
    // What made it (issue 42 item 1): the report says the points' code
    // version and the merge's commit, machine and command line.
    let made: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(merged_whole.join("made_by.json")).unwrap())
            .unwrap();
    assert_made_by(&made["made_by"], &["sweep", "merge"]);
    let version = made["points_run_by"][0].as_str().unwrap().to_string();
    assert_eq!(made["points_run_by"].as_array().unwrap().len(), 1, "{made}");
    let md = std::fs::read_to_string(merged_whole.join("report.md")).unwrap();
    let commit = made["made_by"]["code"]["commit"].as_str().unwrap();
    assert!(
        md.contains("## Made by") && md.contains(&version) && md.contains(commit),
        "{md}"
    );
    let csv = std::fs::read_to_string(merged_whole.join("table.csv")).unwrap();
    assert_eq!(csv.lines().count(), 9, "a header and 8 rows");
}

#[test]
fn the_slurm_script_has_the_array_the_cpus_and_the_run_line() {
    let dir = tempfile::tempdir().unwrap();
    let spec = tiny(dir.path());
    let o = run(&[
        "sweep",
        "slurm",
        &spec,
        "--tasks",
        "4",
        "--store",
        "/shared/store",
        "--cpus-per-task",
        "2",
        "--binary",
        "cinterrupts",
    ]);
    let script = ok(&o);
    let lines: Vec<&str> = script.lines().collect();
    assert_eq!(lines[0], "#!/bin/bash");
    assert!(lines.contains(&"#SBATCH --array=0-3"), "{script}");
    assert!(lines.contains(&"#SBATCH --cpus-per-task=2"), "{script}");
    let run_line = format!(
        "cinterrupts sweep run {spec} --store /shared/store --shard \"${{SLURM_ARRAY_TASK_ID}}/4\""
    );
    assert!(lines.contains(&run_line.as_str()), "{script}");
    assert!(script.contains("sweep merge /shared/store"), "{script}");
    assert!(stderr(&o).contains("8 points in 4 tasks"), "{}", stderr(&o));
}

#[test]
fn bad_input_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let spec = tiny(dir.path());
    assert_one_line_error(&run(&["sweep", "run", &spec, "--shard", "4/4"]), "0-based");
    assert_one_line_error(&run(&["sweep", "run", &spec, "--shard", "x"]), "K/N");
    let o = bin()
        .args(["sweep", "run", &spec])
        .env("JOB_COMPLETION_INDEX", "1")
        .output()
        .unwrap();
    assert_one_line_error(&o, "--shards");
    assert_one_line_error(
        &run(&["sweep", "slurm", &spec, "--tasks", "0"]),
        "at least 1 task",
    );
    // --submit runs sbatch from the PATH: none there is one line naming
    // the package.
    let o = bin()
        .args(["sweep", "slurm", &spec, "--tasks", "2", "--submit"])
        .env("PATH", "")
        .output()
        .unwrap();
    assert_one_line_error(&o, "apt-get install slurm-client");
    let o = run(&["sweep", "slurm", &spec, "--tasks", "2", "--wait"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--submit"), "{}", stderr(&o));
    let bad = write(
        dir.path(),
        "bad.toml",
        "workloads = [\"mixed-16.fio\"]\ndevices = [\"optane\"]\nruntime = \"20ms\"\nstrategies = [{ name = \"adaptive\", grid = { thr = [\"many\"] } }]\n",
    );
    assert_one_line_error(
        &run(&["sweep", "run", &bad]),
        "bad.toml:4: key 'strategies[0].grid.thr': 'many' is not a whole number",
    );
    assert_one_line_error(
        &run(&[
            "sweep",
            "merge",
            dir.path().join("nowhere").to_str().unwrap(),
        ]),
        "no such store directory",
    );
}

#[test]
fn a_sweep_killed_halfway_runs_only_the_missing_points_when_started_again() {
    let dir = tempfile::tempdir().unwrap();
    let spec = tiny(dir.path());
    // Longer points, one at a time, so the kill lands mid-sweep.
    let slow = std::fs::read_to_string(&spec)
        .unwrap()
        .replace("runtime = \"20ms\"", "runtime = \"400ms\"");
    std::fs::write(&spec, slow).unwrap();
    let store = dir.path().join("sweep-store");
    let mut child = bin()
        .args(["sweep", "run", &spec, "-q"])
        .env("RAYON_NUM_THREADS", "1")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let finished = |store: &Path| {
        std::fs::read_dir(store).map_or(0, |d| {
            d.filter_map(Result::ok)
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .count()
        })
    };
    let start = std::time::Instant::now();
    while finished(&store) == 0 && start.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = finished(&store);
    assert!(before >= 1, "nothing finished before the kill");
    let out = ok(&run(&["sweep", "run", &spec, "-q"]));
    assert_eq!(
        out,
        format!(
            "8 points: {before} finished before, {} run now, 0 failed\n",
            8 - before
        )
    );
}

/// A store that cannot lie (issue 42 item 5), on the command line: merge
/// names every bad entry at once and writes nothing; `sweep run` runs them
/// again and says how many; `--dry-run` counts without running.
#[test]
fn merge_lists_every_bad_entry_and_run_runs_them_again() {
    let dir = tempfile::tempdir().unwrap();
    let spec = tiny(dir.path());
    let store = dir.path().join("sweep-store");
    ok(&run(&["sweep", "run", &spec, "-q"]));
    let mut files: Vec<_> = std::fs::read_dir(&store)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    std::fs::write(&files[1], "").unwrap();
    let text = std::fs::read_to_string(&files[6]).unwrap();
    std::fs::write(&files[6], &text[..text.len() / 2]).unwrap();
    let out = dir.path().join("out");
    let o = run(&[
        "sweep",
        "merge",
        store.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    let named: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("sweep merge: "))
        .collect();
    assert_eq!(named.len(), 2, "{err}");
    assert!(named[0].contains(&*files[1].to_string_lossy()) && named[0].contains("empty"));
    assert!(named[1].contains(&*files[6].to_string_lossy()) && named[1].contains("truncated"));
    assert!(!out.exists(), "nothing written");
    let plan = ok(&run(&["sweep", "run", &spec, "--dry-run"]));
    assert_eq!(
        plan.lines()
            .next()
            .unwrap()
            .split(" (first")
            .next()
            .unwrap(),
        "8 of 8 points in this shard: 6 finished before, 0 failed, 2 to run"
    );
    let again = ok(&run(&["sweep", "run", &spec, "-q"]));
    assert_eq!(
        again,
        "8 points: 6 finished before, 2 run now, 0 failed\n2 bad entries run again (1 empty, 1 truncated)\n"
    );
    ok(&run(&[
        "sweep",
        "merge",
        store.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]));
    assert!(out.join("table.csv").is_file());
}
