//! Debian's RocksDB tools (7.8.3, installed by scripts/setup) under
//! `cinterrupts exec`: db_bench's direct reads and flushes seen, every key
//! found, and `--mark-thread 'rocksdb:*=none'` marking RocksDB's background
//! threads' I/O unmarked, as the authors' RocksDB patch did (TOS 5.4).

mod common;

use std::path::Path;

use common::{bin, exec_device_json, require, stderr, turn};
use serde_json::Value;

fn db_bench(dir: &Path, rules: &[&str]) -> (String, Value) {
    require("db_bench", "rocksdb-tools");
    let db = dir.join("db");
    let _ = std::fs::remove_dir_all(&db);
    let report = dir.join("exec.json");
    let o = exec_device_json(&report)
        .args(rules)
        .arg("--")
        .arg("db_bench")
        // A 1 MiB memtable and no block cache, so that the keys reach SST
        // files and every get reads one.
        .args([
            "--benchmarks=fillbatch,readrandom,readwhilewriting",
            "--num=20000",
            "--reads=2000",
            "--key_size=16",
            "--value_size=1024",
            "--use_direct_reads=true",
            "--use_direct_io_for_flush_and_compaction=true",
            "--compression_type=none",
            "--write_buffer_size=1048576",
            "--cache_size=0",
        ])
        .arg(format!("--db={}", db.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    (String::from_utf8_lossy(&o.stdout).into_owned(), v)
}

#[test]
fn db_bench_under_exec_finds_every_key_and_thread_rules_unmark_the_background() {
    let _one = turn();
    let dir = tempfile::tempdir().unwrap();
    let (out, v) = db_bench(dir.path(), &[]);
    // readrandom and readwhilewriting each find every key, through the
    // modelled device (data via the page cache; SSTs written write-only
    // and read back read-only under one descriptor number).
    assert_eq!(out.matches("(2000 of 2000 found)").count(), 2, "{out}");
    let d = &v["cinterrupts"]["exec"]["routing"];
    assert!(d["commands"].as_u64().unwrap() > 2000, "{d}");
    assert_eq!(d["errors"], 0, "{d}");
    assert_eq!(d["duplicates"], 0, "{d}");
    let r = &v["cinterrupts"]["exec"]["requests"];
    // Blocking preads, Urgent under Table 1 (a get whose key is still in
    // the memtable reads nothing: 1,928 of 2,000 read here); flushes write
    // and fsync.
    assert!(r["reads"]["urgent"].as_u64().unwrap() >= 1000, "{v}");
    assert!(r["writes"]["urgent"].as_u64().unwrap() > 0, "{v}");
    assert!(r["flushes"]["urgent"].as_u64().unwrap() > 0, "{v}");
    let (out, v) = db_bench(dir.path(), &["--mark-thread", "rocksdb:*=none"]);
    assert_eq!(out.matches("(2000 of 2000 found)").count(), 2, "{out}");
    assert!(
        v["cinterrupts"]["completions_by_mark"]["unmarked"]
            .as_u64()
            .unwrap()
            > 0,
        "{v}"
    );
    let r = &v["cinterrupts"]["exec"]["requests"];
    // The flush thread (rocksdb:high0) writes and syncs unmarked; the gets
    // (the benchmark's own thread) stay Urgent.
    assert_eq!(r["writes"]["urgent"], 0, "{v}");
    assert!(r["writes"]["unmarked"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(r["flushes"]["urgent"], 0, "{v}");
    assert!(r["reads"]["urgent"].as_u64().unwrap() >= 1000, "{v}");
    // --mark-thread GLOB=MARK is the rule `thread=GLOB => MARK` (issue 24
    // item 6), so the report prints it.
    assert_eq!(
        v["cinterrupts"]["exec"]["rules"][0],
        "thread=rocksdb:* => none"
    );
}

#[test]
fn ldb_dump_under_exec_reads_the_sst_files_and_file_rules_unmark_them() {
    let _one = turn();
    let dir = tempfile::tempdir().unwrap();
    require("ldb", "rocksdb-tools");
    db_bench(dir.path(), &[]);
    // ldb reads with the options db_bench stored (OPTIONS-*:
    // use_direct_reads=true).
    let db = dir.path().join("db");
    let report = dir.path().join("dump.json");
    let o = bin()
        .args([
            "exec",
            "--quiet",
            "--mark-file",
            "*.sst=none",
            "--output-format",
            "json",
            "-o",
        ])
        .arg(&report)
        .args(["--", "ldb"])
        .arg(format!("--db={}", db.display()))
        .args(["dump", "--count_only"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // --quiet: nothing of ours on stderr; ldb's count on its stdout.
    assert!(!stderr(&o).contains("cinterrupts (exec)"), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("20000"),
        "{:?}",
        o
    );
    let v: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let reads = &v["cinterrupts"]["exec"]["requests"]["reads"];
    // The dump tool's reads of the SST files, unmarked by the file rule
    // (the authors' 2-line dump-tool patch, TOS 5.5).
    assert!(reads["unmarked"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(reads["urgent"], 0, "{v}");
}
