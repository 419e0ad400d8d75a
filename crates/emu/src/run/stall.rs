//! The stall watchdog: a run in which nothing completes for too long ends
//! with an error naming the job that waits and where each queue stands,
//! rather than hanging. How long is too long follows from the jobs and the
//! device ([`limit`]): a job that starts late, thinks or is rate-limited,
//! or a slow device, is not a stall (issue 12: a fixed 10 s refused
//! `startdelay=11`, `thinktime=11s` and `null:100h`).

use std::sync::atomic::Ordering;
use std::time::Duration;

use policy::{format_nanos, Nanos, SEC};

use crate::backend::{BackendSpec, Kind};
use crate::error::EmuError;
use crate::run::shared::Running;
use crate::worker::WorkerSpec;

/// What the watchdog allows on top of the jobs' and the device's own quiet
/// times: the fixed bound it had before, which no real file's request on
/// this machine came near (a request to a file has no known service time).
pub(crate) const BASE: Nanos = 10 * SEC;

/// How long a stall report waits for the device thread's own view.
const PROBE_WAIT: Duration = Duration::from_millis(500);

/// The longest quiet time the jobs and the device explain, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Limit {
    pub(crate) total: Nanos,
    /// `10s + startdelay 11s + ...`, for the error.
    pub(crate) why: String,
}

/// [`BASE`], plus the longest a job may go without a completion by its own
/// options (its start delay, its think time, the gap its `rate_iops` or
/// `rate` leaves), plus the longest the device may hold a request (a null
/// device's latency, once per round of its depth that the jobs' requests
/// in flight need; a modelled device's bound on the same).
pub(crate) fn limit(specs: &[WorkerSpec], backend: &BackendSpec) -> Limit {
    let quiet = |s: &WorkerSpec| {
        let j = &s.job;
        let rate_gap = j
            .rate_iops
            .iter()
            .flat_map(|&(r, w)| [r, w])
            .filter(|&n| n > 0)
            .map(|n| SEC.div_ceil(n))
            .max()
            .unwrap_or(0);
        // `rate` in bytes/s: the gap its largest I/O leaves.
        let bytes_gap = j
            .rate
            .iter()
            .flat_map(|&(r, w)| [r, w])
            .filter(|&b| b > 0)
            .map(|b| {
                let gap = u128::from(j.max_block_size()) * u128::from(SEC) / u128::from(b);
                Nanos::try_from(gap).unwrap_or(Nanos::MAX)
            })
            .max()
            .unwrap_or(0);
        let rate_gap = rate_gap.max(bytes_gap);
        j.startdelay
            .saturating_add(j.thinktime)
            .saturating_add(rate_gap)
    };
    let job = specs.iter().max_by_key(|s| quiet(s));
    let job_part = job.map_or(0, quiet);
    let device_part = match backend.kind {
        Kind::Null { latency, depth } => {
            let in_flight: u64 = specs
                .iter()
                .map(|s| u64::from(s.job.io_loop().iodepth))
                .sum();
            latency.saturating_mul(in_flight.div_ceil(u64::from(depth.max(1))).max(1))
        }
        Kind::Timed { ref profile, .. } => {
            let in_flight: u64 = specs
                .iter()
                .map(|s| u64::from(s.job.io_loop().iodepth))
                .sum();
            let bytes = specs
                .iter()
                .map(|s| s.job.max_block_size())
                .max()
                .unwrap_or(0);
            profile.hold_bound(in_flight, bytes)
        }
        Kind::File { .. } => 0,
    };
    let mut why = format_nanos(BASE);
    if let (Some(s), true) = (job, job_part > 0) {
        why += &format!(
            " + job '{}''s start delay, think time and rate gap {}",
            s.job.name,
            format_nanos(job_part)
        );
    }
    if device_part > 0 {
        why += &format!(" + the device's service time {}", format_nanos(device_part));
    }
    Limit {
        total: BASE.saturating_add(job_part).saturating_add(device_part),
        why,
    }
}

/// Ends a run in which nothing completes for its limit while job threads
/// still run: they are told to stop, and the run returns an error naming
/// the first job still waiting and where each queue stands.
pub(crate) struct StallWatch<'a> {
    limit: Limit,
    specs: &'a [WorkerSpec],
    reaped: u64,
    since: Nanos,
}

impl<'a> StallWatch<'a> {
    pub(crate) fn new(r: &Running, limit: Limit, specs: &'a [WorkerSpec]) -> StallWatch<'a> {
        StallWatch {
            limit,
            specs,
            reaped: r.driver.counts().reaped,
            since: r.clock.now(),
        }
    }

    /// `waiting`: the index of the first job thread still running.
    pub(crate) fn check(&mut self, r: &Running, waiting: Option<usize>) -> Result<(), EmuError> {
        let (now, reaped) = (r.clock.now(), r.driver.counts().reaped);
        if reaped != self.reaped {
            (self.reaped, self.since) = (reaped, now);
        } else if now - self.since > self.limit.total {
            r.abort.store(true, Ordering::Relaxed);
            let waiting = waiting
                .and_then(|i| self.specs.get(i))
                .or(self.specs.first());
            let reason = format!(
                "the emulator stalled: no request completed for {} (the bound: {}); {}; {}",
                format_nanos(self.limit.total),
                self.limit.why,
                queue_states(r),
                r.device.probe(PROBE_WAIT)
            );
            return Err(match waiting {
                Some(s) => EmuError::Job(jobs::Refused::new(&s.job, reason)),
                None => EmuError::Stalled(reason),
            });
        }
        Ok(())
    }
}

/// Where each queue pair stands, for a stall report.
fn queue_states(r: &Running) -> String {
    r.driver
        .handlers()
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

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> WorkerSpec {
        let job = jobs::parse_str(text, "t.fio", &|_| None).unwrap().jobs[0].clone();
        WorkerSpec {
            owner: 0,
            bounds: job.bounds(Some(SEC)).unwrap(),
            job,
            region: (0, 1 << 20),
            seed: 1,
            verify: false,
            after: Vec::new(),
        }
    }

    #[test]
    fn jobs_that_start_late_or_think_long_and_slow_devices_are_not_stalls() {
        let null = |s| BackendSpec::parse(s).unwrap();
        let file = BackendSpec::file("/tmp/x");
        let plain = spec("[a]\nsize=1m\n");
        assert_eq!(limit(std::slice::from_ref(&plain), &file).total, BASE);
        let late = spec("[late]\nsize=1m\nstartdelay=11\n");
        let l = limit(&[plain.clone(), late], &file);
        assert_eq!(l.total, BASE + 11 * SEC);
        assert!(l.why.contains("job 'late'"), "{}", l.why);
        let thinker = spec("[t]\nsize=1m\nthinktime=11s\n");
        assert_eq!(limit(&[thinker], &file).total, BASE + 11 * SEC);
        let slow = spec("[r]\nsize=1m\nrate_iops=1\n");
        assert_eq!(limit(&[slow], &file).total, BASE + SEC);
        // rate=4k (bytes/s) with 8 KiB I/Os: one every 2 s.
        let slow_bytes = spec("[b]\nsize=1m\nbs=8k\nrate=4k\n");
        assert_eq!(limit(&[slow_bytes], &file).total, BASE + 2 * SEC);
        let hour = 3600 * SEC;
        assert_eq!(
            limit(std::slice::from_ref(&plain), &null("null:100h")).total,
            BASE + 100 * hour
        );
        // 128 in flight on a depth of 64: the last waits two rounds.
        let deep = spec("[d]\nsize=1m\nioengine=io_uring\niodepth=128\n");
        assert_eq!(
            limit(&[deep], &null("null:1s,depth=64")).total,
            BASE + 2 * SEC
        );
    }
}
