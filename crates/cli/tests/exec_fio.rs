//! Debian's fio (3.33, installed by scripts/setup) under `cinterrupts exec`:
//! psync, pvsync2 and libaio jobs, fio's JSON intact on stdout, and every
//! direct request seen with Table 1's marks (issue 14's first done-when,
//! counted; not yet routed).

mod common;

use common::{bin, stderr};
use serde_json::Value;

const JOB: &str = "[global]\nsize=16m\ndirect=1\nbs=4k\nrw=randread\nnumber_ios=256\n\
    [psync]\nioengine=psync\n\
    [libaio]\nstonewall\nioengine=libaio\niodepth=16\niodepth_batch_submit=16\n\
    iodepth_batch_complete_min=16\n\
    [pvsync2]\nstonewall\nioengine=pvsync2\n";

#[test]
fn real_fio_psync_pvsync2_and_libaio_under_exec() {
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
    let reads = &v["cinterrupts"]["requests"]["reads"];
    // psync and pvsync2: 512 blocking reads, Urgent. libaio: 16 io_submit
    // of 16, the last of each Barrier (TOS Table 1).
    assert_eq!(reads["urgent"], 512, "{v}");
    assert_eq!(reads["barrier"], 16, "{v}");
    assert_eq!(reads["unmarked"], 240, "{v}");
    assert_eq!(v["cinterrupts"]["calls"]["io_submit"], 16);
    // fio's job processes (forked) reported beside fio itself.
    assert!(
        v["cinterrupts"]["processes"].as_array().unwrap().len() >= 4,
        "{v}"
    );
}
