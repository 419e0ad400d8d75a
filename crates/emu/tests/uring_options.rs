//! fio's io_uring engine options under `run` (issue 25): what the
//! emulator cannot honour is refused in one line naming the job and the
//! option, before any device thread starts.

use emu::backend::BackendSpec;
use emu::EmuConfig;
use policy::{PolicySpec, MS};

mod common;
use common::assert_exactly_once;

#[test]
fn sqthread_poll_is_refused_naming_the_job_and_option() {
    let text = "[ring]\nrw=randread\nbs=4k\nsize=1m\nioengine=io_uring\nsqthread_poll\n";
    let jobs = jobs::parse_str(text, "t.fio", &|_| None).unwrap().jobs;
    let cfg = EmuConfig {
        backend: Some(BackendSpec::parse("null:10us").unwrap()),
        policy: PolicySpec::named("default"),
        runtime: Some(10 * MS),
        ..EmuConfig::default()
    };
    let e = emu::run_audited(&jobs, &cfg).unwrap_err().to_string();
    assert!(
        e.contains("'ring'") && e.contains("option 'sqthread_poll'") && !e.contains('\n'),
        "{e}"
    );
}

/// One emulation at a time: each has a device thread spinning on a CPU.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// QD4, batches of 4 submitted and up to 4 reaped: 256 reads.
const QD4: &str = "[ring]\nrw=randread\nbs=4k\nsize=1m\nioengine=io_uring\niodepth=4\niodepth_batch_submit=4\niodepth_batch_complete_max=4\n";

fn qd4(uring: Option<&str>) -> Result<(report::RunReport, emu::Audit), emu::EmuError> {
    let jobs = jobs::parse_str(QD4, "t.fio", &|_| None).unwrap().jobs;
    let cfg = EmuConfig {
        backend: Some(BackendSpec::parse("null:10us").unwrap()),
        // An interrupt per completion: batching is the host's alone.
        policy: PolicySpec::named("default"),
        uring: uring.map(|u| host::uring::parse(u).unwrap()),
        ..EmuConfig::default()
    };
    emu::run_audited(&jobs, &cfg)
}

#[test]
fn min_wait_takes_every_completion_once_and_wakes_at_most_once_per_nr() {
    let _one = serial();
    let (r, a) = qd4(Some("min-wait=100ms,nr=4")).unwrap();
    assert_exactly_once(&a);
    let u = r.uring.expect("--uring reports the wake-ups");
    assert_eq!(u.strategy, "min-wait=100ms,nr=4");
    let ios: u64 = r.jobs.iter().map(|j| j.read.io_ops + j.write.io_ops).sum();
    assert_eq!(u.ios, ios);
    assert!(ios > 0);
    // A sleep ends when 4 are there (each then taken, 4 at a time) or in
    // a wait whose timer fired (at most twice there: the timer, then the
    // first completion); one more for the window's edge.
    assert!(
        u.wakeups <= ios / 4 + 2 * u.timeouts + 1,
        "{u:?} over {ios} I/Os"
    );
    assert!(r
        .notes
        .iter()
        .any(|n| n.starts_with("io_uring --uring min-wait")));
}

#[test]
fn without_uring_the_report_is_as_before_and_min_complete_only_adds_its_figures() {
    let _one = serial();
    let (r, a) = qd4(None).unwrap();
    assert_exactly_once(&a);
    assert!(r.uring.is_none());
    assert!(!r.notes.iter().any(|n| n.contains("--uring")));
    let (r, a) = qd4(Some("min-complete")).unwrap();
    assert_exactly_once(&a);
    let u = r.uring.unwrap();
    assert_eq!((u.strategy.as_str(), u.timeouts), ("min-complete", 0));
}

#[test]
fn iopoll_polls_the_io_uring_job_as_hipri() {
    let _one = serial();
    let (r, a) = qd4(Some("iopoll")).unwrap();
    assert_exactly_once(&a);
    assert_eq!(r.interrupts, 0, "a poll queue raises none");
    assert!(
        r.notes.iter().any(|n| n.starts_with("polled completion")),
        "{:?}",
        r.notes
    );
}

#[test]
fn strategies_the_emulator_cannot_express_are_refused_in_one_line() {
    for s in ["task-work", "defer-taskrun", "sqpoll"] {
        let e = qd4(Some(s)).unwrap_err().to_string();
        assert!(
            e.contains(&format!("--uring {s}:")) && e.contains("sim --uring") && !e.contains('\n'),
            "{e}"
        );
    }
}
