//! IRQ suspension of the CQs (issue 40, `--irq-suspend`,
//! `host::irq_suspend`): a libaio batch reaper keeps its queue masked and
//! takes its completions on its own calls (interrupts drop by a large
//! factor at the same IOPS); a QD1 blocking reader finds nothing on its
//! call and sleeps, which resumes the queue (its interrupts are unchanged);
//! a stalled consumer's completions wait no longer than the timeout; every
//! completion is delivered exactly once.

mod common;

use common::{check_exactly_once, config, iops, lat_us};
use host::irq_suspend::IrqSuspend;
use policy::{Nanos, PolicySpec, MS, US};
use report::RunReport;

fn run(text: &str, policy: PolicySpec, suspend: IrqSuspend) -> RunReport {
    let jobs = jobs::parse_str(text, "t.fio", &|_| None)
        .unwrap_or_else(|e| panic!("{e}"))
        .jobs;
    let mut cfg = config("optane", policy, 100 * MS, 1);
    cfg.host.irq_suspend = suspend;
    let (r, a) = sim::simulate_audited(&jobs, &cfg, &mut |_, _| {}).unwrap();
    check_exactly_once(&a);
    r
}

const ON: IrqSuspend = IrqSuspend::Timeout(200 * US);

fn default() -> PolicySpec {
    PolicySpec::named("default")
}

/// fio's libaio at QD32, reaping 1 to 32 per io_getevents, resubmitting
/// what it reaped.
const BATCH: &str = "[batch]\nrw=randread\nbs=4k\nsize=1g\nioengine=libaio\ndirect=1\n\
                     iodepth=32\niodepth_batch_complete_min=1\niodepth_batch_complete_max=32\n\
                     cpus_allowed=0\ntime_based\nruntime=1\n";

const READER: &str = "[reader]\nrw=randread\nbs=4k\nsize=1g\nioengine=psync\ndirect=1\n\
                      cpus_allowed=0\ntime_based\nruntime=1\n";

#[test]
fn a_batch_reaper_takes_its_completions_on_its_calls_not_by_interrupts() {
    let off = run(BATCH, default(), IrqSuspend::Off);
    let on = run(BATCH, default(), ON);
    let (irq_off, irq_on) = (off.interrupts_per_sec(), on.interrupts_per_sec());
    assert!(
        irq_on * 10.0 < irq_off,
        "interrupts/s {irq_on:.0} with suspension, {irq_off:.0} without"
    );
    let (a, b) = (iops(&off, "batch"), iops(&on, "batch"));
    assert!(b >= 0.95 * a, "IOPS {b:.0} with suspension, {a:.0} without");
    assert!(
        on.notes
            .iter()
            .any(|n| n.starts_with("irq suspension 200us")),
        "{:?}",
        on.notes
    );
    assert!(!off.notes.iter().any(|n| n.contains("irq suspension")));
}

#[test]
fn a_qd1_blocking_reader_finds_nothing_on_its_call_and_keeps_its_interrupts() {
    let off = run(READER, default(), IrqSuspend::Off);
    let on = run(READER, default(), ON);
    let (irq_off, irq_on) = (off.interrupts_per_sec(), on.interrupts_per_sec());
    assert!(
        (irq_on - irq_off).abs() <= 0.01 * irq_off,
        "interrupts/s {irq_on:.0} with suspension, {irq_off:.0} without"
    );
    let (a, b) = (lat_us(&off, "reader"), lat_us(&on, "reader"));
    assert!(
        (b - a).abs() <= 0.01 * a,
        "latency {b} us with, {a} us without"
    );
}

#[test]
fn it_composes_with_a_device_side_policy() {
    // Adaptive coalescing (TOS Alg. 1) under the batch: suspension cuts
    // its interrupts further, with every completion delivered once.
    let adaptive = PolicySpec {
        delta: Some(6 * US),
        thr: Some(32),
        ..PolicySpec::named("adaptive")
    };
    let off = run(BATCH, adaptive.clone(), IrqSuspend::Off);
    let on = run(BATCH, adaptive, ON);
    assert!(
        on.interrupts_per_sec() < 0.5 * off.interrupts_per_sec(),
        "{} vs {}",
        on.interrupts_per_sec(),
        off.interrupts_per_sec()
    );
    for spec in [PolicySpec::named("cint"), PolicySpec::named("nvme")] {
        run(BATCH, spec, ON);
    }
}

#[test]
fn a_stalled_consumer_waits_no_longer_than_the_timeout() {
    // A reader that thinks 2 ms after each I/O shares queue 0 with a
    // batch reaper that thinks 5 ms between rounds: the reader's interrupt
    // masks the queue, the reader then sleeps on its think timer (not in a
    // reaping call), so the batch's completions are held until the timer
    // resumes the queue. Each job's worst latency grows by the timeout at
    // most (and margin for the handler and the switch).
    let text = "[reader]\nrw=randread\nbs=4k\nsize=1g\nioengine=psync\ndirect=1\n\
                cpus_allowed=0\ntime_based\nruntime=1\nthinktime=2ms\n\
                [batch]\nrw=randread\nbs=4k\nsize=1g\nioengine=libaio\ndirect=1\n\
                iodepth=8\niodepth_batch_complete_min=8\ncpus_allowed=0\ntime_based\nruntime=1\n\
                thinktime=5ms\n";
    let off = run(text, default(), IrqSuspend::Off);
    for timeout in [50 * US, 500 * US] {
        let on = run(text, default(), IrqSuspend::Timeout(timeout));
        let note = on
            .notes
            .iter()
            .find(|n| n.starts_with("irq suspension"))
            .unwrap();
        // The timer did resume the queue (the bound was exercised).
        assert!(!note.ends_with(" 0 by the timer"), "{note}");
        assert!(!note.contains(" 0 interrupts held"), "{note}");
        for job in ["reader", "batch"] {
            let max = |r: &RunReport| -> Nanos {
                r.jobs.iter().find(|j| j.name == job).unwrap().read.clat.max
            };
            assert!(
                max(&on) <= max(&off) + timeout + 20 * US,
                "{job}: worst {} ns with a {timeout} ns timeout, {} ns without",
                max(&on),
                max(&off)
            );
        }
    }
}

#[test]
fn polling_completion_refuses_it_in_one_line() {
    let jobs = jobs::parse_str(READER, "t.fio", &|_| None).unwrap().jobs;
    let mut cfg = config("optane", default(), 10 * MS, 1);
    cfg.host.irq_suspend = ON;
    cfg.host.completion = sim::Completion::Poll;
    let e = sim::simulate(&jobs, &cfg, &mut |_, _| {})
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--irq-suspend 200us") && e.contains("--completion poll"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
}

#[test]
fn an_io_uring_reaper_passes_in_its_getevents_whatever_its_wait() {
    // io_uring_enter(GETEVENTS) is the reaping call: each wait strategy
    // that enters it takes the CQ on its pass (DEFER_TASKRUN's deferred
    // completions run there too).
    let text = BATCH.replace("ioengine=libaio", "ioengine=io_uring");
    let jobs = jobs::parse_str(&text, "t.fio", &|_| None).unwrap().jobs;
    for word in [
        "min-complete",
        "task-work",
        "defer-taskrun",
        "min-wait=20us",
    ] {
        let strategy = host::uring::parse(word).unwrap();
        let go = |suspend: IrqSuspend| {
            let mut cfg = config("optane", default(), 100 * MS, 1);
            cfg.host.uring = strategy;
            cfg.host.irq_suspend = suspend;
            let (r, a) = sim::simulate_audited(&jobs, &cfg, &mut |_, _| {}).unwrap();
            check_exactly_once(&a);
            r
        };
        let (off, on) = (go(IrqSuspend::Off), go(ON));
        assert!(
            on.interrupts_per_sec() * 10.0 < off.interrupts_per_sec(),
            "{word}: {} vs {}",
            on.interrupts_per_sec(),
            off.interrupts_per_sec()
        );
        assert!(on.total_iops() >= 0.95 * off.total_iops(), "{word}");
    }
}

#[test]
fn sqpoll_refuses_it_in_one_line() {
    let text = BATCH.replace("ioengine=libaio", "ioengine=io_uring\nsqthread_poll=1");
    let jobs = jobs::parse_str(&text, "t.fio", &|_| None).unwrap().jobs;
    let mut cfg = config("optane", default(), 10 * MS, 1);
    cfg.host.irq_suspend = ON;
    let e = sim::simulate(&jobs, &cfg, &mut |_, _| {})
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--irq-suspend 200us") && e.contains("SQPOLL"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
    cfg.host.irq_suspend = IrqSuspend::Off;
    assert!(sim::simulate(&jobs, &cfg, &mut |_, _| {}).is_ok());
}

#[test]
fn a_synchronous_neighbour_on_the_reapers_queue_waits_for_its_passes() {
    // Where it does not transfer for free: one CQ serves every thread of
    // its core, so the batch reaper's busy period holds the synchronous
    // job's interrupts too (cint marks them Urgent); its completions come
    // at the reaper's next pass. The cover letter says the same of
    // "concurrent applications using the same RX queue(s)".
    let jobs = common::example("mixed-16");
    let go = |suspend: IrqSuspend| {
        let mut cfg = config("optane", PolicySpec::named("cint"), 100 * MS, 1);
        cfg.host.irq_suspend = suspend;
        let (r, a) = sim::simulate_audited(&jobs, &cfg, &mut |_, _| {}).unwrap();
        check_exactly_once(&a);
        r
    };
    let (off, on) = (go(IrqSuspend::Off), go(ON));
    let (s_off, s_on) = (lat_us(&off, "sync"), lat_us(&on, "sync"));
    assert!(
        s_on > 1.5 * s_off,
        "sync job {s_on} us with, {s_off} us without"
    );
    assert!(iops(&on, "async") > iops(&off, "async"));
    assert!(on.interrupts_per_sec() < 0.5 * off.interrupts_per_sec());
}
