//! fio's serial groups end to end in the simulator: `stonewall` (HOWTO:
//! "Wait for preceding jobs in the job file to exit, before starting this
//! one") and `wait_for=NAME` ("won't be started until all workers of the
//! specified waitee job are done"), applied from [`jobs::serial_order`].

mod common;

use common::*;
use policy::{Nanos, PolicySpec, MS};
use report::RunReport;

fn sim(text: &str) -> (RunReport, sim::Audit) {
    let jobs = jobs::parse_str(text, "t.fio", &|_| None).unwrap().jobs;
    let mut cfg = config("optane", PolicySpec::named("default"), 0, 1);
    cfg.runtime = None;
    sim::simulate_audited(&jobs, &cfg, &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}"))
}

/// A thread's run: its runtime plus the drain of what it had in flight
/// (4 requests of about 10 us), as fio's run time includes it.
fn about_20ms(run: Nanos) -> bool {
    (20 * MS..20 * MS + MS / 2).contains(&run)
}

fn run_of(r: &RunReport, name: &str, clone: usize) -> Nanos {
    let j = r
        .jobs
        .iter()
        .find(|j| j.name == name && j.clone_index == clone)
        .unwrap();
    j.read.run_ns.unwrap_or(r.duration_ns)
}

const TWO: &str =
    "[global]\nioengine=libaio\niodepth=4\nrw=randread\nruntime=20ms\ntime_based\n[a]\n[b]\n";

#[test]
fn without_a_wall_jobs_run_side_by_side() {
    let (r, audit) = sim(TWO);
    assert_eq!(r.duration_ns, 20 * MS);
    assert_eq!(audit.unfinished_threads, 0);
}

#[test]
fn a_stonewall_job_starts_when_the_jobs_before_it_have_finished() {
    let (r, audit) = sim(&TWO.replace("[b]\n", "[b]\nstonewall\n"));
    // Two 20 ms groups one after the other: the run lasts both (and the
    // first group's drain), each job its own 20 ms.
    assert!(r.duration_ns >= 40 * MS, "{}", r.duration_ns);
    assert!(r.duration_ns < 41 * MS, "{}", r.duration_ns);
    assert!(about_20ms(run_of(&r, "a", 0)));
    assert!(about_20ms(run_of(&r, "b", 0)));
    assert_eq!(audit.unfinished_threads, 0);
    assert_eq!(audit.submitted, audit.consumed);
}

#[test]
fn a_size_bounded_first_group_hands_over_when_its_io_is_done() {
    // b waits for a's 8 MiB; its clones start together and run 20 ms each.
    let text = "[global]\nioengine=libaio\niodepth=4\nrw=randread\n[a]\nsize=8m\n[b]\nstonewall\nnumjobs=2\nruntime=20ms\ntime_based\n";
    let (r, _) = sim(text);
    let a = run_of(&r, "a", 0);
    assert!(a > MS && a < 20 * MS, "{a}");
    assert_eq!(r.jobs[0].read.io_bytes, 8 << 20);
    for clone in 0..2 {
        assert!(about_20ms(run_of(&r, "b", clone)));
    }
    assert!(r.duration_ns >= a + 20 * MS, "{} vs {a}", r.duration_ns);
}

#[test]
fn wait_for_waits_for_its_waitee_only() {
    // c waits for a; b runs beside a.
    let text = "[global]\nioengine=libaio\niodepth=4\nrw=randread\nruntime=20ms\ntime_based\n[a]\n[b]\n[c]\nwait_for=a\n";
    let (r, _) = sim(text);
    assert!(
        r.duration_ns >= 40 * MS && r.duration_ns < 41 * MS,
        "{}",
        r.duration_ns
    );
    for name in ["a", "b", "c"] {
        assert!(about_20ms(run_of(&r, name, 0)), "{name}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
    /// Whatever the walls and waits, every thread starts and finishes,
    /// every request completes once, and each runs its runtime and the
    /// drain after it, no longer.
    #[test]
    fn serial_groups_always_finish_and_complete_every_request_once(
        sections in proptest::collection::vec(
            (proptest::bool::ANY, proptest::option::of(0usize..4), 1u32..3, 1u64..6),
            1..5,
        ),
        seed in 0u64..1000,
    ) {
        let mut text = String::from("[global]\nioengine=libaio\niodepth=2\nrw=randread\ntime_based\n");
        for (i, (wall, wait, numjobs, ms)) in sections.iter().enumerate() {
            text += &format!("[s{i}]\nnumjobs={numjobs}\nruntime={ms}ms\n");
            if *wall {
                text += "stonewall\n";
            }
            if let Some(w) = wait.filter(|&w| w < i) {
                text += &format!("wait_for=s{w}\n");
            }
        }
        let jobs = jobs::parse_str(&text, "t.fio", &|_| None).unwrap().jobs;
        let mut cfg = config("optane", PolicySpec::named("cint"), 0, seed);
        cfg.runtime = None;
        let (r, audit) = sim::simulate_audited(&jobs, &cfg, &mut |_, _| {}).unwrap();
        proptest::prop_assert_eq!(audit.unfinished_threads, 0);
        proptest::prop_assert_eq!(audit.submitted, audit.consumed);
        proptest::prop_assert_eq!(audit.stranded, 0);
        for (j, job) in r.jobs.iter().zip(&jobs) {
            let run = j.read.run_ns.unwrap_or(r.duration_ns);
            // Its runtime, and the drain of two requests after it.
            proptest::prop_assert!(run <= job.runtime.unwrap() + MS, "{} ran {run}", j.name);
        }
    }
}
