//! How a waiting thread learns that its request completed (issue 15, item
//! 1): by the device's interrupt (default), or by polling its completion
//! queue, with the decisions and statistics of [`host::poll`].
//!
//! - `interrupt`: today's path, the handler wakes the sleeping thread.
//! - `poll` ([`host::poll::Mode::Classic`]): the thread does not sleep after
//!   submitting; it spins in the kernel (its core busy, counted as the
//!   thread's system time) until the device posts the entry, reaps it
//!   (`per_completion`) and returns. A polled request goes to a queue with
//!   no interrupt (Linux's `HCTX_TYPE_POLL` queues): the policy never sees
//!   it and no interrupt is raised for it.
//! - `hybrid` ([`host::poll::Mode::Hybrid`]): sleeps on a timer for half
//!   the mean latency of the request's size bucket in the last statistics
//!   window ([`host::poll::HybridStats`], Linux's `io_poll_delay = 0`), is
//!   woken by the timer's interrupt, then spins.
//! - `select-isr` ([`host::poll::Mode::SelectIsr`]): the jobs with
//!   `critical=1` poll, the others take interrupts.
//!
//! Only blocking engines (psync, sync, pvsync...) poll; asynchronous engines
//! keep interrupts, which the run's notes say.

use std::str::FromStr;

use host::poll::{bucket, Io};
use serde::{Deserialize, Deserializer};

use crate::limits::MAX_SERVICE;
use crate::workload::Waiter;
use crate::world::{Busy, Kind, RState, Step, World};

/// The completion mode of a run (`sim --completion`, host profile key
/// `completion`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Completion {
    #[default]
    Interrupt,
    Poll,
    Hybrid,
    SelectIsr,
}

impl Completion {
    pub fn as_str(self) -> &'static str {
        match self {
            Completion::Interrupt => "interrupt",
            Completion::Poll => "poll",
            Completion::Hybrid => "hybrid",
            Completion::SelectIsr => "select-isr",
        }
    }

    /// [`host::poll`]'s name for it.
    pub fn mode(self) -> host::poll::Mode {
        match self {
            Completion::Interrupt => host::poll::Mode::Interrupt,
            Completion::Poll => host::poll::Mode::Classic,
            Completion::Hybrid => host::poll::Mode::Hybrid,
            Completion::SelectIsr => host::poll::Mode::SelectIsr,
        }
    }

    /// Whether a request of a job with `critical` polls.
    pub fn polls(self, critical: bool) -> bool {
        match self {
            Completion::Interrupt => false,
            Completion::Poll | Completion::Hybrid => true,
            Completion::SelectIsr => critical,
        }
    }
}

impl FromStr for Completion {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "interrupt" => Ok(Completion::Interrupt),
            "poll" | "classic" => Ok(Completion::Poll),
            "hybrid" => Ok(Completion::Hybrid),
            "select-isr" | "selectisr" => Ok(Completion::SelectIsr),
            other => Err(format!(
                "unknown completion mode '{other}' (interrupt, poll, hybrid, select-isr)"
            )),
        }
    }
}

impl<'de> Deserialize<'de> for Completion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl World {
    /// Whether `tid`'s requests complete by polling: a blocking engine, and
    /// the mode polls for its job.
    pub(crate) fn polling(&self, tid: u32) -> bool {
        let spec = &self.threads[tid as usize].spec;
        spec.waiter == Waiter::Blocking && self.completion.polls(spec.job.critical)
    }

    /// A polling thread's call has nothing yet: hybrid sleeps first if it
    /// has not for this batch, else the thread spins on its queue.
    pub(crate) fn poll_wait(&mut self, tid: u32, core: u32) {
        let th = &mut self.threads[tid as usize];
        let sleep = std::mem::take(&mut th.hybrid_sleep);
        if sleep > 0 {
            if self.measuring(self.now) {
                self.hybrid_sleeps += 1;
            }
            self.sleep_then(tid, core, self.now + sleep, Step::Reap);
            return;
        }
        th.spinning = true;
        // Ends when the device posts the entry ([`World::poll_post`]); a
        // segment this long ending on its own only spins on.
        self.start_seg(core, Kind::Kernel, MAX_SERVICE, Step::Poll);
    }

    /// The device posts a polled request's entry: its thread finds it at
    /// its next poll. A spinning thread's spin ends now and it reaps the
    /// entry (`per_completion`, as the handler would); one sleeping (hybrid)
    /// or off its CPU finds it when it runs.
    pub(crate) fn poll_post(&mut self, req: u32) {
        let r = &mut self.requests[req as usize];
        if r.state != RState::InDevice {
            self.audit.duplicates += 1;
            return;
        }
        r.state = RState::Delivered;
        self.audit.delivered += 1;
        let tid = r.tid;
        let th = &mut self.threads[tid as usize];
        th.ready.push_back(req);
        if !th.spinning || th.got.len() + th.ready.len() < th.needed as usize {
            return;
        }
        th.spinning = false;
        let core = th.spec.core as u32;
        let reap = self.host.per_completion;
        let c = &self.cores[core as usize];
        match c.busy {
            Busy::Thread {
                kind,
                start,
                then: Step::Poll,
                ..
            } if c.current == Some(tid) => {
                self.charge(core, kind, start);
                self.start_seg(core, Kind::Kernel, reap, Step::Reap);
            }
            _ => {
                // Cut short (a handler, a preemption): the saved spin ends
                // with the reap when the thread runs again.
                if let Some(seg) = th.saved.iter_mut().rev().find(|s| s.then == Step::Poll) {
                    seg.remaining = reap;
                    seg.then = Step::Reap;
                }
            }
        }
    }

    /// Hybrid polling: the batch just submitted sleeps the longest of its
    /// requests' sleeps ([`host::poll::Completions::submitted`]).
    pub(crate) fn hybrid_submitted(&mut self, tid: u32, batch: &[u32]) {
        if self.completion != Completion::Hybrid {
            return;
        }
        let mut sleep = 0;
        for &req in batch {
            let r = self.requests[req as usize];
            if r.polled {
                let io = Io {
                    bytes: r.bytes,
                    write: r.write,
                    critical: false,
                };
                sleep = sleep.max(self.poll.submitted(self.now, io));
            }
        }
        self.threads[tid as usize].hybrid_sleep = sleep;
    }

    /// The thread's call took `got[from..]`: each polled one ended now, a
    /// sample of hybrid polling's statistics (from its submit call).
    pub(crate) fn hybrid_ended(&mut self, tid: u32, from: usize) {
        let th = &self.threads[tid as usize];
        for &req in &th.got[from..] {
            let r = self.requests[req as usize];
            if r.polled {
                let latency = self.now.saturating_sub(r.issued);
                self.poll
                    .stats()
                    .ended(self.now, bucket(r.bytes, r.write), latency);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_modes() {
        for c in [
            Completion::Interrupt,
            Completion::Poll,
            Completion::Hybrid,
            Completion::SelectIsr,
        ] {
            assert_eq!(c.as_str().parse::<Completion>(), Ok(c));
        }
        assert!("spin".parse::<Completion>().is_err());
        assert!(Completion::SelectIsr.polls(true));
        assert!(!Completion::SelectIsr.polls(false));
        assert!(!Completion::Interrupt.polls(true));
    }
}
