//! Per-job polled completion (fio's `hipri`) in the simulator (issue 15):
//! a hipri job polls on a queue with no interrupt while the other jobs keep
//! theirs; io_uring's IOPOLL ring spins for its batch; polling composes
//! with FastResponse's LD (pieces polled, critical bypass). Virtual time,
//! deterministic.

mod common;

use common::{check_exactly_once, config, cpu, job, lat_us, note};
use policy::{PolicySpec, MS};
use report::RunReport;
use sim::{Audit, BlockScheduler, Completion, SimError};

fn run_on(
    device: &str,
    text: &str,
    mode: Completion,
    scheduler: BlockScheduler,
    runtime_ms: u64,
) -> (RunReport, Audit) {
    let jobs = jobs::parse_str(text, "t.fio", &|_| None).unwrap().jobs;
    let mut cfg = config(device, PolicySpec::named("default"), runtime_ms * MS, 1);
    cfg.host.completion = mode;
    cfg.host.block_scheduler = scheduler;
    let (r, audit) = sim::simulate_audited(&jobs, &cfg, &mut |_, _| {}).unwrap();
    check_exactly_once(&audit);
    (r, audit)
}

fn run(text: &str, mode: Completion, runtime_ms: u64) -> (RunReport, Audit) {
    run_on("optane", text, mode, BlockScheduler::None, runtime_ms)
}

/// `'name' N polled` from the completion note.
fn polled(r: &RunReport, name: &str) -> u64 {
    let n = note(r, "completion ");
    let at = n
        .find(&format!("'{name}' "))
        .unwrap_or_else(|| panic!("{name} not in {n}"));
    let rest = &n[at + name.len() + 3..];
    rest.split(' ').next().unwrap().parse().unwrap()
}

const GLOBAL: &str = "[global]\nrw=randread\nbs=4k\nsize=256m\ndirect=1\ntime_based\nruntime=1\n";

/// A hipri pvsync2 job at QD1 on core 0 beside an interrupt-driven psync
/// job on core 1.
fn pair(hipri_cpus: &str) -> String {
    format!(
        "{GLOBAL}[poller]\nioengine=pvsync2\nhipri\ncpus_allowed={hipri_cpus}\n\
         [irq]\nioengine=psync\ncpus_allowed=1\n"
    )
}

#[test]
fn a_hipri_job_polls_and_its_neighbour_keeps_its_interrupts() {
    let (r, _) = run(&pair("0"), Completion::Interrupt, 200);
    let alone = format!("{GLOBAL}[irq]\nioengine=psync\ncpus_allowed=1\n");
    let (solo, _) = run(&alone, Completion::Interrupt, 200);
    let (poller, irq) = (job(&r, "poller"), job(&r, "irq"));
    assert!(poller.read.io_ops > 10_000, "{}", poller.read.io_ops);
    // The poller spins its whole core; its neighbour sleeps as before.
    assert!(cpu(&r, "poller") > 0.999, "{}", cpu(&r, "poller"));
    assert!(cpu(&r, "irq") < 0.5, "{}", cpu(&r, "irq"));
    // Every polled completion is the poller's; every interrupt is the
    // neighbour's (one per completion under `default`, the window's edges
    // aside).
    assert_eq!(polled(&r, "poller"), poller.read.io_ops);
    assert!(
        r.interrupts.abs_diff(irq.read.io_ops) <= 1,
        "{} interrupts, {} completions",
        r.interrupts,
        irq.read.io_ops
    );
    // The neighbour's interrupts are what they are without the poller
    // (the device's units are shared: within 2%).
    let ratio = r.interrupts as f64 / solo.interrupts as f64;
    assert!((0.98..1.02).contains(&ratio), "{ratio}");
    // Polling saves the interrupt path: the poller is faster.
    assert!(lat_us(&r, "poller") < lat_us(&r, "irq") - 1.0);
    // The note gives its time spinning, a share of the window (the rest of
    // its core: user work, system calls, reaps).
    let n = note(&r, "completion interrupt (hipri jobs: poll):");
    assert!(n.contains("on interrupts: irq"), "{n}");
    let share: f64 = n
        .split("'poller' ")
        .nth(1)
        .and_then(|s| s.split('(').nth(1))
        .and_then(|s| s.split('%').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(share > 60.0 && share <= 100.0, "{n}");
}

#[test]
fn a_hipri_job_sharing_a_core_stays_off_the_interrupt_queue() {
    // One core, two queues: the poller's polled CQ and the interrupt-driven
    // job's CQ; the policy sees only the latter's completions.
    let (r, _) = run(&pair("1"), Completion::Interrupt, 100);
    let (poller, irq) = (job(&r, "poller"), job(&r, "irq"));
    assert!(poller.read.io_ops > 0 && irq.read.io_ops > 0);
    assert_eq!(polled(&r, "poller"), poller.read.io_ops);
    assert!(
        r.interrupts.abs_diff(irq.read.io_ops) <= 1,
        "{} interrupts, {} completions",
        r.interrupts,
        irq.read.io_ops
    );
}

#[test]
fn hipri_polls_hybrid_when_the_host_does() {
    let (r, _) = run(&pair("0"), Completion::Hybrid, 400);
    let n = note(&r, "completion hybrid (hipri jobs: hybrid):");
    assert!(!n.contains(" 0 hybrid sleep"), "{n}");
    // Hybrid sleeps: less CPU than classic polling's whole core.
    assert!(cpu(&r, "poller") < 0.9, "{}", cpu(&r, "poller"));
    // The host-wide hybrid mode polls the psync job too.
    assert_eq!(r.interrupts, 0);
}

const URING: &str = "[global]\nrw=randread\nbs=4k\nsize=256m\ndirect=1\ntime_based\nruntime=1\n\
                     [ring]\nioengine=io_uring\niodepth=4\niodepth_batch_submit=4\n\
                     cpus_allowed=0\n";

#[test]
fn io_uring_hipri_spins_in_getevents_until_its_batch_is_there() {
    let batch = |min: u32, hipri: bool| {
        let text = format!(
            "{URING}iodepth_batch_complete_min={min}\n{}",
            if hipri { "hipri\n" } else { "" }
        );
        run(&text, Completion::Interrupt, 100).0
    };
    let (one, four, irq) = (batch(1, true), batch(4, true), batch(4, false));
    for r in [&one, &four] {
        assert_eq!(r.interrupts, 0);
        assert!(cpu(r, "ring") > 0.999, "{}", cpu(r, "ring"));
        assert_eq!(polled(r, "ring"), job(r, "ring").read.io_ops);
        // It never sleeps: the only context switch is its first.
        assert!(job(r, "ring").ctx <= 1, "{}", job(r, "ring").ctx);
    }
    assert!(irq.interrupts > 0 && cpu(&irq, "ring") < 0.999);
    assert!(job(&irq, "ring").ctx > 100, "{}", job(&irq, "ring").ctx);
    // Four submitted together, and the call spins until all four are
    // there: even the fastest completion waits for the slowest of its
    // round (on `optane`, min=1's fastest is 5.2 us, min=4's 8.6 us), and
    // the mean rises (9.4 us to 11.9 us).
    let (min1, min4) = (
        job(&one, "ring").read.clat.min,
        job(&four, "ring").read.clat.min,
    );
    assert!(
        min4 > min1 + 2_000,
        "fastest: min=4 {min4} ns, min=1 {min1} ns"
    );
    assert!(
        lat_us(&four, "ring") > lat_us(&one, "ring") + 1.0,
        "min=4 {} us, min=1 {} us",
        lat_us(&four, "ring"),
        lat_us(&one, "ring")
    );
}

fn ld(tokens: u32) -> BlockScheduler {
    BlockScheduler::Ld {
        tokens,
        split: 32 * 1024,
        opportunistic: false,
    }
}

#[test]
fn a_polled_request_split_by_ld_completes_at_its_last_piece() {
    for engine in ["pvsync2", "io_uring\niodepth=8"] {
        let text = format!(
            "[big]\nrw=randread\nbs=128k\nsize=1g\ndirect=1\ntime_based\nruntime=1\n\
             cpus_allowed=0\nhipri\nioengine={engine}\n"
        );
        let (r, a) = run_on("optane-900p", &text, Completion::Interrupt, ld(4), 100);
        assert_eq!(r.interrupts, 0, "{engine}");
        // Four 32 KiB pieces a request (the drain's aside: all of them).
        assert_eq!(a.pieces_submitted, 4 * a.submitted, "{engine}: {a:?}");
        assert!(a.max_noncritical_pieces <= 4, "{engine}: {a:?}");
        assert_eq!(polled(&r, "big"), job(&r, "big").read.io_ops);
    }
}

#[test]
fn hybrid_polling_through_ld_finds_its_pieces_after_its_sleep() {
    let text = "[big]\nrw=randread\nbs=128k\nsize=1g\ndirect=1\ntime_based\nruntime=1\n\
                cpus_allowed=0\nhipri\nioengine=pvsync2\n";
    let (r, a) = run_on("optane-900p", text, Completion::Hybrid, ld(8), 300);
    let n = note(&r, "completion hybrid");
    assert!(!n.contains(" 0 hybrid sleep"), "{n}");
    assert_eq!(a.pieces_submitted, 4 * a.submitted, "{a:?}");
    assert_eq!(r.interrupts, 0);
}

/// FR's LS job (critical) beside its TO job (128 KiB, 32 deep), each on a
/// core of its own.
const LS_TO: &str = "[global]\nrw=randread\nsize=1g\ndirect=1\ntime_based\nruntime=1\n\
                     [ls]\nbs=4k\nioengine=psync\ncritical\ncpus_allowed=1\n\
                     [to]\nbs=128k\nioengine=libaio\niodepth=32\ncpus_allowed=0\n";

#[test]
fn select_isr_with_ld_polls_the_critical_job_past_the_tokens() {
    let (sel, a) = run_on("optane-900p", LS_TO, Completion::SelectIsr, ld(8), 200);
    let (irq, _) = run_on("optane-900p", LS_TO, Completion::Interrupt, ld(8), 200);
    let (ls, to) = (job(&sel, "ls"), job(&sel, "to"));
    // The critical job polls, whole: one piece a request (the bypass).
    assert_eq!(polled(&sel, "ls"), ls.read.io_ops);
    assert!(cpu(&sel, "ls") > 0.999);
    // The TO job's requests are split (4 pieces each), token-bound, and
    // interrupt: every interrupt is for one of its pieces.
    let to_requests = a.submitted - (ls.read.io_ops);
    assert!(a.pieces_submitted >= 4 * (to_requests - 64), "{a:?}");
    assert!(a.max_noncritical_pieces <= 8, "{a:?}");
    assert!(sel.interrupts > 0 && sel.interrupts <= 4 * (to.read.io_ops + 32));
    // Polling takes the interrupt path off the critical job's latency
    // where the device does not hide it: its fastest request. (Its mean,
    // 92 us, is the device's FIFO behind the TO job's pieces, the same in
    // both modes.)
    let (polled_min, irq_min) = (ls.read.clat.min, job(&irq, "ls").read.clat.min);
    assert!(
        polled_min + 1_000 < irq_min,
        "select-isr {polled_min} ns, interrupt {irq_min} ns"
    );
}

#[test]
fn hipri_is_refused_with_an_engine_that_cannot_poll() {
    // The job parser refuses it; a `Job` built in code is refused too,
    // naming the job, its line and the option.
    let mut jobs = jobs::parse_str(
        "[aio]\nrw=randread\nbs=4k\nsize=1m\nioengine=libaio\niodepth=4\n",
        "t.fio",
        &|_| None,
    )
    .unwrap()
    .jobs;
    jobs[0].hipri = true;
    let cfg = config("optane", PolicySpec::named("default"), 10 * MS, 1);
    let e = sim::simulate(&jobs, &cfg, &mut |_, _| {}).unwrap_err();
    assert!(matches!(e, SimError::Job(_)), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("job 'aio'")
            && msg.contains("option 'hipri'")
            && msg.contains("aio_prep_rw")
            && !msg.contains('\n'),
        "{msg}"
    );
}

#[test]
fn every_mode_with_and_without_ld_completes_each_request_once() {
    // Pollers and interrupted jobs of every engine sharing two cores, small
    // and split requests, under each completion mode and preemption model:
    // the audit (each request and piece exactly once, every core's time
    // accounted) holds, and only the jobs that poll avoid interrupts.
    let text = "[global]\nrw=randread\nsize=1g\ndirect=1\ntime_based\nruntime=1\n\
                [p2]\nioengine=pvsync2\nhipri\nbs=64k\ncpus_allowed=0\n\
                [ring]\nioengine=io_uring\nhipri\niodepth=8\niodepth_batch_submit=2\n\
                iodepth_batch_complete_min=2\nbs=4k\ncpus_allowed=0\n\
                [ls]\nioengine=psync\ncritical\nbs=4k\ncpus_allowed=1\n\
                [aio]\nioengine=libaio\niodepth=16\nbs=128k\ncpus_allowed=1\n";
    let jobs = jobs::parse_str(text, "t.fio", &|_| None).unwrap().jobs;
    for mode in [
        Completion::Interrupt,
        Completion::Poll,
        Completion::Hybrid,
        Completion::SelectIsr,
    ] {
        for scheduler in [BlockScheduler::None, ld(4)] {
            for preemption in [sim::Preemption::Voluntary, sim::Preemption::Full] {
                let mut cfg = config("optane-900p", PolicySpec::named("cint"), 150 * MS, 3);
                cfg.host.completion = mode;
                cfg.host.block_scheduler = scheduler.clone();
                cfg.host.preemption = preemption;
                let what = format!("{mode:?} {scheduler} {preemption:?}");
                let (r, a) = sim::simulate_audited(&jobs, &cfg, &mut |_, _| {})
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                check_exactly_once(&a);
                for name in ["p2", "ring", "ls", "aio"] {
                    assert!(job(&r, name).read.io_ops > 0, "{what}: {name}");
                }
                // The hipri jobs always poll; ls polls when the mode polls
                // blocking or critical jobs; aio never does.
                let ls_polls = mode != Completion::Interrupt;
                let expect = job(&r, "p2").read.io_ops
                    + job(&r, "ring").read.io_ops
                    + if ls_polls {
                        job(&r, "ls").read.io_ops
                    } else {
                        0
                    };
                let total: u64 = ["p2", "ring", "ls"]
                    .iter()
                    .filter(|n| **n != "ls" || ls_polls)
                    .map(|n| polled(&r, n))
                    .sum();
                assert_eq!(total, expect, "{what}");
                assert!(r.interrupts > 0, "{what}: aio interrupts");
            }
        }
    }
}
