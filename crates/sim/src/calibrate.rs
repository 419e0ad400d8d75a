//! The host model against the paper's costs (issue 13, item 6): each target
//! the paper gives, its source, and what the simulator makes of it with the
//! shipped profiles. This is the check a fit would minimise; it runs the
//! model as it stands, fits nothing, and says so (`cinterrupts calibrate`).

use policy::{Nanos, PolicySpec, MS};
use report::RunReport;

use crate::{simulate, DeviceProfile, HostProfile, SimConfig, SimError};

/// One target: the paper's value, its source, and the model's.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    pub what: &'static str,
    pub source: &'static str,
    pub unit: &'static str,
    pub paper: f64,
    pub model: f64,
}

impl Target {
    /// model / paper.
    pub fn ratio(&self) -> f64 {
        self.model / self.paper
    }
}

const SYNC_READ: &str = include_str!("../../../examples/sync-read.fio");
const ASYNC_256: &str = include_str!("../../../examples/async-256.fio");
const STORM: &str = include_str!("../../../examples/storm.fio");
/// The authors' mixed workload (fig5/rand_mix.fio's options) with their
/// fig5/test.sh command line, Section 3.3's workload that Fig 21 reuses.
const RAND_MIX: &str = include_str!("../../repro/artifact/fig5/rand_mix.fio");
const FIG5_ARGS: &[&str] = &[
    "blocksize=4K",
    "iodepth=16",
    "iodepth_batch_submit=1",
    "iodepth_batch_complete_min=1",
    "iodepth_batch_complete_max=16",
    "default_marks=basis",
];
const SYNC: &str = "raw=random-read-psync";

fn run(
    text: &str,
    args: &[&str],
    device: &str,
    policy: PolicySpec,
    runtime: Nanos,
) -> Result<RunReport, SimError> {
    let mut cmd = jobs::CommandLine::default();
    for a in args {
        cmd.push_arg(a);
    }
    let jobs = jobs::parse_str_with(text, "calibrate.fio", &|_| None, &cmd)
        .map_err(|e| SimError::Config(e.to_string()))?
        .jobs;
    let config = SimConfig {
        device: DeviceProfile::load(device).map_err(|e| SimError::Config(e.to_string()))?,
        host: HostProfile::load("xeon-e5-2660v4").map_err(|e| SimError::Config(e.to_string()))?,
        policy,
        seed: 1,
        runtime: Some(runtime),
    };
    simulate(&jobs, &config, &mut |_, _| {})
}

fn lat_us(r: &RunReport, job: &str) -> f64 {
    let (mut n, mut sum) = (0u64, 0.0);
    for j in r.jobs.iter().filter(|j| j.name == job) {
        n += j.read.io_ops;
        sum += j.read.clat.mean * j.read.io_ops as f64;
    }
    sum / n.max(1) as f64 / 1e3
}

fn cpu_share(r: &RunReport, job: &str) -> f64 {
    let ns: u64 = r
        .jobs
        .iter()
        .filter(|j| j.name == job)
        .map(|j| j.usr_ns + j.sys_ns)
        .sum();
    100.0 * r.share_of_window(ns)
}

/// The busiest core's interrupt time over its busy time.
fn irq_share(r: &RunReport) -> f64 {
    r.cores
        .iter()
        .filter(|c| c.idle < 1.0)
        .map(|c| 100.0 * c.irq / (1.0 - c.idle))
        .fold(0.0, f64::max)
}

/// Interrupt CPU per interrupt, in cycles at the host's clock.
fn cycles_per_irq(r: &RunReport, ghz: f64) -> f64 {
    let irq_ns: f64 = r.cores.iter().map(|c| c.irq * r.duration_ns as f64).sum();
    irq_ns * ghz / r.interrupts.max(1) as f64
}

/// Every target, run with the shipped profiles (seed 1, `runtime` each).
pub fn targets(runtime: Nanos) -> Result<Vec<Target>, SimError> {
    let ghz = HostProfile::load("xeon-e5-2660v4")
        .map_err(|e| SimError::Config(e.to_string()))?
        .ghz;
    let default = || PolicySpec::named("default");
    let optane_sync = run(SYNC_READ, &[], "optane", default(), runtime)?;
    let p3700_sync = run(SYNC_READ, &[], "p3700", default(), runtime)?;
    let async256 = run(ASYNC_256, &[], "optane", default(), runtime)?;
    let storm = run(STORM, &[], "optane", PolicySpec::named("cint"), runtime)?;
    let mix_default = run(RAND_MIX, FIG5_ARGS, "optane", default(), runtime)?;
    let adaptive = PolicySpec::from_artifact_name("alpha-6-32")
        .map_err(|e| SimError::Config(e.to_string()))?;
    let mix_adaptive = run(RAND_MIX, FIG5_ARGS, "optane", adaptive, runtime)?;
    Ok(vec![
        Target {
            what: "QD1 4 KiB read, Optane, default",
            source: "TOS Table 2",
            unit: "us",
            paper: 10.0,
            model: lat_us(&optane_sync, "sync-read"),
        },
        Target {
            what: "QD1 4 KiB read, P3700, default",
            source: "TOS Table 2",
            unit: "us",
            paper: 80.0,
            model: lat_us(&p3700_sync, "sync-read"),
        },
        Target {
            what: "CPU per interrupt, libaio iodepth 256",
            source: "TOS 2, Fig 3 (~1,500 cycles at 2.0 GHz)",
            unit: "cycles",
            paper: 1500.0,
            model: cycles_per_irq(&async256, ghz),
        },
        Target {
            what: "interrupt share of the core's busy time, libaio iodepth 256",
            source: "TOS 2, Fig 3 (up to 24%)",
            unit: "%",
            paper: 24.0,
            model: irq_share(&async256),
        },
        Target {
            what: "4 blocking pread processes, unprotected: interrupts/s",
            source: "TOS 4.3, Fig 17 (~150K/s, the core saturated)",
            unit: "K/s",
            paper: 150.0,
            model: storm.interrupts_per_sec() / 1e3,
        },
        Target {
            what: "mixed iodepth 16, default: the sync thread's CPU share",
            source: "TOS 5.3, Fig 21 (~50%)",
            unit: "%",
            paper: 50.0,
            model: cpu_share(&mix_default, SYNC),
        },
        Target {
            what: "mixed iodepth 16, adaptive: the sync thread's CPU share",
            source: "TOS 5.3, Fig 21 (23%)",
            unit: "%",
            paper: 23.0,
            model: cpu_share(&mix_adaptive, SYNC),
        },
    ])
}

/// The default run length of [`targets`]: long enough for every rate to
/// settle (the shortest `reproduce` run is 30 ms).
pub const RUNTIME: Nanos = 200 * MS;
