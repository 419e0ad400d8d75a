//! The job threads: started pinned to their cores, held at a barrier so
//! they start together, and joined at the end (or abandoned with an error
//! when the run stalls).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;

use crate::config::Boost;
use crate::error::EmuError;
use crate::run::place::Placement;
use crate::run::shared::Running;
use crate::run::stall::StallWatch;
use crate::sys;
use crate::worker::{self, Shared, WorkerResult, WorkerSpec};

pub(crate) type JobThread = JoinHandle<Result<WorkerResult, String>>;

/// One thread per job, each on its core, waiting at `start`.
pub(crate) fn workers(
    r: &Running,
    plan: &Placement,
    specs: &[WorkerSpec],
    start: &Arc<Barrier>,
    boost: Boost,
    uring: Option<host::uring::Strategy>,
) -> Result<Vec<JobThread>, EmuError> {
    let mut out = Vec::with_capacity(specs.len());
    for spec in specs {
        let core = plan.core_of[spec.owner as usize];
        let poll_mode = plan.polls[spec.owner as usize];
        let boost = if spec.job.critical {
            boost
        } else {
            Boost::None
        };
        let parts = r.driver.parts(spec.owner);
        // A sleep strategy may send a request to interrupts: its core's
        // interrupt-driven queue pair, beside its poll queue.
        let irq_queue = poll_mode
            .filter(|&m| crate::worker::sleeps_then_polls(m))
            .map(|_| {
                let i = plan.interrupt_queue_of(core);
                (i, r.driver.handlers()[i].queue.clone())
            });
        let (abort, finished, clock) = (r.abort.clone(), r.finished.clone(), r.clock);
        let run_t0 = r.t0.clone();
        let exited = r.exited.clone();
        let start = start.clone();
        let spec = spec.clone();
        let handle = std::thread::Builder::new()
            .name(format!("cint-job/{}", spec.owner))
            .spawn(move || {
                let pinned = sys::pin_to(core).and_then(|()| boost.apply());
                start.wait();
                if let Err(e) = pinned {
                    abort.store(true, Ordering::Relaxed);
                    finished.fetch_add(1, Ordering::Relaxed);
                    exited[spec.owner as usize].store(true, Ordering::Release);
                    return Err(format!(
                        "cannot pin job '{}' to CPU {core} or give it the critical boost '{}': {e}",
                        spec.job.name,
                        boost.as_str()
                    ));
                }
                let sh = Shared {
                    clock: &clock,
                    queue: &parts.queue,
                    queue_index: parts.queue_index,
                    block: parts.block.as_deref(),
                    mailbox: &parts.mailbox,
                    abort: &abort,
                    finished: &finished,
                    exited: &exited,
                    handler: parts.handler.as_deref(),
                    polled: parts.polled.as_deref(),
                    poll_mode,
                    uring,
                    irq_queue: irq_queue.as_ref().map(|(i, q)| (*i, &**q)),
                };
                // The run's start, set before the barrier released us.
                let t0 = run_t0.load(Ordering::Acquire);
                Ok(worker::run(spec, sh, t0))
            })
            .map_err(|e| EmuError::Config(format!("cannot start a job thread: {e}")))?;
        out.push(handle);
    }
    Ok(out)
}

/// Joins the job threads, unless the run stalls: a thread stuck waiting is
/// abandoned with an error rather than hanging the run.
pub(crate) fn join_all(
    workers: Vec<JobThread>,
    r: &Running,
    stall: &mut StallWatch<'_>,
) -> Result<Vec<WorkerResult>, EmuError> {
    while !workers.iter().all(|w| w.is_finished()) {
        stall.check(r, workers.iter().position(|w| !w.is_finished()))?;
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
