//! Where the host model charges Linux's costs (issue 13, item 6): a switch
//! between processes against one within a process, the completion's part
//! in the taking thread's context, and PREEMPT_VOLUNTARY.

mod common;

use common::{lat_us, summary};
use policy::{PolicySpec, MS, US};
use report::RunReport;
use sim::{HostProfile, Preemption};

fn run(text: &str, host: HostProfile) -> RunReport {
    let jobs = jobs::parse_str(text, "t.fio", &|_| None).unwrap().jobs;
    let mut cfg = common::config("optane", PolicySpec::named("default"), 50 * MS, 1);
    cfg.host = host;
    let (r, audit) = sim::simulate_audited(&jobs, &cfg, &mut |_, _| {}).unwrap();
    assert_eq!(audit.duplicates, 0, "{audit:?}");
    assert_eq!(
        audit.submitted,
        audit.consumed + audit.stranded,
        "{audit:?}"
    );
    r
}

fn host() -> HostProfile {
    HostProfile::load("xeon-e5-2660v4").unwrap()
}

/// Kernel time per I/O of all jobs, ns.
fn sys_per_io(r: &RunReport) -> f64 {
    let sys: u64 = r.jobs.iter().map(|j| j.sys_ns).sum();
    let ops: u64 = r.jobs.iter().map(|j| j.read.io_ops).sum();
    sys as f64 / ops as f64
}

const TWO_READERS: &str = "[global]\nioengine=psync\nrw=randread\nbs=4k\nsize=1g\n\
                           cpus_allowed=0\nruntime=1\ntime_based\nnumjobs=2\n[r]\n";

#[test]
fn a_switch_between_processes_costs_process_switch_and_between_threads_does_not() {
    let mut h = host();
    h.context_switch = US;
    h.process_switch = Some(11 * US);
    let processes = run(TWO_READERS, h.clone());
    let threads = run(&TWO_READERS.replace("[r]", "[r]\nthread"), h);
    // Two blocking readers on one core: nearly every switch is to the other
    // reader, so the kernel time per I/O differs by about the 10 us the two
    // switches differ by.
    let extra = sys_per_io(&processes) - sys_per_io(&threads);
    assert!(
        (7_000.0..=10_500.0).contains(&extra),
        "{extra} ns\n{}\n{}",
        summary(&processes),
        summary(&threads)
    );
}

#[test]
fn without_process_switch_a_process_switch_costs_context_switch() {
    let mut h = host();
    h.process_switch = None;
    assert_eq!(h.process_switch(), h.context_switch);
    let processes = run(TWO_READERS, h.clone());
    let threads = run(&TWO_READERS.replace("[r]", "[r]\nthread"), h);
    let (a, b) = (sys_per_io(&processes), sys_per_io(&threads));
    assert!((a / b - 1.0).abs() < 0.02, "{a} vs {b}");
}

const ONE_READER: &str = "[r]\nioengine=psync\nrw=randread\nbs=4k\nsize=1g\n\
                          cpus_allowed=0\nruntime=1\ntime_based\n";

#[test]
fn the_takers_part_of_a_completion_is_its_kernel_time_and_its_latency() {
    let mut h = host();
    h.reap_per_completion = 0;
    let without = run(ONE_READER, h.clone());
    h.reap_per_completion = 5 * US;
    let with = run(ONE_READER, h);
    let (a, b) = (lat_us(&without, "r"), lat_us(&with, "r"));
    assert!((b - a - 5.0).abs() < 0.3, "{a} -> {b} us");
    let extra = sys_per_io(&with) - sys_per_io(&without);
    assert!((extra - 5_000.0).abs() < 300.0, "{extra} ns");
    // Not the interrupt's: the core's interrupt time per interrupt stays.
    let irq = |r: &RunReport| {
        r.cores.iter().map(|c| c.irq).sum::<f64>() * r.duration_ns as f64 / r.interrupts as f64
    };
    assert!((irq(&with) - irq(&without)).abs() < 20.0);
}

/// A blocking reader beside a libaio job whose completion calls are long
/// kernel paths (64 completions of 50 us each per io_getevents: the copy
/// of the events has no preemption point).
const LONG_KERNEL_PATHS: &str = "[global]\nrw=randread\nbs=4k\nsize=1g\ncpus_allowed=0\n\
    runtime=1\ntime_based\n[sync]\nioengine=psync\n[async]\nioengine=libaio\niodepth=64\n\
    iodepth_batch_submit=64\niodepth_batch_complete_min=64\n";

#[test]
fn under_preempt_voluntary_a_woken_reader_waits_for_the_kernel_path_to_end() {
    let mut h = host();
    h.reap_per_completion = 50 * US;
    h.preemption = Preemption::Full;
    let full = run(LONG_KERNEL_PATHS, h.clone());
    h.preemption = Preemption::Voluntary;
    let voluntary = run(LONG_KERNEL_PATHS, h);
    // Under full preemption the reader takes the CPU when its interrupt
    // returns; under voluntary it waits for the completion call (up to
    // 3.2 ms) when it finds one running.
    let (f, v) = (lat_us(&full, "sync"), lat_us(&voluntary, "sync"));
    assert!(
        v > 1.3 * f,
        "full {f} us, voluntary {v} us\n{}\n{}",
        summary(&full),
        summary(&voluntary)
    );
}

/// The same pair with long submit calls instead: 64 requests of 20 us each
/// per io_submit.
const LONG_SUBMIT_CALLS: &str = "[global]\nrw=randread\nbs=4k\nsize=1g\ncpus_allowed=0\n\
    runtime=1\ntime_based\n[sync]\nioengine=psync\n[async]\nioengine=libaio\niodepth=64\n\
    iodepth_batch_submit=64\niodepth_batch_complete_min=64\n";

#[test]
fn under_preempt_voluntary_a_submit_call_yields_at_each_request() {
    let mut h = host();
    h.submit_per_request = 20 * US;
    h.preemption = Preemption::Full;
    let full = run(LONG_SUBMIT_CALLS, h.clone());
    h.preemption = Preemption::Voluntary;
    let voluntary = run(LONG_SUBMIT_CALLS, h);
    // Each request of the call passes a preemption point (its allocation's
    // might_sleep): the woken reader waits for at most one request's 20 us,
    // not for the call's 1.28 ms.
    let (f, v) = (lat_us(&full, "sync"), lat_us(&voluntary, "sync"));
    assert!(
        v < f + 20.0,
        "full {f} us, voluntary {v} us\n{}\n{}",
        summary(&full),
        summary(&voluntary)
    );
}

#[test]
fn a_submit_call_of_64_reaches_the_device_16_at_a_time() {
    let mut h = host();
    h.submit_per_request = 20 * US;
    let r = run(
        "[a]\nioengine=libaio\nrw=randread\nbs=4k\nsize=1g\ncpus_allowed=0\nruntime=1\n\
         time_based\niodepth=64\niodepth_batch_submit=64\niodepth_batch_complete_min=64\n",
        h,
    );
    let parts = r.io_path.as_ref().expect("io_path").jobs[0]
        .parts
        .expect("parts");
    // From the call's start to the doorbell: the plug flushes every 16
    // requests, so the four quarters wait 16, 32, 48 and 64 requests'
    // 20 us (mean 800 us, and the handlers of the first quarters'
    // completions cut in), where one flush at the call's end is 1,280 us.
    let us = parts.submit / 1e3;
    assert!((780.0..=880.0).contains(&us), "{us} us\n{}", summary(&r));
}
