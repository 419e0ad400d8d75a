//! Job files to simulated threads: what each thread does, on which core, and
//! when it stops. Everything the simulator cannot model faithfully is refused
//! here, naming the job and its line, before any time is simulated.

use host::uring::Strategy;
use jobs::{Bounds, Engine, Issuer, Job};
use policy::Nanos;

use crate::limits::{MAX_IN_FLIGHT, MAX_THREADS};
use crate::{HostProfile, SimError};

pub(crate) use jobs::Waiter;

/// One thread of the workload (one clone of a job section).
#[derive(Clone, Debug)]
pub(crate) struct ThreadSpec {
    pub job: Job,
    pub waiter: Waiter,
    pub core: usize,
    /// The process it belongs to: 0 is fio's own (the threads of jobs with
    /// `thread`), each other job clone is a process of its own (fio forks
    /// one per clone by default). Switching between processes costs
    /// `process_switch`.
    pub process: u32,
    /// fio's loop for this thread: every issuing decision, and the counters
    /// they read (its state moves on as the thread runs).
    pub issuer: Issuer,
    /// When the thread starts issuing (`startdelay`).
    pub start: Nanos,
    /// When measurement starts for it (`startdelay + ramp_time`).
    pub measure_from: Nanos,
    /// When it stops issuing, if time-bounded.
    pub stop_at: Option<Nanos>,
    pub bounds: Bounds,
    /// The threads that must finish before this one starts (`stonewall`,
    /// `wait_for`: [`jobs::serial_order`]); its start, measured part and
    /// end are set when they have.
    pub after: Vec<u32>,
    /// Some thread of the workload waits for others: each thread's own
    /// measured part `[measure_from, stop_at]` bounds what it counts, as
    /// the groups do not share one window.
    pub serial: bool,
    /// A kernel thread (JBD2, [`crate::world::journal`]): a switch to it keeps
    /// the address space.
    pub kthread: bool,
    /// An io_uring job's completion strategy ([`crate::world::uring`]); `None`
    /// for every other thread.
    pub uring: Option<host::uring::Strategy>,
}

impl ThreadSpec {
    /// The thread may start now, at `now`: its issuer counts `ramp_time`
    /// and `runtime` from its own start ([`Issuer::released`]).
    pub fn release(&mut self, now: Nanos) {
        self.issuer = Issuer::released(&self.job, self.bounds, 0, now);
        self.start = self.issuer.start();
        self.measure_from = self.issuer.measure_from();
        self.stop_at = self.issuer.stop_at();
    }
}

/// Checks every job and places its thread on a core.
pub(crate) fn threads(
    jobs: &[Job],
    host: &HostProfile,
    queue_depth: u32,
    runtime_override: Option<Nanos>,
) -> Result<Vec<ThreadSpec>, SimError> {
    let mut per_core = vec![0usize; host.cores as usize];
    let mut out = Vec::with_capacity(jobs.len());
    let order = jobs::serial_order(jobs)
        .map_err(|(i, reason)| SimError::Job(jobs::Refused::new(&jobs[i], reason)))?;
    let serial = order.iter().any(|a| !a.is_empty());
    for (i, (job, after)) in jobs.iter().zip(order).enumerate() {
        let fail = |reason: String| SimError::Job(jobs::Refused::new(job, reason));
        if job.end_fsync {
            return Err(fail(
                "end_fsync is not simulated (fsync=N and fdatasync=N are: the ext4 fsync path, crates/sim/src/world/journal.rs)".into(),
            ));
        }
        if (job.fsync > 0 || job.fdatasync > 0) && job.direct {
            return Err(fail(
                "fsync/fdatasync with direct=1 is not simulated (the metadata commit of an O_DIRECT append is not modelled); use direct=0, whose writes go through the page cache".into(),
            ));
        }
        if job.verify.is_some() {
            return Err(fail(
                "verify needs real data and is not simulated; use `cinterrupts run`".into(),
            ));
        }
        let cpus = job
            .cpus()
            .unwrap_or_else(|| (0..host.cores as usize).collect());
        if cpus.is_empty() {
            return Err(fail("cpus_allowed: no CPU left for this clone".into()));
        }
        if let Some(&bad) = cpus.iter().find(|&&c| c >= host.cores as usize) {
            return Err(fail(format!(
                "cpus_allowed: CPU {bad} does not exist on host '{}' ({} cores, 0-{})",
                host.name,
                host.cores,
                host.cores - 1
            )));
        }
        // fio's sqthread_poll_cpu pins the SQ thread (IORING_SETUP_SQ_AFF).
        // Its core is not a modelled host core ([`crate::world::uring`]): on a CPU
        // the job's own threads may use it would take their time.
        if let (true, Some(sq)) = (job.uring.sqthread_poll, job.uring.sqthread_poll_cpu) {
            if sq as usize >= host.cores as usize {
                return Err(fail(format!(
                    "option 'sqthread_poll_cpu': CPU {sq} does not exist on host '{}' ({} cores)",
                    host.name, host.cores
                )));
            }
            if cpus.contains(&(sq as usize)) {
                return Err(fail(format!(
                    "option 'sqthread_poll_cpu': the SQ thread on CPU {sq}, which the job's threads use too, is not simulated (its core is not modelled); pin it to another CPU"
                )));
            }
        }
        // No load balancing: a thread stays on the least-loaded CPU of its
        // set when it starts (ties: the lowest), as pinned benchmarks do.
        let core = *cpus
            .iter()
            .min_by_key(|&&c| (per_core[c], c))
            .expect("non-empty");
        per_core[core] += 1;

        let waiter = Waiter::of(job.ioengine);
        // The job parser refuses `hipri` with other engines, as fio does; a
        // `Job` built in code is held to the same rule ([`crate::world::completion`]:
        // Linux polls a pvsync2 call's or an IOPOLL ring's requests only).
        if job.hipri && !matches!(job.ioengine, jobs::Engine::Pvsync2 | jobs::Engine::IoUring) {
            return Err(fail(format!(
                "option 'hipri': needs ioengine pvsync2 or io_uring, not {}{}",
                job.ioengine,
                if waiter == Waiter::Libaio {
                    " (Linux's aio cannot poll: fs/aio.c aio_prep_rw clears IOCB_HIPRI, and io_getevents sleeps; use ioengine=io_uring with hipri)"
                } else {
                    ""
                }
            )));
        }
        let (job, uring) = match strategy_of(job, host.uring) {
            Ok(x) => x,
            Err(reason) => return Err(fail(reason)),
        };
        let job = &job;
        let bounds = job.bounds(runtime_override).map_err(|reason| {
            fail(if reason.starts_with("needs runtime=") {
                format!("{reason}: a simulated device has no size to run through")
            } else {
                reason
            })
        })?;
        let issuer = Issuer::new(job, bounds, 0);
        let depth = issuer.max_in_flight();
        if depth > queue_depth {
            return Err(fail(format!(
                "iodepth={depth} exceeds the device's queue depth {queue_depth}"
            )));
        }
        out.push(ThreadSpec {
            job: job.clone(),
            waiter,
            core,
            process: if job.thread { 0 } else { i as u32 + 1 },
            start: issuer.start(),
            measure_from: issuer.measure_from(),
            stop_at: issuer.stop_at(),
            issuer,
            bounds,
            after: after.into_iter().map(|k| k as u32).collect(),
            serial,
            kthread: false,
            uring,
        });
    }
    if out.is_empty() {
        return Err(SimError::Config("the job file has no jobs".into()));
    }
    check_size(&out)?;
    Ok(out)
}

/// Refuses a workload whose state would pass the memory bound
/// ([`MAX_THREADS`], [`MAX_IN_FLIGHT`]), naming the job that passes it.
fn check_size(threads: &[ThreadSpec]) -> Result<(), SimError> {
    let mut in_flight = 0u64;
    for (i, t) in threads.iter().enumerate() {
        let fail = |reason: String| SimError::Job(jobs::Refused::new(&t.job, reason));
        if i == MAX_THREADS {
            return Err(fail(format!(
                "more than {MAX_THREADS} threads (jobs times numjobs): the simulator's bound, each holding 0.5 MB of latency histograms"
            )));
        }
        in_flight += u64::from(t.issuer.max_in_flight());
        if in_flight > MAX_IN_FLIGHT {
            return Err(fail(format!(
                "more than {MAX_IN_FLIGHT} requests in flight over all threads (the sum of iodepth): the simulator's bound"
            )));
        }
    }
    Ok(())
}

/// The job as the simulator runs it and its thread's strategy: the job's
/// ring flags win; `run` is the run's strategy (`--uring` or the host
/// key). `Err` names what cannot be simulated.
pub(crate) fn strategy_of(job: &Job, run: Strategy) -> Result<(Job, Option<Strategy>), String> {
    let mut job = job.clone();
    if job.ioengine != Engine::IoUring {
        return Ok((job, None));
    }
    if job.hipri && job.uring.sqthread_poll {
        return Err(
            "options 'hipri' and 'sqthread_poll' together (the SQ thread polling for the completions) are not simulated".into(),
        );
    }
    let s = if job.hipri {
        Strategy::IoPoll
    } else if job.uring.sqthread_poll {
        Strategy::SqPoll
    } else {
        match run {
            Strategy::IoPoll => job.hipri = true,
            Strategy::SqPoll => job.uring.sqthread_poll = true,
            _ => {}
        }
        run
    };
    Ok((job, Some(s)))
}
