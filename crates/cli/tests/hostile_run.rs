//! `run` (and `tune --mode emu`) against hostile job files and options
//! (issue 12): each bounded in time and memory by `common::hostile`, each
//! asserting the one-line error or the figure that must be right. Nothing
//! here creates or writes anything under /dev: the device cases only check
//! refusals and the null stand-in, which look at /dev and never open it.
//! Each run needs both CPUs of this machine, so the tests take turns and
//! keep their runs at 100-300 ms.

mod common;

use std::path::Path;
use std::process::Output;

use common::*;
use serde_json::Value;

fn json(o: &Output) -> Value {
    serde_json::from_str(&stdout(o))
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}{}", stdout(o), stderr(o)))
}

fn job(dir: &Path, body: &str) -> String {
    write(
        dir,
        "job.fio",
        &format!("[global]\nbs=4k\nrw=randread\n\n[j]\n{body}"),
    )
}

/// A name under /dev no machine has; the runs below must leave it absent.
const NO_SUCH_DEVICE: &str = "/dev/cinterrupts-issue12-no-such-disk";

#[test]
fn a_job_file_naming_a_missing_device_runs_on_the_null_backend_and_says_so() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let f = job(
        dir.path(),
        &format!("filename={NO_SUCH_DEVICE}\nsize=1m\nioengine=psync\n"),
    );
    let b = hostile(
        &["run", &f, "--runtime", "150ms", "--output-format", "json"],
        b"",
        20,
    );
    assert!(
        !Path::new(NO_SUCH_DEVICE).exists(),
        "a file was created in /dev"
    );
    let o = &b.output;
    assert!(o.status.success(), "{}", stderr(o));
    let err = stderr(o);
    assert!(
        err.contains(&format!("{f}:5: job 'j': option 'filename': {NO_SUCH_DEVICE} names a device this machine does not have: running on the null backend null:10us,depth=64 instead")),
        "{err}"
    );
    let v = json(o);
    assert_eq!(v["cinterrupts"]["device"], "null:10us,depth=64");
    assert!(v["cinterrupts"]["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("running on the null backend")));
}

#[test]
fn nothing_is_created_under_dev_through_backend_either() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let f = job(dir.path(), "size=1m\nioengine=psync\n");
    let backend = format!("file:{NO_SUCH_DEVICE}");
    let b = hostile(
        &["run", &f, "--backend", &backend, "--runtime", "100ms"],
        b"",
        20,
    );
    assert!(
        !Path::new(NO_SUCH_DEVICE).exists(),
        "a file was created in /dev"
    );
    assert_one_line_error(
        &b.output,
        "not a block device, and nothing is ever created or laid out under /dev",
    );
    // The same through a symlink into /dev.
    let link = dir.path().join("devlink");
    std::os::unix::fs::symlink("/dev", &link).unwrap();
    let backend = format!("file:{}/cinterrupts-issue12-no-such-disk", link.display());
    let b = hostile(
        &["run", &f, "--backend", &backend, "--runtime", "100ms"],
        b"",
        20,
    );
    assert!(
        !Path::new(NO_SUCH_DEVICE).exists(),
        "a file was created in /dev"
    );
    assert_one_line_error(&b.output, "nothing is ever created or laid out under /dev");
}

#[test]
fn a_filename_that_cannot_hold_data_names_the_line_and_the_option() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("a-directory");
    std::fs::create_dir(&sub).unwrap();
    for (target, cause) in [
        (sub.to_str().unwrap(), "is a directory"),
        // Looked at (stat), never opened.
        ("/dev/null", "is a character device"),
        ("/proc/version", "is a procfs file"),
    ] {
        let f = job(
            dir.path(),
            &format!("filename={target}\nsize=1m\nioengine=psync\n"),
        );
        let b = hostile(&["run", &f, "--runtime", "100ms"], b"", 20);
        assert_one_line_error(
            &b.output,
            &format!("{f}:5: job 'j': option 'filename': {target} {cause}"),
        );
    }
    assert_eq!(
        std::fs::metadata("/dev/null").unwrap().len(),
        0,
        "/dev/null is still the null device"
    );
}

#[test]
fn a_layout_larger_than_the_free_space_is_refused_before_a_byte_is_written() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("huge.dat");
    let f = job(
        dir.path(),
        &format!(
            "filename={}\nsize=100p\nrw=randwrite\nioengine=psync\n",
            data.display()
        ),
    );
    let b = hostile(&["run", &f, "--runtime", "100ms"], b"", 10);
    assert_one_line_error(
        &b.output,
        &format!(
            "{f}:5: job 'j': option 'size': laying out 100PiB of {} takes 100PiB more, and its filesystem has",
            data.display()
        ),
    );
    assert!(!data.exists(), "nothing laid out");
    assert!(b.elapsed.as_secs() < 2, "{:?}", b.elapsed);
}

#[test]
fn a_depth_the_queue_cannot_hold_is_refused_naming_the_line() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    for (depth, cause) in [
        ("100000", "option 'iodepth': 100000 is more than the emulator's 8192 commands per queue"),
        ("1025", "option 'iodepth': 1025 is more than the queue depth 1024, so the job could never have that many in flight; pass --queue-depth 1025"),
    ] {
        let f = job(
            dir.path(),
            &format!("ioengine=io_uring\niodepth={depth}\nsize=1m\n"),
        );
        let b = hostile(&["run", &f, "--backend", "null:10us", "--runtime", "100ms"], b"", 10);
        assert_one_line_error(&b.output, &format!("{f}:5: job 'j': {cause}"));
    }
    // Deep queues of large blocks: refused before gigabytes of buffers.
    let f = job(
        dir.path(),
        "ioengine=io_uring\niodepth=8192\nbs=16m\nsize=1g\n",
    );
    let b = hostile(
        &[
            "run",
            &f,
            "--backend",
            "null:10us",
            "--runtime",
            "100ms",
            "--queue-depth",
            "8192",
        ],
        b"",
        10,
    );
    assert_one_line_error(&b.output, "the emulator's bound");
}

#[test]
fn a_runtime_too_short_to_measure_is_refused() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let f = job(dir.path(), "ioengine=psync\nsize=1m\n");
    let b = hostile(
        &["run", &f, "--backend", "null:10us", "--runtime", "1ns"],
        b"",
        10,
    );
    assert_one_line_error(&b.output, "--runtime 1ns: shorter than 1ms");
    let f = job(
        dir.path(),
        "ioengine=psync\nsize=1m\nruntime=10us\ntime_based\n",
    );
    let b = hostile(&["run", &f, "--backend", "null:10us"], b"", 10);
    assert_one_line_error(
        &b.output,
        &format!("{f}:5: job 'j': option 'runtime': 10us is shorter than 1ms"),
    );
}

#[test]
fn a_run_where_nothing_completes_in_the_window_fails() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    // A device slower than the run: the one read completes after the
    // window closed.
    let f = job(dir.path(), "ioengine=psync\nsize=1m\n");
    let b = hostile(
        &[
            "run",
            &f,
            "--backend",
            "null:250ms",
            "--runtime",
            "50ms",
            "-q",
        ],
        b"",
        10,
    );
    assert_one_line_error(&b.output, "no I/O completed in the measured window");
    assert!(
        stdout(&b.output).contains("IOPS=0"),
        "the results are printed first"
    );
}

#[test]
fn a_slow_device_neither_trips_the_watchdog_nor_holds_the_run_past_its_runtime() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let f = job(dir.path(), "ioengine=io_uring\niodepth=4\nsize=1m\n");
    let b = hostile(
        &[
            "run",
            &f,
            "--backend",
            "null:100h",
            "--runtime",
            "100ms",
            "-q",
        ],
        b"",
        15,
    );
    // Not "stalled": a 100 h device is the user's choice; the requests
    // left in flight after the runtime are not waited out.
    assert_one_line_error(&b.output, "no I/O completed in the measured window");
    assert!(b.elapsed.as_secs() < 3, "{:?}", b.elapsed);
}

#[test]
fn a_run_beside_another_emulation_says_its_latencies_are_spoilt() {
    use std::os::fd::AsRawFd;
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let f = job(dir.path(), "ioengine=psync\nsize=1m\n");
    // The locks another run would hold, in this test's own lock directory.
    let locks = tempfile::tempdir().unwrap();
    let held: Vec<std::fs::File> = (0..2)
        .map(|cpu| {
            let file =
                std::fs::File::create(locks.path().join(format!("cinterrupts-cpu{cpu}.lock")))
                    .unwrap();
            // SAFETY: a valid descriptor.
            assert_eq!(unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) }, 0);
            file
        })
        .collect();
    let mut cmd = bin();
    cmd.env("XDG_RUNTIME_DIR", locks.path()).args([
        "run",
        &f,
        "--backend",
        "null:10us",
        "--runtime",
        "100ms",
        "--output-format",
        "json",
    ]);
    let b = bounded(cmd, b"", std::time::Duration::from_secs(10));
    assert!(b.max_rss_mib <= MEMORY_BOUND_MIB);
    drop(held);
    let o = &b.output;
    assert!(o.status.success(), "{}", stderr(o));
    assert!(
        stderr(o).contains("cinterrupts: contention: another emulation holds CPU 0-1"),
        "{}",
        stderr(o)
    );
    let v = json(o);
    assert!(v["cinterrupts"]["notes"][0]
        .as_str()
        .unwrap()
        .starts_with("contention: another emulation holds CPU 0-1"));
}

/// Issue 12 item 6 on the emulator: a size-bounded job beside a longer one
/// was divided by the whole window (`1024KiB/77msec` for a job that ran a
/// few ms); fio divides each job by its own runtime.
#[test]
fn a_size_bounded_job_beside_a_longer_one_is_divided_by_its_own_run_time() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "two.fio",
        "[global]\nbs=4k\nrw=randread\nioengine=psync\n\n[short]\nsize=1m\n\n\
         [long]\nsize=1m\ntime_based\nruntime=300ms\n",
    );
    let b = hostile(
        &[
            "run",
            &f,
            "--backend",
            "null:10us",
            "--output-format",
            "json",
            "-q",
        ],
        b"",
        20,
    );
    assert!(b.output.status.success(), "{}", stderr(&b.output));
    let v = json(&b.output);
    let short = &v["jobs"][0]["read"];
    let long = &v["jobs"][1]["read"];
    assert_eq!(short["io_bytes"], 1 << 20);
    let (own, window) = (
        short["runtime"].as_u64().unwrap(),
        long["runtime"].as_u64().unwrap(),
    );
    // The long job runs 300 ms; the window opens and closes on a 1 ms poll.
    assert!(window >= 290, "{window}");
    assert!(
        own < window / 2,
        "short job divided by {own} ms of a {window} ms window"
    );
    let iops = short["iops"].as_f64().unwrap();
    assert!(
        iops > 256.0 / (own as f64 / 1000.0) * 0.5,
        "{iops} IOPS over {own} ms"
    );
}
