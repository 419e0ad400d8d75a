//! The measured window: it opens when the earliest job's ramp ends and
//! closes when every job has stopped issuing. The handlers' counters and
//! CPU time are read at both edges.

use std::sync::atomic::Ordering;

use policy::Nanos;

use crate::driver::HandlerCount;
use crate::error::EmuError;
use crate::irq::LineCount;
use crate::run::shared::Running;
use crate::run::spawn::JobThread;
use crate::run::stall::StallWatch;
use crate::sys::Usage;
use crate::worker::WorkerSpec;

/// The measured part of the run, with what the handlers did in it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Window {
    pub(crate) from: Nanos,
    pub(crate) to: Nanos,
    pub(crate) irq: HandlerCount,
    /// What the device raised on the lines in the window.
    pub(crate) line: LineCount,
    /// Each handler's CPU time (user and system together) and switches.
    pub(crate) handler_usage: Vec<Usage>,
}

/// The window's opening edge: when, and the handlers' counters then.
pub(crate) struct Opened {
    from: Nanos,
    irq: HandlerCount,
    line: LineCount,
    usage: Vec<Usage>,
}

/// When the window opens: the earliest job's `startdelay` plus `ramp_time`
/// after the run's start `t0`.
fn opens_at(specs: &[WorkerSpec], t0: Nanos) -> Nanos {
    t0 + specs
        .iter()
        .map(|s| s.job.measure_from())
        .min()
        .unwrap_or(0)
}

fn snapshot(r: &Running) -> (HandlerCount, LineCount, Vec<Usage>) {
    (
        r.driver.counts(),
        r.driver.line_counts(),
        r.driver.handler_usage(),
    )
}

fn open(r: &Running, from: Nanos) -> Opened {
    let (irq, line, usage) = snapshot(r);
    r.recording.set(true);
    Opened {
        from,
        irq,
        line,
        usage,
    }
}

/// Opens the window at the run's start `t0`, before the job threads are
/// released, when some job measures from its first request (no
/// `startdelay` or `ramp_time`): the jobs count their runtime from `t0`,
/// and so must the window, or a watch scheduled late on a loaded machine
/// shortens it (a serial run's two 40 ms groups measured 74.8 ms in CI).
/// Nothing has been submitted yet, so the counters read here are exact.
pub(crate) fn open_at_start(r: &Running, specs: &[WorkerSpec], t0: Nanos) -> Option<Opened> {
    (opens_at(specs, t0) <= t0).then(|| open(r, t0))
}

impl Window {
    pub(crate) fn duration(&self) -> Nanos {
        self.to.saturating_sub(self.from)
    }
}

/// Cuts the window while the job threads run (and calls `over` once every
/// job's runtime has passed) (the jobs started at `t0`),
/// and opens the recording for its length. Stops the run when nothing
/// completes for the watchdog's limit while jobs still run.
pub(crate) fn watch(
    r: &Running,
    specs: &[WorkerSpec],
    workers: &[JobThread],
    t0: Nanos,
    opened: Option<Opened>,
    stall: &mut StallWatch<'_>,
    over: &dyn Fn(),
) -> Result<Window, EmuError> {
    // When every job's runtime is over: a blocking call still waiting then
    // is not measured, and `over` lets it end without waiting out the device.
    let ends: Option<Vec<Nanos>> = specs
        .iter()
        .map(|s| jobs::Issuer::new(&s.job, s.bounds, t0).stop_at())
        .collect();
    // Serial groups (stonewall, wait_for): a later group's end is not known
    // until it starts.
    let serial = specs.iter().any(|s| !s.after.is_empty());
    let last_end = ends.and_then(|e| e.into_iter().max()).filter(|_| !serial);
    let mut was_over = false;
    let opens = opens_at(specs, t0);
    let mut opened = opened;
    loop {
        let now = r.clock.now();
        if opened.is_none() && now >= opens {
            opened = Some(open(r, now));
        }
        if !was_over && last_end.is_some_and(|end| now > end) {
            over();
            was_over = true;
        }
        let finished = r.finished.load(Ordering::Relaxed);
        if finished >= specs.len() || workers.iter().all(|w| w.is_finished()) {
            break;
        }
        stall.check(r, workers.iter().position(|w| !w.is_finished()))?;
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    r.recording.set(false);
    let end = r.clock.now();
    let (irq_end, line_end, usage_end) = snapshot(r);
    let Opened {
        from,
        irq: irq_from,
        line: line_from,
        usage: usage_from,
    } = opened.unwrap_or_else(|| {
        let (irq, line, usage) = snapshot(r);
        Opened {
            from: end,
            irq,
            line,
            usage,
        }
    });
    Ok(Window {
        from,
        to: end,
        irq: irq_end.since(irq_from),
        line: line_end.since(line_from),
        handler_usage: usage_end
            .iter()
            .zip(&usage_from)
            .map(|(b, a)| b.since(*a))
            .collect(),
    })
}
