//! `run` and `bench emu` end to end: real runs on the emulator (null and
//! file backends), verify and fault injection, and one-line errors for bad
//! input.

mod common;

use std::path::Path;
use std::process::Output;

use common::*;
use serde_json::Value;

fn example(name: &str) -> String {
    format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn json(o: &Output) -> Value {
    serde_json::from_str(&stdout(o))
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}{}", stdout(o), stderr(o)))
}

fn ok(o: &Output) {
    assert!(o.status.success(), "{}{}", stdout(o), stderr(o));
}

/// `run examples/mixed-16.fio` on `null:10us` for 200 ms, quietly.
fn mixed_16_on_null(extra: &[&str]) -> Output {
    let example = example("mixed-16.fio");
    let mut args = vec![
        "run",
        &example,
        "--backend",
        "null:10us",
        "--runtime",
        "200ms",
        "-q",
    ];
    args.extend_from_slice(extra);
    run(&args)
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn mixed_16_on_null_gives_fio_json_with_emu_counts() {
    let _t = turn();
    let o = mixed_16_on_null(&["--output-format", "json"]);
    ok(&o);
    let v = json(&o);
    assert_eq!(v["cinterrupts"]["mode"], "emu");
    let jobs = v["jobs"].as_array().unwrap();
    let names: Vec<&str> = jobs
        .iter()
        .map(|j| j["jobname"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["sync", "async"]);
    for j in jobs {
        assert!(j["read"]["iops"].as_f64().unwrap() > 0.0, "{j}");
        assert!(j["ctx_voluntary"].is_u64(), "{j}");
        assert_eq!(j["read"]["errors"], 0);
    }
    assert!(v["cinterrupts"]["interrupts"].as_u64().unwrap() > 0);
    assert!(v["cinterrupts"]["device"]
        .as_str()
        .unwrap()
        .starts_with("null:10us"));
}

#[test]
fn a_modelled_device_takes_at_least_its_floor() {
    let _t = turn();
    let example = example("sync-read.fio");
    let o = run(&[
        "run",
        &example,
        "--device",
        "optane",
        "--runtime",
        "200ms",
        "-q",
        "--output-format",
        "json",
    ]);
    ok(&o);
    let v = json(&o);
    assert!(v["cinterrupts"]["device"]
        .as_str()
        .unwrap()
        .starts_with("device:optane (28 units, read 7.37us"));
    let read = &v["jobs"][0]["read"];
    assert!(read["iops"].as_f64().unwrap() > 0.0, "{read}");
    // profiles/devices/optane.toml: no read is served in under 4 us, and
    // the host's own path comes on top.
    let clat = &read["clat_ns"];
    assert!(clat["min"].as_f64().unwrap() >= 4_000.0, "{clat}");
    assert!(clat["mean"].as_f64().unwrap() > 4_000.0, "{clat}");
}

#[test]
fn normal_output_is_job_lines_then_the_emu_summary() {
    let _t = turn();
    let o = mixed_16_on_null(&[]);
    ok(&o);
    let out = stdout(&o);
    assert!(
        out.starts_with("sync: (groupid=0, jobs=1): engine=psync"),
        "{out}"
    );
    assert!(out.contains("\nasync: (groupid=0"), "{out}");
    assert!(out.contains("\ncinterrupts (emu): policy=cint"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.trim_start().starts_with("note: interrupt delivery")),
        "{out}"
    );
    assert!(stderr(&o).is_empty(), "-q: {}", stderr(&o));
}

#[test]
fn a_job_filename_is_laid_out_and_run_on() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("rw.dat");
    let job = write(
        dir.path(),
        "rw.fio",
        &format!(
            "[rw]\nfilename={}\nsize=4m\nbs=4k\ndirect=1\nrw=randrw\nioengine=io_uring\niodepth=8\nnumber_ios=2000\n",
            path_str(&data)
        ),
    );
    let o = run(&["run", &job, "--output-format", "json"]);
    ok(&o);
    assert_eq!(std::fs::metadata(&data).unwrap().len(), 4 << 20);
    let v = json(&o);
    let j = &v["jobs"][0];
    let (reads, writes) = (
        j["read"]["io_ops"].as_u64().unwrap(),
        j["write"]["io_ops"].as_u64().unwrap(),
    );
    assert!(reads > 0 && writes > 0, "reads {reads}, writes {writes}");
    // fio's number_ios is a cap: a 4 MiB region of 4 KiB blocks is 1024.
    assert_eq!(reads + writes, 1024);
    assert_eq!(j["read"]["errors"], 0);
    assert_eq!(j["write"]["errors"], 0);
    assert!(v["cinterrupts"]["device"]
        .as_str()
        .unwrap()
        .starts_with(&format!("file:{}", path_str(&data))));
}

#[test]
fn verify_reads_back_every_block_and_catches_corruption() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("v.dat");
    let job = write(
        dir.path(),
        "v.fio",
        &format!(
            "[checked]\nfilename={}\nsize=1m\nbs=4k\nrw=write\nverify=crc32c\n",
            path_str(&data)
        ),
    );
    let o = run(&["run", &job, "--output-format", "json"]);
    ok(&o);
    let v = json(&o);
    assert_eq!(v["jobs"][0]["verify"]["blocks"], 256);
    assert_eq!(v["jobs"][0]["verify"]["mismatches"], 0);

    // Every 7th read comes back with a byte flipped.
    let out = dir.path().join("bad.json");
    let backend = format!("file:{},corrupt_every=7", path_str(&data));
    let o = run(&[
        "run",
        &job,
        "--backend",
        &backend,
        "--output-format",
        "json",
        "-o",
        path_str(&out),
    ]);
    assert_one_line_error(&o, "job 'checked'");
    assert_one_line_error(&o, "verify mismatches");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let mismatches = v["jobs"][0]["verify"]["mismatches"].as_u64().unwrap();
    assert!(mismatches > 0, "{v}");
    assert_eq!(mismatches, 256 / 7);
}

#[test]
fn injected_errors_are_counted_and_fail_the_run() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let job = write(
        dir.path(),
        "e.fio",
        "[erring]\nioengine=psync\nrw=randread\nbs=4k\nsize=4m\nnumber_ios=1000\n",
    );
    let o = run(&[
        "run",
        &job,
        "--backend",
        "null:10us,error_every=10",
        "--output-format",
        "json",
    ]);
    assert_one_line_error(&o, "job 'erring': 100 I/O errors");
    let v = json(&o);
    assert_eq!(v["jobs"][0]["read"]["errors"], 100);
    assert_eq!(v["jobs"][0]["read"]["io_ops"], 900);
}

#[test]
fn bad_input_gives_one_line() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let job = write(
        dir.path(),
        "j.fio",
        "[j]\nioengine=psync\nrw=randread\nbs=4k\nsize=1m\n",
    );
    assert_one_line_error(
        &run(&["run", &job, "--backend", "nvme:x"]),
        "unknown backend 'nvme:x'",
    );
    assert_one_line_error(
        &run(&["run", &job, "--backend", "null:10xs"]),
        "bad latency '10xs'",
    );
    let o = run(&["run", &job, "--device", "nosuch"]);
    assert_one_line_error(&o, "--device");
    assert_one_line_error(&o, "unknown device profile 'nosuch'");
    assert_one_line_error(
        &run(&["run", &job, "--device", "optane", "--backend", "null:10us"]),
        "'--device <NAME|FILE.toml>' cannot be used with '--backend <SPEC>'",
    );
    let verify = write(
        dir.path(),
        "verify-device.fio",
        "[v]\nrw=write\nbs=4k\nsize=1m\nverify=crc32c\n",
    );
    assert_one_line_error(
        &run(&["run", &verify, "--device", "optane"]),
        "verify=crc32c needs data, and a modelled device (--device) keeps none",
    );
    assert_one_line_error(
        &run(&["run", &job, "--backend", "null:10us", "--queue-depth", "0"]),
        "--queue-depth",
    );
    // This machine has 2 CPUs (PLATFORM.md); CPU 5 is not one of them.
    let cpus = write(
        dir.path(),
        "cpus.fio",
        "[pinned]\nioengine=psync\nrw=randread\nbs=4k\nsize=1m\ncpus_allowed=5\n",
    );
    let o = run(&["run", &cpus, "--backend", "null:10us"]);
    assert_one_line_error(&o, "cpus_allowed");
    assert_one_line_error(&o, "job 'pinned'");
    let verify = write(
        dir.path(),
        "verify.fio",
        "[v]\nrw=write\nbs=4k\nsize=1m\nverify=crc32c\n",
    );
    assert_one_line_error(
        &run(&["run", &verify, "--backend", "null:10us"]),
        "verify=crc32c needs data",
    );
    assert_one_line_error(
        &run(&["run", "/nonexistent/x.fio", "--backend", "null:10us"]),
        "/nonexistent/x.fio: cannot read",
    );
    assert_one_line_error(&run(&["run", &job]), "no filename=");
    // Notes about the job file (an ignored option) never add a line.
    let noted = write(
        dir.path(),
        "noted.fio",
        "[n]\nioengine=psync\nrw=randread\nbs=4k\nsize=1m\ngtod_reduce=1\n",
    );
    assert_one_line_error(
        &run(&["run", &noted, "--backend", "null:10xs"]),
        "bad latency",
    );
}

#[test]
fn output_file_is_written_whole() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let job = write(
        dir.path(),
        "j.fio",
        "[j]\nioengine=psync\nrw=randread\nbs=4k\nsize=1m\n",
    );
    let out = dir.path().join("out.json");
    let o = run(&[
        "run",
        &job,
        "--backend",
        "null:10us",
        "--output-format",
        "json",
        "-o",
        path_str(&out),
    ]);
    ok(&o);
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.ends_with("}\n"), "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["jobs"][0]["read"]["io_ops"], 256);
    // Nothing but the file: no temporary left beside it.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");

    assert_one_line_error(
        &run(&[
            "run",
            &job,
            "--backend",
            "null:10us",
            "-o",
            "/nonexistent/dir/out.json",
        ]),
        "/nonexistent/dir/out.json: cannot write",
    );
}

#[test]
fn bench_emu_reports_every_measurement() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("b.dat");
    let o = run(&[
        "bench",
        "emu",
        "--runtime",
        "200ms",
        "--output-format",
        "json",
        "--file",
        path_str(&data),
    ]);
    ok(&o);
    let v = json(&o);
    for key in [
        "overhead_ratio",
        "direct_mean_us",
        "emulated_mean_us",
        "wake_mean_us",
        "wake_ratio",
        "device_completions_per_sec",
        "device_busy_share",
        "runtime_s",
    ] {
        let x = v[key]
            .as_f64()
            .unwrap_or_else(|| panic!("{key} missing: {v}"));
        assert!(x.is_finite() && x > 0.0, "{key} = {x}");
    }
    assert!(v["device_busy_share"].as_f64().unwrap() <= 1.0);
    assert_eq!(v["runtime_s"], 0.2);
    assert_eq!(v["file"], path_str(&data));
    // A file the user names is kept (laid out to 256 MiB).
    assert_eq!(std::fs::metadata(&data).unwrap().len(), 256 << 20);
}

#[test]
fn bench_emu_errors_are_one_line() {
    let _t = turn();
    assert_one_line_error(
        &run(&["bench", "emu", "--file", "/nonexistent/dir/b.dat"]),
        "/nonexistent/dir/b.dat",
    );
    assert_one_line_error(
        &run(&["bench", "emu", "--runtime", "0s"]),
        "must be more than 0",
    );
}

/// `run --uring`: an io_uring job's worker waits as host::uring decides;
/// the report's `run.io_uring` counts its wake-ups beside the interrupts.
#[test]
fn uring_min_wait_wakes_at_most_once_per_nr_and_bad_values_are_one_line() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let job = write(
        dir.path(),
        "u.fio",
        "[u]\nioengine=io_uring\nrw=randread\nbs=4k\nsize=1m\niodepth=4\niodepth_batch_submit=4\niodepth_batch_complete_max=4\n",
    );
    let args = |u: &'static str| {
        vec![
            "run",
            job.as_str(),
            "--backend",
            "null:10us",
            "--policy",
            "default",
            "--output-format",
            "json",
            "-q",
            "--uring",
            u,
        ]
    };
    let o = run(&args("min-wait=100ms,nr=4"));
    ok(&o);
    let v = json(&o);
    let u = &v["cinterrupts"]["run"]["io_uring"];
    let ios = v["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    assert_eq!(u["strategy"], "min-wait=100ms,nr=4");
    assert_eq!(u["ios"].as_u64(), Some(ios), "{u}");
    // The window closes when the job stops issuing: the up to 4 requests
    // then in flight complete after it, in it only if the watch that closes
    // it comes later (under load it came first: 252 of 256 in 2 of 12
    // runs beside two spinning processes).
    let completions = v["cinterrupts"]["completions"].as_u64().unwrap();
    assert!(completions <= ios && completions + 4 >= ios, "{v}");
    let (wakeups, timeouts) = (
        u["wakeups"].as_u64().unwrap(),
        u["timeouts"].as_u64().unwrap(),
    );
    assert!(wakeups <= ios / 4 + 2 * timeouts + 1, "{u}");
    // Without --uring, the report has no such key.
    let mut plain = args("x");
    plain.truncate(plain.len() - 2);
    let v = json(&run(&plain));
    assert!(v["cinterrupts"]["run"].get("io_uring").is_none());
    for (bad, says) in [
        ("min-wait=0us", "needs a time above 0"),
        ("min-wait=50us,nr=0", "nr=0"),
        ("spin", "unknown io_uring strategy 'spin'"),
    ] {
        let o = run(&args(bad));
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
        assert_one_line_error(&o, says);
    }
    assert_one_line_error(&run(&args("defer-taskrun")), "--uring defer-taskrun:");
}
