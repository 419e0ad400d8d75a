//! How long a run is and what its figures are divided by: fio's rules for
//! `size`, `runtime` and `time_based` (fio HOWTO, "Time related
//! parameters"), and runs too short or too slow to measure anything.

mod common;

use common::*;
use policy::{Nanos, PolicySpec, MS, SEC};
use report::RunReport;

fn sim(text: &str, runtime: Option<Nanos>) -> Result<(RunReport, sim::Audit), sim::SimError> {
    let jobs = jobs::parse_str(text, "t.fio", &|_| None).unwrap().jobs;
    let mut cfg = config("optane", PolicySpec::named("default"), 0, 1);
    cfg.runtime = runtime;
    sim::simulate_audited(&jobs, &cfg, &mut |_, _| {})
}

const SIZE_16M: &str = "[a]\nioengine=psync\nrw=randread\nbs=4k\nsize=16m\nruntime=10\n";

#[test]
fn a_size_bounded_job_with_a_runtime_reports_its_own_run_time() {
    // fio: "run until it completes the configured I/O workload or until it
    // has run for this specified amount of time, whichever occurs first";
    // its run time ends with its last completion (fio reports run=461msec
    // for this job on the Optane, not 10000msec).
    let (r, audit) = sim(SIZE_16M, None).unwrap();
    let j = &r.jobs[0];
    assert_eq!(j.read.io_bytes, 16 << 20);
    assert!(
        r.duration_ns < SEC,
        "divided by {} ns, the whole runtime",
        r.duration_ns
    );
    // About 10 us per 4 KiB psync read: 4096 of them take about 41 ms.
    assert!(r.duration_ns > 20 * MS, "{}", r.duration_ns);
    assert_eq!(audit.window_ns, r.duration_ns);
    for &(core, ns) in &audit.core_accounted_ns {
        assert_eq!(ns, r.duration_ns, "core {core}");
    }
}

#[test]
fn the_runtime_override_caps_a_size_bounded_job_and_does_not_make_it_time_based() {
    // --runtime longer than the size takes: the size ends the job.
    let (r, _) = sim(SIZE_16M, Some(5 * SEC)).unwrap();
    assert_eq!(r.jobs[0].read.io_bytes, 16 << 20, "the size was ignored");
    assert!(r.duration_ns < SEC);
    // --runtime shorter: it caps the job.
    let (r, _) = sim(SIZE_16M, Some(10 * MS)).unwrap();
    assert_eq!(r.duration_ns, 10 * MS);
    assert!(r.jobs[0].read.io_bytes < 16 << 20);
    // time_based loops over the size until the runtime.
    let looped = SIZE_16M.replace("runtime=10\n", "runtime=10\ntime_based\n");
    let (r, _) = sim(&looped, Some(100 * MS)).unwrap();
    assert_eq!(r.duration_ns, 100 * MS);
    assert!(r.jobs[0].read.io_bytes > 16 << 20);
}
