//! `run` with FastResponse's host mechanisms (issue 15): LD, polled
//! completion and the critical wake-up boost, end to end; bad values are
//! one line naming the option.

mod common;

use common::*;

fn job(dir: &std::path::Path, text: &str) -> String {
    write(dir, "j.fio", text)
}

#[test]
fn bad_fastresponse_flags_give_one_line_naming_the_option() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let j = job(
        dir.path(),
        "[j]\nioengine=psync\nrw=randread\nbs=4k\nsize=1m\n",
    );
    for (flag, value, want) in [
        (
            "--block-scheduler",
            "kyber",
            "unknown block scheduler 'kyber'",
        ),
        ("--block-scheduler", "ld,tokens=0", "tokens=0"),
        ("--block-scheduler", "ld,split=1", "split=1"),
        ("--block-scheduler", "ld,fast", "unknown option 'fast'"),
        ("--completion", "spin", "spin"),
        (
            "--critical-boost",
            "rt",
            "(possible values: none, slice, fifo)",
        ),
    ] {
        let o = run(&["run", &j, "--backend", "null:10us", flag, value]);
        assert_one_line_error(&o, flag);
        assert_one_line_error(&o, want);
        assert_eq!(o.status.code(), Some(2), "{flag} {value}");
    }
}

#[test]
fn ld_on_the_emulator_reports_its_pieces() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let j = job(
        dir.path(),
        "[j]\nioengine=libaio\nrw=randread\nbs=128k\nsize=16m\niodepth=8\n",
    );
    let o = run(&[
        "run",
        &j,
        "--backend",
        "null:10us",
        "--runtime",
        "100ms",
        "--block-scheduler",
        "ld,tokens=4",
        "-q",
    ]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("block scheduler ld,tokens=4,split=32k:")
            && out.contains("at most 4 non-critical piece(s) in flight"),
        "{out}"
    );
}

#[test]
fn a_hipri_job_polls_on_the_emulator_with_no_interrupt() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let j = job(
        dir.path(),
        "[j]\nioengine=pvsync2\nrw=randread\nbs=4k\nsize=16m\nhipri=1\n",
    );
    let o = run(&[
        "run",
        &j,
        "--backend",
        "null:20us",
        "--runtime",
        "100ms",
        "-q",
    ]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("polled completion: ") && out.contains("0 interrupt(s) taken in all"),
        "{out}"
    );
}
