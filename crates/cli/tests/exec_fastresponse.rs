//! `exec` with FastResponse's host mechanisms (issue 15) for real fio
//! (Debian's 3.33): the critical tag by rule, LD over routed commands,
//! polled completion on a poll queue and the critical boost. Counts in one
//! run only (the machine is shared and loaded): no timing bounds.

mod common;

use common::*;
use serde_json::Value;

/// fio's job file (`filename=` of each job given in `text`) under `exec
/// --device optane OPTS`: fio's JSON and our report.
fn exec_fio(dir: &std::path::Path, opts: &[&str], text: &str) -> (Value, Value) {
    let file = dir.join("t.fio");
    std::fs::write(&file, text).unwrap();
    let report = dir.join("exec.json");
    let mut args = vec!["--device", "optane"];
    args.extend_from_slice(opts);
    exec_fio_json(dir, &args, &file, &report)
}

fn total(fio: &Value, dir: &str) -> u64 {
    fio["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j[dir]["total_ios"].as_u64().unwrap())
        .sum()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn ld_under_exec_keeps_two_noncritical_pieces_in_flight_and_lets_critical_reads_bypass() {
    let _one = turn();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    // A bulk libaio QD16 64k writer, verified, beside a psync reader on a
    // file the rule makes critical.
    let job = format!(
        "[global]\ndirect=1\n\
         [bulk]\nfilename={d}/data\nsize=8m\nbs=64k\nrw=randwrite\nioengine=libaio\n\
         iodepth=16\nverify=crc32c\n\
         [crit]\nfilename={d}/crit\nsize=4m\nbs=4k\nrw=randread\nioengine=psync\nnumber_ios=200\n"
    );
    let (fio, ours) = exec_fio(
        dir.path(),
        &[
            "--block-scheduler",
            "ld,tokens=2",
            "--critical-file",
            "*/crit",
        ],
        &job,
    );
    // 128 writes of 64k, read back and verified (fio fails the job on a
    // bad block), and the critical reader's 200.
    assert_eq!(total(&fio, "write"), 128, "{fio}");
    assert_eq!(total(&fio, "read"), 128 + 200, "{fio}");
    let c = &ours["cinterrupts"];
    let dev = &c["exec"]["routing"];
    let b = &dev["block"];
    assert_eq!(b["scheduler"], "ld,tokens=2,split=32k", "{b}");
    assert_eq!(c["exec"]["fastresponse"]["critical"], 200, "{c}");
    assert_eq!(b["requests"], 456, "every routed request through LD: {b}");
    assert_eq!(b["critical"], 200, "{b}");
    // Each 64k request is two 32k pieces; a critical one goes whole.
    assert_eq!(u(&b["pieces"]), 256 * 2 + 200, "{b}");
    assert!(u(&b["max_noncritical_in_flight"]) <= 2, "{b}");
    assert!(u(&b["max_noncritical_in_flight"]) >= 1, "{b}");
    // The device did exactly the pieces, each reaped once.
    assert_eq!(dev["commands"], b["pieces"], "{dev}");
    assert_eq!(c["completions"], b["pieces"], "{dev}");
    assert_eq!(dev["duplicates"], 0, "{dev}");
    assert_eq!(dev["errors"], 0, "{dev}");
}

#[test]
fn psync_under_exec_completion_poll_takes_no_interrupt() {
    let _one = turn();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    let job = format!(
        "[r]\nfilename={d}/data\nsize=16m\ndirect=1\nbs=4k\nrw=randread\nioengine=psync\n\
         number_ios=1000\n"
    );
    let (fio, ours) = exec_fio(dir.path(), &["--completion", "poll"], &job);
    assert_eq!(total(&fio, "read"), 1000);
    let c = &ours["cinterrupts"];
    let dev = &c["exec"]["routing"];
    assert_eq!(dev["completion"], "poll", "{dev}");
    assert_eq!(dev["commands"], 1000, "{dev}");
    assert_eq!(
        dev["interrupts_raised"], 0,
        "a poll queue raises none: {dev}"
    );
    assert_eq!(c["interrupts"], 0, "{dev}");
    assert_eq!(dev["completions_polled"], 1000, "{dev}");
    assert_eq!(c["completions"], 1000, "{dev}");
    assert_eq!(c["exec"]["fastresponse"]["polled"], 1000, "{c}");
}

/// A slow device (300 us a command): hybrid polling's sleep (half the
/// mean, 150 us) is longer than the timer's overshoot, so the threads sleep.
const SLOW: &str = "name = \"slow\"\ndescription = \"300 us a command\"\nqueues = 1\n\
    queue_depth = 64\nparallelism = 4\nmax_read_iops = 100000\nmax_write_iops = 100000\n\
    default_delta = \"6us\"\ndefault_thr = 32\n\
    [read]\ndistribution = \"normal\"\nmean = \"300us\"\nstddev = \"5us\"\nfloor = \"280us\"\nper_kib = \"0ns\"\n\
    [write]\ndistribution = \"normal\"\nmean = \"300us\"\nstddev = \"5us\"\nfloor = \"280us\"\nper_kib = \"0ns\"\n";

#[test]
fn hybrid_polling_under_exec_sleeps_then_spins_with_no_interrupt() {
    require("fio", "fio");
    let _one = turn();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    let profile = write(dir.path(), "slow.toml", SLOW);
    let job = format!(
        "[r]\nfilename={d}/data\nsize=4m\ndirect=1\nbs=4k\nrw=randread\nioengine=psync\n\
         number_ios=600\n"
    );
    let file = dir.path().join("t.fio");
    std::fs::write(&file, job).unwrap();
    let report = dir.path().join("exec.json");
    let o = bin()
        .args(["exec", "--device", &profile, "--completion", "hybrid"])
        .args(["--output-format", "json", "-o", report.to_str().unwrap()])
        .args(["--", "fio", "--output-format=json", file.to_str().unwrap()])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let ours: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let c = &ours["cinterrupts"];
    let dev = &c["exec"]["routing"];
    assert_eq!(dev["completion"], "hybrid", "{dev}");
    assert_eq!(c["interrupts"], 0, "{dev}");
    assert_eq!(dev["completions_polled"], 600, "{dev}");
    let h = &c["exec"]["fastresponse"]["hybrid"];
    // The first 100 ms window has no mean yet (no sleep); after it, each
    // wait sleeps about 150 us less the overshoot.
    assert!(u(&h["sleeps"]) >= 1, "{h}");
    assert!(u(&h["sleeps"]) + u(&h["spun"]) <= 600, "{h}");
}

#[test]
fn select_isr_polls_critical_and_hipri_reads_and_interrupts_the_rest() {
    let _one = turn();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    let job = format!(
        "[global]\ndirect=1\nbs=4k\nrw=randread\nsize=4m\nnumber_ios=300\n\
         [crit]\nfilename={d}/crit\nioengine=psync\n\
         [hipri]\nfilename={d}/data\nioengine=pvsync2\nhipri=1\n\
         [plain]\nfilename={d}/data\nioengine=psync\n"
    );
    let (fio, ours) = exec_fio(
        dir.path(),
        &["--completion", "select-isr", "--critical-file", "*/crit"],
        &job,
    );
    assert_eq!(total(&fio, "read"), 900);
    let c = &ours["cinterrupts"];
    let dev = &c["exec"]["routing"];
    let fr = &c["exec"]["fastresponse"];
    assert_eq!(fr["critical"], 300, "{fr}");
    assert_eq!(fr["hipri"], 300, "{fr}");
    assert_eq!(fr["polled"], 600, "{fr}");
    assert_eq!(dev["completions_polled"], 600, "{dev}");
    assert_eq!(c["completions"], 900, "{dev}");
    // The plain reader's 300 took interrupts (cint: Urgent, one each).
    assert!(u(&c["interrupts"]) >= 1, "{dev}");
    assert!(u(&c["interrupts"]) <= 300, "{dev}");
}

#[test]
fn the_critical_boost_reaches_the_threads_of_critical_requests() {
    let _one = turn();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    let job = format!(
        "[global]\ndirect=1\nbs=4k\nrw=randread\nsize=4m\nnumber_ios=200\nioengine=psync\n\
         [crit]\nfilename={d}/crit\n[plain]\nfilename={d}/data\n"
    );
    for how in ["slice", "fifo"] {
        let (fio, ours) = exec_fio(
            dir.path(),
            &["--critical-boost", how, "--critical-file", "*/crit"],
            &job,
        );
        assert_eq!(total(&fio, "read"), 400);
        let c = &ours["cinterrupts"];
        assert_eq!(c["exec"]["critical_boost"], how);
        let boosted = c["exec"]["boosted"].as_array().unwrap();
        // The crit job's one thread (fio forks a process per job), once.
        assert_eq!(boosted.len(), 1, "{c}");
        assert_eq!(boosted[0]["how"], how, "{c}");
        assert!(boosted[0]["error"].is_null(), "{c}");
        assert_eq!(boosted[0]["name"], "fio", "{c}");
    }
}

#[test]
fn bad_fastresponse_flags_under_exec_give_one_line_naming_the_option() {
    for (flag, value, want) in [
        (
            "--block-scheduler",
            "kyber",
            "unknown block scheduler 'kyber'",
        ),
        ("--block-scheduler", "ld,tokens=0", "tokens=0"),
        ("--completion", "spin", "spin"),
        (
            "--critical-boost",
            "rt",
            "(possible values: none, slice, fifo)",
        ),
        ("--critical-thread", "", "the glob is empty"),
        ("--critical-file", "", "the glob is empty"),
    ] {
        let o = run(&["exec", flag, value, "--", "true"]);
        assert_one_line_error(&o, flag);
        assert_one_line_error(&o, want);
        assert_eq!(o.status.code(), Some(2), "{flag} {value}");
    }
    let o = run(&["exec", "--observe", "--completion", "poll", "--", "true"]);
    assert_one_line_error(&o, "--completion");
}
