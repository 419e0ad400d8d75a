//! Drives a policy and a completion queue over a timed stream of submissions
//! and completions, and reports every interrupt with what it reaped. This is
//! `cinterrupts coalesce` without the CSV, and the policies' test bench.

use crate::cq::{CompletionQueue, Reaped};
use crate::{Command, Completion, Interrupt, Nanos, Policy};

/// One interrupt: when, what kind, and the entries its handler reaped in
/// order (possibly none: a delta interrupt after an urgent-only one may find
/// only already-reaped entries, and still lets the driver ring the doorbell).
#[derive(Debug)]
pub struct Delivery<'a> {
    pub time: Nanos,
    pub kind: Interrupt,
    pub reaped: &'a [Reaped],
}

/// Events must come in time order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("time {at} is before the previous event at {now}")]
pub struct TimeWentBack {
    pub at: Nanos,
    pub now: Nanos,
}

pub struct Replay {
    policy: Box<dyn Policy>,
    cq: CompletionQueue,
    now: Nanos,
    scratch: Vec<Reaped>,
    forced: u64,
}

impl Replay {
    pub fn new(policy: Box<dyn Policy>) -> Self {
        Replay {
            policy,
            cq: CompletionQueue::unbounded(),
            now: 0,
            scratch: Vec::new(),
            forced: 0,
        }
    }

    pub fn policy(&self) -> &dyn Policy {
        self.policy.as_ref()
    }

    pub fn now(&self) -> Nanos {
        self.now
    }

    /// Completions posted and not yet delivered.
    pub fn pending(&self) -> usize {
        self.cq.unreaped()
    }

    /// CQ entries the host has not handed back (reaped or not): what the
    /// replay holds in memory.
    pub fn occupied(&self) -> usize {
        self.cq.occupied()
    }

    fn deliver(&mut self, kind: Interrupt, sink: &mut impl FnMut(&Delivery)) {
        self.scratch.clear();
        self.cq.reap(kind, &mut self.scratch);
        sink(&Delivery {
            time: self.now,
            kind,
            reaped: &self.scratch,
        });
    }

    /// Fires every deadline due at or before `t`, in time order.
    fn fire_due(&mut self, t: Nanos, sink: &mut impl FnMut(&Delivery)) {
        while let Some(d) = self.policy.deadline() {
            if d > t {
                break;
            }
            self.now = self.now.max(d);
            match self.policy.deadline_reached(self.now) {
                Some(kind) => self.deliver(kind, sink),
                // A policy must move or clear a deadline it has reached.
                None if self.policy.deadline() == Some(d) => break,
                None => {}
            }
        }
    }

    /// Moves time to `t`, firing the deadlines due by then first: a deadline
    /// at the same instant as an event comes before it (TOS Alg. 1 loops
    /// `while now < timeout`).
    pub fn advance(
        &mut self,
        t: Nanos,
        sink: &mut impl FnMut(&Delivery),
    ) -> Result<(), TimeWentBack> {
        if t < self.now {
            return Err(TimeWentBack {
                at: t,
                now: self.now,
            });
        }
        self.fire_due(t, sink);
        self.now = t;
        Ok(())
    }

    pub fn submit(
        &mut self,
        t: Nanos,
        cmd: Command,
        sink: &mut impl FnMut(&Delivery),
    ) -> Result<(), TimeWentBack> {
        self.advance(t, sink)?;
        self.policy.submitted(t, cmd);
        Ok(())
    }

    pub fn complete(
        &mut self,
        t: Nanos,
        cqe: Completion,
        sink: &mut impl FnMut(&Delivery),
    ) -> Result<(), TimeWentBack> {
        self.advance(t, sink)?;
        self.cq
            .post(t, cqe)
            .expect("an unbounded completion queue never fills");
        if let Some(kind) = self.policy.completed(t, cqe) {
            self.deliver(kind, sink);
        }
        Ok(())
    }

    /// The input has ended: time runs on until every pending deadline has
    /// fired. Returns the time of the last event or delivery. If a policy
    /// left anything undelivered with no deadline (a bug the property tests
    /// look for), a final full interrupt delivers it then.
    pub fn finish(&mut self, sink: &mut impl FnMut(&Delivery)) -> Nanos {
        self.fire_due(Nanos::MAX, sink);
        if self.cq.unreaped() > 0 {
            self.forced += 1;
            self.deliver(Interrupt::Full, sink);
        }
        self.now
    }

    /// How many times [`Replay::finish`] had to deliver completions the
    /// policy left pending with no deadline: always 0 for a correct policy.
    pub fn forced_flushes(&self) -> u64 {
        self.forced
    }
}
