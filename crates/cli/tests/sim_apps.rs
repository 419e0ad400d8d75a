//! `cinterrupts sim FILE.toml`: an application file (issue 16) on the
//! simulator, end to end: its operations and cores in the JSON, Barrier's
//! effect on KVell's interrupts, and bad input in one line.

mod common;

use common::{assert_one_line_error, run, stdout, write};
use serde_json::Value;

fn example(name: &str) -> String {
    format!(
        "{}/../../examples/apps/{name}.toml",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn sim_json(file: &str, policy: &str) -> Value {
    let o = run(&[
        "sim",
        file,
        "--policy",
        policy,
        "--runtime",
        "20ms",
        "--output-format",
        "json",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

#[test]
fn kvell_reads_are_reported_per_operation_and_per_core() {
    let v = sim_json(&example("kvell-ycsb-c"), "cint");
    let c = &v["cinterrupts"];
    let ops = c["run"]["apps"].as_array().unwrap();
    let read = ops
        .iter()
        .find(|o| o["name"] == "kvell" && o["kind"] == "read")
        .expect("kvell's reads");
    assert!(read["ops"].as_u64().unwrap() > 1000, "{read}");
    let lat = &read["lat_us"];
    assert!(lat["p50"].as_f64().unwrap() <= lat["p99"].as_f64().unwrap());
    // Two worker cores and four client cores, each with its window.
    let cores = c["run"]["cores"].as_array().unwrap();
    assert_eq!(cores.len(), 6, "{cores:?}");
    for core in cores {
        let sum: f64 = ["user", "kernel", "irq", "idle"]
            .iter()
            .map(|k| core[k].as_f64().unwrap())
            .sum();
        assert!((sum - 1.0).abs() < 1e-6, "{core}");
    }
    // Only the workers' cores take the device's interrupts.
    let irqs: Vec<u64> = cores
        .iter()
        .map(|c| c["interrupts"].as_u64().unwrap())
        .collect();
    assert!(
        irqs[0] > 0 && irqs[1] > 0 && irqs[2..].iter().all(|&n| n == 0),
        "{irqs:?}"
    );
}

#[test]
fn kvells_barrier_fires_fewer_interrupts_under_cint_than_default() {
    let per_completion = |policy| {
        let v = sim_json(&example("kvell-ycsb-c"), policy);
        let c = &v["cinterrupts"];
        let irqs: u64 = c["run"]["cores"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["interrupts"].as_u64().unwrap())
            .sum();
        let ops: u64 = c["run"]["apps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["ops"].as_u64().unwrap())
            .sum();
        irqs as f64 / ops as f64
    };
    let (cint, default) = (per_completion("cint"), per_completion("default"));
    // TOS 5.4.2: cint fires one interrupt per io_submit batch (Barrier on
    // its last request), default one per completion.
    assert!(cint < default / 4.0, "cint {cint} default {default}");
}

#[test]
fn a_bad_application_file_is_one_line_naming_file_line_and_option() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(
        dir.path(),
        "bad.toml",
        "[[instance]]\nname = \"k\"\nengine = \"kvell\"\nworkload = \"g\"\n",
    );
    let o = run(&["sim", &bad]);
    assert_one_line_error(&o, "bad.toml:4: option 'workload'");
    let unknown = write(
        dir.path(),
        "unknown.toml",
        "[[instance]]\nname = \"r\"\nengine = \"rocksdb\"\nbenchmark = \"readrandom\"\nthreadz = 4\n",
    );
    assert_one_line_error(&run(&["sim", &unknown]), "unknown.toml:5");
    let o = run(&["sim", &example("kvell-ycsb-c"), "--fio", "iodepth=4"]);
    assert_one_line_error(&o, "--fio");
    let o = run(&[
        "sim",
        &dir.path().join("missing.toml").display().to_string(),
    ]);
    assert_one_line_error(&o, "missing.toml");
}

#[test]
fn rocksdb_gets_and_the_dump_are_reported_apart() {
    let v = sim_json(&example("rocksdb-dump"), "cint");
    let ops = v["cinterrupts"]["run"]["apps"].as_array().unwrap();
    let find = |name: &str, kind: &str| {
        ops.iter()
            .find(|o| o["name"] == name && o["kind"] == kind)
            .unwrap_or_else(|| panic!("no {name}/{kind} in {ops:?}"))
    };
    assert!(find("rocks", "read")["ops"].as_u64().unwrap() > 0);
    assert!(find("dump", "background")["items"].as_u64().unwrap() > 0);
}
