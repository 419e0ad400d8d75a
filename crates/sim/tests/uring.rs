//! io_uring's host-side completion batching in the simulator (issue 25,
//! item 4; host::uring applied by crate::uring): every request still
//! delivered exactly once under each strategy; DEFER_TASKRUN wakes a
//! waiting thread once per wait where task_work wakes it for every
//! interrupt; min-wait's timer ends waits; IOPOLL raises no interrupt for
//! the ring; and the paper's mixed workload (TOS Fig 10, the authors'
//! fig5 parameters, io_uring for libaio) under each strategy, printed.
//! Virtual time, deterministic.

mod common;

use common::{check_exactly_once, config, example};
use host::uring::{parse, Strategy};
use policy::{PolicySpec, MS};
use report::RunReport;
use sim::Audit;

fn run_jobs(
    jobs: &[jobs::Job],
    policy: &str,
    uring: Strategy,
    runtime_ms: u64,
) -> (RunReport, Audit) {
    let mut cfg = config("optane", PolicySpec::named(policy), runtime_ms * MS, 1);
    cfg.host.uring = uring;
    let (r, audit) = sim::simulate_audited(jobs, &cfg, &mut |_, _| {}).unwrap();
    check_exactly_once(&audit);
    (r, audit)
}

fn text_jobs(text: &str) -> Vec<jobs::Job> {
    jobs::parse_str(text, "t.fio", &|_| None).unwrap().jobs
}

/// A figure of the io_uring note: `job 'NAME' STRATEGY: N wake-ups`.
fn wakeups(r: &RunReport, job: &str) -> u64 {
    let n = r
        .notes
        .iter()
        .find(|n| n.starts_with("io_uring (host::uring)"))
        .unwrap_or_else(|| panic!("no io_uring note: {:?}", r.notes));
    let at = n.find(&format!("job '{job}' ")).unwrap();
    let rest = &n[at..];
    let colon = rest.find(": ").unwrap();
    rest[colon + 2..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

fn ios(r: &RunReport, job: &str) -> u64 {
    r.jobs
        .iter()
        .filter(|j| j.name == job)
        .map(|j| j.read.io_ops + j.write.io_ops)
        .sum()
}

/// An io_uring reader alone on a core that reaps in batches of 16: it
/// sleeps in every wait.
const BATCHED: &str = "[global]\nsize=1g\ndirect=1\nbs=4k\nrw=randread\ncpus_allowed=1\ntime_based\nruntime=1\n[ring]\nioengine=io_uring\niodepth=16\niodepth_batch_submit=16\niodepth_batch_complete_min=16\n";

#[test]
fn every_strategy_delivers_every_request_exactly_once() {
    let mixed = example("uring-mixed-16");
    for s in [
        "min-complete",
        "task-work",
        "defer-taskrun",
        "min-wait=20us",
        "min-wait=50us,nr=8,timeout=200us",
        "iopoll",
        "sqpoll",
    ] {
        let s = parse(s).unwrap();
        for jobs in [&mixed, &text_jobs(BATCHED)] {
            let (r, _) = run_jobs(jobs, "cint", s, 20);
            assert!(r.completed_ios() > 0, "{s}");
        }
    }
}

#[test]
fn defer_taskrun_wakes_once_per_wait_task_work_per_interrupt() {
    let jobs = text_jobs(BATCHED);
    let (d, _) = run_jobs(&jobs, "default", Strategy::DeferTaskrun, 50);
    let (t, _) = run_jobs(&jobs, "default", Strategy::TaskWork, 50);
    let (m, _) = run_jobs(&jobs, "default", Strategy::MinComplete, 50);
    let per = |r: &RunReport| wakeups(r, "ring") as f64 / ios(r, "ring") as f64;
    println!(
        "wake-ups per I/O, QD16 reaped by 16, an interrupt per completion: defer-taskrun {:.3}, min-complete {:.3}, task-work {:.3}",
        per(&d),
        per(&m),
        per(&t)
    );
    // Each wait returns at least 16 and wakes at most once.
    assert!(per(&d) <= 1.0 / 16.0 + 1e-3, "{}", per(&d));
    // task_work may also wake the sleeper for an interrupt short of 16
    // (here rarely: the 16 completions' handlers run back to back before
    // the woken thread does).
    assert!(per(&t) >= per(&d), "{} vs {}", per(&t), per(&d));
}

#[test]
fn min_wait_returns_early_at_its_timer() {
    // One completion at a time from a depth of 16 waited for 16: the min
    // timer ends waits the device alone would keep longer.
    let jobs = text_jobs(BATCHED);
    let (r, _) = run_jobs(&jobs, "default", parse("min-wait=10us").unwrap(), 50);
    let note = r.notes.iter().find(|n| n.starts_with("io_uring")).unwrap();
    assert!(note.contains("min-wait=10us"), "{note}");
    println!("{note}");
}

#[test]
fn complete_min_zero_spins_instead_of_sleeping() {
    // fio_ioring_getevents: actual_min 0, io_uring_enter returns at once
    // and fio's loop calls it again.
    let jobs = text_jobs(&BATCHED.replace(
        "iodepth_batch_complete_min=16",
        "iodepth_batch_complete_min=0",
    ));
    for s in [Strategy::MinComplete, Strategy::DeferTaskrun] {
        let (r, _) = run_jobs(&jobs, "default", s, 20);
        assert_eq!(wakeups(&r, "ring"), 0, "{s}");
        // Its core never idles: the thread spins between the handlers.
        let core = r.cores.iter().find(|c| c.core == 1).unwrap();
        assert!(core.idle < 0.01, "{s}: {core:?}");
    }
}

#[test]
fn iopoll_raises_no_interrupt_for_the_ring() {
    let jobs = example("uring-mixed-16");
    let (r, _) = run_jobs(&jobs, "default", Strategy::IoPoll, 50);
    // Only the blocking reader's completions interrupt (default: one each).
    assert!(
        r.interrupts <= ios(&r, "psync") + 16,
        "{} vs {}",
        r.interrupts,
        ios(&r, "psync")
    );
}

#[test]
fn the_ring_flags_of_a_job_win_over_the_runs_strategy() {
    let jobs = text_jobs(
        "[j]\nioengine=io_uring\nsize=1g\ndirect=1\nruntime=1\ntime_based\nsqthread_poll\n",
    );
    let (r, _) = run_jobs(&jobs, "default", Strategy::DeferTaskrun, 5);
    assert!(
        r.notes.iter().any(|n| n.contains("job 'j' sqpoll")),
        "{:?}",
        r.notes
    );
    let both =
        text_jobs("[j]\nioengine=io_uring\nsize=1g\nruntime=1\ntime_based\nhipri\nsqthread_poll\n");
    let cfg = config("optane", PolicySpec::named("default"), 5 * MS, 1);
    let e = sim::simulate(&both, &cfg, &mut |_, _| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("'hipri' and 'sqthread_poll'"), "{e}");
    // An SQ thread pinned to the job's own CPU would take its time.
    let shared = text_jobs("[j]\nioengine=io_uring\nsize=1g\nruntime=1\ntime_based\ncpus_allowed=1\nsqthread_poll\nsqthread_poll_cpu=1\n");
    let e = sim::simulate(&shared, &cfg, &mut |_, _| {})
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("option 'sqthread_poll_cpu'") && e.contains("line 1"),
        "{e}"
    );
    let apart = text_jobs("[j]\nioengine=io_uring\nsize=1g\nruntime=1\ntime_based\ncpus_allowed=1\nsqthread_poll\nsqthread_poll_cpu=2\n");
    assert!(sim::simulate(&apart, &cfg, &mut |_, _| {}).is_ok());
}

/// The paper's mixed workload (examples/uring-mixed-16.fio: TOS Fig 10 as
/// the authors' fig5/test.sh ran it, io_uring for libaio) under the device
/// strategies and io_uring's: printed, with only what the model must give
/// asserted. `cargo test -p cinterrupts-sim --test uring -- --nocapture`.
#[test]
fn mixed_workload_device_and_host_strategies_side_by_side() {
    let jobs = example("uring-mixed-16");
    let rows: &[(&str, &str)] = &[
        ("default", "min-complete"),
        ("adaptive", "min-complete"),
        ("cint", "min-complete"),
        ("default", "min-wait=20us"),
        ("default", "min-wait=50us"),
        ("default", "min-wait=100us"),
        ("default", "defer-taskrun"),
        ("default", "task-work"),
        ("default", "iopoll"),
    ];
    println!(
        "{:<9} {:<15} {:>9} {:>9} {:>11} {:>10} {:>10} {:>9}",
        "device", "io_uring", "sync p50", "sync p99", "async IOPS", "irq/s", "wake/IO", "CPU/IO"
    );
    let mut plain = None;
    let mut min_wait = Vec::new();
    for &(policy, uring) in rows {
        let (r, _) = run_jobs(&jobs, policy, parse(uring).unwrap(), 200);
        let sync = r.jobs.iter().find(|j| j.name == "psync").unwrap();
        let ring = r.jobs.iter().find(|j| j.name == "io_uring").unwrap();
        let secs = r.duration_ns as f64 / 1e9;
        let n = ios(&r, "io_uring");
        let wake = wakeups(&r, "io_uring") as f64 / n as f64;
        let cpu = (ring.usr_ns + ring.sys_ns) as f64 / n as f64 / 1e3;
        println!(
            "{:<9} {:<15} {:>8.1}u {:>8.1}u {:>11.0} {:>10.0} {:>10.3} {:>8.2}u",
            policy,
            uring,
            sync.read.clat.percentile(50.0) as f64 / 1e3,
            sync.read.clat.percentile(99.0) as f64 / 1e3,
            n as f64 / secs,
            r.interrupts as f64 / secs,
            wake,
            cpu
        );
        if policy == "default" && uring == "min-complete" {
            plain = Some(wake);
        }
        if uring.starts_with("min-wait") {
            min_wait.push(wake);
        }
    }
    // What the model must give: min-complete with fio's min of 1 returns
    // whenever one CQE is in the ring, so it wakes no more than once per
    // I/O; no assertion on min-wait's direction against it (it holds out
    // for 16, so it sleeps where plain waiting finds one and goes on).
    assert!(plain.unwrap() <= 1.0);
    assert!(min_wait.iter().all(|&w| w <= 1.0));
}
