//! `cinterrupts reproduce --mode app`: the paper's RocksDB experiments
//! (TOS Table 3, Fig 22, Table 6) under `exec --device optane`, at the
//! quick scale, each claim with a verdict. Skipped, with the reason
//! printed, where RocksDB's tools are not installed.

mod common;

use common::{assert_one_line_error, bin, stderr, turn};
use serde_json::Value;

fn have(tool: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
        .unwrap_or(false)
}

#[test]
fn app_mode_reports_table3_fig22_and_table6_with_verdicts() {
    if !(have("db_bench") && have("ldb")) {
        eprintln!(
            "skipped: db_bench or ldb not on the PATH (scripts/setup installs rocksdb-tools)"
        );
        return;
    }
    let _turn = turn();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("app");
    let started = std::time::Instant::now();
    let o = bin()
        .args(["reproduce", "--mode", "app", "--quick", "--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    eprintln!("reproduce --mode app --quick: {:?}", started.elapsed());
    let v: Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(v["mode"], "app");
    let claims = v["claims"].as_array().unwrap();
    for e in ["table3", "fig22", "table6"] {
        let mine: Vec<&Value> = claims.iter().filter(|c| c["experiment"] == e).collect();
        assert!(!mine.is_empty(), "no claims for {e}: {v}");
        for c in mine {
            // Every claim ran and has a computed verdict.
            assert!(c["ours"].is_f64(), "{c}");
            assert!(
                ["holds", "holds qualitatively", "does not hold"]
                    .contains(&c["verdict"].as_str().unwrap()),
                "{c}"
            );
            assert!(!c["paper"].as_str().unwrap().is_empty(), "{c}");
        }
    }
    // Every run went through the emulated device.
    for (k, r) in v["runs"].as_object().unwrap() {
        assert!(r["ops_per_sec"].as_f64().unwrap() > 0.0, "{k}: {r}");
        assert!(r["interrupts"].as_f64().unwrap() > 0.0, "{k}: {r}");
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("| keys per database"), "{md}");
    // No database left behind.
    assert!(!out.join("scratch").exists());
}

#[test]
fn app_mode_without_rocksdb_tools_fails_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let o = bin()
        .env("PATH", dir.path())
        .args(["reproduce", "--mode", "app", "--out"])
        .arg(dir.path().join("r"))
        .output()
        .unwrap();
    assert_one_line_error(&o, "needs RocksDB's db_bench on the PATH");
    assert!(!dir.path().join("r").exists());
}
