//! Running the shipped examples through the simulator.
#![allow(dead_code)]

use policy::{Nanos, PolicySpec, MS};
use report::RunReport;
use sim::{Audit, DeviceProfile, HostProfile, SimConfig};

pub fn example(name: &str) -> Vec<jobs::Job> {
    let path = format!("{}/../../examples/{name}.fio", env!("CARGO_MANIFEST_DIR"));
    jobs::parse_file(std::path::Path::new(&path))
        .unwrap_or_else(|e| panic!("{e}"))
        .jobs
}

pub fn config(device: &str, policy: PolicySpec, runtime: Nanos, seed: u64) -> SimConfig {
    SimConfig {
        device: DeviceProfile::load(device).unwrap(),
        host: HostProfile::load("xeon-e5-2660v4").unwrap(),
        policy,
        seed,
        runtime: Some(runtime),
    }
}

pub fn run_audited(name: &str, device: &str, policy: &str, runtime: Nanos) -> (RunReport, Audit) {
    run_spec(name, device, PolicySpec::named(policy), runtime)
}

pub fn run_spec(name: &str, device: &str, spec: PolicySpec, runtime: Nanos) -> (RunReport, Audit) {
    let cfg = config(device, spec, runtime, 1);
    sim::simulate_audited(&example(name), &cfg, &mut |_, _| {}).unwrap()
}

pub fn run(name: &str, policy: &str) -> RunReport {
    run_audited(name, "optane", policy, 100 * MS).0
}

/// Mean completion latency of the jobs named `job`, in us.
pub fn lat_us(r: &RunReport, job: &str) -> f64 {
    let js: Vec<_> = r.jobs.iter().filter(|j| j.name == job).collect();
    let n: u64 = js.iter().map(|j| j.read.io_ops).sum();
    js.iter()
        .map(|j| j.read.clat.mean * j.read.io_ops as f64)
        .sum::<f64>()
        / n as f64
        / 1e3
}

pub fn iops(r: &RunReport, job: &str) -> f64 {
    let n: u64 = r
        .jobs
        .iter()
        .filter(|j| j.name == job)
        .map(|j| j.read.io_ops + j.write.io_ops)
        .sum();
    n as f64 / (r.duration_ns as f64 / 1e9)
}

pub fn summary(r: &RunReport) -> String {
    let mut s = format!(
        "{:9} irq/s={:>8.0} c/irq={:5.2} ctx={:>7} iops={:>8.0}",
        r.policy.name,
        r.interrupts_per_sec(),
        r.completions_per_interrupt(),
        r.context_switches,
        r.total_iops()
    );
    let mut names: Vec<&str> = r.jobs.iter().map(|j| j.name.as_str()).collect();
    names.dedup();
    for n in names {
        s += &format!(" | {n}: {:.0} iops {:.2}us", iops(r, n), lat_us(r, n));
    }
    for c in &r.cores {
        s += &format!(
            " | cpu{} u={:.2} k={:.2} i={:.2} idle={:.2}",
            c.core, c.user, c.kernel, c.irq, c.idle
        );
    }
    s
}

/// The simulator's invariants: every request (and every LD piece)
/// submitted, serviced, delivered and consumed exactly once, no thread left
/// unfinished, and every nanosecond of every used core accounted.
pub fn check_exactly_once(a: &Audit) {
    assert!(a.submitted > 0, "{a:?}");
    assert_eq!(a.duplicates, 0, "{a:?}");
    assert_eq!(a.stranded, 0, "{a:?}");
    assert_eq!(a.unfinished_threads, 0, "{a:?}");
    assert_eq!(a.submitted, a.serviced, "{a:?}");
    assert_eq!(a.submitted, a.delivered, "{a:?}");
    assert_eq!(a.submitted, a.consumed, "{a:?}");
    assert_eq!(a.pieces_submitted, a.pieces_serviced, "{a:?}");
    assert_eq!(a.pieces_submitted, a.pieces_delivered, "{a:?}");
    for &(core, ns) in &a.core_accounted_ns {
        assert_eq!(ns, a.window_ns, "core {core}: {a:?}");
    }
}

/// The job named `name` in the report.
pub fn job<'a>(r: &'a RunReport, name: &str) -> &'a report::JobReport {
    r.jobs.iter().find(|j| j.name == name).unwrap()
}

/// The job's CPU (user + system) as a share of the run, per thread.
pub fn cpu(r: &RunReport, name: &str) -> f64 {
    let j = job(r, name);
    (j.usr_ns + j.sys_ns) as f64 / r.duration_ns as f64
}

/// The run's note that starts with `prefix`.
pub fn note<'a>(r: &'a RunReport, prefix: &str) -> &'a str {
    r.notes
        .iter()
        .find(|n| n.starts_with(prefix))
        .unwrap_or_else(|| panic!("no note '{prefix}': {:?}", r.notes))
}
