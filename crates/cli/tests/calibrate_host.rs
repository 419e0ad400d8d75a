//! `cinterrupts calibrate --host` (issue 37 item 4): the binary only wires
//! crates/hostcal; a quick run writes a profile `sim --host` runs, and a
//! bad `-o` is one line, before any measuring, with nothing written.

mod common;

use common::{bin, stderr, stdout};

#[test]
fn a_quick_calibration_writes_a_host_profile_sim_runs() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("measured.toml");
    let o = bin()
        .args(["calibrate", "--host", "--quick", "-o"])
        .arg(&profile)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // The table: a row per benchmark with its profile key.
    for row in [
        "syscall (getppid)",
        "pipe round trip, one CPU",
        "QD1 host path",
    ] {
        assert!(out.contains(row), "{row}: {out}");
    }
    let job = dir.path().join("qd1.fio");
    std::fs::write(
        &job,
        "[qd1]\nrw=randread\nbs=4k\nioengine=psync\ndirect=1\nsize=16m\nnumber_ios=2000\n",
    )
    .unwrap();
    let o = bin()
        .args(["sim", "--policy", "default", "--device", "optane", "--host"])
        .arg(&profile)
        .arg(&job)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("IOPS="), "{}", stdout(&o));
}

#[test]
fn a_bad_output_path_is_one_line_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("missing").join("host.toml");
    let o = bin()
        .args(["calibrate", "--host", "-o"])
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("-o ") && err.contains("missing"), "{err}");
    // Refused before measuring: no table, nothing in the directory.
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
