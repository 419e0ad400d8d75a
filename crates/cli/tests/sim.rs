//! `sim` and `bench` end to end: one-line errors for bad input now; real runs
//! for fio-shaped JSON and determinism.

mod common;

use common::*;

fn example(name: &str) -> String {
    format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// A job file with a note-worthy line (an ignored option), so tests see
/// that notes never add to a one-line error.
const JOB: &str = "[global]\nrw=randread\nbs=4k\ngtod_reduce=1\n[reader]\nioengine=psync\n";

#[test]
fn unknown_profiles_name_the_shipped_ones() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(dir.path(), "j.fio", JOB);
    let o = run(&["sim", &job, "--device", "nosuch"]);
    assert_one_line_error(&o, "unknown device profile 'nosuch'");
    assert_one_line_error(&o, "shipped: optane, p3700");
    assert_one_line_error(
        &run(&["sim", &job, "--host", "nosuch"]),
        "shipped: xeon-e5-2660v4",
    );
    assert_one_line_error(
        &run(&["sim", &job, "--device", "/nonexistent/dev.toml"]),
        "/nonexistent/dev.toml",
    );
}

#[test]
fn bad_job_files_give_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let unknown = write(dir.path(), "unk.fio", "[job]\nrw=randread\nfrobnicate=1\n");
    assert_one_line_error(
        &run(&["sim", &unknown]),
        "unk.fio:3: unknown option 'frobnicate'",
    );
    let bad = write(dir.path(), "bad.fio", "[job]\nrw=randread\nbs=4q\n");
    assert_one_line_error(&run(&["sim", &bad]), "bad.fio:3");
    let empty = write(dir.path(), "empty.fio", "[global]\nbs=4k\n");
    assert_one_line_error(&run(&["sim", &empty]), "empty.fio: no jobs to run");
    assert_one_line_error(
        &run(&["sim", "/nonexistent/x.fio"]),
        "/nonexistent/x.fio: cannot read",
    );
}

#[test]
fn bad_options_give_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(dir.path(), "j.fio", JOB);
    assert_one_line_error(
        &run(&["sim", &job, "--output-format", "bogus"]),
        "invalid value 'bogus' for '--output-format",
    );
    // A bare number is seconds, as fio's --runtime; a wrong unit is refused.
    assert_one_line_error(
        &run(&["sim", &job, "--runtime", "10 parsecs"]),
        "invalid duration",
    );
    assert_one_line_error(
        &run(&["sim", &job, "--runtime", "0s"]),
        "must be more than 0",
    );
    assert_one_line_error(
        &run(&["sim", &job, "--policy", "fast"]),
        "unknown policy 'fast'",
    );
    assert_one_line_error(
        &run(&["sim", &job, "--policy", "adaptive", "--ooo", "on"]),
        "option --ooo does not apply to policy 'adaptive'",
    );
    assert_one_line_error(
        &run(&["bench", "sim", "--output-format", "bogus"]),
        "invalid value 'bogus' for '--output-format",
    );
    assert_one_line_error(&run(&["bench", "nosuch"]), "nosuch");
}

#[test]
fn device_defaults_never_reach_a_strategy_that_refuses_them() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(dir.path(), "j.fio", JOB);
    for policy in ["nvme100", "default", "dim", "dynamic"] {
        let o = run(&[
            "sim",
            &job,
            "--policy",
            policy,
            "--device",
            "p3700",
            "--runtime",
            "10ms",
            "-q",
        ]);
        assert!(
            !stderr(&o).contains("does not apply"),
            "{policy}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn a_failed_run_leaves_no_output_file() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(dir.path(), "j.fio", JOB);
    let out = dir.path().join("out.json");
    let o = run(&[
        "sim",
        &job,
        "--device",
        "nosuch",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(!out.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

// ---- Runs: these need the simulator engine. ----

fn json_run(extra: &[&str]) -> (String, serde_json::Value) {
    let job = example("mixed-16.fio");
    let mut args = vec![
        "sim",
        &job,
        "--runtime",
        "50ms",
        "--output-format",
        "json",
        "-q",
    ];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let v = serde_json::from_str(&text).unwrap();
    (text, v)
}

#[test]
fn json_of_a_run_is_fio_shaped() {
    let (_, v) = json_run(&[]);
    assert_eq!(v["jobs"][0]["jobname"], "sync");
    assert_eq!(v["jobs"][1]["jobname"], "async");
    let p99 = &v["jobs"][0]["read"]["clat_ns"]["percentile"]["99.000000"];
    assert!(p99.as_u64().is_some_and(|p| p > 0), "{p99}");
    assert!(v["jobs"][0]["read"]["iops"].as_f64().unwrap() > 0.0);
    let c = &v["cinterrupts"];
    assert_eq!(c["mode"], "sim");
    assert_eq!(c["run"]["seed"], 1);
    assert_eq!(c["device"], "optane");
    assert_eq!(c["policy"]["name"], "cint");
    assert!(c["interrupts"].as_u64().unwrap() > 0);
}

#[test]
fn a_run_says_what_made_it() {
    let (_, v) = json_run(&["--seed", "7"]);
    let made_by = &v["cinterrupts"]["made_by"];
    assert_made_by(made_by, &["sim", "--runtime", "50ms", "--seed", "7"]);
    assert_eq!(made_by["seeds"], serde_json::json!([7]), "{made_by}");
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    // The same results; what made them (time, load) is apart.
    let (a, _) = json_run(&["--seed", "7"]);
    let (b, _) = json_run(&["--seed", "7"]);
    assert_eq!(results_of(&a), results_of(&b));
    let (c, _) = json_run(&["--seed", "8"]);
    assert_ne!(results_of(&a), results_of(&c));
}

#[test]
fn p3700_runs_with_its_delta() {
    let (_, v) = json_run(&["--device", "p3700"]);
    assert_eq!(v["cinterrupts"]["policy"]["delta"], "15us");
    let (_, v) = json_run(&["--device", "p3700", "--delta", "4us"]);
    assert_eq!(v["cinterrupts"]["policy"]["delta"], "4us");
}

#[test]
fn text_and_output_file() {
    let job = example("mixed-16.fio");
    let o = run(&["sim", &job, "--runtime", "50ms", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("sync: (groupid=0, jobs=1): engine=psync"),
        "{text}"
    );
    assert!(text.contains("  read: IOPS="), "{text}");
    assert!(text.contains("cinterrupts (sim): policy=cint"), "{text}");
    assert_eq!(stderr(&o), "", "--quiet: nothing on stderr");

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let o = run(&[
        "sim",
        &job,
        "--runtime",
        "50ms",
        "--output-format",
        "json",
        "-q",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    assert_eq!(
        results_of(&std::fs::read_to_string(&out).unwrap()),
        results_of(&json_run(&[]).0)
    );
}

#[test]
fn bench_sim_reports_completions_per_second() {
    let o = run(&[
        "bench",
        "sim",
        "--runtime",
        "20ms",
        "--output-format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(v["completions_per_sec"].as_f64().unwrap() > 0.0);
    assert!(
        v["median_completions_per_sec"].as_f64().unwrap()
            <= v["completions_per_sec"].as_f64().unwrap()
    );
    assert_eq!(v["runs"].as_array().unwrap().len(), 3);
    assert!(v["runs"][0]["wall_seconds"].as_f64().unwrap() > 0.0);
    assert!((v["runs"][0]["virtual_seconds"].as_f64().unwrap() - 0.02).abs() < 1e-3);
}

/// `bench traces --quick` (issue 41 item 7): every figure, each with its
/// goal where the issue sets one and its ratio to the committed baseline;
/// the values are the machine's, not checked.
#[test]
fn bench_traces_quick_prints_every_figure() {
    let o = run(&["bench", "traces", "--quick"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    for figure in [
        "parse Alibaba CSV (lines/s)",
        "parse blkparse text (lines/s)",
        "parse oracleGeneral (records/s)",
        "coalesce oracleGeneral cint (req/s)",
        "coalesce oracleGeneral all (req/s)",
        "sim --trace open loop (req/s)",
        "sim --trace peak memory (B/req)",
        "load average (1, 5, 15 min)",
        "baseline: ",
    ] {
        assert!(text.contains(figure), "{figure} missing:\n{text}");
    }
    let o = run(&["bench", "traces", "--quick", "--output-format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let figures = v["figures"].as_object().unwrap();
    assert_eq!(figures.len(), 7, "{v}");
    for (k, f) in figures {
        let runs = f["runs"].as_array().unwrap().len();
        // Memory is measured once (the same each run), the rest thrice.
        assert_eq!(runs, if k.contains("bytes") { 1 } else { 3 }, "{k}");
        assert!(
            f["best"].as_f64().unwrap() >= f["median"].as_f64().unwrap() || k.contains("bytes"),
            "{k}"
        );
        assert!(
            f["baseline"].as_f64().is_some(),
            "{k}: no committed baseline"
        );
        assert!(f["ratio"].as_f64().is_some(), "{k}: no ratio");
    }
    for k in [
        "csv_lines_per_sec",
        "coalesce_one_per_sec",
        "replay_open_per_sec",
    ] {
        assert!(figures[k]["best"].as_f64().unwrap() > 0.0, "{k}");
    }
    let o = run(&["bench", "traces", "--baseline", "/nonexistent/b.json"]);
    assert_one_line_error(&o, "/nonexistent/b.json");
}

#[test]
fn bench_sim_cores_gives_a_row_per_core_count() {
    let o = run(&[
        "bench",
        "sim",
        "--cores",
        "4",
        "--runtime",
        "2ms",
        "--output-format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rows = v["rows"].as_array().unwrap();
    let cores: Vec<u64> = rows.iter().map(|r| r["cores"].as_u64().unwrap()).collect();
    assert_eq!(cores, [1, 2, 4]);
    for r in rows {
        assert!(r["ns_per_completion"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["state_bytes_per_core"].as_u64().unwrap() > 0, "{r}");
    }
    // Each core runs its own copy: four cores complete about four times as
    // much as one.
    let done = |i: usize| rows[i]["best"]["completions"].as_f64().unwrap();
    assert!(done(2) > 3.5 * done(0), "{v}");
    let o = run(&["bench", "sim", "--cores", "0"]);
    assert!(!o.status.success());
}

/// `bench sim --apps` (issue 16 item 5): both runs finish every operation,
/// the longer four times as many, and the simulator's state does not grow
/// with them (what the bench measures; its wall time is printed, not held).
#[test]
fn bench_sim_apps_runs_twice_and_its_state_stays_flat() {
    let o = run(&[
        "bench",
        "sim",
        "--apps",
        "--ops",
        "3200",
        "--output-format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["threads"], 16);
    let runs = v["runs"].as_array().unwrap();
    let ops: Vec<u64> = runs
        .iter()
        .map(|r| r["measured_ops"].as_u64().unwrap())
        .collect();
    assert_eq!(ops, [3200, 12800]);
    let ratio = v["state_ratio"].as_f64().unwrap();
    assert!((0.9..1.1).contains(&ratio), "{v}");
    let o = run(&["bench", "sim", "--apps", "--cores", "4"]);
    assert!(!o.status.success());
}

/// Issue 13: the authors' job files (`disk_util=0`, `time_based` with the
/// runtime on fio's command line) run with `--runtime`, and without it say
/// what is missing at the job's line.
#[test]
fn an_authors_style_job_file_runs_with_the_command_lines_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(
        dir.path(),
        "a.fio",
        "[global]\ndisk_util=0\n\n[sync]\nioengine=psync\nrw=randread\nbs=4k\ntime_based\n",
    );
    let o = run(&["sim", &job, "--runtime", "50ms", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("/50msec)"), "{}", stdout(&o));
    assert_one_line_error(
        &run(&["sim", &job, "-q"]),
        "a.fio: job 'sync' (line 4): time_based needs runtime=",
    );
}

#[test]
fn block_scheduler_option() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(
        dir.path(),
        "j.fio",
        "[to]\nrw=randread\nbs=128k\nioengine=libaio\niodepth=16\nruntime=20ms\ntime_based\n",
    );
    assert_one_line_error(
        &run(&["sim", &job, "--block-scheduler", "kyber"]),
        "unknown block scheduler 'kyber'",
    );
    assert_one_line_error(
        &run(&["sim", &job, "--block-scheduler", "ld,tokens=0"]),
        "tokens=0",
    );
    let o = run(&[
        "sim",
        &job,
        "--block-scheduler",
        "ld,tokens=4,split=32k",
        "--output-format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let notes = v["cinterrupts"]["notes"].to_string();
    assert!(
        notes.contains("block scheduler ld,tokens=4,split=32k")
            && notes.contains("at most 4 non-critical piece(s) in flight"),
        "{notes}"
    );
}

#[test]
fn completion_option() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(
        dir.path(),
        "j.fio",
        "[s]\nrw=randread\nbs=4k\nioengine=psync\nruntime=20ms\ntime_based\n",
    );
    assert_one_line_error(
        &run(&["sim", &job, "--completion", "spin"]),
        "unknown completion mode 'spin'",
    );
    let o = run(&[
        "sim",
        &job,
        "--completion",
        "poll",
        "--output-format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let notes = v["cinterrupts"]["notes"].to_string();
    assert!(notes.contains("completion poll:"), "{notes}");
}

#[test]
fn a_hipri_pvsync2_job_is_simulated_polled() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(
        dir.path(),
        "j.fio",
        "[global]\nrw=randread\nbs=4k\nruntime=20ms\ntime_based\n\
         [poller]\nioengine=pvsync2\nhipri\ncpus_allowed=0\n\
         [irq]\nioengine=psync\ncpus_allowed=1\n",
    );
    let o = run(&["sim", &job, "--output-format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let notes = v["cinterrupts"]["notes"].to_string();
    assert!(
        notes.contains("completion interrupt (hipri jobs: poll):")
            && notes.contains("'poller' ")
            && notes.contains("on interrupts: irq"),
        "{notes}"
    );
}

#[test]
fn wakeup_option() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(
        dir.path(),
        "j.fio",
        "[ls]\nrw=randread\nbs=4k\nioengine=psync\ncritical\nruntime=20ms\ntime_based\n",
    );
    assert_one_line_error(
        &run(&["sim", &job, "--wakeup", "fast"]),
        "unknown wake-up rule 'fast'",
    );
    let o = run(&["sim", &job, "--wakeup", "boost", "--output-format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let notes = v["cinterrupts"]["notes"].to_string();
    assert!(
        notes.contains("wake-up rule boost (wake-up granularity 4ms for 28 cores)"),
        "{notes}"
    );
    // The default says nothing.
    let o = run(&["sim", &job, "--output-format", "json"]);
    assert!(!stdout(&o).contains("wake-up rule"));
}

#[test]
fn journal_option() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(
        dir.path(),
        "j.fio",
        "[ls]\nrw=write\nbs=4k\nioengine=sync\nfsync=1\ncritical\nrate_iops=1000\nruntime=50ms\ntime_based\n",
    );
    assert_one_line_error(
        &run(&["sim", &job, "--journal", "writeback"]),
        "unknown journal mode 'writeback' (ordered, fjournal)",
    );
    let o = run(&[
        "sim",
        &job,
        "--journal",
        "fjournal",
        "--output-format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    // fio's `sync` object, and FastResponse's breakdown in ours.
    let n = v["jobs"][0]["sync"]["total_ios"].as_u64().unwrap();
    assert!((45..=55).contains(&n), "{n}");
    assert!(v["jobs"][0]["sync"]["lat_ns"]["mean"].as_f64().unwrap() > 0.0);
    let f = &v["cinterrupts"]["run"]["fsync"][0];
    assert_eq!(f["jobname"], "ls");
    assert_eq!(f["journal"], "fjournal");
    assert_eq!(f["switches_per_fsync"], 2.0);
    assert_eq!(f["d2_us"], 0.0);
    let o = run(&["sim", &job, "--jbd2-critical", "--output-format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["cinterrupts"]["run"]["fsync"][0]["journal"], "ordered");
    let notes = v["cinterrupts"]["notes"].to_string();
    assert!(notes.contains("JBD2 on core 0 (critical)"), "{notes}");
    // FR 4.4's SelectISR: the critical caller's fsync I/O is polled, so it
    // is woken for none of it (2 switches per fsync, not 5 or 6 alone).
    let polled = |extra: &[&str]| {
        let mut argv = vec!["sim", job.as_str(), "--completion", "select-isr"];
        argv.extend_from_slice(extra);
        argv.extend_from_slice(&["--output-format", "json"]);
        let o = run(&argv);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        v["cinterrupts"]["run"]["fsync"][0]["switches_per_fsync"]
            .as_f64()
            .unwrap()
    };
    let interrupted = polled(&[]);
    let spun = polled(&["--fsync-io-polls"]);
    assert!(spun < interrupted, "{spun} vs {interrupted}");
}

#[test]
fn uring_strategies_reach_io_uring_jobs_and_bad_ones_give_one_line() {
    let mixed = example("uring-mixed-16.fio");
    let o = run(&[
        "sim",
        &mixed,
        "--runtime",
        "20ms",
        "--uring",
        "min-wait=50us",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("io_uring (host::uring): job 'io_uring' min-wait=50us:"),
        "{out}"
    );
    assert!(out.contains("wake-ups") && out.contains("CPU"), "{out}");
    let o = run(&["sim", &mixed, "--uring", "spin"]);
    assert_one_line_error(&o, "unknown io_uring strategy 'spin'");
    assert_eq!(o.status.code(), Some(2));
    assert_one_line_error(
        &run(&["sim", &mixed, "--uring", "min-wait=50"]),
        "needs a unit",
    );
}
