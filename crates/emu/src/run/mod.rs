//! One emulated run of fio jobs: checks the jobs and places the threads
//! ([`place`]), starts the device and the driver, then the job threads
//! ([`spawn`]), cuts the measured window ([`window`]) under the stall
//! watchdog ([`stall`]), and gathers a [`RunReport`] ([`report`]) and an
//! [`Audit`].

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

use ::report::RunReport;
use jobs::Job;

use crate::backend::Access;
use crate::config::{DeviceConfig, DriverConfig, EmuConfig, Recording};
use crate::device::Device;
use crate::driver::Driver;
use crate::error::EmuError;
use crate::queue::QueuePair;
use crate::run::place::Placement;
use crate::run::report::Finished;
use crate::run::shared::Running;
use crate::run::stall::StallWatch;
use crate::sys::Clock;

mod audit;
mod claim;
mod place;
mod report;
mod shared;
mod spawn;
mod stall;
mod target;
mod window;

pub use audit::Audit;
pub use claim::claim_first;
pub use target::{choose as choose_target, uring_emulated, StandIn, Target, STAND_IN};

pub fn run(jobs: &[Job], cfg: &EmuConfig) -> Result<RunReport, EmuError> {
    run_audited(jobs, cfg).map(|(r, _)| r)
}

pub fn run_audited(jobs: &[Job], cfg: &EmuConfig) -> Result<(RunReport, Audit), EmuError> {
    if cfg.completion == host::poll::Mode::Central {
        // UnICom's poller is a kernel thread the simulator models; this
        // driver has none (issue 40): refused, not run as interrupts under
        // its name (a host profile reaches here without the CLI's check).
        return Err(EmuError::Config(
            "completion central: UnICom's central poller is simulated only (sim), not applied by the emulator".into(),
        ));
    }
    let jobs = &target::uring_jobs(jobs, cfg)?;
    let plan: Placement = place::place(jobs, cfg)?;
    // Refused before a file is laid out (the device builds its own).
    policy::build(&cfg.policy).map_err(|e| EmuError::Config(e.to_string()))?;
    let mut cpus = plan.cores.clone();
    cpus.push(plan.device_cpu);
    cpus.sort_unstable();
    let claims = claim::claim(&cpus);
    let contention = claims.warning();
    if let (Some(say), Some(w)) = (cfg.say, &contention) {
        say(w);
    }
    let cq_entries = cfg.cq_entries.unwrap_or(cfg.queue_depth);
    let queues: Vec<Arc<QueuePair>> = plan
        .cores
        .iter()
        .map(|&c| Arc::new(QueuePair::new(c, cfg.queue_depth, cq_entries)))
        .chain(
            plan.poll_cores
                .iter()
                .map(|&c| Arc::new(QueuePair::new_polled(c, cfg.queue_depth, cq_entries))),
        )
        .collect();
    let tags: u32 = queues.iter().map(|q| q.tags() as u32).sum();
    let access = Access {
        writes: jobs.iter().any(|j| j.rw.writes()),
        say: cfg.say,
    };
    let opened = plan
        .backend
        .open_with(plan.need, tags, access)
        .map_err(EmuError::Backend)?;
    let specs = place::worker_specs(jobs, opened.size, cfg)?;

    let clock = Clock::new();
    let recording = Recording::default();
    let device = Device::start(
        &DeviceConfig {
            cpu: plan.device_cpu,
            policy: cfg.policy.clone(),
            irq_delivery: cfg.irq_delivery,
            recording: recording.clone(),
        },
        clock,
        opened.backend,
        queues.clone(),
    )?;
    let backend = device.describe().to_string();
    let waiters: Vec<usize> = specs
        .iter()
        .map(|s| plan.queue_of(s.owner as usize))
        .collect();
    let mut driver = Driver::start(
        &DriverConfig {
            delivery: cfg.delivery,
            realtime_handler: cfg.realtime_handler,
            handler_delay: 0,
            recording: recording.clone(),
            block: cfg.block.clone(),
        },
        clock,
        queues,
        &waiters,
    )?;
    let r = Running {
        clock,
        abort: Arc::new(AtomicBool::new(false)),
        finished: Arc::new(AtomicUsize::new(0)),
        t0: Arc::new(std::sync::atomic::AtomicU64::new(0)),
        exited: specs.iter().map(|_| AtomicBool::new(false)).collect(),
        driver: &driver,
        device: &device,
        recording,
    };
    let start = Arc::new(Barrier::new(specs.len() + 1));
    let workers = spawn::workers(&r, &plan, &specs, &start, cfg.boost, cfg.uring)?;

    let t0 = clock.now();
    r.t0.store(t0, Ordering::Release);
    let opened = window::open_at_start(&r, &specs, t0);
    start.wait();
    let limit = match cfg.stall_timeout {
        Some(t) => stall::Limit {
            total: t,
            why: "stall_timeout".into(),
        },
        None => stall::limit(&specs, &plan.backend),
    };
    let mut stall = StallWatch::new(&r, limit, &specs);
    let window = window::watch(&r, &specs, &workers, t0, opened, &mut stall, &|| {
        device.hurry()
    });
    // Every job has stopped issuing: what is still in flight is not
    // measured, and need not wait out a slow null device.
    device.hurry();
    let results = spawn::join_all(workers, &r, &mut stall);
    // Every request is delivered (or the run failed): the device stops
    // first, then the handlers, once they have handled what is pending.
    let device = device.stop()?;
    driver.halt();
    let window = window?;
    let results = results?;

    let audit = Audit {
        submitted: results.iter().map(|w| w.submitted).sum(),
        device: device.stats,
        handlers: driver.counts(),
        consumed: results.iter().map(|w| w.consumed).sum(),
        tag_waits: results.iter().map(|w| w.tag_waits).sum(),
        verified: results.iter().map(|w| w.verified).sum(),
        mismatches: results.iter().map(|w| w.mismatches).sum(),
        block: driver.block().map(|b| b.count()),
    };
    let block_note = driver.block().map(|b| report::block_note(b, &specs));
    let report = report::run_report(Finished {
        cfg,
        plan: &plan,
        specs: &specs,
        results: &results,
        window: &window,
        delivery: &driver.delivery_latency(),
        gaps: &device.gaps,
        audit: &audit,
        backend,
        realtime: driver.realtime(),
        contention,
    });
    let mut report = report;
    report.notes.extend(block_note);
    drop(claims);
    Ok((report, audit))
}
