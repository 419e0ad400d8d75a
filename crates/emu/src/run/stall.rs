//! The stall watchdog: a run in which nothing completes for too long ends
//! with an error naming where each queue stands, rather than hanging.

use std::sync::atomic::Ordering;

use policy::Nanos;

use crate::error::EmuError;
use crate::run::shared::Running;

/// Ends a run in which nothing completes for `limit` while job threads
/// still run: they are told to stop, and the run returns an error naming
/// where each queue stands rather than hanging.
pub(crate) struct StallWatch {
    limit: Nanos,
    reaped: u64,
    since: Nanos,
}

impl StallWatch {
    pub(crate) fn new(r: &Running, limit: Nanos) -> StallWatch {
        StallWatch {
            limit,
            reaped: r.driver.counts().reaped,
            since: r.clock.now(),
        }
    }

    pub(crate) fn check(&mut self, r: &Running) -> Result<(), EmuError> {
        let (now, reaped) = (r.clock.now(), r.driver.counts().reaped);
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
