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

fn sim_on(
    text: &str,
    device: sim::DeviceProfile,
    runtime: Option<Nanos>,
) -> Result<(RunReport, sim::Audit), sim::SimError> {
    let jobs = jobs::parse_str(text, "t.fio", &|_| None).unwrap().jobs;
    let mut cfg = config("optane", PolicySpec::named("default"), 0, 1);
    cfg.device = device;
    cfg.runtime = runtime;
    sim::simulate_audited(&jobs, &cfg, &mut |_, _| {})
}

#[test]
fn a_run_too_short_to_complete_any_io_is_an_error_not_iops_zero() {
    // `--runtime 1ns` exited 0 with IOPS=0.
    let e = sim(SIZE_16M, Some(1)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "no I/O completed in the measured 1ns: give a longer runtime, or check the device profile's service times"
    );
}

#[test]
fn a_device_slower_than_the_run_stops_at_the_runtime_and_says_what_was_in_flight() {
    // A 30 s command (the most a profile may ask) in a 100 ms run: the run
    // stops 30 s (virtual) after its end instead of running on, and fails
    // with one line saying what was in flight.
    let slow = sim::DeviceProfile::constant_service("30s", 1, 1000).unwrap();
    let e = sim_on(SIZE_16M, slow.clone(), Some(100 * MS)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "no I/O completed in the measured 100ms (1 request(s) still in flight at its end): give a longer runtime, or check the device profile's service times"
    );
    // Deep queues of them: completions past the histograms' 100 s top are
    // counted at it and said (this panicked), and requests still in flight
    // 30 s after the end are dropped and said.
    let deep = "[a]\nioengine=libaio\niodepth=8\nrw=randread\nbs=4k\nruntime=200s\ntime_based\n";
    let (r, audit) = sim_on(deep, slow, None).unwrap();
    assert!(audit.clat_above_max > 0, "{audit:?}");
    assert!(audit.stranded > 0, "{audit:?}");
    assert!(
        r.notes.iter().any(|n| n.contains("counted as 100s")),
        "{:?}",
        r.notes
    );
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("still in flight 30s after the run's end")),
        "{:?}",
        r.notes
    );
}

#[test]
fn an_idle_core_does_not_tick_through_a_slow_device() {
    // 256 psync reads of 30 s each: 2 hours of virtual time. A core whose
    // only thread waits stopped ticking, so the events grow with the I/Os
    // (a few per read), not with the 1.9M ticks of 4 ms in between.
    let slow = sim::DeviceProfile::constant_service("30s", 1, 1000).unwrap();
    let text = "[a]\nioengine=psync\nrw=randread\nbs=4k\nsize=1m\n";
    let (r, audit) = sim_on(text, slow, None).unwrap();
    assert_eq!(r.jobs[0].read.io_ops, 256);
    assert!(audit.events < 100_000, "{} events", audit.events);
}

#[test]
fn more_threads_or_requests_than_the_simulator_holds_are_refused_by_name() {
    // numjobs=1024 took 476 MB.
    let e = sim("[many]\nrw=randread\nnumjobs=300\nruntime=1\n", None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "job 'many' (line 1): more than 256 threads (jobs times numjobs): the simulator's bound, each holding 0.5 MB of latency histograms"
    );
    let e = sim(
        "[deep]\nioengine=libaio\niodepth=4096\nrw=randread\nnumjobs=65\nruntime=1\n",
        None,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "job 'deep' (line 1): more than 262144 requests in flight over all threads (the sum of iodepth): the simulator's bound"
    );
}

/// Issue 12 item 6, the rest of it: with two jobs of different lengths, the
/// short one was divided by the long one's window (fio divides each job by
/// its own runtime: stat.c `show_ddir_status`).
#[test]
fn a_size_bounded_job_beside_a_longer_one_is_divided_by_its_own_run_time() {
    let text = "[short]\nioengine=psync\nrw=randread\nbs=4k\nsize=4m\ncpus_allowed=0\n\
                [long]\nioengine=psync\nrw=randread\nbs=4k\nruntime=200ms\ntime_based\ncpus_allowed=1\n";
    let (r, _) = sim(text, None).unwrap();
    // The long job's last read, issued before 200 ms, ends the window.
    assert!(
        r.duration_ns >= 200 * MS && r.duration_ns < 201 * MS,
        "{}",
        r.duration_ns
    );
    let short = &r.jobs[0];
    assert_eq!(short.read.io_bytes, 4 << 20);
    let own = short.read.run_ns.expect("the short job's own run time");
    // About 10 us per 4 KiB psync read: 1024 of them take about 10 ms.
    assert!(own > 5 * MS && own < 50 * MS, "{own}");
    let iops = r.iops(&short.read);
    let expect = 1024.0 / (own as f64 / 1e9);
    assert!((iops - expect).abs() < 1.0, "{iops} vs {expect}");
    // The long job ran the whole window: divided by it.
    assert_eq!(r.jobs[1].read.run_ns, None);
    let text_out = report::text::render(&r);
    assert!(
        text_out.contains(&format!("(4096KiB/{}msec)", own / MS)),
        "{text_out}"
    );
}
