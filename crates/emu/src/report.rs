//! The emulator's side of the report: the measured window, and the notes
//! that say how interrupts were delivered here and what they cost.

use hdrhistogram::Histogram;
use policy::Nanos;
use report::{DirReport, LatencyStats};

use crate::handler::{Delivery, HandlerCount};
use crate::run::Audit;
use crate::sys::Usage;
use crate::worker::DirStats;

/// A histogram for latencies in ns, 1 ns to 60 s at 3 significant digits:
/// job latencies, interrupt delivery, and the direct baseline alike.
pub(crate) fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("valid bounds")
}

/// The measured part of the run, with what the handlers did in it.
#[derive(Clone, Debug, Default)]
pub struct Window {
    pub from: Nanos,
    pub to: Nanos,
    pub irq: HandlerCount,
    /// Each handler's CPU time (user and system together) and switches.
    pub handler_usage: Vec<Usage>,
}

impl Window {
    pub fn duration(&self) -> Nanos {
        self.to.saturating_sub(self.from)
    }
}

pub fn dir_report(d: &DirStats) -> DirReport {
    DirReport {
        io_ops: d.ops,
        io_bytes: d.bytes,
        clat: LatencyStats::from_histogram(&d.clat),
        errors: d.errors,
    }
}

pub fn host_line(device_cpu: usize) -> String {
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!(
        "this machine: {} CPUs, Linux {}, device thread on CPU {device_cpu}",
        crate::sys::allowed_cpus().len(),
        kernel.trim()
    )
}

fn us(ns: f64) -> String {
    format!("{:.1} us", ns / 1000.0)
}

/// What a reader needs to trust the numbers: the interrupt's cost here and
/// what the device and the handlers did.
pub fn notes(
    window: &Window,
    delivery: &Histogram<u64>,
    audit: &Audit,
    realtime: bool,
    device_cpu: usize,
    mode: Delivery,
) -> Vec<String> {
    let mut notes = Vec::new();
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
    });
    let d = &audit.device;
    notes.push(format!(
        "device: {} commands, {} interrupts raised, {} merged into one pending, {} completions held for a full CQ, {} in error",
        d.completed, d.raised, d.merged, d.held, d.errors
    ));
    if mode == Delivery::Poll && d.kicked > 0 {
        notes.push(format!(
            "{} interrupts waited over {} for the poller and woke the fallback handler (the core was busy with other work)",
            d.kicked,
            policy::format_nanos(crate::handler::POLL_FALLBACK)
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
