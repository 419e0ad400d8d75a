//! The sleep-then-poll strategies of issue 40 in the simulator (`host::sleep`:
//! PAS and DPAS from the DPAS FAST'26 artifact, its EHP baseline, io_uring's
//! HYBRID_IOPOLL), each test asserting an effect the strategy has and the
//! mode it replaces does not. Virtual time, deterministic.

mod common;

use common::{check_exactly_once, config, cpu, job, lat_us, note};
use policy::{PolicySpec, MS};
use report::RunReport;
use sim::Completion;

fn run_on(device: &str, text: &str, mode: Completion, runtime_ms: u64) -> RunReport {
    let jobs = jobs::parse_str(text, "t.fio", &|_| None).unwrap().jobs;
    let mut cfg = config(device, PolicySpec::named("default"), runtime_ms * MS, 1);
    cfg.host.completion = mode;
    let (r, audit) = sim::simulate_audited(&jobs, &cfg, &mut |_, _| {}).unwrap();
    check_exactly_once(&audit);
    r
}

/// The number before `what` in the completion note.
fn count(r: &RunReport, what: &str) -> u64 {
    let n = note(r, "completion ");
    let at = n
        .find(what)
        .unwrap_or_else(|| panic!("'{what}' not in {n}"));
    n[..at]
        .split([' ', ','])
        .rfind(|w| !w.is_empty())
        .unwrap()
        .parse()
        .unwrap_or_else(|e| panic!("{e}: {n}"))
}

/// One psync thread at QD1 on core 0.
const QD1: &str = "[global]\nrw=randread\nbs=4k\nsize=256m\ndirect=1\ntime_based\nruntime=1\n\
                   [qd1]\nioengine=psync\ncpus_allowed=0\n";

#[test]
fn pas_sleeps_near_the_device_latency_where_hybrid_sleeps_half() {
    let (poll, hybrid, pas) = (
        run_on("optane", QD1, Completion::Poll, 300),
        run_on("optane", QD1, Completion::Hybrid, 300),
        run_on("optane", QD1, Completion::Pas, 300),
    );
    let (c_poll, c_hybrid, c_pas) = (cpu(&poll, "qd1"), cpu(&hybrid, "qd1"), cpu(&pas, "qd1"));
    // PAS sleeps most of the wait: its CPU well below classic polling's
    // whole core and below hybrid's half-mean sleep.
    assert!(c_poll > 0.99, "{c_poll}");
    assert!(c_pas < c_hybrid - 0.05, "pas {c_pas} hybrid {c_hybrid}");
    assert!(c_pas < 0.8 * c_poll, "pas {c_pas} poll {c_poll}");
    // Its latency stays near classic polling's: it wakes about when the
    // entry arrives (UNDER and OVER both happen, neither dominating).
    let (l_poll, l_pas) = (lat_us(&poll, "qd1"), lat_us(&pas, "qd1"));
    assert!(l_pas < l_poll * 1.25, "pas {l_pas} us, poll {l_poll} us");
    let (under, over) = (count(&pas, " under"), count(&pas, " over"));
    assert!(under > 100 && over > 100, "under {under} over {over}");
    assert_eq!(pas.interrupts, 0);
}

/// Four psync threads sharing core 0: four requests on one CPU's queue.
const SHARED: &str = "[global]\nrw=randread\nbs=4k\nsize=256m\ndirect=1\ntime_based\nruntime=1\n\
                      [four]\nioengine=psync\nnumjobs=4\ncpus_allowed=0\n";

#[test]
fn dpas_sends_a_crowded_cpu_to_interrupts_where_pas_keeps_polling() {
    let pas = run_on("optane", SHARED, Completion::Pas, 400);
    let dpas = run_on("optane", SHARED, Completion::Dpas, 400);
    assert_eq!(pas.interrupts, 0);
    assert_eq!(count(&pas, " sent to interrupts"), 0);
    // DPAS: PAS's sleep floors (oversleeping at depth 4), overloaded, the
    // mean depth above 1: interrupts, for 10000 requests at a time.
    let sent = count(&dpas, " sent to interrupts");
    assert!(sent > 1_000, "{}", note(&dpas, "completion "));
    assert!(dpas.interrupts > 1_000, "{}", dpas.interrupts);
}

#[test]
fn dpas_at_depth_one_is_mostly_classic_polling() {
    let dpas = run_on("optane", QD1, Completion::Dpas, 300);
    // PAS for 100, CP for 1000: about ten spins to a sleep.
    let spins = count(&dpas, " polled without a sleep");
    let slept = count(&dpas, " request(s) slept");
    assert!(
        spins > 5 * slept && slept > 0,
        "{spins} spins {slept} slept"
    );
    assert_eq!(dpas.interrupts, 0);
    assert!(cpu(&dpas, "qd1") > 0.9, "{}", cpu(&dpas, "qd1"));
}

/// One psync thread at QD1 reading 128 KiB.
const BIG: &str = "[global]\nrw=randread\nbs=128k\nsize=1g\ndirect=1\ntime_based\nruntime=1\n\
                   [big]\nioengine=psync\ncpus_allowed=0\n";

#[test]
fn ehp_sends_a_slow_size_to_interrupts_where_hybrid_polls_it() {
    // P3700 128 KiB reads: a minimum near 68 us, above EHP's 10 x 4.05
    // us; hybrid polls them all, sleeping half the mean.
    let hybrid = run_on("p3700", BIG, Completion::Hybrid, 300);
    let ehp = run_on("p3700", BIG, Completion::Ehp, 300);
    assert_eq!(hybrid.interrupts, 0);
    let sent = count(&ehp, " sent to interrupts");
    assert!(sent > 1_000, "{}", note(&ehp, "completion "));
    // Only the first 10 ms window's requests polled.
    assert!(ehp.interrupts + 200 > job(&ehp, "big").read.io_ops);
    assert!(cpu(&ehp, "big") < cpu(&hybrid, "big") / 4.0);
}

#[test]
fn ehp_wakes_before_the_fastest_completion() {
    // Optane 4 KiB: EHP sleeps the window's minimum less 4.05 us, so it
    // wakes before even the fastest entry and its latency is classic
    // polling's, at less CPU; it never takes an interrupt here.
    let poll = run_on("optane", QD1, Completion::Poll, 300);
    let ehp = run_on("optane", QD1, Completion::Ehp, 300);
    assert_eq!(ehp.interrupts, 0);
    assert!(count(&ehp, " sleep(s) before spinning") > 1_000);
    let (l_poll, l_ehp) = (lat_us(&poll, "qd1"), lat_us(&ehp, "qd1"));
    assert!((l_ehp - l_poll).abs() < 0.005 * l_poll, "{l_ehp} {l_poll}");
    assert!(cpu(&ehp, "qd1") < cpu(&poll, "qd1") - 0.05);
    assert_eq!(count(&ehp, " over"), 0);
}

/// An io_uring IOPOLL ring at QD1 beside a psync job on another core.
const RING: &str = "[global]\nrw=randread\nbs=4k\nsize=256m\ndirect=1\ntime_based\nruntime=1\n\
                    [ring]\nioengine=io_uring\nhipri\niodepth=1\ncpus_allowed=0\n\
                    [sync]\nioengine=psync\ncpus_allowed=1\n";

#[test]
fn hybrid_iopoll_sleeps_the_ring_and_leaves_blocking_calls_to_interrupts() {
    let classic = run_on("optane", RING, Completion::Interrupt, 300);
    let hybrid = run_on("optane", RING, Completion::HybridIopoll, 300);
    // The ring sleeps before it polls: less CPU than IOPOLL's spin.
    assert!(cpu(&classic, "ring") > 0.99);
    assert!(count(&hybrid, " sleep(s) before spinning") > 1_000);
    assert!(cpu(&hybrid, "ring") < cpu(&classic, "ring") - 0.1);
    // A quarter of the latency asleep: it rarely oversleeps.
    let (under, over) = (count(&hybrid, " under"), count(&hybrid, " over"));
    assert!(under > 10 * over, "under {under} over {over}");
    // The psync job takes interrupts, as under `interrupt`.
    let sync = job(&hybrid, "sync").read.io_ops;
    assert!(
        hybrid.interrupts.abs_diff(sync) <= 1,
        "{} {sync}",
        hybrid.interrupts
    );
}
