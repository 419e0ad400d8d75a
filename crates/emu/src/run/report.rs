//! A run's [`RunReport`]: the jobs' numbers, each core's time, and the
//! notes that say how interrupts were delivered here and what they cost.

use hdrhistogram::Histogram;
use report::{
    CoreUtil, DirReport, IrqLineReport, JobReport, LatencyStats, Mode, PolicyInfo, RunReport,
    VerifyReport,
};

use crate::config::{Delivery, EmuConfig, IrqDelivery, POLL_FALLBACK};
use crate::latency::us;
use crate::run::audit::Audit;
use crate::run::place::Placement;
use crate::run::target::StandIn;
use crate::run::window::Window;
use crate::worker::{DirStats, WorkerResult, WorkerSpec};

/// Everything a finished run hands to its report.
pub(crate) struct Finished<'a> {
    pub(crate) cfg: &'a EmuConfig,
    pub(crate) plan: &'a Placement,
    pub(crate) specs: &'a [WorkerSpec],
    pub(crate) results: &'a [WorkerResult],
    pub(crate) window: &'a Window,
    /// Delivery latency in the window.
    pub(crate) delivery: &'a Histogram<u64>,
    /// Completion gaps in the window.
    pub(crate) gaps: &'a Histogram<u64>,
    pub(crate) audit: &'a Audit,
    /// The backend, as the device describes it.
    pub(crate) backend: String,
    /// Whether the handlers got their scheduling class.
    pub(crate) realtime: bool,
    /// Another emulation on the same CPUs, said first in the notes.
    pub(crate) contention: Option<String>,
}

/// The job threads' perf counters in their measured parts, over the I/Os
/// they completed there ([`crate::counters`]).
fn counters(results: &[WorkerResult]) -> report::Counters {
    let mut sum: Option<crate::counters::Reading> = None;
    for w in results {
        sum = Some(match sum {
            Some(s) => s.add(&w.counters),
            None => w.counters.clone(),
        });
    }
    let ios = results.iter().map(|w| w.read.ops + w.write.ops).sum();
    sum.unwrap_or_default().to_report(
        ios,
        "the job threads in their measured part, user and kernel; not the emulated device's or the handler threads'",
    )
}

pub(crate) fn run_report(f: Finished) -> RunReport {
    let Finished {
        cfg,
        plan,
        specs,
        results,
        window,
        delivery,
        gaps,
        audit,
        backend,
        realtime,
        contention,
    } = f;
    let serial = specs.iter().any(|s| !s.after.is_empty());
    let uring = uring_report(cfg, specs, results);
    RunReport {
        mode: Some(Mode::Emu),
        policy: PolicyInfo::of(&cfg.policy),
        device: backend,
        host: host_line(plan.device_cpu),
        seed: Some(cfg.seed),
        default_marks: Some(jobs::default_marks_of(specs.iter().map(|s| &s.job))),
        duration_ns: window.duration(),
        jobs: specs
            .iter()
            .zip(results)
            .map(|(s, w)| {
                let run = if serial {
                    serial_run(w, window)
                } else {
                    own_run(w, window)
                };
                job_report(s, w, plan.core_of[s.owner as usize], run)
            })
            .collect(),
        interrupts: window.irq.interrupts,
        urgent_only_interrupts: window.irq.urgent_only,
        completions: window.irq.reaped,
        irq_line: Some(IrqLineReport {
            delivery: cfg.irq_delivery.as_str().into(),
            raised: window.line.raised,
            merged: window.line.merged,
            slot_waits: window.line.slot_waits,
            slot_wait_ns: window.line.slot_wait_ns,
        }),
        delivery: report::Delivery::of(delivery),
        completions_by_mark: Some(results.iter().fold(Default::default(), |mut all, w| {
            report::ByMark::add(&mut all, &w.by_mark);
            all
        })),
        completion_gaps: report::Gaps::from_histogram(gaps),
        context_switches: results
            .iter()
            .map(|w| w.usage.voluntary + w.usage.involuntary)
            .sum::<u64>()
            + window
                .handler_usage
                .iter()
                .map(|u| u.voluntary + u.involuntary)
                .sum::<u64>(),
        cores: cores(plan, results, window),
        io_path: None,
        notes: contention
            .into_iter()
            .chain(notes(
                window,
                delivery,
                audit,
                realtime,
                plan.device_cpu,
                cfg,
                plan.stand_in.as_ref(),
            ))
            .chain(poll_note(plan, specs, results, window))
            .chain(boost_note(cfg, specs))
            .chain(uring.as_ref().map(|u| uring_note(u, window)))
            .collect(),
        apps: None,
        uring,
        cpu_parts: None,
        counters: Some(counters(results)),
        // The emulator runs on the machine's own cores: their idle states
        // are the machine's, not modelled.
        idle: None,
        wakeups: None,
        clat_all: None,
        oracle: None,
        made_by: None,
    }
}

/// `run --uring`: the io_uring jobs' wake-ups in the window (their threads'
/// sleeps in the completion call that ended), beside their completions.
fn uring_report(
    cfg: &EmuConfig,
    specs: &[WorkerSpec],
    results: &[WorkerResult],
) -> Option<::report::UringReport> {
    let s = cfg.uring?;
    let mut u = ::report::UringReport {
        strategy: s.to_string(),
        ..Default::default()
    };
    for (_, w) in specs
        .iter()
        .zip(results)
        .filter(|(s, _)| jobs::Waiter::of(s.job.ioengine) == jobs::Waiter::IoUring)
    {
        u.ios += w.read.ops + w.write.ops;
        u.wakeups += w.wakeups;
        u.timeouts += w.uring_timeouts;
    }
    Some(u)
}

fn uring_note(u: &::report::UringReport, window: &Window) -> String {
    let per_io = |x: u64| {
        if u.ios == 0 {
            0.0
        } else {
            x as f64 / u.ios as f64
        }
    };
    format!(
        "io_uring --uring {}: {} wake-ups of the job threads ({:.3} per I/O) beside {} interrupts ({:.3} per I/O) over {} completions; min-wait's timer fired in {} wait(s)",
        u.strategy,
        u.wakeups,
        per_io(u.wakeups),
        window.irq.interrupts,
        per_io(window.irq.interrupts),
        u.ios,
        u.timeouts
    )
}

/// How often the window thread looks whether every job has stopped
/// (`run::window`'s 1 ms sleep): a job that stopped within this of the
/// window's end ran the whole window as far as the window can tell.
const WINDOW_POLL: policy::Nanos = policy::MS;

/// A job's own run time when it stopped well before the window closed (a
/// size-bounded job beside longer ones; issue 12 item 6: fio divides each
/// job by its own runtime).
fn own_run(w: &WorkerResult, window: &Window) -> Option<policy::Nanos> {
    (w.stopped_at + WINDOW_POLL < window.to).then(|| w.stopped_at.saturating_sub(window.from))
}

/// With serial groups (stonewall, wait_for) every job's own measured part,
/// from its own start to its stop.
fn serial_run(w: &WorkerResult, window: &Window) -> Option<policy::Nanos> {
    let from = window.from.max(w.measured_from);
    Some(w.stopped_at.min(window.to).saturating_sub(from))
}

fn job_report(
    spec: &WorkerSpec,
    w: &WorkerResult,
    core: usize,
    run: Option<policy::Nanos>,
) -> JobReport {
    JobReport {
        name: spec.job.name.clone(),
        clone_index: spec.job.clone_index,
        engine: spec.job.ioengine.to_string(),
        cpus: vec![core],
        read: dir_report(&w.read, run),
        write: dir_report(&w.write, run),
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
        sync: None,
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

fn dir_report(d: &DirStats, run_ns: Option<policy::Nanos>) -> DirReport {
    DirReport {
        io_ops: d.ops,
        io_bytes: d.bytes,
        clat: LatencyStats::from_histogram(&d.clat),
        errors: d.errors,
        run_ns,
    }
}

fn host_line(device_cpu: usize) -> String {
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!(
        "this machine: {} CPUs, Linux {}, device thread on CPU {device_cpu}",
        crate::sys::allowed_cpus().len(),
        kernel.trim()
    )
}

/// What a reader needs to trust the numbers: the interrupt's cost here and
/// what the device and the handlers did.
fn notes(
    window: &Window,
    delivery: &Histogram<u64>,
    audit: &Audit,
    realtime: bool,
    device_cpu: usize,
    cfg: &EmuConfig,
    stand_in: Option<&StandIn>,
) -> Vec<String> {
    let (mode, irq) = (cfg.delivery, cfg.irq_delivery);
    let mut notes = Vec::new();
    if let Some(s) = stand_in {
        notes.push(s.to_string());
    }
    if window.irq.reaped == 0 {
        notes
            .push("nothing completed in the measured window: these numbers measure nothing".into());
    }
    if delivery.is_empty() {
        notes.push("interrupt delivery: no interrupt in the measured window".into());
    } else {
        notes.push(format!(
            "interrupt delivery (device raise to handler start, measured): mean {}, p50 {}, p99 {} over {} interrupts",
            us(delivery.mean()),
            us(delivery.value_at_quantile(0.5) as f64),
            us(delivery.value_at_quantile(0.99) as f64),
            delivery.len()
        ));
    }
    let irq_cpu: u64 = window.handler_usage.iter().map(|u| u.user_ns).sum();
    if window.irq.interrupts > 0 {
        notes.push(format!(
            "interrupt handling: {} of CPU per interrupt on the target core",
            us(irq_cpu as f64 / window.irq.interrupts as f64)
        ));
    }
    notes.push(match mode {
        Delivery::Wake => format!(
            "delivery=wake: the device thread (CPU {device_cpu}, busy-polling) unparks the target core's handler thread (a futex wake; an IPI when the core is idle){}",
            if realtime {
                ", which runs at SCHED_FIFO and preempts the job threads"
            } else {
                "; SCHED_FIFO was refused, so the handler runs at normal priority and does not preempt"
            }
        ),
        Delivery::Poll => format!(
            "delivery=poll: the device thread (CPU {device_cpu}, busy-polling) raises a line in shared memory; a SCHED_IDLE thread polls it while the target core is idle, and a running job thread takes it at its next step, in its own context"
        ),
        Delivery::Inline => format!(
            "delivery=inline: the device thread (CPU {device_cpu}) runs the handler itself after each pass"
        ),
    });
    notes.push(match irq {
        IrqDelivery::Ipi => "irq-delivery=ipi: as the authors' emulator, each fire is one interrupt (an IPI sent with smp_call_function_single), never merged; while the target core has not taken the previous one, the device's policy waits for the call slot (Linux's csd lock) and the CQ fills behind it".to_string(),
        IrqDelivery::IpiStall => "irq-delivery=ipi-stall: each fire is one interrupt, never merged; while the target core has not taken the previous one, the whole device waits (nothing fetched, executed or posted)".to_string(),
        IrqDelivery::Apic => "irq-delivery=apic: a fire while an interrupt is pending merges into it (one pending vector, as an APIC's), and the device never waits".to_string(),
    });
    let d = &audit.device;
    notes.push(format!(
        "device: {} commands, {} interrupts raised, {} merged into one pending, {} waited for the call slot ({:.1} ms in all), {} completions held for a full CQ, {} in error",
        d.completed, d.raised, d.merged, d.slot_waits, d.slot_wait_ns as f64 / 1e6, d.held, d.errors
    ));
    if d.unwalked_lapped > 0 {
        notes.push(format!(
            "{} completions were reaped before the device's poller walked them, a CQ lap behind (it resumes at the host's head, as the authors' irq_poller): no interrupt was raised for them",
            d.unwalked_lapped
        ));
    }
    if mode == Delivery::Poll && d.kicked > 0 {
        notes.push(format!(
            "{} interrupts waited over {} for the poller and woke the fallback handler (the core was busy with other work)",
            d.kicked,
            policy::format_nanos(POLL_FALLBACK)
        ));
    }
    if audit.tag_waits > 0 {
        notes.push(format!(
            "back-pressure: submitters waited {} times for a free tag",
            audit.tag_waits
        ));
    }
    if window.irq.empty > 0 {
        notes.push(format!(
            "{} interrupts found nothing to reap (an earlier pass took their entries)",
            window.irq.empty
        ));
    }
    notes
}

/// What the block layer did, as the simulator's block note says it
/// (`crates/sim/src/run.rs`, `block_note`).
pub(crate) fn block_note(b: &crate::driver::BlockLayer, specs: &[WorkerSpec]) -> String {
    let c = b.count();
    let waits: Vec<String> = specs
        .iter()
        .zip(b.waits())
        .map(|(s, (sum, n))| {
            let mean = sum.checked_div(n).unwrap_or(0);
            format!("'{}' {} ({n})", s.job.name, policy::format_nanos(mean))
        })
        .collect();
    format!(
        "block scheduler {}: {} request(s) ({} critical) went to the device as {} piece(s), at most {} non-critical piece(s) in flight ({} with critical ones; the host's count, from dispatch to reap, which bounds the device's); mean block-layer wait (submit to first dispatch, FastResponse's T_Blk) of the requests completed in the window, per job: {}",
        b.name(),
        c.requests,
        c.critical,
        c.pieces,
        c.max_noncritical_in_flight,
        c.max_in_flight,
        waits.join(", ")
    )
}

/// Polled completion: which jobs polled and how, the completions found by
/// polling (their queue raises no interrupt), the polling jobs' CPU, and
/// what hybrid polling's sleeps did on this VM's timer.
fn poll_note(
    plan: &Placement,
    specs: &[WorkerSpec],
    results: &[WorkerResult],
    window: &Window,
) -> Option<String> {
    let polling: Vec<usize> = (0..specs.len())
        .filter(|&i| plan.polls[i].is_some())
        .collect();
    if polling.is_empty() {
        return None;
    }
    let d = window.duration().max(1) as f64;
    let jobs: Vec<String> = polling
        .iter()
        .map(|&i| {
            let (s, w) = (&specs[i], &results[i]);
            let mode = plan.polls[i].map_or("", |m| m.as_str());
            let mut line = format!(
                "'{}' {mode}: {} polls, CPU usr {} sys {} ({:.0}% of the window)",
                s.job.name,
                w.poll.polls,
                policy::format_nanos(w.usage.user_ns),
                policy::format_nanos(w.usage.sys_ns),
                100.0 * (w.usage.user_ns + w.usage.sys_ns) as f64 / d
            );
            let p = &w.poll;
            if plan.polls[i].is_some_and(crate::worker::sleeps_then_polls) {
                line.push_str(&sleep_line(p));
            } else if mode == "hybrid" {
                line.push_str(&format!(
                    ", {} timer sleeps (asked {} on average, slept {}), {} spun from the start (sleep shorter than the timer's overshoot)",
                    p.hybrid_sleeps,
                    policy::format_nanos(p.asked_ns.checked_div(p.hybrid_sleeps).unwrap_or(0)),
                    policy::format_nanos(p.slept_ns.checked_div(p.hybrid_sleeps).unwrap_or(0)),
                    p.hybrid_spun
                ));
            }
            line
        })
        .collect();
    Some(format!(
        "polled completion: {} completion(s) found by polling a poll queue (interrupts off, as Linux's poll_queues: the device's policy never sees its commands), {} interrupt(s) taken in all; per polling job: {}",
        window.irq.polled,
        window.irq.interrupts,
        jobs.join("; ")
    ))
}

/// A "sleep, then poll" strategy's decisions, its UNDER/OVER feedback and
/// what the timer did with its sleeps (`worker/sleep.rs`).
fn sleep_line(p: &crate::worker::PollStats) -> String {
    let s = &p.sleep;
    let mean = |ns: policy::Nanos, n: u64| policy::format_nanos(ns.checked_div(n).unwrap_or(0));
    format!(
        ", decided {} sleep(s) (mean {}), {} spin(s), {} interrupt(s); feedback {} under, {} over; {} timer sleeps (asked {} on average, slept {}: the timer's overshoot and any wait for the CPU), {} wait(s) whose sleep had already ended",
        s.sleep,
        mean(s.decided_ns, s.sleep),
        s.spin,
        s.interrupt,
        s.under,
        s.over,
        s.timer_sleeps,
        mean(s.asked_ns, s.timer_sleeps),
        mean(s.slept_ns, s.timer_sleeps),
        s.elapsed
    )
}

/// Which threads asked the kernel for the critical boost, and how.
fn boost_note(cfg: &EmuConfig, specs: &[WorkerSpec]) -> Option<String> {
    let how = match cfg.boost {
        crate::config::Boost::None => return None,
        crate::config::Boost::Slice => "EEVDF custom slice (sched_setattr, SCHED_OTHER, sched_runtime 100us): a fair-class task with an earlier deadline, which preempts at wake-up",
        crate::config::Boost::Fifo => "SCHED_FIFO priority 1: preempts every normal task at wake-up",
    };
    let jobs: Vec<String> = specs
        .iter()
        .filter(|s| s.job.critical)
        .map(|s| format!("'{}'", s.job.name))
        .collect();
    Some(format!(
        "critical boost {}: {how}; job(s) with critical=1: {}",
        cfg.boost.as_str(),
        if jobs.is_empty() {
            "none".to_string()
        } else {
            jobs.join(", ")
        }
    ))
}
