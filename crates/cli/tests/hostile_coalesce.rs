//! `coalesce` against hostile streams, outputs and option values (issue 12):
//! each run bounded in time and memory, each failure one line.
mod common;
use common::*;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::FileTypeExt;
use std::process::Stdio;
use std::time::Duration;

const HEADER: &str = "time_ns,id,flags,event\n";

/// `n` unmarked completions 1 us apart, every 17th Urgent.
fn rows(n: u64) -> String {
    let mut s = String::from(HEADER);
    for i in 0..n {
        let flags = if i % 17 == 0 { "U" } else { "-" };
        s.push_str(&format!("{},{i},{flags},complete\n", i * 1000));
    }
    s
}

#[test]
fn coalesce_holds_no_more_than_its_state_however_long_the_stream() {
    // 500,000 rows held whole took 33 MB (10M rows: 607 MB); streamed, the
    // replay's memory is the strategy's state and the commands in flight.
    // Written to a file a row at a time: the runner's peak RSS counts this
    // test process's own at the spawn, so it must stay small.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.csv");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    f.write_all(HEADER.as_bytes()).unwrap();
    for i in 0..500_000u64 {
        let flags = if i % 17 == 0 { "U" } else { "-" };
        writeln!(f, "{},{i},{flags},complete", i * 1000).unwrap();
    }
    drop(f);
    let b = hostile(&["coalesce", "--summary", path.to_str().unwrap()], b"", 60);
    assert!(b.output.status.success(), "{}", stderr(&b.output));
    assert!(stdout(&b.output).contains("completions:  500000 (0 in error)"));
    assert!(b.max_rss_mib < 20.0, "{:.1} MiB", b.max_rss_mib);
}

#[test]
fn coalesce_prints_interrupts_from_a_live_pipe_before_it_ends() {
    let mut child = bin()
        .args(["coalesce", "--policy", "default"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(format!("{HEADER}1000,1,-,complete\n").as_bytes())
        .unwrap();
    stdin.flush().unwrap();
    // Read on a thread so a stream that waits for its end fails, not hangs.
    let out = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(out).lines();
        for _ in 0..2 {
            let _ = tx.send(lines.next().and_then(Result::ok));
        }
    });
    let first = rx.recv_timeout(Duration::from_secs(10));
    let second = rx.recv_timeout(Duration::from_secs(10));
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(first.ok().flatten().as_deref(), Some("time_ns,kind,ids"));
    assert_eq!(
        second.ok().flatten().as_deref(),
        Some("1000,full,1"),
        "nothing came out while the pipe stayed open"
    );
}

#[test]
fn coalesce_of_dev_zero_is_refused_on_its_first_line() {
    let b = hostile(&["coalesce", "/dev/zero"], b"", 10);
    assert_one_line_error(&b.output, "/dev/zero:1: line longer than 4096 bytes");
}

#[test]
fn coalesce_of_binary_input_names_the_line() {
    let b = hostile(&["coalesce"], b"time_ns,id,flags,event\n1,1,-,\xff\n", 10);
    assert_one_line_error(&b.output, "<stdin>:2: not valid UTF-8");
}

#[test]
fn a_stream_with_a_utf8_byte_order_mark_is_accepted_as_a_job_file_is() {
    let text = format!("\u{feff}{HEADER}1000,1,-,complete\n");
    let b = hostile(&["coalesce", "--policy", "default"], text.as_bytes(), 10);
    assert!(b.output.status.success(), "{}", stderr(&b.output));
    assert_eq!(stdout(&b.output), "time_ns,kind,ids\n1000,full,1\n");
}

#[test]
fn coalesce_reports_the_nvme_feature_it_ran_not_the_defaults() {
    // 0x0205: 2 units of 100 us, threshold 5 + 1 (0's based).
    let text = format!("{HEADER}0,1,-,complete\n");
    let b = hostile(
        &[
            "coalesce",
            "--policy",
            "nvme",
            "--nvme-feature",
            "0x0205",
            "--summary",
        ],
        text.as_bytes(),
        10,
    );
    let out = stdout(&b.output);
    assert!(
        out.contains("policy:       nvme aggr-time=200us thr=6 nvme-feature=0x0205"),
        "{out}"
    );
    assert!(out.contains("max 200.00us"), "{out}");
}

#[test]
fn coalesce_refuses_a_deadline_that_would_saturate_at_u64_max() {
    let text = format!("{HEADER}18446744073709551000,1,-,complete\n");
    let b = hostile(
        &["coalesce", "--policy", "nvme100", "--summary"],
        text.as_bytes(),
        10,
    );
    assert_one_line_error(
        &b.output,
        "<stdin>:2: column 'time_ns': 18446744073709551000 leaves no room for the policy's deadline",
    );
}

#[test]
fn coalesce_to_a_fifo_writes_through_it_and_keeps_it_a_fifo() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("interrupts");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let text = format!("{HEADER}1000,1,-,complete\n");
    let b = hostile(
        &[
            "coalesce",
            "--policy",
            "default",
            "-o",
            fifo.to_str().unwrap(),
        ],
        text.as_bytes(),
        10,
    );
    assert!(b.output.status.success(), "{}", stderr(&b.output));
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(kind.is_fifo(), "the FIFO was replaced: {kind:?}");
    assert_eq!(reader.join().unwrap(), "time_ns,kind,ids\n1000,full,1\n");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn coalesce_to_a_directory_is_one_line_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    // /dev/zero as input: reading it first would never end well.
    let b = hostile(&["coalesce", "/dev/zero", "-o", d], b"", 10);
    assert_one_line_error(&b.output, &format!("{d}: cannot write: is a directory"));
}

#[test]
fn coalesce_to_an_unwritable_place_fails_before_reading_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("no/such/dir/out.csv");
    let b = hostile(
        &["coalesce", "/dev/zero", "-o", out.to_str().unwrap()],
        b"",
        10,
    );
    assert_one_line_error(&b.output, "out.csv: cannot write");
    assert!(b.elapsed < Duration::from_secs(5));
}

#[test]
fn a_bad_row_late_in_a_stream_leaves_the_old_output_whole() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.csv");
    std::fs::write(&out, "old results\n").unwrap();
    let mut text = rows(20_000);
    text.push_str("30000000,x,-,complete\n");
    let b = hostile(
        &["coalesce", "-o", out.to_str().unwrap()],
        text.as_bytes(),
        20,
    );
    assert_one_line_error(&b.output, "<stdin>:20002: column 'id': 'x'");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "old results\n");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn too_many_commands_in_flight_are_refused_in_one_line() {
    let mut text = String::from(HEADER);
    for id in 0..=65_536u64 {
        text.push_str(&format!("{id},{id},-,submit\n"));
    }
    let b = hostile(&["coalesce", "--summary"], text.as_bytes(), 20);
    assert_one_line_error(
        &b.output,
        "<stdin>:65538: more than 65536 commands outstanding at once",
    );
}

// Option values: every verb shares the binary's one-line rule, so these
// stand for all of them (none gets as far as running anything).

#[test]
fn an_option_given_a_word_it_does_not_take_lists_the_words_it_does() {
    let cases: [(&[&str], &str); 4] = [
        (
            &["coalesce", "--policy", "dim", "--dim-mode", "bogus"],
            "invalid value 'bogus' for '--dim-mode <DIM_MODE>' (possible values: eqe, cqe)",
        ),
        (
            &["sim", "job.fio", "--output-format", "xml"],
            "invalid value 'xml' for '--output-format <FORMAT>' (possible values: normal, json)",
        ),
        (
            &["run", "job.fio", "--delivery", "sometimes"],
            "invalid value 'sometimes' for '--delivery <HOW>' (possible values: poll, wake)",
        ),
        (
            &["reproduce", "--out", "r", "--mode", "x"],
            "invalid value 'x' for '--mode <MODE>' (possible values: sim, emu, both, app)",
        ),
    ];
    for (args, want) in cases {
        let b = hostile(args, b"", 10);
        assert_one_line_error(&b.output, want);
        assert_eq!(b.output.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn a_negative_value_is_refused_by_its_option_not_as_an_unexpected_argument() {
    let cases: [(&[&str], &str); 4] = [
        (
            &["coalesce", "--delta", "-1us"],
            "invalid value '-1us' for '--delta <TIME>': invalid duration '-1us' (negative)",
        ),
        (
            &["coalesce", "--thr", "-1"],
            "invalid value '-1' for '--thr <N>'",
        ),
        (
            &["reproduce", "--out", "r", "--sim-runtime", "-200ms"],
            "invalid value '-200ms' for '--sim-runtime <TIME>'",
        ),
        (
            &["tune", "job.fio", "--runtime", "-5ms"],
            "invalid value '-5ms' for '--runtime <TIME>'",
        ),
    ];
    for (args, want) in cases {
        let b = hostile(args, b"", 10);
        assert_one_line_error(&b.output, want);
    }
}

#[test]
fn a_run_on_a_raw_nvme_feature_reports_its_time_and_threshold_in_json() {
    let job = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/sync-read.fio");
    let b = hostile(
        &[
            "sim",
            job,
            "--policy",
            "nvme",
            "--nvme-feature",
            "0x0205",
            "--runtime",
            "10ms",
            "--output-format",
            "json",
            "--quiet",
        ],
        b"",
        10,
    );
    assert!(b.output.status.success(), "{}", stderr(&b.output));
    let v: serde_json::Value = serde_json::from_slice(&b.output.stdout).unwrap();
    let p = &v["cinterrupts"]["policy"];
    assert_eq!(
        (p["aggr-time"].as_str(), p["thr"].as_str()),
        (Some("200us"), Some("6"))
    );
}
