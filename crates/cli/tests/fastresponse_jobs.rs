//! examples/fastresponse (issue 15 item 2): FastResponse's Table 1 TO
//! workloads and its RocksDB LS workloads as job files. `cinterrupts jobs`
//! accepts them all and shows the LS jobs' `critical` tag (ours, item 1).

mod common;

use std::path::PathBuf;

use common::*;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/fastresponse")
}

fn files() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "fio"))
        .map(|p| p.to_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

fn example(name: &str) -> String {
    dir().join(name).to_str().unwrap().to_string()
}

#[test]
fn jobs_accepts_every_example_and_shows_critical_on_the_ls_jobs_only() {
    let files = files();
    assert_eq!(files.len(), 7, "{files:?}");
    let mut args = vec!["jobs"];
    args.extend(files.iter().map(String::as_str));
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let heads: Vec<&str> = out.lines().filter(|l| !l.starts_with(' ')).collect();
    assert_eq!(heads.len(), 7, "{out}");
    for h in &heads {
        let ls = h.starts_with("ls-");
        assert!(h.starts_with("ls-") || h.starts_with("to-"), "{h}");
        assert_eq!(h.contains(" critical "), ls, "{h}");
        assert!(h.contains(" rate_process=poisson "), "{h}");
    }
    // Table 1's mean intervals as rates, reads then writes.
    for (job, rates) in [
        ("to-terasort", "1493,3448"),
        ("to-bayes", "901,680"),
        ("to-kmeans", "503,1031"),
        ("to-pagerank", "763,318"),
        ("to-index", "1282,5263"),
        ("ls-readrandom", "2000,2000"),
        ("ls-fillsync", "2000,2000"),
    ] {
        let h = heads
            .iter()
            .find(|h| h.starts_with(&format!("{job}:")))
            .unwrap_or_else(|| panic!("{job} missing: {out}"));
        assert!(h.contains(&format!(" rate_iops={rates} ")), "{h}");
        let bs = if job.starts_with("to-") {
            "bs=131072/131072"
        } else {
            "bs=4096/4096"
        };
        assert!(h.contains(bs), "{h}");
    }
    let mut check = vec!["jobs", "--check"];
    check.extend(files.iter().map(String::as_str));
    let o = run(&check);
    assert!(o.status.success(), "{}", stdout(&o));
    assert!(
        stdout(&o).ends_with("7 of 7 files parse\n"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn the_simulator_runs_readrandom_at_its_rate_and_fillsync_with_its_fsyncs() {
    let o = run(&["sim", &example("ls-readrandom.fio"), "--runtime", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // About 2,000 Poisson arrivals in a second (sd ~45), every one critical
    // in the job file and Urgent by TOS Table 1 (psync).
    let iops: u64 = out
        .split("read: IOPS=")
        .nth(1)
        .and_then(|s| s.split(',').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no read IOPS in: {out}"));
    assert!((1800..=2200).contains(&iops), "{iops}: {out}");
    // fillsync's fsync per put runs through the ext4 fsync path
    // (crates/sim/src/journal.rs): fio's `sync` latency is printed.
    let o = run(&["sim", &example("ls-fillsync.fio"), "--runtime", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("  fsync/fdatasync/sync_file_range:\n    sync ("),
        "{out}"
    );
    assert!(out.contains("per fsync (usec, journal=ordered)"), "{out}");
}

#[test]
fn fio_itself_refuses_critical_as_the_files_say() {
    // Only where Debian's fio is installed (scripts/setup installs it).
    let Ok(o) = std::process::Command::new("fio")
        .args(["--parse-only", &example("ls-readrandom.fio")])
        .output()
    else {
        eprintln!("fio not installed: skipped");
        return;
    };
    let all = format!("{}{}", stdout(&o), stderr(&o));
    assert!(all.contains("Bad option <critical=1>"), "{all}");
    // The TO files are plain fio.
    let o = std::process::Command::new("fio")
        .args(["--parse-only", &example("to-terasort.fio")])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}
