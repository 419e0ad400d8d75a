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
    // Two LS jobs; per TO workload its reads and its spills, and for the
    // CPU-intensive Bayes and Kmeans (FR 4.2, 4.4) a cpuio job.
    assert_eq!(heads.len(), 2 + 5 * 2 + 2, "{out}");
    for h in &heads {
        let ls = h.starts_with("ls-");
        assert!(h.starts_with("ls-") || h.starts_with("to-"), "{h}");
        assert_eq!(h.contains(" critical "), ls, "{h}");
    }
    let head = |job: &str| {
        *heads
            .iter()
            .find(|h| h.starts_with(&format!("{job}:")))
            .unwrap_or_else(|| panic!("{job} missing: {out}"))
    };
    // Table 1's mean read intervals as Poisson rates.
    for (job, rates) in [
        ("to-terasort-read", "1493,1493"),
        ("to-bayes-read", "901,901"),
        ("to-kmeans-read", "503,503"),
        ("to-pagerank-read", "763,763"),
        ("to-index-read", "1282,1282"),
        ("ls-readrandom", "2000,2000"),
        ("ls-fillsync", "2000,2000"),
    ] {
        let h = head(job);
        assert!(h.contains(&format!(" rate_iops={rates} ")), "{h}");
        assert!(h.contains(" rate_process=poisson "), "{h}");
        let bs = if job.starts_with("to-") {
            "bs=131072/131072"
        } else {
            "bs=4096/4096"
        };
        assert!(h.contains(bs), "{h}");
    }
    // Table 1's writes as Hadoop's map-side spills: 640 x 128 KiB = 80 MiB
    // at once, then quiet for 640 write intervals less the spill's own
    // 41.9 ms at the 900P's write ceiling.
    for (job, think) in [
        ("to-terasort-spill", "143.657ms"),
        ("to-bayes-spill", "898.857ms"),
        ("to-kmeans-spill", "578.857ms"),
        ("to-pagerank-spill", "1.968s"),
        ("to-index-spill", "79.657ms"),
    ] {
        let h = head(job);
        assert!(
            h.contains(
                "rw=write bs=131072/131072 iodepth=640 batch_submit=16 batch_complete=640..640"
            ),
            "{h}"
        );
        assert!(h.contains(&format!(" thinktime={think}/640 ")), "{h}");
    }
    for job in ["to-bayes-map", "to-kmeans-map"] {
        assert!(
            head(job).contains("ioengine=cpuio cpuload=100%"),
            "{}",
            head(job)
        );
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
    // (crates/sim/src/world/journal.rs): fio's `sync` latency is printed.
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
    // Debian's fio, which scripts/setup installs.
    require("fio", "fio");
    let o = std::process::Command::new("fio")
        .args(["--parse-only", &example("ls-readrandom.fio")])
        .output()
        .unwrap();
    let all = format!("{}{}", stdout(&o), stderr(&o));
    assert!(all.contains("Bad option <critical=1>"), "{all}");
    // The TO files are plain fio.
    let o = std::process::Command::new("fio")
        .args(["--parse-only", &example("to-terasort.fio")])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}
