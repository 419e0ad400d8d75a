//! `run` and `exec` report cycles, instructions and the task clock per I/O
//! from perf_event_open (issue 37 item 3). Where the machine has no
//! hardware counters (this project's VM: `perf stat -e cycles true` says
//! "<not supported>") the report says so once, however many threads were
//! counted, and gives no number for them; the software task clock is there
//! either way.

mod common;

use std::process::Output;

use common::*;
use serde_json::Value;

fn example(name: &str) -> String {
    format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn all(o: &Output) -> String {
    format!("{}{}", stdout(o), stderr(o))
}

/// The text's counter lines: either the hardware counters are counted, or
/// one line says they are not, never both; the task clock is counted.
fn check_text(text: &str) {
    let unsupported = text
        .lines()
        .filter(|l| l.contains("counters:") && l.contains("not supported"))
        .count();
    assert!(unsupported <= 1, "said {unsupported} times:\n{text}");
    let counted = text.contains("cycles=");
    assert!(
        counted != (unsupported == 1),
        "cycles counted and said missing, or neither:\n{text}"
    );
    let line = text
        .lines()
        .find(|l| l.contains("counters per I/O"))
        .unwrap_or_else(|| panic!("no counter line:\n{text}"));
    assert!(line.contains("task-clock="), "{line}");
}

/// The JSON's `counters`: a counter the machine lacks is absent (no null,
/// no 0), `unsupported` says so.
fn check_json(c: &Value) {
    assert!(c["ios"].as_u64().unwrap() > 0, "{c}");
    assert!(c["task_clock_ns_per_io"].as_f64().unwrap() > 0.0, "{c}");
    match c.get("unsupported") {
        Some(why) => {
            assert!(why.as_str().unwrap().contains("cycles"), "{c}");
            assert!(
                c.get("cycles").is_none() && c.get("cycles_per_io").is_none(),
                "{c}"
            );
        }
        None => assert!(c["cycles_per_io"].as_f64().unwrap() > 0.0, "{c}"),
    }
}

#[test]
fn run_reports_counters_per_io_and_says_once_what_it_lacks() {
    let _t = turn();
    // Two jobs, two counted threads: still one line.
    let ex = example("mixed-16.fio");
    let args = ["run", &ex, "--backend", "null:10us", "--runtime", "200ms"];
    let o = run(&args);
    assert!(o.status.success(), "{}", all(&o));
    check_text(&stdout(&o));
    let mut with_json = args.to_vec();
    with_json.extend(["--output-format", "json", "-q"]);
    let o = run(&with_json);
    assert!(o.status.success(), "{}", all(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    check_json(&v["cinterrupts"]["counters"]);
}

#[test]
fn exec_reports_the_programs_counters_per_io() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::write(&data, vec![7u8; 1 << 20]).unwrap();
    let json = dir.path().join("exec.json");
    let o = bin()
        .arg("exec")
        .args(["-o", json.to_str().unwrap(), "--output-format", "json"])
        .arg("--")
        .args([
            "dd",
            &format!("if={}", data.display()),
            "of=/dev/null",
            "bs=4096",
            "count=64",
            "iflag=direct",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", all(&o));
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let c = &v["cinterrupts"]["counters"];
    assert_eq!(c["ios"], 64, "{c}");
    check_json(c);
    let o = bin()
        .arg("exec")
        .arg("--")
        .args([
            "dd",
            &format!("if={}", data.display()),
            "of=/dev/null",
            "bs=4096",
            "count=64",
            "iflag=direct",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", all(&o));
    check_text(&all(&o));
}
