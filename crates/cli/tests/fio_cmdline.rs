//! fio's command line end to end (issue 13): the authors' job files
//! (crates/repro/artifact/) through `jobs`, `sim` and `run` with the
//! options their scripts pass to fio.

mod common;

use std::process::Output;

use common::{assert_one_line_error, run, stderr, stdout, turn};
use serde_json::Value;

fn artifact(name: &str) -> String {
    format!("{}/../repro/artifact/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// fig5/test.sh for k = 16 (lines 82-87), without --runtime.
const FIG5: &[&str] = &[
    "--blocksize=4K",
    "--iodepth=16",
    "--iodepth_batch_submit=1",
    "--iodepth_batch_complete_min=1",
    "--iodepth_batch_complete_max=16",
];
/// fig6/test.sh (lines 81-86), iodepth 512.
const FIG6: &[&str] = &[
    "--blocksize=4K",
    "--iodepth=512",
    "--iodepth_batch_submit=512",
    "--iodepth_batch_complete_min=1",
    "--iodepth_batch_complete_max=512",
];
/// fig7/test.sh (lines 85-90), 2 jobs of depth and batch 4.
const FIG7: &[&str] = &[
    "--blocksize=4K",
    "--numjobs=2",
    "--iodepth=4",
    "--iodepth_batch_submit=4",
    "--iodepth_batch_complete=4",
];
const FIG10_14: &[&str] = &["--blocksize=4K"];

/// Every file with its script's options (fig5's k = 0 run is
/// `--section=psync`).
fn cases() -> Vec<(&'static str, Vec<&'static str>, usize)> {
    vec![
        ("fig5/rand_mix.fio", FIG5.to_vec(), 2),
        (
            "fig5/rand_mix.fio",
            vec!["--section=psync", "--blocksize=4K"],
            1,
        ),
        ("fig6/rand_mix.fio", FIG6.to_vec(), 2),
        ("fig7/rand_read_libaio.fio", FIG7.to_vec(), 2),
        ("fig10/rand_mix_batched.fio", FIG10_14.to_vec(), 2),
        ("fig14/rand_read_libaio.fio", FIG10_14.to_vec(), 1),
        ("fig14/rand_read_psync.fio", FIG10_14.to_vec(), 1),
    ]
}

fn with<'a>(verb: &'a str, file: &'a str, opts: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![verb, file];
    v.extend_from_slice(opts);
    v.extend_from_slice(more);
    v
}

fn json(o: &Output) -> Value {
    assert!(o.status.success(), "{}", stderr(o));
    serde_json::from_str(&stdout(o)).unwrap()
}

#[test]
fn jobs_takes_the_scripts_options_with_their_runtime_of_60() {
    for (file, opts, n) in cases() {
        let path = artifact(file);
        let o = run(&with("jobs", &path, &opts, &["--runtime=60"]));
        assert!(o.status.success(), "{file}: {}", stderr(&o));
        let out = stdout(&o);
        let described = out.lines().filter(|l| l.starts_with("raw=")).count();
        assert_eq!(described, n, "{file} {opts:?}: {out}");
        assert!(out.contains("runtime=60.000s"), "{out}");
    }
    let o = run(&with("jobs", &artifact("fig5/rand_mix.fio"), FIG5, &[]));
    let out = stdout(&o);
    assert!(
        out.contains("iodepth=16 batch_submit=1 batch_complete=1..16"),
        "{out}"
    );
    let o = run(&with(
        "jobs",
        &artifact("fig10/rand_mix_batched.fio"),
        FIG10_14,
        &[],
    ));
    assert!(stdout(&o).contains("bs=512/512"), "job2 keeps its own bs");
}

#[test]
fn sim_runs_every_file_with_its_scripts_options() {
    for (file, opts, n) in cases() {
        let path = artifact(file);
        let o = run(&with(
            "sim",
            &path,
            &opts,
            &["--runtime=200ms", "--output-format=json", "-q"],
        ));
        let v = json(&o);
        let jobs = v["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), n, "{file} {opts:?}");
        for j in jobs {
            assert!(j["read"]["total_ios"].as_u64().unwrap() > 0, "{file}: {j}");
        }
    }
}

#[test]
fn run_runs_every_file_with_its_scripts_options_on_the_null_stand_in() {
    let _t = turn();
    for (file, opts, n) in cases() {
        let path = artifact(file);
        let o = run(&with(
            "run",
            &path,
            &opts,
            &["--runtime=150ms", "--output-format=json", "-q"],
        ));
        let v = json(&o);
        let jobs = v["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), n, "{file} {opts:?}");
        for j in jobs {
            assert!(j["read"]["total_ios"].as_u64().unwrap() > 0, "{file}: {j}");
        }
    }
}

#[test]
fn the_space_separated_form_and_fio_spelling_are_the_same() {
    let path = artifact("fig7/rand_read_libaio.fio");
    let a = run(&["jobs", &path, "--numjobs", "3", "--iodepth=2"]);
    let b = run(&["jobs", &path, "--fio", "numjobs=3", "--fio=iodepth=2"]);
    assert!(a.status.success(), "{}", stderr(&a));
    assert_eq!(stdout(&a), stdout(&b));
    assert_eq!(stdout(&a).matches("iodepth=2 ").count(), 3);
}

#[test]
fn a_bad_command_line_option_is_one_usage_line_naming_it() {
    let path = artifact("fig5/rand_mix.fio");
    for (args, want) in [
        (vec!["--iodepth=x"], "--iodepth=x: invalid number 'x'"),
        (vec!["--section=job9"], "--section=job9: "),
        (vec!["--section=global"], "--section=global: "),
        (vec!["--name=x"], "--name=x: "),
        (vec!["--exitall"], "--exitall: not supported"),
    ] {
        for verb in ["jobs", "sim", "run"] {
            let mut argv = vec![verb, path.as_str()];
            argv.extend_from_slice(&args);
            let o = run(&argv);
            assert_one_line_error(&o, want);
            assert_eq!(o.status.code(), Some(2), "{verb} {args:?}");
        }
    }
    // Not a job option at all: clap's own usage error.
    let o = run(&["sim", &path, "--no-such-thing=1"]);
    assert_one_line_error(&o, "unexpected argument '--no-such-thing'");
    assert_eq!(o.status.code(), Some(2));
}

fn interrupts_and_marks(o: &Output) -> (u64, String) {
    let v = json(o);
    let c = &v["cinterrupts"];
    (
        c["interrupts"].as_u64().unwrap(),
        c["default_marks"].as_str().unwrap().to_string(),
    )
}

#[test]
fn default_marks_basis_drops_io_submits_barrier_in_sim() {
    // fig14's libaio job submits 16 at a time: Table 1 marks the 16th
    // Barrier, so cint fires at least once a batch; the basis kernel marks
    // nothing and cint fires at thr (32).
    let path = artifact("fig14/rand_read_libaio.fio");
    let sim = |extra: &[&str]| {
        let mut argv = vec![
            "sim",
            path.as_str(),
            "--blocksize=4K",
            "--runtime=100ms",
            "--output-format=json",
            "-q",
        ];
        argv.extend_from_slice(extra);
        run(&argv)
    };
    let (t1, m1) = interrupts_and_marks(&sim(&[]));
    let (t2, m2) = interrupts_and_marks(&sim(&["--default-marks", "table1"]));
    let (b, mb) = interrupts_and_marks(&sim(&["--default-marks", "basis"]));
    let (b2, _) = interrupts_and_marks(&sim(&["--default_marks=basis"]));
    assert_eq!(
        (m1.as_str(), m2.as_str(), mb.as_str()),
        ("table1", "table1", "basis")
    );
    assert_eq!(t1, t2, "table1 is the default");
    assert_eq!(b, b2, "fio's spelling is the same option");
    // Fewer: by how much depends on the device model (0.5x before the
    // simulated host took one interrupt per fire, 0.7x since).
    assert!(b * 10 < t1 * 9, "basis {b} vs table1 {t1}");
    // The text report says it too.
    let o = run(&[
        "sim",
        &path,
        "--runtime=50ms",
        "-q",
        "--default-marks=basis",
    ]);
    assert!(
        stdout(&o).contains(", default_marks=basis\n"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn default_marks_shows_in_jobs_and_in_runs_report() {
    let path = artifact("fig5/rand_mix.fio");
    let o = run(&[
        "jobs",
        &path,
        "--default-marks",
        "basis",
        "--iodepth=4",
        "--iodepth_batch_submit=4",
    ]);
    let out = stdout(&o);
    assert!(
        out.contains("default_marks=basis\n    read marks:  - - - -\n"),
        "{out}"
    );
    assert!(out.contains("read marks:  U"), "psync stays Urgent: {out}");
    let o = run(&["jobs", &path, "--iodepth=4", "--iodepth_batch_submit=4"]);
    assert!(stdout(&o).contains("default_marks=table1\n    read marks:  - - - B\n"));
    let _t = turn();
    let o = run(&[
        "run",
        &path,
        "--section=libaio",
        "--runtime=100ms",
        "--default-marks=basis",
        "--output-format=json",
        "-q",
    ]);
    let (_, marks) = interrupts_and_marks(&o);
    assert_eq!(marks, "basis");
}

#[test]
fn a_bad_default_marks_is_one_usage_line() {
    let path = artifact("fig5/rand_mix.fio");
    let o = run(&["sim", &path, "--default-marks", "linux"]);
    assert_one_line_error(&o, "possible values: table1, basis");
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["sim", &path, "--default_marks=linux"]);
    assert_one_line_error(&o, "--default_marks=linux: invalid default_marks 'linux'");
    assert_eq!(o.status.code(), Some(2));
}
