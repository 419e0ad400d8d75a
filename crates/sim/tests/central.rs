//! UnICom's central poller in the simulator (issue 40; `host::central`,
//! crates/sim/src/world/central.rs): one kernel thread on a core of its
//! own reaps every blocking thread's completions, no interrupt; a thread
//! alone on its core spins on its status word, one sharing its core
//! leaves it to the other. Virtual time, deterministic.

mod common;

use common::{check_exactly_once, config, iops, lat_us};
use policy::{PolicySpec, MS};
use report::RunReport;
use sim::Completion;

/// Four blocking readers, one per core (0-3), on a 28-core host.
fn four() -> Vec<jobs::Job> {
    let mut text = String::from(
        "[global]\nrw=randread\nbs=4k\nsize=256m\nioengine=psync\ndirect=1\ntime_based\nruntime=1\n",
    );
    for c in 0..4 {
        text += &format!("[r{c}]\ncpus_allowed={c}\n");
    }
    jobs::parse_str(&text, "t.fio", &|_| None).unwrap().jobs
}

fn run(jobs: &[jobs::Job], mode: Completion, policy: &str) -> Result<RunReport, sim::SimError> {
    let mut cfg = config("optane", PolicySpec::named(policy), 100 * MS, 1);
    cfg.host.completion = mode;
    let (r, audit) = sim::simulate_audited(jobs, &cfg, &mut |_, _| {})?;
    check_exactly_once(&audit);
    Ok(r)
}

/// A core's busy share of the window.
fn busy(r: &RunReport, core: usize) -> f64 {
    r.cores
        .iter()
        .find(|c| c.core == core)
        .map_or(0.0, |c| c.user + c.kernel + c.irq)
}

fn mean_lat(r: &RunReport) -> f64 {
    (0..4).map(|c| lat_us(r, &format!("r{c}"))).sum::<f64>() / 4.0
}

fn note(r: &RunReport) -> String {
    r.notes
        .iter()
        .find(|n| n.starts_with("completion central:"))
        .cloned()
        .unwrap_or_default()
}

#[test]
fn the_poller_spins_a_core_of_its_own_no_interrupt_and_its_latency_sits_between_poll_and_interrupt()
{
    let jobs = four();
    let irq = run(&jobs, Completion::Interrupt, "default").unwrap();
    let poll = run(&jobs, Completion::Poll, "default").unwrap();
    let central = run(&jobs, Completion::Central, "default").unwrap();
    assert!(irq.interrupts > 0);
    assert_eq!(central.interrupts, 0, "its queues raise none");
    // The poller takes the highest free core (the artifact's ct_cpu_id)
    // and spins it whole: a fifth core busy, which neither poll nor
    // interrupts use.
    let n = note(&central);
    assert!(n.contains("on core 27 (its own)"), "{n}");
    assert!(busy(&central, 27) > 0.99, "{}", busy(&central, 27));
    assert_eq!(busy(&poll, 27), 0.0);
    // Alone on their cores the waiters spin on their status words
    // (IOCT_POLL): their cores stay busy, as classic polling's.
    for c in 0..4 {
        assert!(busy(&central, c) > 0.95, "core {c}: {}", busy(&central, c));
    }
    assert!(n.contains("skipped 0"), "{n}");
    // No handler, no wake-up, no switch: close to classic polling (the
    // poller reaps what polling's thread would), well under interrupts.
    let (p, c, i) = (mean_lat(&poll), mean_lat(&central), mean_lat(&irq));
    assert!(p <= c && c < i, "poll {p} central {c} interrupt {i} us");
    assert!(
        c - p < 0.25 * (i - p),
        "poll {p} central {c} interrupt {i} us"
    );
}

#[test]
fn a_waiter_sharing_its_core_leaves_it_to_the_other_and_the_poller_makes_it_runnable() {
    // Two blocking readers on core 0 (TagSched's case: more I/O threads
    // than cores). Under classic polling the one on the CPU spins through
    // its wait while the other waits for the CPU, up to a scheduler slice;
    // under the central poller a waiter with company is skipped, so the
    // other issues meanwhile, and the skipped one is back within a
    // completion.
    let text = "[global]\nrw=randread\nbs=4k\nsize=256m\nioengine=psync\ndirect=1\n\
                time_based\nruntime=1\ncpus_allowed=0\n[a]\n[b]\n";
    let jobs = jobs::parse_str(text, "t.fio", &|_| None).unwrap().jobs;
    let poll = run(&jobs, Completion::Poll, "default").unwrap();
    let central = run(&jobs, Completion::Central, "default").unwrap();
    let total = |r: &RunReport| iops(r, "a") + iops(r, "b");
    let worst = |r: &RunReport| r.jobs.iter().map(|j| j.read.clat.max).max().unwrap();
    assert!(
        total(&central) > 1.1 * total(&poll),
        "central {} poll {}",
        total(&central),
        total(&poll)
    );
    assert!(
        worst(&poll) > 1_000_000 && worst(&central) < 100_000,
        "worst clat: poll {} central {} ns",
        worst(&poll),
        worst(&central)
    );
    assert_eq!(central.interrupts, 0);
    let n = note(&central);
    assert!(!n.contains("skipped 0"), "{n}");
    assert!(!n.contains(" 0 skipped waiter(s) made runnable"), "{n}");
}

#[test]
fn a_device_policy_with_nothing_to_act_on_is_refused_naming_both() {
    let jobs = four();
    let e = run(&jobs, Completion::Central, "cint")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("completion central") && e.contains("policy cint"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
    // With a job that takes interrupts (libaio), the policy acts on it.
    let text = "[global]\nrw=randread\nbs=4k\nsize=256m\ndirect=1\ntime_based\nruntime=1\n\
                [s]\nioengine=psync\ncpus_allowed=0\n\
                [a]\nioengine=libaio\niodepth=4\ncpus_allowed=1\n";
    let jobs = jobs::parse_str(text, "t.fio", &|_| None).unwrap().jobs;
    let r = run(&jobs, Completion::Central, "cint").unwrap();
    assert!(r.interrupts > 0);
    assert!(note(&r).contains("on interrupts: a"), "{}", note(&r));
}
