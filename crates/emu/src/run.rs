//! One emulated run: checks the jobs, places the threads, starts the device
//! thread, the interrupt handlers and the job threads, cuts the measured
//! window, and gathers a [`RunReport`] and an [`Audit`].

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;

use hdrhistogram::Histogram;
use jobs::Job;
use policy::{Nanos, PolicySpec};
use report::{CoreUtil, JobReport, Mode, PolicyInfo, RunReport, VerifyReport};

use crate::backend::BackendSpec;
use crate::device::{Device, DeviceStats};
use crate::handler::{new_delivery_hist, Delivery, DeliveryHist, Handler, HandlerCount};
use crate::mailbox::Mailbox;
use crate::place::{self, Placement};
use crate::queue::QueuePair;
use crate::report::{self as emu_report, Window};
use crate::sys::{self, Clock, ThreadProbe, Usage};
use crate::worker::{self, Shared, WorkerResult, WorkerSpec};
use crate::EmuError;

/// What one emulated run runs on.
#[derive(Clone, Debug)]
pub struct EmuConfig {
    /// `None`: the jobs' `filename=`.
    pub backend: Option<BackendSpec>,
    pub policy: PolicySpec,
    /// Makes every job time-based with this runtime.
    pub runtime: Option<Nanos>,
    /// The device thread's CPU; `None`: one no job names.
    pub device_cpu: Option<usize>,
    /// Commands in flight per queue pair (tags and SQ slots). NVMe's Linux
    /// driver uses 1024.
    pub queue_depth: u32,
    /// CQ slots per queue pair; `None`: the queue depth.
    pub cq_entries: Option<u32>,
    /// Seeds the offsets and read/write mix.
    pub seed: u64,
    /// Run the interrupt handlers at SCHED_FIFO so that an interrupt
    /// preempts the job threads; without the privilege they run at normal
    /// priority, and the report says so.
    pub realtime_handler: bool,
    /// Stop with an error when no request completes for this long.
    pub stall_timeout: Nanos,
    /// How interrupts reach the target cores.
    pub delivery: Delivery,
}

impl Default for EmuConfig {
    fn default() -> Self {
        EmuConfig {
            backend: None,
            policy: PolicySpec::named("cint"),
            runtime: None,
            device_cpu: None,
            queue_depth: 1024,
            cq_entries: None,
            seed: 1,
            realtime_handler: true,
            stall_timeout: 10_000_000_000,
            delivery: Delivery::Poll,
        }
    }
}

/// Counts that hold the emulator to its invariants: every request submitted
/// is consumed exactly once, nothing is dropped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Audit {
    pub submitted: u64,
    pub device: DeviceStats,
    /// Over the whole run (not only the measured window).
    pub handlers: HandlerCount,
    pub consumed: u64,
    pub tag_waits: u64,
    pub verified: u64,
    pub mismatches: u64,
}

pub fn run(jobs: &[Job], cfg: &EmuConfig) -> Result<RunReport, EmuError> {
    run_audited(jobs, cfg).map(|(r, _)| r)
}

struct Running {
    clock: Clock,
    abort: Arc<AtomicBool>,
    finished: Arc<AtomicUsize>,
    stop_device: Arc<AtomicBool>,
    recording: Arc<AtomicBool>,
    handlers: Vec<Arc<Handler>>,
    delivery: DeliveryHist,
    mode: Delivery,
}

pub fn run_audited(jobs: &[Job], cfg: &EmuConfig) -> Result<(RunReport, Audit), EmuError> {
    let plan: Placement = place::place(jobs, cfg)?;
    let policies = (0..plan.cores.len())
        .map(|_| policy::build(&cfg.policy).map_err(|e| EmuError::Config(e.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    let cq_entries = cfg.cq_entries.unwrap_or(cfg.queue_depth);
    let queues: Vec<Arc<QueuePair>> = plan
        .cores
        .iter()
        .map(|&c| Arc::new(QueuePair::new(c, cfg.queue_depth, cq_entries)))
        .collect();
    let tags: u32 = queues.iter().map(|q| q.tags() as u32).sum();
    let opened = plan
        .backend
        .open(plan.need, tags)
        .map_err(EmuError::Backend)?;
    let specs = place::worker_specs(jobs, opened.size, cfg)?;
    let mut device = Device::new(queues.clone(), policies, opened.backend);
    let backend_name = device.describe();

    let mailboxes: Arc<[Arc<Mailbox>]> = specs.iter().map(|_| Arc::default()).collect();
    let recording = Arc::new(AtomicBool::new(false));
    device.record_gaps_while(recording.clone());
    let delivery = new_delivery_hist();
    let r = Running {
        clock: Clock::new(),
        abort: Arc::new(AtomicBool::new(false)),
        finished: Arc::new(AtomicUsize::new(0)),
        stop_device: Arc::new(AtomicBool::new(false)),
        handlers: queues
            .iter()
            .map(|q| {
                Arc::new(Handler::new(
                    q.clone(),
                    mailboxes.clone(),
                    delivery.clone(),
                    recording.clone(),
                ))
            })
            .collect(),
        recording,
        delivery,
        mode: cfg.delivery,
    };

    let device_thread = spawn_device(&r, device, plan.device_cpu)?;
    let (handlers, probes, realtime) = spawn_handlers(&r, cfg.realtime_handler)?;
    let start = Arc::new(Barrier::new(specs.len() + 1));
    let workers = spawn_workers(&r, &plan, &specs, &mailboxes, &start)?;

    start.wait();
    let t0 = r.clock.now();
    let mut stall = StallWatch::new(&r, cfg.stall_timeout);
    let window = watch(&r, &specs, &probes, &workers, t0, &mut stall);
    let results = join_all(workers, &r, &mut stall);
    r.stop_device.store(true, Ordering::Relaxed);
    let (device_stats, gaps) = device_thread
        .join()
        .map_err(|_| EmuError::Config("the device thread panicked".into()))??;
    for h in &r.handlers {
        h.queue.irq.stop();
    }
    for h in handlers {
        let _ = h.join();
    }
    let window = window?;
    let results = results?;

    let audit = Audit {
        submitted: results.iter().map(|w| w.submitted).sum(),
        device: device_stats,
        handlers: handler_totals(&r),
        consumed: results.iter().map(|w| w.consumed).sum(),
        tag_waits: results.iter().map(|w| w.tag_waits).sum(),
        verified: results.iter().map(|w| w.verified).sum(),
        mismatches: results.iter().map(|w| w.mismatches).sum(),
    };
    let delivery = r.delivery.lock().expect("histogram lock").clone();
    let report = RunReport {
        mode: Some(Mode::Emu),
        policy: PolicyInfo::of(&cfg.policy),
        device: backend_name,
        host: emu_report::host_line(plan.device_cpu),
        seed: Some(cfg.seed),
        duration_ns: window.duration(),
        jobs: specs
            .iter()
            .zip(&results)
            .map(|(s, w)| job_report(s, w, plan.core_of[s.owner as usize]))
            .collect(),
        interrupts: window.irq.interrupts,
        urgent_only_interrupts: window.irq.urgent_only,
        completions: window.irq.reaped,
        completion_gaps: report::Gaps::from_histogram(&gaps),
        context_switches: results
            .iter()
            .map(|w| w.usage.voluntary + w.usage.involuntary)
            .sum::<u64>()
            + window
                .handler_usage
                .iter()
                .map(|u| u.voluntary + u.involuntary)
                .sum::<u64>(),
        cores: cores(&plan, &results, &window),
        notes: emu_report::notes(
            &window,
            &delivery,
            &audit,
            realtime,
            plan.device_cpu,
            cfg.delivery,
        ),
    };
    Ok((report, audit))
}

fn job_report(spec: &WorkerSpec, w: &WorkerResult, core: usize) -> JobReport {
    JobReport {
        name: spec.job.name.clone(),
        clone_index: spec.job.clone_index,
        engine: spec.job.ioengine.to_string(),
        cpus: vec![core],
        read: emu_report::dir_report(&w.read),
        write: emu_report::dir_report(&w.write),
        usr_ns: w.usage.user_ns,
        sys_ns: w.usage.sys_ns,
        ctx: w.usage.voluntary + w.usage.involuntary,
        ctx_voluntary: Some(w.usage.voluntary),
        ctx_involuntary: Some(w.usage.involuntary),
        verify: spec.verify.then(|| VerifyReport {
            blocks: w.verified,
            mismatches: w.mismatches,
            first_mismatch: w.first_mismatch.clone(),
        }),
    }
}

/// Each target core's time: the job threads' user and system time, the
/// handler's time as interrupt time, the rest idle.
fn cores(plan: &Placement, results: &[WorkerResult], window: &Window) -> Vec<CoreUtil> {
    let d = window.duration().max(1) as f64;
    plan.cores
        .iter()
        .enumerate()
        .map(|(qi, &core)| {
            let on_core = || {
                results
                    .iter()
                    .enumerate()
                    .filter(move |(i, _)| plan.core_of[*i] == core)
                    .map(|(_, w)| w)
            };
            let user = on_core().map(|w| w.usage.user_ns).sum::<u64>() as f64 / d;
            let kernel = on_core().map(|w| w.usage.sys_ns).sum::<u64>() as f64 / d;
            let irq = window.handler_usage[qi].user_ns as f64 / d;
            let busy = user + kernel + irq;
            // CPU-time clocks and the wall clock are read at slightly
            // different moments; scale down rather than report over 100%.
            let scale = if busy > 1.0 { 1.0 / busy } else { 1.0 };
            CoreUtil {
                core,
                user: user * scale,
                kernel: kernel * scale,
                irq: irq * scale,
                idle: (1.0 - busy).max(0.0),
            }
        })
        .collect()
}

/// What the device thread hands back: its counts and the completion gaps.
type DeviceDone = (DeviceStats, Histogram<u64>);

fn spawn_device(
    r: &Running,
    mut device: Device,
    cpu: usize,
) -> Result<JoinHandle<Result<DeviceDone, EmuError>>, EmuError> {
    let clock = r.clock;
    let stop = r.stop_device.clone();
    let abort = r.abort.clone();
    std::thread::Builder::new()
        .name("cint-device".into())
        .spawn(move || {
            if let Err(e) = sys::pin_to(cpu) {
                abort.store(true, Ordering::Relaxed);
                return Err(EmuError::Config(format!(
                    "cannot pin the device thread to CPU {cpu}: {e}"
                )));
            }
            let stats = device.run(&clock, &stop);
            Ok((stats, device.into_gaps()))
        })
        .map_err(|e| EmuError::Config(format!("cannot start the device thread: {e}")))
}

type Handlers = (Vec<JoinHandle<()>>, Vec<ThreadProbe>, bool);

/// One thread per target core: the handler thread that the device wakes
/// (SCHED_FIFO, so it preempts), or the idle poller (SCHED_IDLE).
fn spawn_handlers(r: &Running, want_realtime: bool) -> Result<Handlers, EmuError> {
    let mut handles = Vec::new();
    let mut probes = Vec::new();
    let mut realtime = want_realtime;
    for handler in &r.handlers {
        let (tx, rx) = std::sync::mpsc::channel();
        let h = handler.clone();
        let clock = r.clock;
        let core = h.queue.core;
        let mode = r.mode;
        let handle = std::thread::Builder::new()
            .name(format!("cint-irq/{core}"))
            .spawn(move || {
                let pinned = sys::pin_to(core);
                let class = match mode {
                    Delivery::Wake => want_realtime && sys::set_fifo(50).is_ok(),
                    Delivery::Poll => sys::set_idle().is_ok(),
                };
                let _ = tx.send((
                    pinned.map_err(|e| e.to_string()),
                    class,
                    ThreadProbe::this_thread(),
                ));
                match mode {
                    Delivery::Wake => h.run_thread(&clock),
                    Delivery::Poll => h.run_poller(&clock),
                }
            })
            .map_err(|e| EmuError::Config(format!("cannot start an interrupt handler: {e}")))?;
        if mode == Delivery::Wake {
            handler.queue.irq.attach(handle.thread().clone());
        }
        let (pinned, class, probe) = rx
            .recv()
            .map_err(|_| EmuError::Config("an interrupt handler died at start".into()))?;
        if let Err(e) = pinned {
            for h in &r.handlers {
                h.queue.irq.stop();
            }
            return Err(EmuError::Config(format!(
                "cannot pin the interrupt handler to CPU {core}: {e}"
            )));
        }
        realtime &= class;
        handles.push(handle);
        probes.push(probe);
    }
    if r.mode == Delivery::Poll {
        for h in &r.handlers {
            let h2 = h.clone();
            let clock = r.clock;
            let core = h.queue.core;
            let handle = std::thread::Builder::new()
                .name(format!("cint-irqfb/{core}"))
                .spawn(move || {
                    let _ = sys::pin_to(core);
                    let _ = sys::set_fifo(50);
                    h2.run_fallback(&clock);
                })
                .map_err(|e| EmuError::Config(format!("cannot start an interrupt handler: {e}")))?;
            h.queue.irq.attach_fallback(handle.thread().clone());
            handles.push(handle);
        }
    }
    Ok((handles, probes, realtime))
}

fn spawn_workers(
    r: &Running,
    plan: &Placement,
    specs: &[WorkerSpec],
    mailboxes: &Arc<[Arc<Mailbox>]>,
    start: &Arc<Barrier>,
) -> Result<Vec<JoinHandle<Result<WorkerResult, String>>>, EmuError> {
    let mut out = Vec::with_capacity(specs.len());
    for spec in specs {
        let core = plan.core_of[spec.owner as usize];
        let qi = plan
            .cores
            .iter()
            .position(|&c| c == core)
            .expect("a queue per core");
        let queue = r.handlers[qi].queue.clone();
        let handler = (r.mode == Delivery::Poll).then(|| r.handlers[qi].clone());
        let mailbox = mailboxes[spec.owner as usize].clone();
        let (abort, finished, clock) = (r.abort.clone(), r.finished.clone(), r.clock);
        let start = start.clone();
        let spec = spec.clone();
        let handle = std::thread::Builder::new()
            .name(format!("cint-job/{}", spec.owner))
            .spawn(move || {
                let pinned = sys::pin_to(core);
                start.wait();
                if let Err(e) = pinned {
                    abort.store(true, Ordering::Relaxed);
                    finished.fetch_add(1, Ordering::Relaxed);
                    return Err(format!(
                        "cannot pin job '{}' to CPU {core}: {e}",
                        spec.job.name
                    ));
                }
                let sh = Shared {
                    clock: &clock,
                    queue: &queue,
                    mailbox: &mailbox,
                    abort: &abort,
                    finished: &finished,
                    handler: handler.as_deref(),
                };
                let t0 = clock.now();
                Ok(worker::run(spec, sh, t0))
            })
            .map_err(|e| EmuError::Config(format!("cannot start a job thread: {e}")))?;
        out.push(handle);
    }
    Ok(out)
}

/// Cuts the measured window: it opens when the earliest job's ramp ends and
/// closes when every job has stopped issuing. Handler counters and CPU
/// time are read at both edges. Stops the run when nothing completes for
/// `stall` while jobs still run.
fn watch(
    r: &Running,
    specs: &[WorkerSpec],
    probes: &[ThreadProbe],
    workers: &[JoinHandle<Result<WorkerResult, String>>],
    t0: Nanos,
    stall: &mut StallWatch,
) -> Result<Window, EmuError> {
    let opens = t0
        + specs
            .iter()
            .map(|s| s.job.startdelay + s.job.ramp_time)
            .min()
            .unwrap_or(0);
    // The handlers' CPU time: with wake-up delivery, the handler threads'
    // whole time (the kernel's wake-up path included); with polling, the
    // time spent handling, wherever it ran (the poller's spinning is the
    // core's idle time).
    let snapshot = |r: &Running| -> (HandlerCount, Vec<Usage>) {
        (
            handler_totals(r),
            match r.mode {
                Delivery::Wake => probes.iter().map(|p| p.read()).collect(),
                Delivery::Poll => r
                    .handlers
                    .iter()
                    .zip(probes)
                    .map(|(h, p)| Usage {
                        user_ns: h.irq_ns.load(Ordering::Relaxed),
                        sys_ns: 0,
                        ..p.read()
                    })
                    .collect(),
            },
        )
    };
    let mut opened = None;
    loop {
        let now = r.clock.now();
        if opened.is_none() && now >= opens {
            let (irq, usage) = snapshot(r);
            r.recording.store(true, Ordering::Relaxed);
            opened = Some((now, irq, usage));
        }
        let finished = r.finished.load(Ordering::Relaxed);
        if finished >= specs.len() || workers.iter().all(|w| w.is_finished()) {
            break;
        }
        stall.check(r)?;
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    r.recording.store(false, Ordering::Relaxed);
    let end = r.clock.now();
    let (irq_end, usage_end) = snapshot(r);
    let (from, irq_from, usage_from) = opened.unwrap_or_else(|| {
        let (i, u) = snapshot(r);
        (end, i, u)
    });
    Ok(Window {
        from,
        to: end,
        irq: irq_end.since(irq_from),
        handler_usage: usage_end
            .iter()
            .zip(&usage_from)
            .map(|(b, a)| b.since(*a))
            .collect(),
    })
}

/// Ends a run in which nothing completes for `limit` while job threads
/// still run: they are told to stop, and the run returns an error naming
/// where each queue stands rather than hanging.
struct StallWatch {
    limit: Nanos,
    reaped: u64,
    since: Nanos,
}

impl StallWatch {
    fn new(r: &Running, limit: Nanos) -> StallWatch {
        StallWatch {
            limit,
            reaped: handler_totals(r).reaped,
            since: r.clock.now(),
        }
    }

    fn check(&mut self, r: &Running) -> Result<(), EmuError> {
        let (now, reaped) = (r.clock.now(), handler_totals(r).reaped);
        if reaped != self.reaped {
            (self.reaped, self.since) = (reaped, now);
        } else if now - self.since > self.limit {
            r.abort.store(true, Ordering::Relaxed);
            return Err(EmuError::Stalled(format!(
                "no request completed for {}; {}",
                policy::format_nanos(self.limit),
                queue_states(r)
            )));
        }
        Ok(())
    }
}

/// Joins the job threads, unless the run stalls: a thread stuck waiting is
/// abandoned with an error rather than hanging the run.
fn join_all(
    workers: Vec<JoinHandle<Result<WorkerResult, String>>>,
    r: &Running,
    stall: &mut StallWatch,
) -> Result<Vec<WorkerResult>, EmuError> {
    while !workers.iter().all(|w| w.is_finished()) {
        stall.check(r)?;
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let mut out = Vec::with_capacity(workers.len());
    for w in workers {
        match w.join() {
            Ok(Ok(res)) => out.push(res),
            Ok(Err(e)) => return Err(EmuError::Config(e)),
            Err(_) => return Err(EmuError::Config("a job thread panicked".into())),
        }
    }
    Ok(out)
}

/// Where each queue pair stands, for a stall report.
fn queue_states(r: &Running) -> String {
    r.handlers
        .iter()
        .map(|h| {
            let q = &h.queue;
            format!(
                "queue of CPU {}: {} submitted, {} posted, {} reaped, line bits {:#x}",
                q.core,
                q.submitted.load(Ordering::Relaxed),
                q.posted.load(Ordering::Relaxed),
                h.counters.reaped.load(Ordering::Relaxed),
                q.irq.bits()
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Every handler's counters, added up.
fn handler_totals(r: &Running) -> HandlerCount {
    r.handlers.iter().fold(HandlerCount::default(), |a, h| {
        a.plus(h.counters.snapshot())
    })
}
