//! Completion by polling in the simulator (issue 15, item 1): classic
//! polling spins its core and takes no interrupt, hybrid sleeps first,
//! SelectISR polls only the critical job. Virtual time, deterministic.

mod common;

use common::{check_exactly_once, config, example, lat_us};
use policy::{PolicySpec, MS};
use report::RunReport;
use sim::{BlockScheduler, Completion, Preemption};

fn run_jobs(jobs: &[jobs::Job], mode: Completion, runtime_ms: u64) -> RunReport {
    let mut cfg = config("optane", PolicySpec::named("default"), runtime_ms * MS, 1);
    cfg.host.completion = mode;
    let (r, audit) = sim::simulate_audited(jobs, &cfg, &mut |_, _| {}).unwrap();
    check_exactly_once(&audit);
    r
}

fn run_text(text: &str, mode: Completion, runtime_ms: u64) -> RunReport {
    let jobs = jobs::parse_str(text, "t.fio", &|_| None).unwrap().jobs;
    run_jobs(&jobs, mode, runtime_ms)
}

/// The job's CPU (user + system) as a share of the run.
fn cpu(r: &RunReport, job: &str) -> f64 {
    let j = r.jobs.iter().find(|j| j.name == job).unwrap();
    (j.usr_ns + j.sys_ns) as f64 / r.duration_ns as f64
}

#[test]
fn classic_polling_spins_the_core_takes_no_interrupt_and_saves_the_interrupt_path() {
    let jobs = example("sync-read");
    let irq = run_jobs(&jobs, Completion::Interrupt, 200);
    let poll = run_jobs(&jobs, Completion::Poll, 200);
    assert_eq!(poll.interrupts, 0);
    assert!(irq.interrupts > 0);
    assert!(
        cpu(&poll, "sync-read") > 0.999,
        "{}",
        cpu(&poll, "sync-read")
    );
    assert!(cpu(&irq, "sync-read") < 0.5, "{}", cpu(&irq, "sync-read"));
    // The interrupt path: the handler's entry and wake-up, the switch back
    // to the thread; polling pays one reap instead of the handler's.
    let h = sim::HostProfile::load("xeon-e5-2660v4").unwrap();
    let path = (h.irq_entry + h.wakeup + h.context_switch) as f64 / 1e3;
    let saved = lat_us(&irq, "sync-read") - lat_us(&poll, "sync-read");
    assert!(
        saved > 0.5 * path && saved < 1.5 * path,
        "saved {saved} us, interrupt path {path} us"
    );
    assert!(poll.notes.iter().any(|n| n.starts_with("completion poll:")));
}

#[test]
fn hybrid_costs_less_cpu_than_classic_and_more_than_interrupts() {
    // Past the first statistics window (100 ms), hybrid sleeps.
    let jobs = example("sync-read");
    let cpu_of = |mode| cpu(&run_jobs(&jobs, mode, 400), "sync-read");
    let (irq, hybrid, poll) = (
        cpu_of(Completion::Interrupt),
        cpu_of(Completion::Hybrid),
        cpu_of(Completion::Poll),
    );
    assert!(irq < hybrid && hybrid < poll, "{irq} {hybrid} {poll}");
    let r = run_jobs(&jobs, Completion::Hybrid, 400);
    assert_eq!(r.interrupts, 0);
    let note = r
        .notes
        .iter()
        .find(|n| n.starts_with("completion hybrid:"))
        .unwrap();
    assert!(!note.contains(" 0 hybrid sleep"), "{note}");
}

#[test]
fn a_fixed_io_poll_delay_sleeps_that_long_before_every_poll() {
    // Linux's io_poll_delay > 0: a fixed sleep from the first request, no
    // statistics needed; a sleep past the device's ~7 us service makes
    // every read wait for its timer.
    let jobs = example("sync-read");
    let mut cfg = config("optane", PolicySpec::named("default"), 50 * MS, 1);
    cfg.host.completion = Completion::Hybrid;
    cfg.host.io_poll_delay = host::poll::HybridSleep::Fixed(50_000);
    let (fixed, audit) = sim::simulate_audited(&jobs, &cfg, &mut |_, _| {}).unwrap();
    check_exactly_once(&audit);
    assert!(
        lat_us(&fixed, "sync-read") > 50.0,
        "{}",
        lat_us(&fixed, "sync-read")
    );
    // Within the first 100 ms window half-mean has no mean yet: it spins.
    let adaptive = run_jobs(&jobs, Completion::Hybrid, 50);
    assert!(lat_us(&adaptive, "sync-read") < 20.0);
    let sleeps = |r: &RunReport| {
        r.notes
            .iter()
            .find(|n| n.starts_with("completion hybrid:"))
            .unwrap()
            .clone()
    };
    assert!(
        sleeps(&adaptive).contains(" 0 hybrid sleep"),
        "{}",
        sleeps(&adaptive)
    );
    assert!(
        !sleeps(&fixed).contains(" 0 hybrid sleep"),
        "{}",
        sleeps(&fixed)
    );
}

const TWO: &str = "[global]\nrw=randread\nbs=4k\nsize=256m\nioengine=psync\ndirect=1\n\
                   time_based\nruntime=1\n\
                   [ls]\ncritical=1\ncpus_allowed=0\n\
                   [bg]\ncpus_allowed=1\n";

#[test]
fn select_isr_polls_only_the_critical_job() {
    let r = run_text(TWO, Completion::SelectIsr, 200);
    assert!(cpu(&r, "ls") > 0.999, "{}", cpu(&r, "ls"));
    assert!(cpu(&r, "bg") < 0.5, "{}", cpu(&r, "bg"));
    // Every interrupt is the background job's.
    let bg = r.jobs.iter().find(|j| j.name == "bg").unwrap();
    assert!(
        r.interrupts > 0 && r.interrupts <= bg.read.io_ops + 1,
        "{}",
        r.interrupts
    );
    assert!(lat_us(&r, "ls") < lat_us(&r, "bg"));
    let note = r
        .notes
        .iter()
        .find(|n| n.starts_with("completion select-isr:"))
        .unwrap();
    assert!(note.contains("on interrupts: bg"), "{note}");
}

#[test]
fn pollers_sharing_a_core_still_complete_everything() {
    // Two spinners on one core: the scheduler's ticks switch between them,
    // and a completion posted while its spinner is off the CPU ends the
    // saved spin.
    // Under PREEMPT_VOLUNTARY a spin is a kernel path: the switch waits for
    // its end (the entry found); under full preemption a tick cuts it.
    let text = TWO.replace("cpus_allowed=1", "cpus_allowed=0");
    let jobs = jobs::parse_str(&text, "t.fio", &|_| None).unwrap().jobs;
    for preemption in [Preemption::Voluntary, Preemption::Full] {
        let mut cfg = config("optane", PolicySpec::named("default"), 100 * MS, 1);
        cfg.host.completion = Completion::Poll;
        cfg.host.preemption = preemption;
        let (r, audit) = sim::simulate_audited(&jobs, &cfg, &mut |_, _| {}).unwrap();
        check_exactly_once(&audit);
        assert_eq!(r.interrupts, 0);
        for job in ["ls", "bg"] {
            let j = r.jobs.iter().find(|j| j.name == job).unwrap();
            assert!(j.read.io_ops > 0, "{preemption:?} {job}");
        }
    }
}

#[test]
fn asynchronous_engines_keep_interrupts() {
    let r = run_text(
        "[aio]\nrw=randread\nbs=4k\nsize=256m\nioengine=libaio\niodepth=4\ndirect=1\n\
         time_based\nruntime=1\ncpus_allowed=0\n",
        Completion::Poll,
        50,
    );
    assert!(r.interrupts > 0);
    assert!(r.notes.iter().any(|n| n.contains("on interrupts: aio")));
}

#[test]
fn polling_composes_with_a_block_scheduler() {
    // Was refused; now each polled request goes through LD (4 KiB: one
    // piece) and completes by polling, exactly once.
    let mut cfg = config("optane", PolicySpec::named("default"), 50 * MS, 1);
    cfg.host.completion = Completion::Poll;
    cfg.host.block_scheduler = "ld".parse::<BlockScheduler>().unwrap();
    let (r, audit) = sim::simulate_audited(&example("sync-read"), &cfg, &mut |_, _| {}).unwrap();
    check_exactly_once(&audit);
    assert_eq!(audit.pieces_submitted, audit.submitted, "{audit:?}");
    assert_eq!(audit.pieces_submitted, audit.pieces_delivered, "{audit:?}");
    assert_eq!(r.interrupts, 0);
    assert!(r.notes.iter().any(|n| n.starts_with("completion poll:")));
    assert!(r.notes.iter().any(|n| n.starts_with("block scheduler ld")));
}
