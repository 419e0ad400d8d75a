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
    assert_eq!(run_of(&r, "a", 0), 20 * MS);
    assert_eq!(run_of(&r, "b", 0), 20 * MS);
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
        assert_eq!(run_of(&r, "b", clone), 20 * MS);
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
        assert_eq!(run_of(&r, name, 0), 20 * MS, "{name}");
    }
}
