//! `exec.routing.fires` (issue 38 item 4): per mark, the completions the
//! device's strategy was handed and the interrupts that delivered them,
//! the depth in flight at each completion, and why the strategy fired,
//! on a small fio run under `exec --device optane --policy cint` whose
//! marks are known (TOS Table 1: blocking reads Urgent; a libaio batch's
//! last request Barrier, the rest unmarked).

mod common;

use common::{bin, require, stderr, turn};
use serde_json::Value;

const JOB: &str = "[global]\nsize=16m\ndirect=1\nbs=4k\nrw=randread\nnumber_ios=128\n\
    [psync]\nioengine=psync\n\
    [libaio]\nstonewall\nioengine=libaio\niodepth=16\niodepth_batch_submit=16\n\
    iodepth_batch_complete_min=16\n";

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn per_mark_fires_add_up_to_the_completions_and_name_their_reasons() {
    require("fio", "fio");
    let _one = turn();
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("t.fio");
    let data = dir.path().join("data");
    std::fs::write(
        &job,
        format!("[global]\nfilename={}\n{JOB}", data.display()),
    )
    .unwrap();
    let report = dir.path().join("exec.json");
    let o = bin()
        .args(["exec", "--device", "optane", "--policy", "cint"])
        .args(["--output-format", "json", "-o"])
        .arg(&report)
        .args(["--", "fio", "--output=/dev/null"])
        .arg(&job)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let c = &v["cinterrupts"];
    let f = &c["exec"]["routing"]["fires"];
    // 128 psync reads, then 8 io_submit of 16 (Table 1: 8 Barrier, 120
    // unmarked): the device's strategy was handed each once, as the
    // handler reaped each once.
    let marks = ["urgent", "barrier", "unmarked"];
    let per_mark: Vec<u64> = marks
        .iter()
        .map(|m| u(&f["by_mark"][m]["completions"]))
        .collect();
    assert_eq!(per_mark, [128, 8, 120], "{f}");
    assert_eq!(per_mark.iter().sum::<u64>(), u(&f["completions"]), "{f}");
    // None missed by a lapped poller at this depth (16 of 1,024 CQ entries).
    assert_eq!(u(&f["not_walked"]), 0, "{f}");
    assert_eq!(u(&f["completions"]), u(&c["completions"]), "{v}");
    let fires = u(&f["fires"]);
    // Each fire raises the line once (a fire left waiting for the call
    // slot when the device stopped is the only one not raised).
    let raised = u(&c["exec"]["routing"]["interrupts_raised"]);
    assert!(fires >= raised && fires <= raised + 1, "{fires} {raised}");
    for m in marks {
        let x = &f["by_mark"][m];
        let (n, irqs) = (u(&x["completions"]), u(&x["interrupts"]));
        assert!(irqs >= 1 && irqs <= n && irqs <= fires, "{m}: {x}");
        // The depth histogram counts every completion once, each at a
        // depth of at least itself.
        let hist: u64 = x["depth"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| u(&b["completions"]))
            .sum();
        assert_eq!(hist, n, "{m}: {x}");
        assert!(x["depth_mean"].as_f64().unwrap() >= 1.0, "{m}: {x}");
    }
    // Why: cint fires at once for every Urgent (urgent-only, TOS 3.5) and
    // every relaxed Barrier completion (TOS Alg. 2 lines 11-15); the
    // unmarked ones wait for thr or the quiescent gap, or ride with a
    // Barrier's full interrupt.
    let r = &f["reasons"];
    assert_eq!(u(&r["urgent"]["fires"]), 128, "{r}");
    assert_eq!(u(&r["barrier"]["fires"]), 8, "{r}");
    assert_eq!(u(&r["error"]["fires"]), 0, "{r}");
    let by_reason: u64 = ["urgent", "barrier", "error", "threshold", "timeout"]
        .iter()
        .map(|k| u(&r[k]["fires"]))
        .sum();
    assert_eq!(by_reason, fires, "{r}");
    let delivered: u64 = ["urgent", "barrier", "error", "threshold", "timeout"]
        .iter()
        .map(|k| u(&r[k]["completions"]))
        .sum();
    assert_eq!(
        delivered + u(&f["undelivered_at_stop"]),
        per_mark.iter().sum::<u64>()
    );
    // Fewer interrupts than unmarked completions: they were coalesced.
    assert!(u(&f["by_mark"]["unmarked"]["interrupts"]) < 120, "{f}");

    // The text report says the same, one line per mark and one of reasons.
    let text = dir.path().join("exec.txt");
    let o = bin()
        .args(["exec", "--device", "optane", "--policy", "cint", "-o"])
        .arg(&text)
        .args(["--", "fio", "--output=/dev/null"])
        .arg(&job)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let t = std::fs::read_to_string(&text).unwrap();
    assert!(
        t.contains("by mark, as the device's strategy saw them: urgent: 128 completions"),
        "{t}"
    );
    assert!(
        t.contains("by mark, as the device's strategy saw them: unmarked: 120 completions"),
        "{t}"
    );
    assert!(
        t.contains("by mark, as the device's strategy saw them: fired: urgent 128"),
        "{t}"
    );
}
