//! Debian's fio (3.33, installed by scripts/setup) under `cinterrupts exec`:
//! psync, pvsync2 and libaio jobs, fio's JSON intact on stdout, and every
//! direct request seen with Table 1's marks and routed through the
//! emulated device (issue 14's first done-when).

mod common;

use common::{bin, exec_device_json, exec_fio_json, require, stderr, turn};
use serde_json::Value;

const JOB: &str = "[global]\nsize=16m\ndirect=1\nbs=4k\nrw=randread\nnumber_ios=256\n\
    [psync]\nioengine=psync\n\
    [libaio]\nstonewall\nioengine=libaio\niodepth=16\niodepth_batch_submit=16\n\
    iodepth_batch_complete_min=16\n\
    [pvsync2]\nstonewall\nioengine=pvsync2\n";

#[test]
fn real_fio_psync_pvsync2_and_libaio_under_exec() {
    require("fio", "fio");
    let _one = turn();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let job = dir.path().join("t.fio");
    std::fs::write(
        &job,
        format!("[global]\nfilename={}\n{JOB}", data.display()),
    )
    .unwrap();
    let report = dir.path().join("exec.json");
    let o = bin()
        .args([
            "exec",
            "--output-format",
            "json",
            "-o",
            report.to_str().unwrap(),
            "--",
        ])
        .args(["fio", "--output-format=json", job.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // fio's own JSON, untouched on stdout.
    let fio: Value = serde_json::from_slice(&o.stdout).expect("fio's JSON");
    let ios: u64 = fio["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["read"]["total_ios"].as_u64().unwrap())
        .sum();
    assert_eq!(ios, 768);
    let v: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let reads = &v["cinterrupts"]["exec"]["requests"]["reads"];
    // psync and pvsync2: 512 blocking reads, Urgent. libaio: 16 io_submit
    // of 16, the last of each Barrier (TOS Table 1).
    assert_eq!(reads["urgent"], 512, "{v}");
    assert_eq!(reads["barrier"], 16, "{v}");
    assert_eq!(reads["unmarked"], 240, "{v}");
    assert_eq!(v["cinterrupts"]["exec"]["calls"]["io_submit"], 16);
    // fio's job processes (forked) reported beside fio itself.
    assert!(
        v["cinterrupts"]["exec"]["processes"]
            .as_array()
            .unwrap()
            .len()
            >= 4,
        "{v}"
    );
}

/// One fio job under `exec --device optane --policy POLICY`: fio's JSON and
/// our report.
fn routed(dir: &std::path::Path, policy: &str, job: &str) -> (Value, Value) {
    routed_with(dir, policy, &[], job)
}

fn routed_with(dir: &std::path::Path, policy: &str, opts: &[&str], job: &str) -> (Value, Value) {
    let data = dir.join("data");
    let file = dir.join(format!("{policy}.fio"));
    std::fs::write(
        &file,
        format!("[global]\nfilename={}\n{job}", data.display()),
    )
    .unwrap();
    let report = dir.join(format!("{policy}.json"));
    let mut args = vec!["--device", "optane", "--policy", policy];
    args.extend_from_slice(opts);
    exec_fio_json(dir, &args, &file, &report)
}

fn per_interrupt(v: &Value) -> f64 {
    v["cinterrupts"]["completions_per_interrupt"]
        .as_f64()
        .unwrap()
}

#[test]
fn psync_reads_are_urgent_one_interrupt_each_and_default_interrupts_per_completion() {
    let _one = turn();
    let dir = tempfile::tempdir().unwrap();
    let job = "[r]\nsize=16m\ndirect=1\nbs=4k\nrw=randread\nnumber_ios=2000\nioengine=psync\n";
    let (fio, ours) = routed(dir.path(), "cint", job);
    assert_eq!(fio["jobs"][0]["read"]["total_ios"], 2000);
    let d = &ours["cinterrupts"]["exec"]["routing"];
    assert_eq!(d["commands"], 2000, "{d}");
    assert_eq!(
        ours["cinterrupts"]["urgent_only_interrupts"], ours["cinterrupts"]["interrupts"],
        "{d}"
    );
    assert!((per_interrupt(&ours) - 1.0).abs() < 0.05, "{d}");
    let (_, ours) = routed(dir.path(), "default", job);
    assert!(
        (per_interrupt(&ours) - 1.0).abs() < 0.05,
        "{}",
        ours["cinterrupts"]
    );
}

#[test]
fn libaio_batches_coalesce_under_cint_and_not_under_default() {
    let _one = turn();
    let dir = tempfile::tempdir().unwrap();
    let job = "[r]\nsize=16m\ndirect=1\nbs=4k\nrw=randread\nnumber_ios=4096\nioengine=libaio\n\
        iodepth=16\niodepth_batch_submit=16\niodepth_batch_complete_min=16\n";
    let (fio, cint) = routed(dir.path(), "cint", job);
    assert_eq!(fio["jobs"][0]["read"]["total_ios"], 4096);
    let by = &cint["cinterrupts"]["completions_by_mark"];
    assert_eq!(by["barrier"], 256, "one Barrier per io_submit of 16: {by}");
    // A batch of 16 finishes out of order on the profile's 28 units, so
    // cint takes more than one interrupt per batch (1.9 measured here; the
    // simulator's Fig 12 shows the same): still several completions per
    // interrupt, where default takes one each.
    assert!(per_interrupt(&cint) > 4.0, "{}", cint["cinterrupts"]);
    // With strict Barriers (TOS 4.3: the Barrier's interrupt waits for every
    // command submitted before it) a batch takes one interrupt. The delta
    // is 1 ms here so that only the Barrier ends a batch: with 6 us, a
    // device thread descheduled mid-batch let the quiet-gap timer fire
    // first (a fresh-clone CI run, 2026-12-07: 104 timeout fires, 11.4
    // completions per interrupt), which is the machine's noise, not the
    // Barrier's rule.
    let (_, strict) = routed_with(
        dir.path(),
        "cint",
        &["--barrier", "strict", "--delta", "1ms"],
        job,
    );
    assert!(per_interrupt(&strict) > 12.0, "{}", strict["cinterrupts"]);
    // default fires at every completion; with the authors' IPIs a fire
    // while the previous interrupt is still pending waits for the call
    // slot (Linux 5.0 `csd_lock`), and one interrupt then takes what came
    // meanwhile: about 1.0 per interrupt on a quiet machine, up to 1.3
    // measured while other emulations loaded this 2-vCPU VM. cint takes
    // several times more.
    let (_, default) = routed(dir.path(), "default", job);
    let d = default["cinterrupts"]["exec"]["routing"].clone();
    assert_eq!(d["interrupts_merged"], 0, "{d}");
    assert!(per_interrupt(&default) < 2.0, "{d}");
    assert!(per_interrupt(&cint) > 2.0 * per_interrupt(&default), "{d}");
}

#[test]
fn a_verify_crc32c_write_job_passes_through_the_device() {
    let _one = turn();
    let dir = tempfile::tempdir().unwrap();
    let job = "[w]\nsize=4m\ndirect=1\nbs=4k\nrw=randwrite\nioengine=libaio\niodepth=8\n\
        verify=crc32c\ndo_verify=1\n";
    let (fio, ours) = routed(dir.path(), "cint", job);
    let j = &fio["jobs"][0];
    assert_eq!(j["error"], 0, "fio's verify found no bad block: {j}");
    assert_eq!(j["write"]["total_ios"], 1024);
    assert!(
        j["read"]["total_ios"].as_u64().unwrap() >= 1024,
        "every block read back"
    );
    assert_eq!(ours["cinterrupts"]["exec"]["routing"]["errors"], 0);
}

#[test]
fn io_uring_under_pass_is_reported_once_and_left_alone() {
    require("fio", "fio");
    let _one = turn();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let report = dir.path().join("u.json");
    let o = exec_device_json(&report)
        .args([
            "--io-uring",
            "pass",
            "--",
            "fio",
            "--name=u",
            "--size=4m",
            "--direct=1",
            "--bs=4k",
        ])
        .args(["--rw=randread", "--ioengine=io_uring", "--number_ios=64"])
        .arg(format!("--filename={}", data.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let said = stderr(&o)
        .matches("io_uring set up: its requests are not routed")
        .count();
    assert_eq!(said, 1, "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(v["cinterrupts"]["exec"]["routing"]["commands"], 0, "{v}");
    // In the report too (issue 24 item 2), once for fio's process: the
    // seccomp filter's and the library's sightings are one entry.
    let rings: Vec<&Value> = v["cinterrupts"]["exec"]["not_routed"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| {
            n["what"]
                .as_str()
                .unwrap_or("")
                .starts_with("io_uring ring")
        })
        .collect();
    assert_eq!(rings.len(), 1, "{v}");
    assert_eq!(rings[0]["comm"], "fio", "{v}");
}

/// `bench exec` runs a job both ways and prints the three figures with
/// their ratios and bounds (the figures themselves are not checked here:
/// speed is read from the command's output, not from tests).
#[test]
fn bench_exec_prints_both_sides_and_the_bounds() {
    // bench exec runs the job under Debian's fio on its exec side.
    require("fio", "fio");
    let _one = turn();
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("b.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nfilename={}\nsize=4m\ndirect=1\nbs=4k\nrw=randread\n[psync]\nioengine=psync\n",
            dir.path().join("data").display()
        ),
    )
    .unwrap();
    let o = bin()
        .args(["bench", "exec", "--repeat", "1", "--runtime", "300ms"])
        .args(["--output-format", "json"])
        .arg(&job)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    for side in ["run", "exec"] {
        assert!(v[side]["iops"].as_f64().unwrap() > 0.0, "{v}");
        assert!(v[side]["lat_mean_ns"].as_f64().unwrap() > 0.0, "{v}");
        assert_eq!(v[side]["interrupts_per_completion"], 1.0, "psync: one each");
    }
    let checks = v["checks"].as_array().unwrap();
    let bounds: Vec<f64> = checks
        .iter()
        .map(|c| c["bound"].as_f64().unwrap())
        .collect();
    assert_eq!(bounds, [0.15, 0.15, 0.10]);
    assert!(checks.iter().all(|c| c["pass"].is_boolean()));
}

/// What one script reads from any report (issue 24 item 5): the shared
/// keys of the `cinterrupts` object, the same for `run` and `exec`.
#[derive(Debug)]
struct Shared {
    schema_version: u64,
    mode: String,
    policy: String,
    device: String,
    duration_ns: u64,
    interrupts: u64,
    completions: u64,
    completions_per_interrupt: f64,
    delivery_p50_ns: u64,
    delivery_p99_ns: u64,
    by_mark: (u64, u64, u64),
}

fn shared(v: &Value) -> Shared {
    let c = &v["cinterrupts"];
    let u = |k: &Value| k.as_u64().unwrap_or_else(|| panic!("{k} in {c}"));
    Shared {
        schema_version: u(&c["schema_version"]),
        mode: c["mode"].as_str().unwrap().into(),
        policy: c["policy"]["name"].as_str().unwrap().into(),
        device: c["device"].as_str().unwrap().into(),
        duration_ns: u(&c["duration_ns"]),
        interrupts: u(&c["interrupts"]),
        completions: u(&c["completions"]),
        completions_per_interrupt: c["completions_per_interrupt"].as_f64().unwrap(),
        delivery_p50_ns: u(&c["delivery_ns"]["p50"]),
        delivery_p99_ns: u(&c["delivery_ns"]["p99"]),
        by_mark: (
            u(&c["completions_by_mark"]["urgent"]),
            u(&c["completions_by_mark"]["barrier"]),
            u(&c["completions_by_mark"]["unmarked"]),
        ),
    }
}

/// `run JOB` and `exec -- fio JOB` on the same job file, device and
/// policy write one schema: one function reads both.
#[test]
fn run_and_exec_write_one_schema() {
    require("fio", "fio");
    let _one = turn();
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("same.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nfilename={}\nsize=8m\ndirect=1\nbs=4k\nrw=randread\nnumber_ios=400\n\
             [psync]\nioengine=psync\n",
            dir.path().join("data").display()
        ),
    )
    .unwrap();
    let device = ["--device", "optane", "--policy", "cint"];
    let o = common::output_within(
        bin()
            .arg("run")
            .arg(&job)
            .args(device)
            .args(["--output-format", "json", "--quiet"]),
        std::time::Duration::from_secs(60),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let run: Value = serde_json::from_slice(&o.stdout).unwrap();
    let (fio, exec) = exec_fio_json(dir.path(), &device, &job, &dir.path().join("exec.json"));
    assert_eq!(fio["jobs"][0]["read"]["total_ios"], 400);
    let (r, e) = (shared(&run), shared(&exec));
    for (s, mode) in [(&r, "emu"), (&e, "exec")] {
        assert_eq!(s.schema_version, 1, "{s:?}");
        assert_eq!(s.mode, mode);
        assert_eq!(s.policy, "cint", "{s:?}");
        assert!(s.device.contains("optane"), "{s:?}");
        assert!(s.duration_ns > 0, "{s:?}");
        // 400 psync reads, each Urgent (TOS Table 1), one interrupt each.
        assert_eq!(s.by_mark, (400, 0, 0), "{s:?}");
        assert_eq!(s.completions, 400, "{s:?}");
        assert!(s.interrupts > 0, "{s:?}");
        assert!((s.completions_per_interrupt - 1.0).abs() < 0.05, "{s:?}");
        assert!(
            0 < s.delivery_p50_ns && s.delivery_p50_ns <= s.delivery_p99_ns,
            "{s:?}"
        );
    }
    // What only one of them has is apart: fio's jobs and `run` for run,
    // `exec` for exec.
    assert!(run["jobs"].is_array() && run["cinterrupts"]["run"].is_object());
    assert!(run["cinterrupts"].get("exec").is_none());
    assert!(exec["cinterrupts"]["exec"]["processes"].is_array());
    assert!(exec["cinterrupts"].get("run").is_none());
}
