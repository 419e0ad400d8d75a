//! Issue 25's first done-when: Debian's fio 3.33 runs `ioengine=io_uring`
//! jobs under `exec --device optane` with its JSON intact, every request
//! counted (fio's `total_ios` equals the report's), verify passing, and
//! the same job in `sim` and `run` giving the same marks per request.
//!
//! fio's io_uring engine sets its rings up through glibc's `syscall()`
//! and enters them with inline `syscall` instructions (`__do_syscall6`):
//! both paths of the preload library's `uring` are exercised.

mod common;

use common::{bin, exec_fio_json, require, stderr, turn};
use serde_json::Value;

/// fio's `total_ios`, reads and writes, over its jobs.
fn fio_total(fio: &Value) -> u64 {
    fio["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            j["read"]["total_ios"].as_u64().unwrap() + j["write"]["total_ios"].as_u64().unwrap()
        })
        .sum()
}

/// fio's jobs' error codes (0: none).
fn fio_errors(fio: &Value) -> Vec<u64> {
    fio["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["error"].as_u64().unwrap())
        .collect()
}

/// The report's requests of `kind` by mark: (urgent, barrier, unmarked).
fn requests(ours: &Value, kind: &str) -> (u64, u64, u64) {
    let r = &ours["cinterrupts"]["exec"]["requests"][kind];
    let n = |m: &str| r[m].as_u64().unwrap_or_else(|| panic!("{ours}"));
    (n("urgent"), n("barrier"), n("unmarked"))
}

fn total((u, b, n): (u64, u64, u64)) -> u64 {
    u + b + n
}

/// One job under `exec --device optane` (policy cint): fio's JSON and
/// our report.
fn routed(dir: &std::path::Path, name: &str, job: &str) -> (Value, Value) {
    let file = dir.join(format!("{name}.fio"));
    let data = dir.join("data");
    std::fs::write(
        &file,
        format!("[global]\nfilename={}\n{job}", data.display()),
    )
    .unwrap();
    let report = dir.join(format!("{name}.json"));
    exec_fio_json(dir, &["--device", "optane"], &file, &report)
}

/// Every request fio made went through the device, each counted once,
/// and nothing was left unrouted.
fn all_routed(fio: &Value, ours: &Value) {
    assert!(fio_errors(fio).iter().all(|&e| e == 0), "{fio}");
    let counted = total(requests(ours, "reads")) + total(requests(ours, "writes"));
    assert_eq!(counted, fio_total(fio), "fio's total_ios against exec's");
    let e = &ours["cinterrupts"]["exec"];
    assert_eq!(e["io_uring"], "route", "{e}");
    assert_eq!(e["not_routed"], serde_json::json!([]), "{e}");
    assert_eq!(e["routing"]["errors"], 0, "{e}");
    assert!(
        e["routing"]["commands"].as_u64().unwrap() >= counted,
        "a device command per request: {e}"
    );
}

const QD16: &str = "[global]\nioengine=io_uring\ndirect=1\nbs=4k\nsize=16m\n\
    rw=randread\niodepth=16\niodepth_batch_submit=16\niodepth_batch_complete_min=16\n\
    number_ios=4096\n[qd16]\n";

#[test]
fn qd16_random_reads_batched_by_16_are_each_counted_and_the_last_of_each_batch_is_barrier() {
    require("fio", "fio");
    let _one = turn();
    let dir = tempfile::tempdir().unwrap();
    let (fio, ours) = routed(dir.path(), "qd16", QD16);
    all_routed(&fio, &ours);
    let (u, b, n) = requests(&ours, "reads");
    // Our io_uring row of Table 1 (jobs::Sqe::Submit): fio commits each
    // batch of 16 without waiting in the call, so its last SQE is Barrier.
    assert_eq!(u, 0);
    assert_eq!(
        b * 16,
        b + n,
        "one Barrier per batch of 16: {b} of {}",
        b + n
    );
    let calls = ours["cinterrupts"]["exec"]["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["counts"]["calls"]["io_uring"].as_u64().unwrap())
        .sum::<u64>();
    assert_eq!(calls, b, "one routed submission per batch");
}

/// The marks per request are the same in `sim`, `run` and `exec` for the
/// same job: one Barrier in sixteen.
#[test]
fn the_same_job_gets_the_same_marks_per_request_in_sim_run_and_exec() {
    require("fio", "fio");
    let _one = turn();
    let dir = tempfile::tempdir().unwrap();
    let (_, ours) = routed(dir.path(), "marks", QD16);
    let (eu, eb, en) = requests(&ours, "reads");
    let exec = eb as f64 / (eu + eb + en) as f64;
    let job = dir.path().join("marks.fio");
    let frac = |args: &[&str]| -> f64 {
        let o = bin()
            .args(args)
            .arg(&job)
            .args(["--output-format", "json"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let m = &v["cinterrupts"]["completions_by_mark"];
        let (u, b, n) = (
            m["urgent"].as_u64().unwrap(),
            m["barrier"].as_u64().unwrap(),
            m["unmarked"].as_u64().unwrap(),
        );
        assert_eq!(u, 0, "{v}");
        b as f64 / (u + b + n) as f64
    };
    let sim = frac(&["sim"]);
    let run = frac(&["run", "--device", "optane", "--runtime", "500ms"]);
    for (front, f) in [("exec", exec), ("sim", sim), ("run", run)] {
        assert!(
            (f - 1.0 / 16.0).abs() < 0.002,
            "{front}: {f} of the requests Barrier, not 1/16"
        );
    }
}

#[test]
fn a_verify_crc32c_write_job_passes_under_exec() {
    require("fio", "fio");
    let _one = turn();
    let dir = tempfile::tempdir().unwrap();
    let job = "[global]\nioengine=io_uring\ndirect=1\nbs=4k\nsize=4m\n\
        [w]\nrw=randwrite\niodepth=16\niodepth_batch_submit=16\n\
        verify=crc32c\ndo_verify=1\nverify_fatal=1\n";
    let (fio, ours) = routed(dir.path(), "verify", job);
    all_routed(&fio, &ours);
    let j = &fio["jobs"][0];
    assert_eq!(j["write"]["total_ios"], 1024);
    // Every block written was read back and checked (verify_fatal: a
    // mismatch is a job error, asserted 0 above).
    assert_eq!(j["read"]["total_ios"], 1024, "{j}");
    assert_eq!(total(requests(&ours, "writes")), 1024);
    assert_eq!(total(requests(&ours, "reads")), 1024);
}

#[test]
fn an_sqthread_poll_job_is_routed_and_unmarked() {
    require("fio", "fio");
    let _one = turn();
    let dir = tempfile::tempdir().unwrap();
    let job = "[global]\nioengine=io_uring\ndirect=1\nbs=4k\nsize=16m\n\
        [sqp]\nrw=randread\niodepth=16\nsqthread_poll=1\nnumber_ios=2048\n";
    let (fio, ours) = routed(dir.path(), "sqp", job);
    all_routed(&fio, &ours);
    // Our row: an SQ thread's SQEs are unmarked (jobs::Sqe::SqPoll).
    let (u, b, _) = requests(&ours, "reads");
    assert_eq!((u, b), (0, 0), "{ours}");
}

#[test]
fn registered_files_and_fixed_buffers_are_routed() {
    require("fio", "fio");
    let _one = turn();
    let dir = tempfile::tempdir().unwrap();
    let job = "[global]\nioengine=io_uring\ndirect=1\nbs=4k\nsize=16m\n\
        [fixed]\nrw=randrw\niodepth=16\niodepth_batch_submit=16\n\
        registerfiles=1\nfixedbufs=1\nnumber_ios=2048\n";
    let (fio, ours) = routed(dir.path(), "fixed", job);
    all_routed(&fio, &ours);
    assert!(total(requests(&ours, "writes")) > 0, "{ours}");
}
