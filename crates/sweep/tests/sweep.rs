//! A tiny sweep end to end: the spec read, points run into a store,
//! resumed, sharded and merged. 2 strategies x 2 deltas x 2 seeds on the
//! mixed workload (examples/mixed-16.fio), 20 ms of simulated time each.

mod common;

use std::path::{Path, PathBuf};

use common::{examples, quiet, ALL, TINY};
use sweep::merge::merge;
use sweep::{expand, run, RunOptions, Shard, Spec, SpecError, Store};

/// Writes `text` as the spec `sweep.toml` in `dir`, with the examples
/// directory copied beside it so its paths are relative.
fn spec_in(dir: &Path, text: &str) -> PathBuf {
    common::spec_named(dir, "sweep.toml", text)
}

/// Copies `examples/FROM` into `dir` as `to`.
fn copy_example(dir: &Path, from: &str, to: &str) {
    std::fs::copy(examples().join(from), dir.join(to)).unwrap();
}

#[test]
fn the_tiny_spec_expands_to_eight_points_with_distinct_stable_keys() {
    let dir = tempfile::tempdir().unwrap();
    let spec = Spec::load(&spec_in(dir.path(), TINY)).unwrap();
    let points = expand(&spec);
    assert_eq!(points.len(), 8);
    let mut keys: Vec<&str> = points.iter().map(|p| p.key.as_str()).collect();
    keys.dedup();
    assert_eq!(keys.len(), 8);
    assert!(keys.windows(2).all(|w| w[0] < w[1]), "sorted by key");
    // The same spec from another directory gives the same keys.
    let other = tempfile::tempdir().unwrap();
    let again = expand(&Spec::load(&spec_in(other.path(), TINY)).unwrap());
    let again: Vec<&str> = again.iter().map(|p| p.key.as_str()).collect();
    assert_eq!(keys, again);
    // Every parameter in force is in the configuration.
    let params = points[0].config["policy"]["params"].as_object().unwrap();
    assert!(params.contains_key("delta") && params.contains_key("thr"));
}

#[test]
fn a_rerun_runs_only_the_missing_points_and_shards_merge_to_the_same_table() {
    let dir = tempfile::tempdir().unwrap();
    let spec = Spec::load(&spec_in(dir.path(), TINY)).unwrap();
    let store = Store::open(&dir.path().join("store")).unwrap();
    let first = run(&spec, &store, ALL, &quiet).unwrap();
    assert_eq!(
        first.to_string(),
        "8 points: 0 finished before, 8 run now, 0 failed"
    );

    // Resumability: two results lost, two run again.
    let points = expand(&spec);
    for p in &points[2..4] {
        std::fs::remove_file(store.finished_path(&p.key)).unwrap();
    }
    let second = run(&spec, &store, ALL, &quiet).unwrap();
    assert_eq!(
        second.to_string(),
        "8 points: 6 finished before, 2 run now, 0 failed"
    );

    // Four shards into four stores, merged: the same table.
    let mut stores = Vec::new();
    let mut total = 0;
    for k in 0..4 {
        let s = Store::open(&dir.path().join(format!("shard{k}"))).unwrap();
        let opts = RunOptions {
            shard: Shard::new(k, 4).unwrap(),
            retry_failed: false,
        };
        let c = run(&spec, &s, opts, &quiet).unwrap();
        assert_eq!(c.points, 2);
        total += c.run_now;
        stores.push(s);
    }
    assert_eq!(total, 8);
    // As array tasks do: four shards into one shared store.
    let shared = Store::open(&dir.path().join("shared")).unwrap();
    for k in 0..4 {
        let opts = RunOptions {
            shard: Shard::new(k, 4).unwrap(),
            retry_failed: false,
        };
        assert_eq!(run(&spec, &shared, opts, &quiet).unwrap().run_now, 2);
    }
    let shared = merge(std::slice::from_ref(&shared)).unwrap();
    let sharded = merge(&stores).unwrap();
    let whole = merge(std::slice::from_ref(&store)).unwrap();
    assert_eq!(sharded.rows.len(), 8);
    assert_eq!(sharded.csv(), whole.csv());
    assert_eq!(sharded.json(), whole.json());
    assert_eq!(shared.csv(), whole.csv());
    let fronts = sweep::front::fronts(&sharded);
    assert_eq!(fronts.len(), 1);
    // 4 settings (2 strategies x 2 deltas), each the mean of 2 seeds.
    assert_eq!(fronts[0].settings, 4);
    assert!(fronts[0].front.iter().all(|s| s.seeds == 2));
    assert!(!fronts[0].front.is_empty());
}

#[test]
fn hosts_multiply_the_points_and_host_with_hosts_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let text = TINY.replace(
        "devices = [\"optane\"]",
        "devices = [\"optane\"]\nhosts = [\"xeon-e5-2660v4\", \"xeon-e5-2630v3\"]",
    );
    let spec = Spec::load(&spec_in(dir.path(), &text)).unwrap();
    let points = expand(&spec);
    assert_eq!(points.len(), 16);
    let hosts: std::collections::BTreeSet<&str> = points
        .iter()
        .map(|p| p.config["host"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(hosts.len(), 2);
    let both = format!("host = \"xeon-e5-2660v4\"\n{text}");
    let e = Spec::load(&spec_in(dir.path(), &both)).unwrap_err();
    assert!(
        e.to_string()
            .contains("key 'hosts': give host or hosts, not both"),
        "{e}"
    );
}

#[test]
fn a_failed_point_is_kept_and_retried_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let spec = Spec::load(&spec_in(
        dir.path(),
        "workloads = [\"mixed-16.fio\"]\ndevices = [\"optane\"]\nruntime = \"5ms\"\nstrategies = [\"default\"]\n",
    ))
    .unwrap();
    let store = Store::open(&dir.path().join("store")).unwrap();
    let p = &expand(&spec)[0];
    // A failure left by an earlier run (sealed, as a run writes it: a
    // hand-written one without a checksum is a bad entry, run again).
    let failed = store.failed_path(&p.key);
    store
        .put_failed(&sweep::store::Failed {
            key: p.key.clone(),
            version: sweep::version(),
            spec: spec.identity(),
            config: p.config.clone(),
            error: "killed".into(),
        })
        .unwrap();
    let keep = ALL;
    let c = run(&spec, &store, keep, &quiet).unwrap();
    assert_eq!((c.run_now, c.failed, c.failed_before), (0, 1, 1));
    let retry = RunOptions {
        retry_failed: true,
        ..keep
    };
    let c = run(&spec, &store, retry, &quiet).unwrap();
    assert_eq!(
        c.to_string(),
        "1 points: 0 finished before, 1 run now, 0 failed"
    );
    assert!(!failed.exists(), "the finished point replaces its failure");
}

/// The error for `text` (with mixed-16.fio beside it).
fn error_of(text: &str) -> SpecError {
    let dir = tempfile::tempdir().unwrap();
    Spec::load(&spec_in(dir.path(), text)).unwrap_err()
}

#[test]
fn a_bad_spec_is_one_line_naming_the_file_the_line_and_the_key() {
    let base = "workloads = [\"mixed-16.fio\"]\ndevices = [\"optane\"]\nruntime = \"20ms\"\n";
    let cases = [
        // (extra lines, line, key, words in the reason)
        ("strategies = [\"nope\"]\n", 4, "strategies[0]", "unknown strategy"),
        (
            "strategies = [\n  \"default\",\n  { name = \"adaptive\", grid = { delta = [\"6\"] } },\n]\n",
            6,
            "strategies[1].grid.delta",
            "unit",
        ),
        (
            "strategies = [{ name = \"default\", grid = { thr = [1] } }]\n",
            4,
            "strategies[0].grid.thr",
            "does not take",
        ),
        ("strategies = [\"default\"]\nmodes = [\"gpu\"]\n", 5, "modes", "not a mode (sim, emu)"),
        ("strategies = [\"default\"]\nseeds = [1, 1]\n", 5, "seeds", "twice"),
        ("strategies = [\"default\"]\nbogus = 1\n", 5, "bogus", "unknown field"),
        ("strategies = []\n", 4, "strategies", "at least one"),
    ];
    for (extra, line, key, words) in cases {
        let e = error_of(&format!("{base}{extra}"));
        let s = e.to_string();
        assert!(!s.contains('\n'), "{s}");
        match e {
            SpecError::Bad {
                file,
                line: l,
                key: k,
                reason,
            } => {
                assert!(file.ends_with("sweep.toml"), "{s}");
                assert_eq!((l, k.as_str()), (line, key), "{s}");
                assert!(reason.contains(words), "{s}");
            }
            other => panic!("{other}"),
        }
    }
    let e = error_of("workloads = [\"missing.fio\"]\ndevices = [\"optane\"]\nruntime = \"1s\"\nstrategies = [\"default\"]\n");
    assert!(e.to_string().contains(":1: key 'workloads'"), "{e}");
    let e = error_of("workloads = [\"mixed-16.fio\"]\ndevices = [\"nvme9\"]\nruntime = \"1s\"\nstrategies = [\"default\"]\n");
    assert!(e.to_string().contains(":2: key 'devices'"), "{e}");
    let e = error_of("workloads = [\"mixed-16.fio\"]\ndevices = [\"optane\"]\nruntime = true\nstrategies = [\"default\"]\n");
    assert!(
        e.to_string()
            .contains(":3: key 'runtime': true is not a time"),
        "{e}"
    );
    // 1001 seeds x 1000 x 1000 thr-delta pairs: past sweep::spec::MAX_POINTS
    // (10^9), refused before anything counts them one by one.
    let seeds = (1..=1001)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let many = (1..=1000)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let deltas = (1..=1000)
        .map(|i| format!("\"{i}us\""))
        .collect::<Vec<_>>()
        .join(",");
    let e = error_of(&format!(
        "workloads = [\"mixed-16.fio\"]\ndevices = [\"optane\"]\nseeds = [{seeds}]\nruntime = 1\nstrategies = [{{ name = \"adaptive\", grid = {{ thr = [{many}], delta = [{deltas}] }} }}]\n"
    ));
    assert!(
        e.to_string()
            .contains(":5: key 'strategies': 1001000000 points: more than 1000000000"),
        "{e}"
    );
    // A point longer than sweep::spec::MAX_RUNTIME (1 h of virtual time).
    let e = error_of("workloads = [\"mixed-16.fio\"]\ndevices = [\"optane\"]\nruntime = \"100000h\"\nstrategies = [\"default\"]\n");
    assert!(
        e.to_string().contains("sweep.toml:3: key 'runtime'") && e.to_string().contains("longest"),
        "{e}"
    );
    let e = error_of("workloads = [\"/dev/zero\"]\ndevices = [\"optane\"]\nruntime = 1\nstrategies = [\"default\"]\n");
    assert!(e.to_string().contains(":1: key 'workloads'"), "{e}");
    let e = error_of("runtime = \"1s\"\n");
    assert!(e.to_string().contains("missing field"), "{e}");
}

/// Application files and block traces are workloads beside job files: each
/// runs as `sim` runs it, and each is its own group of the merged table.
#[test]
fn application_files_and_traces_are_workloads_of_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    copy_example(d, "apps/kvell-ycsb-c.toml", "kvell.toml");
    copy_example(d, "traces/sample.blkparse", "sample.blkparse");
    let text = r#"
workloads = ["mixed-16.fio", "kvell.toml"]
traces = ["sample.blkparse"]
replay = "closed"
devices = ["optane"]
runtime = "20ms"
strategies = ["default", "cint"]
"#;
    let spec = Spec::load(&spec_in(d, text)).unwrap();
    assert_eq!(spec.workloads.len(), 3);
    let points = expand(&spec);
    assert_eq!(points.len(), 6);
    let kinds: Vec<Option<&str>> = points
        .iter()
        .map(|p| p.config["workload"]["kind"].as_str())
        .collect();
    assert_eq!(kinds.iter().filter(|k| **k == Some("app")).count(), 2);
    assert_eq!(kinds.iter().filter(|k| **k == Some("trace")).count(), 2);
    assert!(points
        .iter()
        .filter(|p| p.config["workload"]["kind"] == "trace")
        .all(|p| p.config["workload"]["replay"] == "closed"));
    let store = Store::open(&d.join("store")).unwrap();
    let counts = run(&spec, &store, ALL, &quiet).unwrap();
    assert_eq!((counts.run_now, counts.failed), (6, 0), "{counts}");
    let table = merge(&[store]).unwrap();
    let groups: std::collections::BTreeSet<&str> =
        table.rows.iter().map(|r| r.workload.as_str()).collect();
    assert_eq!(
        groups.into_iter().collect::<Vec<_>>(),
        ["kvell.toml", "mixed-16.fio", "sample.blkparse"]
    );
    // Every workload did I/O and took interrupts under default.
    for r in table
        .rows
        .iter()
        .filter(|r| r.policy.starts_with("default"))
    {
        assert!(r.iops > 0.0 && r.interrupts_per_sec > 0.0, "{r:?}");
    }
}

#[test]
fn a_bad_trace_or_replay_is_one_line_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("empty.blkparse"), "").unwrap();
    let base = "devices = [\"optane\"]\nruntime = \"20ms\"\nstrategies = [\"default\"]\n";
    let cases = [
        (
            "traces = [\"nowhere.trace\"]\n",
            1,
            "traces",
            "nowhere.trace",
        ),
        ("traces = [\"empty.blkparse\"]\n", 1, "traces", ""),
        (
            "workloads = [\"mixed-16.fio\"]\nreplay = \"sideways\"\n",
            2,
            "replay",
            "not a loop",
        ),
        (
            "workloads = [\"mixed-16.fio\"]\nmarks_from = \"batch\"\n",
            2,
            "marks_from",
            "'batch' is not one of table1, plug, class, process, none",
        ),
    ];
    for (head, line, key, says) in cases {
        let path = spec_in(d, &format!("{head}{base}"));
        let e = Spec::load(&path).unwrap_err().to_string();
        assert!(
            e.contains(&format!("sweep.toml:{line}: key '{key}'")) && e.contains(says),
            "{e}"
        );
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}

/// Emulator points run on this machine, one at a time, keyed by the
/// machine rather than a host profile; a rerun finds them finished.
#[test]
fn emulator_points_run_on_this_machine_and_resume() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    copy_example(d, "sync-read.fio", "sync-read.fio");
    let text = r#"
workloads = ["sync-read.fio"]
devices = ["optane"]
hosts = ["xeon-e5-2660v4", "xeon-e5-2630v3"]
modes = ["sim", "emu"]
runtime = "50ms"
strategies = ["default"]
"#;
    let path = d.join("sweep.toml");
    std::fs::write(&path, text).unwrap();
    let spec = Spec::load(&path).unwrap();
    let points = expand(&spec);
    // Two hosts for the simulator; the emulator's host is the machine.
    assert_eq!(points.len(), 3);
    let emu: Vec<_> = points
        .iter()
        .filter(|p| p.config["mode"] == "emu")
        .collect();
    assert_eq!(emu.len(), 1);
    assert_eq!(emu[0].config["host"]["name"], sim::bench::machine());
    let store = Store::open(&d.join("store")).unwrap();
    let counts = run(&spec, &store, ALL, &quiet).unwrap();
    assert_eq!((counts.run_now, counts.failed), (3, 0), "{counts}");
    let table = merge(&[store]).unwrap();
    let row = table.rows.iter().find(|r| r.mode == "emu").unwrap();
    assert!(row.iops > 0.0 && row.interrupts_per_sec > 0.0, "{row:?}");
    let store = Store::open(&d.join("store")).unwrap();
    let again = run(&spec, &store, ALL, &quiet).unwrap();
    assert_eq!((again.finished_before, again.run_now), (3, 0));
}

#[test]
fn the_emulator_runs_job_files_only() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    copy_example(d, "apps/kvell-ycsb-c.toml", "kvell.toml");
    let text = "workloads = [\"kvell.toml\"]\ndevices = [\"optane\"]\nmodes = [\"emu\"]\nruntime = \"20ms\"\nstrategies = [\"default\"]\n";
    let path = d.join("sweep.toml");
    std::fs::write(&path, text).unwrap();
    let e = Spec::load(&path).unwrap_err().to_string();
    assert!(
        e.contains("sweep.toml:3: key 'modes'") && e.contains("kvell.toml"),
        "{e}"
    );
}

/// `emu_backend` puts emulator points on real I/O (`run --backend`): a
/// file here, read with O_DIRECT; the backend is part of the point's key.
#[test]
fn emulator_points_run_on_the_spec_s_backend() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = d.join("data.bin");
    std::fs::write(&data, vec![0u8; 8 << 20]).unwrap();
    std::fs::write(
        d.join("r.fio"),
        "[r]\nsize=4m\nbs=4k\ndirect=1\nrw=randread\nioengine=psync\n",
    )
    .unwrap();
    let text = format!(
        "workloads = [\"r.fio\"]\ndevices = [\"optane\"]\nmodes = [\"emu\"]\nemu_backend = \"file:{}\"\nruntime = \"50ms\"\nstrategies = [\"default\"]\n",
        data.display()
    );
    let path = d.join("sweep.toml");
    std::fs::write(&path, &text).unwrap();
    let spec = Spec::load(&path).unwrap();
    let points = expand(&spec);
    assert_eq!(points.len(), 1);
    assert_eq!(
        points[0].config["backend"],
        format!("file:{}", data.display())
    );
    let store = Store::open(&d.join("store")).unwrap();
    let counts = run(&spec, &store, ALL, &quiet).unwrap();
    assert_eq!((counts.run_now, counts.failed), (1, 0), "{counts}");
    let row = &merge(&[store]).unwrap().rows[0];
    assert!(row.iops > 0.0, "{row:?}");
    // Without emulator points, or with a backend the emulator cannot read,
    // the spec is refused at the key.
    for (body, says) in [
        (
            text.replace("modes = [\"emu\"]\n", ""),
            "add \"emu\" to modes",
        ),
        (
            text.replace(&format!("file:{}", data.display()), "tape:0"),
            "unknown backend",
        ),
    ] {
        std::fs::write(&path, body).unwrap();
        let e = Spec::load(&path).unwrap_err().to_string();
        assert!(e.contains("key 'emu_backend'") && e.contains(says), "{e}");
    }
}

/// `marks_from` marks a trace's requests by the rule it names
/// (`marks::trace`): another rule is another workload (its fingerprint
/// hashes the marked requests); `table1` is the default's.
#[test]
fn marks_from_marks_the_traces_and_keys_them_apart() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    copy_example(d, "traces/sample.blkparse", "sample.blkparse");
    let fingerprint = |marks: &str| {
        let text = format!(
            "traces = [\"sample.blkparse\"]\n{marks}devices = [\"optane\"]\nruntime = \"20ms\"\nstrategies = [\"default\"]\n"
        );
        Spec::load(&spec_in(d, &text)).unwrap().workloads[0]
            .fingerprint
            .clone()
    };
    let default = fingerprint("");
    assert_eq!(fingerprint("marks_from = \"table1\"\n"), default);
    assert_ne!(fingerprint("marks_from = \"none\"\n"), default);
}
