//! The entry point: a workload, profiles and a policy in; a report out.

use jobs::Job;
use policy::catalogue::{self, PolicySpec};
use policy::Nanos;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use report::{CoreUtil, DirReport, JobReport, LatencyStats, Mode, PolicyInfo, RunReport};

use crate::cpu::{Cpu, EntitySpec};
use crate::events::{Ev, Events};
use crate::iopath::Keep;
use crate::nvme::{Controller, Device};
use crate::workload;
use crate::world::{Audit, DirStats, Parts, Thread, World};
use crate::{DeviceProfile, HostProfile, SimError};

/// What one simulation runs on.
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub device: DeviceProfile,
    pub host: HostProfile,
    /// Where `delta` or `thr` is not given and the strategy takes them, the
    /// device profile's tuned values are used (TOS 5.2: 6 us on Optane,
    /// 15 us on P3700).
    pub policy: PolicySpec,
    /// Seeds every random draw; the same seed gives the same report.
    pub seed: u64,
    /// Overrides every job's `runtime` (fio's `--runtime`): it caps a
    /// size-bounded job and does not make it time-based.
    pub runtime: Option<Nanos>,
}

/// Runs `jobs` to completion in virtual time. `progress(now, end)` is called
/// now and then with the virtual time reached and the time the run will end
/// (0 when the run is bounded by amounts, not time).
pub fn simulate(
    jobs: &[Job],
    config: &SimConfig,
    progress: &mut dyn FnMut(Nanos, Nanos),
) -> Result<RunReport, SimError> {
    simulate_audited(jobs, config, progress).map(|(report, _)| report)
}

/// [`simulate`], also returning the request audit: every request submitted,
/// serviced, delivered and consumed exactly once.
pub fn simulate_audited(
    jobs: &[Job],
    config: &SimConfig,
    progress: &mut dyn FnMut(Nanos, Nanos),
) -> Result<(RunReport, Audit), SimError> {
    let spec = service::with_device_defaults(config.policy.clone(), &config.device);
    let keep = keep_records();
    let mut world = run_jobs(jobs, config, &spec, keep, None, progress)?;
    if let Some(cuts) = world.path().tail_cuts() {
        // The records kept on a guess miss one the slowest 1% needs: the
        // same run again (it is deterministic), keeping from the cuts the
        // first one found (the first world gone before the second is made).
        drop(world);
        world = run_jobs(jobs, config, &spec, keep, Some(&cuts), progress)?;
        world.count_tail_rerun();
    }
    let mut report = report(&world, config, &spec);
    let audit = world.audit().clone();
    if report.completed_ios() == 0 {
        return Err(SimError::NothingMeasured {
            window: human(report.duration_ns),
            in_flight: world.in_flight_at_end(),
        });
    }
    if let Some(null) = jobs.iter().find(|j| j.ioengine == jobs::Engine::Null) {
        // fio's null engine completes every request at once with no device
        // (engines/null.c); the simulator has one device per run.
        report.notes.push(format!(
            "job '{}': ioengine=null: fio's null engine has no device; its requests are simulated on the device profile '{}' (the emulator runs them on a null device with no latency)",
            null.name, config.device.name
        ));
    }
    notes(&world, config, &audit, &mut report);
    write_records(&world, &mut report);
    Ok((report, audit))
}

/// Builds the world for `jobs` and runs it, keeping the request records
/// for the slowest 1% as `keep` says, or from the `cuts` a first run found
/// ([`crate::iopath::Tracker::keep`]).
fn run_jobs(
    jobs: &[Job],
    config: &SimConfig,
    spec: &PolicySpec,
    keep: Keep,
    cuts: Option<&[usize]>,
    progress: &mut dyn FnMut(Nanos, Nanos),
) -> Result<World, SimError> {
    let mut world = build(jobs, config, spec)?;
    world.keep_records(keep, cuts);
    // Serial groups (stonewall, wait_for) end on their own bounds: a later
    // group's end is not known until it starts.
    let serial = world.threads().iter().any(|t| t.spec.serial);
    let planned_end = world
        .threads()
        .iter()
        .map(|t| t.spec.stop_at)
        .collect::<Option<Vec<_>>>()
        .and_then(|v| v.into_iter().max())
        .filter(|_| !serial);
    if let Some(end) = planned_end {
        world.end_at(end);
    }
    world.run(planned_end.unwrap_or(0), progress);
    if world.fell_behind() {
        return Err(SimError::TooSlow {
            at: human(world.now()),
        });
    }
    world.count_records();
    Ok(world)
}

/// Builds the world for application threads and runs them for `runtime`,
/// keeping the request records as [`run_jobs`] does.
fn run_threads(
    threads: Vec<apps::PlacedThread>,
    config: &SimConfig,
    spec: &PolicySpec,
    (runtime, capped): (Nanos, bool),
    keep: Keep,
    cuts: Option<&[usize]>,
    progress: &mut dyn FnMut(Nanos, Nanos),
) -> Result<World, SimError> {
    let (specs, drivers, apps) =
        crate::world::app::place(threads, &config.host, config.device.queue_depth, runtime)?;
    let mut world = assemble(specs, config, spec)?;
    world.keep_records(keep, cuts);
    if capped {
        world.cap_records(crate::iopath::MAX_KEPT);
    }
    world.attach_apps(drivers, apps);
    world.end_at(runtime);
    world.run(runtime, progress);
    if world.fell_behind() {
        return Err(SimError::TooSlow {
            at: human(world.now()),
        });
    }
    if let Some(why) = world.take_broken() {
        return Err(SimError::Config(why));
    }
    world.count_records();
    Ok(world)
}

/// Runs application threads ([`apps::PlacedThread`], issue 16), each
/// pinned to its core and driven by its model, for `config.runtime` of
/// virtual time (required: a model need not end on its own), or less if
/// every thread finishes first. The report's `apps` holds the operations
/// per instance and kind and each core's window; its `jobs` one entry per
/// thread with its I/Os.
///
/// The threads run once, so every request record is kept for the slowest
/// 1% (memory that grows with the run); [`simulate_app_with`] keeps a few
/// percent.
pub fn simulate_app(
    threads: Vec<apps::PlacedThread>,
    config: &SimConfig,
    progress: &mut dyn FnMut(Nanos, Nanos),
) -> Result<(RunReport, Audit), SimError> {
    app_run(threads, None, Keep::All, config, false, progress)
}

/// [`simulate_app`] with the oracle floor of the device's posts in the
/// window beside the run (`RunReport::oracle`): a trace's replay
/// (`crate::replay`; issue 40 item 4). The slowest 1%'s records are kept
/// on a guess (a replay's stream may be as long as a dataset), the run
/// made again on `again`'s threads when it falls short, or, without
/// `again`, a note says so.
pub(crate) fn simulate_app_floored(
    threads: Vec<apps::PlacedThread>,
    again: Option<&mut dyn FnMut() -> Result<Vec<apps::PlacedThread>, String>>,
    config: &SimConfig,
    progress: &mut dyn FnMut(Nanos, Nanos),
) -> Result<(RunReport, Audit), SimError> {
    app_run(threads, again, keep_records(), config, true, progress)
}

/// [`simulate_app`] on `threads`, with `again` to make the same threads
/// once more (a file's with its seed): the slowest 1%'s request records
/// are kept on a guess, and the run made again on `again`'s threads when
/// it falls short, as a job file's run is ([`simulate_audited`]).
/// `again`'s error is the run's.
pub fn simulate_app_with(
    threads: Vec<apps::PlacedThread>,
    again: &mut dyn FnMut() -> Result<Vec<apps::PlacedThread>, String>,
    config: &SimConfig,
    progress: &mut dyn FnMut(Nanos, Nanos),
) -> Result<(RunReport, Audit), SimError> {
    app_run(
        threads,
        Some(again),
        keep_records(),
        config,
        false,
        progress,
    )
}

/// Every record when [`RECORDS_ENV`] is to get them, else a guess.
fn keep_records() -> Keep {
    match std::env::var_os(RECORDS_ENV) {
        Some(_) => Keep::All,
        None => Keep::Guess,
    }
}

/// `again`: `None` only with [`Keep::All`], which never runs twice.
fn app_run(
    threads: Vec<apps::PlacedThread>,
    again: Option<&mut dyn FnMut() -> Result<Vec<apps::PlacedThread>, String>>,
    keep: Keep,
    config: &SimConfig,
    oracle: bool,
    progress: &mut dyn FnMut(Nanos, Nanos),
) -> Result<(RunReport, Audit), SimError> {
    let Some(runtime) = config.runtime else {
        return Err(SimError::Config(
            "an application run needs a runtime (a model need not end on its own)".into(),
        ));
    };
    let spec = service::with_device_defaults(config.policy.clone(), &config.device);
    // A trace replay (the oracle's run) keeps a bounded number of records.
    let run = (runtime, oracle);
    let mut world = run_threads(threads, config, &spec, run, keep, None, progress)?;
    if let (Some(cuts), Some(again)) = (world.path().tail_cuts(), again) {
        // As for a job file's run (simulate_audited).
        drop(world);
        let threads = again().map_err(SimError::Config)?;
        world = run_threads(threads, config, &spec, run, keep, Some(&cuts), progress)?;
        world.count_tail_rerun();
    }
    let short = world.path().tail_cuts().is_some();
    let mut report = report(&world, config, &spec);
    // The models mark their own I/Os: no kernel's defaults apply.
    report.default_marks = None;
    report.apps = world.apps_report();
    if oracle {
        let (completions, floor) = world.nvme().oracle_floor();
        report.oracle = Some(report::OracleFloor::new(
            crate::nvme::ORACLE_BUDGET,
            completions,
            floor,
            report.interrupts,
        ));
    }
    let audit = world.audit().clone();
    let ops: u64 = report.apps.iter().flat_map(|a| &a.ops).map(|o| o.ops).sum();
    if ops == 0 && report.completed_ios() == 0 {
        return Err(SimError::NothingMeasured {
            window: human(report.duration_ns),
            in_flight: world.in_flight_at_end(),
        });
    }
    if short {
        report.notes.push(
            "the slowest 1%'s io_path parts are left out: the request records kept (at most 2^21 over all threads for a trace replay) fell short of them".into(),
        );
    }
    if audit.unfinished_threads > 0 {
        report.notes.push(format!(
            "{} application thread(s) had not finished when nothing was left to happen (parked with no one left to wake them, or waiting for more I/Os than they had out)",
            audit.unfinished_threads
        ));
    }
    if audit.app_bad_wakes > 0 {
        report.notes.push(format!(
            "{} wake(s) named no thread of the waker's instance and were dropped",
            audit.app_bad_wakes
        ));
    }
    notes(&world, config, &audit, &mut report);
    write_records(&world, &mut report);
    Ok((report, audit))
}

/// The environment variable naming a file for every measured request's
/// parts (`iopath`; a diagnosis of one `sim` run at a time).
pub const RECORDS_ENV: &str = "CINTERRUPTS_IOPATH_RECORDS";

/// Writes the requests' parts where [`RECORDS_ENV`] says, if it is set; a
/// failure is a note, not an error (the run's figures stand).
fn write_records(w: &World, report: &mut RunReport) {
    let Some(path) = std::env::var_os(RECORDS_ENV) else {
        return;
    };
    if let Err(e) = std::fs::write(&path, w.path().records_csv()) {
        report.notes.push(format!(
            "{RECORDS_ENV}: could not write {}: {e}",
            std::path::Path::new(&path).display()
        ));
    }
}

/// The notes every run may carry: the block layer, the completion mode,
/// the journal, the wake-up rule, latencies off the histograms, requests
/// dropped at the end.
fn notes(world: &World, config: &SimConfig, audit: &Audit, report: &mut RunReport) {
    if world.has_block_layer() {
        report.notes.push(block_note(world, config, audit));
    }
    if world.completion_mode() != crate::Completion::Interrupt
        || world.threads().iter().any(|t| t.spec.job.hipri)
    {
        report.notes.push(completion_note(world));
    }
    if let Some(note) = journal_note(world) {
        report.notes.push(note);
    }
    if let Some(note) = world.uring_note() {
        report.notes.push(note);
    }
    if let Some((timeout, c)) = world.suspend_counts() {
        report.notes.push(format!(
            "irq suspension {} (a port of Linux 6.13's napi mechanism to the CQs; not in Linux for storage): {} interrupts held while masked, {} passes over a CQ by waiting calls took {} completions, {} resumes by a sleeping call, {} by the timer",
            human(timeout),
            c.held,
            c.passes,
            c.found,
            c.sleeps,
            c.expired
        ));
    }
    if let Some(note) = report.idle.as_ref().map(crate::idle::note) {
        report.notes.push(note);
    }
    if config.host.wakeup_rule != crate::Wakeup::Plain {
        report.notes.push(format!(
            "wake-up rule {} (wake-up granularity {} for {} cores)",
            config.host.wakeup_rule,
            human(host::cfs::wakeup_granularity(config.host.cores)),
            config.host.cores
        ));
    }
    if audit.clat_above_max > 0 {
        report.notes.push(format!(
            "{} completion latencies above {} were counted as {} (the histograms' top)",
            audit.clat_above_max,
            human(crate::world::CLAT_MAX),
            human(crate::world::CLAT_MAX)
        ));
    }
    if audit.stranded > 0 {
        report.notes.push(format!(
            "{} request(s) still in flight {} after the run's end (Linux's NVMe I/O timeout) were dropped, not counted",
            audit.stranded,
            human(crate::limits::MAX_SERVICE)
        ));
    }
}

fn build(jobs: &[Job], config: &SimConfig, spec: &PolicySpec) -> Result<World, SimError> {
    let threads = workload::threads(
        jobs,
        &config.host,
        config.device.queue_depth,
        config.runtime,
    )?;
    assemble(threads, config, spec)
}

/// The world for `threads`: queues, policies, cores, the device, the
/// journal when a thread fsyncs.
fn assemble(
    mut threads: Vec<workload::ThreadSpec>,
    config: &SimConfig,
    spec: &PolicySpec,
) -> Result<World, SimError> {
    let host = &config.host;
    let dev = &config.device;
    host::irq_suspend::refuse_with(host.completion, host.irq_suspend).map_err(SimError::Config)?;
    crate::world::refuse_sqpoll(host.irq_suspend, &threads).map_err(SimError::Config)?;
    let job_threads = threads.len();
    // The file system, when a job fsyncs: JBD2 joins the threads, on the
    // core of the first job that fsyncs (crate::world::journal).
    let every = |t: &workload::ThreadSpec| {
        if t.job.fsync > 0 {
            t.job.fsync
        } else {
            t.job.fdatasync
        }
    };
    let first_fsync = threads.iter().position(|t| every(t) > 0);
    if let Some(first) = first_fsync {
        let mut jbd2 = threads[first].clone();
        jbd2.job.name = "jbd2".into();
        jbd2.job.critical = host.jbd2_critical;
        jbd2.kthread = true;
        jbd2.uring = None;
        jbd2.after.clear();
        threads.push(jbd2);
    }
    // UnICom's central poller (crate::world::central): a kernel thread
    // after the jobs (JBD2, if any, stays last), on a core of its own when
    // one is free.
    let central = central_poller(&threads[..job_threads], config, spec)?;
    if let Some((poller, _)) = &central {
        threads.insert(job_threads, poller.clone());
    }
    // One SQ/CQ pair per core while the device has enough (blk-mq's map);
    // beyond that, cores share queues round-robin and the queue interrupts
    // its first core.
    let nq = host.cores.min(dev.queues).max(1);
    // Each queue's policy knows its vector (a per-vector plan reads it);
    // `feature09 --cd sync` becomes the blocking queues' vectors here.
    let resolved = crate::vectors::resolve(spec, &threads, nq).map_err(SimError::Config)?;
    let spec = resolved.as_ref().unwrap_or(spec);
    let policies = (0..nq)
        .map(|q| {
            catalogue::build_for_vector(spec, crate::vectors::of_queue(q))
                .map_err(|e| SimError::Config(e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    // One token per unit: the gate's depth is the device's internal
    // parallelism (the profile's `parallelism`, cited there).
    let nvme = Controller::new(
        Device::new(dev, config.seed),
        dev.queue_depth as usize,
        policies,
    );
    let mut cpu = Cpu::new(
        host,
        threads.iter().map(|t| EntitySpec {
            core: t.core as u32,
            process: t.process,
            kthread: t.kthread,
            critical: t.job.critical,
        }),
    );
    let mut world_threads = Vec::with_capacity(threads.len());
    let mut events = Events::new(
        host.cores as usize,
        threads.iter().map(|t| t.core as u32).collect(),
        nvme.irq_cores(),
    );
    let journal = first_fsync.map(|first| {
        let fsync_marks = |t: &workload::ThreadSpec| t.job.marks(jobs::IoKind::Fsync, 0, 1);
        let mut every_of: Vec<u32> = threads.iter().map(every).collect();
        let mut buffered: Vec<bool> = threads.iter().map(|t| !t.job.direct).collect();
        let mut marks: Vec<policy::Marks> = threads.iter().map(fsync_marks).collect();
        // JBD2 (last) fsyncs nothing, writes nothing buffered, and marks
        // its I/Os as the first job that fsyncs marks its fsyncs.
        *every_of.last_mut().expect("jbd2") = 0;
        *buffered.last_mut().expect("jbd2") = false;
        *marks.last_mut().expect("jbd2") = fsync_marks(&threads[first]);
        let jbd2 = (threads.len() - 1) as u32;
        events.push(
            crate::world::journal::COMMIT_INTERVAL,
            Ev::Commit { tid: jbd2 },
        );
        let critical: Vec<bool> = threads.iter().map(|t| t.job.critical).collect();
        crate::fs::FileSystem::new(host.journal, jbd2, every_of, buffered, marks, &critical)
    });
    for (i, t) in threads.into_iter().enumerate() {
        if i == job_threads && central.is_some() {
            // The poller starts with the first job and spins from then on.
            let start = world_threads
                .iter()
                .map(|t: &Thread| t.spec.start)
                .min()
                .unwrap_or(0);
            events.push(start, Ev::Start { tid: i as u32 });
            let rng = Pcg64Mcg::seed_from_u64(config.seed);
            let queue = t.core as u32 % nq;
            let mut th = Thread::new(t, queue, rng);
            th.program = &crate::world::central::Central;
            world_threads.push(th);
            continue;
        }
        if i >= job_threads {
            // JBD2 sleeps until the fsync path wakes it.
            let rng = Pcg64Mcg::seed_from_u64(config.seed);
            let queue = t.core as u32 % nq;
            let mut th = Thread::new(t, queue, rng);
            th.state = crate::world::TState::Blocked;
            th.next = crate::world::Step::Journal;
            th.program = &crate::world::program::Jbd2;
            world_threads.push(th);
            continue;
        }
        cpu.count_thread(t.core);
        // A thread that waits for others is started when they finish.
        if t.after.is_empty() {
            events.push(t.start, Ev::Start { tid: i as u32 });
        }
        let rng = Pcg64Mcg::seed_from_u64(
            config.seed ^ (0x9e37_79b9_7f4a_7c15_u64.wrapping_mul(i as u64 + 1)),
        );
        let queue = t.core as u32 % nq;
        world_threads.push(Thread::new(t, queue, rng));
    }
    let window_from = world_threads[..job_threads]
        .iter()
        .filter(|t| t.spec.after.is_empty())
        .map(|t| t.spec.measure_from)
        .max()
        .unwrap_or(0);
    let block = crate::blk::Block::new(&host.block_scheduler, nq as usize, world_threads.len());
    let world_threads_len = world_threads.len();
    Ok(World::new(Parts {
        events,
        host: host.clone(),
        cpu,
        threads: world_threads,
        nvme,
        window_from,
        block,
        polling: crate::polling::Polling::new(
            host.completion,
            poll_costs(host),
            host.io_poll_delay,
            world_threads_len,
        ),
        path: crate::iopath::Tracker::new(world_threads_len),
        journal,
        job_threads,
        idle: crate::idle::Idle::new(host),
        central: central.map(|(poller, dedicated)| {
            crate::world::central::CentralState::new(
                job_threads as u32,
                poller.core as u32,
                dedicated,
                nq as usize,
                world_threads_len,
                host::central::Costs {
                    reap: host.per_completion,
                    wake: host.wakeup,
                },
            )
        }),
        irq_suspend: host.irq_suspend.timeout(),
    }))
}

/// Under `completion = central`, the poller's thread and whether its core
/// is its own ([`host::central::place`]); `None` when no job waits for it.
/// Refuses what the poller does not model, and a device policy with
/// nothing to act on, each in one line naming both.
fn central_poller(
    jobs: &[workload::ThreadSpec],
    config: &SimConfig,
    spec: &PolicySpec,
) -> Result<Option<(workload::ThreadSpec, bool)>, SimError> {
    let host = &config.host;
    let mode = host.completion;
    let owned = |t: &workload::ThreadSpec| crate::world::central::waits_centrally(mode, t.waiter);
    let Some(first) = jobs.iter().find(|t| owned(t)) else {
        return Ok(None);
    };
    let refuse = |why: String| Err(SimError::Config(why));
    if host.block_scheduler != crate::BlockScheduler::None {
        return refuse(format!(
            "completion central with block scheduler {}: UnICom's poller reaps whole requests on its own queues, a block-layer scheduler's pieces are not modelled with it",
            host.block_scheduler
        ));
    }
    if host.fsync_io_polls {
        return refuse(
            "completion central with fsync_io_polls: the fsync path's polled I/O is classic polling's, not the central poller's".into(),
        );
    }
    let interrupts = jobs
        .iter()
        .any(|t| !owned(t) || t.job.fsync > 0 || t.job.fdatasync > 0);
    if spec.name != "default" && !interrupts {
        return refuse(format!(
            "completion central with policy {}: the central poller's queues raise no interrupt (UnICom's alloc_cq leaves NVME_CQ_IRQ_ENABLED off) and every I/O of this run goes to them, so the device policy has nothing to act on; use policy default",
            spec.name
        ));
    }
    let used: Vec<usize> = jobs.iter().map(|t| t.core).collect();
    let (core, dedicated) = host::central::place(host.cores as usize, &used);
    let mut poller = first.clone();
    poller.job.name = "central".into();
    poller.job.fsync = 0;
    poller.job.fdatasync = 0;
    poller.job.critical = false;
    poller.core = core;
    poller.kthread = true;
    poller.uring = None;
    poller.after.clear();
    Ok(Some((poller, dedicated)))
}

/// What the completion mode did: requests polled (no interrupt raised for
/// them: interrupts avoided), hybrid's sleeps, each polling job's
/// completions and time spinning (part of its sys time), and the jobs left
/// on interrupts.
fn completion_note(world: &World) -> String {
    let mode = world.completion_mode();
    let hipri = world.threads().iter().any(|t| t.spec.job.hipri);
    let mut note = format!("completion {}", mode.as_str());
    if hipri {
        note += &format!(" (hipri jobs: {})", mode.hipri().as_str());
    }
    note += &format!(
        ": {} request(s) completed by polling (no interrupt)",
        world.counts().polled
    );
    if mode == crate::Completion::Hybrid {
        note += &format!(
            ", {} hybrid sleep(s) before spinning",
            world.counts().hybrid_sleeps
        );
    }
    if let Some(c) = world.sleep_counts() {
        // The sleep strategies' own account (crate::polling).
        note += &format!(
            ", {} sleep(s) before spinning, {} request(s) slept: {} under, {} over; {} polled without a sleep, {} sent to interrupts by {}",
            world.counts().hybrid_sleeps,
            c.under + c.over,
            c.under,
            c.over,
            c.spins,
            c.interrupts,
            mode.as_str()
        );
    }
    if let Some(c) = world.central() {
        let n = c.counts;
        let spun = world.cpu().account(c.tid).spun;
        note += &format!(
            "; central poller (UnICom) on core {} ({}), spinning {}: {} pass(es) reaped {}, {} skipped waiter(s) made runnable; waits spun on the status word {}, skipped {}",
            c.core,
            if c.dedicated { "its own" } else { "shared with a job" },
            human(spun),
            n.passes,
            n.reaped,
            n.woken,
            n.spun,
            n.skipped
        );
    }
    // Per job (its clones together): polled completions and CPU spinning.
    let window = {
        let (from, to) = world.window();
        to.saturating_sub(from)
    };
    let mut polled: Vec<(&str, u64, Nanos, u32)> = Vec::new();
    let mut interrupted: Vec<&str> = Vec::new();
    for (tid, th) in world.jobs().iter().enumerate() {
        let name = th.spec.job.name.as_str();
        if !world.polling(tid as u32) {
            if !interrupted.contains(&name) {
                interrupted.push(name);
            }
            continue;
        }
        let spun = world.cpu().account(tid as u32).spun;
        match polled.iter_mut().find(|p| p.0 == name) {
            Some(p) => {
                p.1 += th.polled;
                p.2 += spun;
                p.3 += 1;
            }
            None => polled.push((name, th.polled, spun, 1)),
        }
    }
    if !polled.is_empty() {
        let per_job: Vec<String> = polled
            .iter()
            .map(|&(name, n, spun, threads)| {
                let share = if window == 0 {
                    0.0
                } else {
                    100.0 * spun as f64 / (window as f64 * f64::from(threads))
                };
                format!(
                    "'{name}' {n} polled, {} spinning ({share:.1}% of the window)",
                    human(spun)
                )
            })
            .collect();
        note += &format!("; per job: {}", per_job.join(", "));
    }
    if !interrupted.is_empty() {
        note += &format!(
            "; on interrupts: {} ({})",
            interrupted.join(", "),
            match mode {
                crate::Completion::SelectIsr => "not critical, or not a blocking engine",
                _ if hipri => "not hipri, and the host's mode does not poll them",
                _ => "only blocking engines poll in the simulator",
            }
        );
    }
    note
}

/// The completion path's costs in the host model's terms
/// ([`host::poll::Costs`]): an interrupt is its entry and one completion's
/// handling, a wake-up its wake and the context switch, hybrid's timer an
/// interrupt entry, a poll that finds the entry one completion's handling.
fn poll_costs(host: &HostProfile) -> host::poll::Costs {
    host::poll::Costs {
        irq: host.irq_entry + host.per_completion,
        wakeup: host.wakeup + host.context_switch,
        timer: host.irq_entry,
        reap: host.per_completion,
    }
}

fn dir_report(d: &DirStats, run_ns: Option<Nanos>) -> DirReport {
    DirReport {
        io_ops: d.ops,
        io_bytes: d.bytes,
        clat: LatencyStats::from_histogram(&d.clat),
        errors: 0,
        run_ns,
    }
}

/// A thread's own run time when it finished inside the measured window
/// (item 6 of issue 12: fio divides each job by its own runtime); `None` for
/// a thread that ran to the window's end.
fn own_run(w: &World, t: &Thread) -> Option<Nanos> {
    if t.spec.serial {
        // Serial groups (stonewall, wait_for): each thread's own measured
        // part, from its own start to its end.
        let from = w.window().0.max(t.spec.measure_from);
        // To its last completion, its drain included, as for a thread that
        // ends inside a shared window (and as fio's run time includes the
        // I/O it reaps after its runtime).
        let to = t.done_at.unwrap_or(w.window().1).min(w.window().1);
        return Some(to.saturating_sub(from));
    }
    t.done_at
        .filter(|&done| done < w.window().1)
        .map(|done| done.saturating_sub(w.window().0))
}

fn report(w: &World, config: &SimConfig, spec: &PolicySpec) -> RunReport {
    let duration = w.window().1.saturating_sub(w.window().0);
    let used = w.used_cores();
    let frac = |ns: Nanos| {
        if duration == 0 {
            0.0
        } else {
            ns as f64 / duration as f64
        }
    };
    RunReport {
        mode: Some(Mode::Sim),
        policy: PolicyInfo::of(spec),
        device: config.device.name.clone(),
        host: config.host.name.clone(),
        seed: Some(config.seed),
        default_marks: Some(jobs::default_marks_of(
            w.threads().iter().map(|t| &t.spec.job),
        )),
        duration_ns: duration,
        jobs: w
            .jobs()
            .iter()
            .enumerate()
            .map(|(tid, t)| JobReport {
                name: t.spec.job.name.clone(),
                clone_index: t.spec.job.clone_index,
                engine: t.spec.job.ioengine.to_string(),
                cpus: vec![t.spec.core],
                read: dir_report(&t.read, own_run(w, t)),
                write: dir_report(&t.write, own_run(w, t)),
                usr_ns: w.cpu().account(tid as u32).usr,
                sys_ns: w.cpu().account(tid as u32).sys,
                ctx: w.cpu().account(tid as u32).ctx,
                ctx_voluntary: None,
                ctx_involuntary: None,
                verify: None,
                sync: sync_report(w, tid),
            })
            .collect(),
        interrupts: w.cpu().interrupts(),
        urgent_only_interrupts: w.counts().urgent_only,
        completions: w.counts().completions,
        irq_line: None,
        // Not measured: the simulator models delivery, and its marks are
        // the jobs' (`jobs describe`).
        delivery: None,
        completions_by_mark: Some(w.counts().by_mark),
        context_switches: w.cpu().context_switches(),
        completion_gaps: report::Gaps::from_histogram(w.nvme().gaps()),
        io_path: Some(w.path().report(w.window())),
        cores: used
            .iter()
            .map(|&c| {
                let t = w.cpu().time(c);
                CoreUtil {
                    core: c,
                    user: frac(t.user),
                    kernel: frac(t.kernel),
                    irq: frac(t.irq),
                    idle: frac(t.idle),
                }
            })
            .collect(),
        apps: None,
        uring: None,
        cpu_parts: Some(cpu_parts(w, &used)),
        counters: None,
        notes: Vec::new(),
        idle: w.idle().map(|i| i.report()),
        wakeups: Some(
            (0..w.threads().len())
                .map(|tid| w.cpu().account(tid as u32).wakeups)
                .sum(),
        ),
        clat_all: Some(clat_all(w)),
        oracle: None,
        made_by: None,
    }
}

/// Every job's completion latency in one histogram (issue 40 item 4: the
/// field's percentiles over all I/Os).
fn clat_all(w: &World) -> LatencyStats {
    let mut all = hdrhistogram::Histogram::<u64>::new_with_bounds(1, crate::world::CLAT_MAX, 3)
        .expect("valid bounds");
    for t in w.jobs() {
        for d in [&t.read, &t.write] {
            let _ = all.add(&d.clat);
        }
    }
    LatencyStats::from_histogram(&all)
}

/// The used cores' busy time in the window by cause ([`crate::cause`]),
/// beside the same time summed from their user, kernel and irq time.
pub(crate) fn cpu_parts(w: &World, used: &[usize]) -> report::CpuParts {
    use crate::cause::{Cause, CAUSES};
    let mut by = [0; CAUSES];
    let mut busy = 0;
    for &c in used {
        let t = w.cpu().time(c);
        busy += t.user + t.kernel + t.irq;
        for (sum, ns) in by.iter_mut().zip(t.by_cause) {
            *sum += ns;
        }
    }
    let of = |c: Cause| by[c as usize];
    report::CpuParts {
        ghz: w.host().ghz,
        busy_ns: busy,
        user_ns: of(Cause::User),
        syscall_ns: of(Cause::Syscall),
        submit_ns: of(Cause::Submit),
        irq_ns: of(Cause::Irq),
        completion_ns: of(Cause::Completion),
        switch_ns: of(Cause::Switch),
        wakeup_ns: of(Cause::Wakeup),
        poll_ns: of(Cause::Poll),
        copy_ns: of(Cause::Copy),
        // Only with idle states on (crate::idle): off, nothing can charge
        // one, and the part is left out rather than shown as 0.
        idle_exit_ns: w.idle().map(|_| of(Cause::IdleExit)),
    }
}

/// A thread's fsyncs, if it makes any: fio's `sync` latency and FR's
/// breakdown, averaged over those that returned in the window.
fn sync_report(w: &World, tid: usize) -> Option<report::SyncReport> {
    let (n, t, lat) = w.journal()?.fsyncs(tid)?;
    let us = |ns: Nanos| {
        if n == 0 {
            0.0
        } else {
            ns as f64 / n as f64 / 1e3
        }
    };
    let per = |x: u64| if n == 0 { 0.0 } else { x as f64 / n as f64 };
    Some(report::SyncReport {
        lat: LatencyStats::from_histogram(lat),
        breakdown: report::FsyncBreakdown {
            journal: w.host().journal.to_string(),
            fsyncs: n,
            d1_us: us(t.d1),
            d2_us: us(t.d2),
            jd_us: us(t.jd),
            jc_us: us(t.jc),
            sched_us: us(t.sched),
            switches_per_fsync: per(t.switches),
            ios_per_fsync: per(t.ios),
        },
    })
}

/// The file system's part of a run where a job fsyncs: the journal mode,
/// JBD2's core and criticality, the page cache's buffered writes.
fn journal_note(w: &World) -> Option<String> {
    let j = w.journal()?;
    let jbd2 = &w.threads()[j.jbd2() as usize];
    Some(format!(
        "ext4 journal {}: JBD2 on core {} ({}critical), {} context switch(es) of JBD2 in the window; {} buffered write(s) served by the page cache (direct=0 jobs), their data written back as D2 by the commits; commits committed {}",
        w.host().journal,
        jbd2.spec.core,
        if w.host().jbd2_critical { "" } else { "not " },
        w.cpu().account(j.jbd2()).ctx,
        j.buffered_writes(),
        j.committed()
    ))
}

/// What the block-layer scheduler did: its setting, the requests and
/// pieces, and each job's mean wait in it (FR's T_Blk) in the window.
fn block_note(w: &World, config: &SimConfig, audit: &Audit) -> String {
    let waits: Vec<String> = w
        .jobs()
        .iter()
        .zip(&audit.block_wait)
        .map(|(t, &(sum, n))| {
            let mean = sum.checked_div(n).unwrap_or(0);
            format!("'{}' {} ({n})", t.spec.job.name, human(mean))
        })
        .collect();
    format!(
        "block scheduler {}: {} request(s) went to the device as {} piece(s), at most {} non-critical piece(s) in flight; mean block-layer wait (submit to first dispatch, FastResponse's T_Blk) of the requests completed in the window, per job: {}",
        config.host.block_scheduler,
        audit.submitted,
        audit.pieces_submitted,
        audit.max_noncritical_pieces,
        waits.join(", ")
    )
}

/// `ns` in the largest unit it reaches (`1ns`, `100ms`, `1.626s`), as the
/// command line writes times.
fn human(ns: Nanos) -> String {
    const UNITS: [(Nanos, &str); 4] = [
        (policy::SEC, "s"),
        (policy::MS, "ms"),
        (policy::US, "us"),
        (1, "ns"),
    ];
    let (div, unit) = UNITS
        .into_iter()
        .find(|&(d, _)| ns >= d)
        .unwrap_or((1, "ns"));
    if ns % div == 0 {
        format!("{}{unit}", ns / div)
    } else {
        format!("{:.3}{unit}", ns as f64 / div as f64)
    }
}
