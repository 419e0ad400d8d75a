//! `cinterrupts reproduce --mode app`: the paper's RocksDB experiments
//! (TOS Table 3, Fig 22, Table 6) under `exec --device optane`, at the
//! quick scale, each claim with a verdict. Fails in one line naming
//! scripts/setup where RocksDB's tools are not installed.

mod common;

use common::{assert_one_line_error, bin, require, stderr, turn};
use serde_json::Value;

#[test]
fn app_mode_reports_table3_fig22_and_table6_with_verdicts() {
    require("db_bench", "rocksdb-tools");
    require("ldb", "rocksdb-tools");
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
    for e in ["table3", "fig22", "table6", "xval-rocksdb"] {
        let mine: Vec<&Value> = claims.iter().filter(|c| c["experiment"] == e).collect();
        assert!(!mine.is_empty(), "no claims for {e}: {v}");
        for c in mine {
            // Every claim ran and has a computed verdict, a kind, a band
            // and a basis (one code with claims.toml's).
            assert!(c["ours"].is_f64(), "{c}");
            assert!(
                [
                    "holds",
                    "holds qualitatively",
                    "right direction, far off",
                    "does not hold"
                ]
                .contains(&c["verdict"].as_str().unwrap()),
                "{c}"
            );
            for k in ["kind", "band", "basis"] {
                assert!(!c[k].as_str().unwrap().is_empty(), "{k}: {c}");
            }
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
    // xval-rocksdb: both sides of every configuration, side by side.
    assert!(v["skipped"].as_array().unwrap().is_empty(), "{v}");
    for side in ["real", "model"] {
        for t in [1, 2] {
            let k = format!("xval-rocksdb/{side}/cint/t{t}");
            let r = &v["runs"][&k];
            assert!(r["p50_us"].as_f64().unwrap() > 0.0, "{k}: {r}");
            // Most gets miss the block cache and read the device once.
            let per_get = r["commands"].as_f64().unwrap();
            assert!((0.3..=1.0).contains(&per_get), "{k}: {r}");
            assert!(r["cpu_us_per_get"].as_f64().unwrap() > 0.0, "{k}: {r}");
        }
    }
    assert!(md.contains("## xval-rocksdb"), "{md}");
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

#[test]
fn xval_without_db_bench_runs_the_model_and_says_the_real_side_was_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x");
    let o = bin()
        .env("PATH", dir.path())
        .args([
            "reproduce",
            "--mode",
            "app",
            "--quick",
            "--only",
            "xval-rocksdb",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let skipped: Vec<&str> = err.lines().filter(|l| l.contains("skipped")).collect();
    assert_eq!(skipped.len(), 1, "{err}");
    assert!(
        skipped[0].contains("db_bench not on the PATH"),
        "{}",
        skipped[0]
    );
    let v: Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(v["skipped"].as_array().unwrap().len(), 1, "{v}");
    let runs = v["runs"].as_object().unwrap();
    assert!(runs.contains_key("xval-rocksdb/model/cint/t1"), "{v}");
    assert!(!runs.keys().any(|k| k.contains("/real/")), "{v}");
    let mine: Vec<&Value> = v["claims"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["experiment"] == "xval-rocksdb")
        .collect();
    assert_eq!(mine.len(), 6, "{v}");
    assert!(mine.iter().all(|c| c["verdict"] == "not run"), "{v}");
}
