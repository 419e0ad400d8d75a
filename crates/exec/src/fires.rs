//! What the emulated device held, per mark, and why its strategy fired
//! (issue 38 item 4): the device's policy wrapped (`Watched`) so that
//! every command it is told of and every completion it is handed is
//! counted beside the interrupt it fires, without the strategy or the
//! controller knowing.
//!
//! - **Per mark** (Urgent, Barrier, unmarked; both bits count as Urgent,
//!   TOS 4.1.1): the completions the strategy was handed, the fires that
//!   delivered at least one of them (a full interrupt delivers every entry
//!   it holds, an urgent-only one only the Urgent ones, TOS 3.5), and the
//!   depth the device had in flight when one of them finished (itself
//!   included; the device's own count, `emu::device::DeviceStats::depth`):
//!   a completion at depth 1 has no neighbour to ride with, so
//!   no strategy can coalesce it (TOS 3.2: coalescing needs completions
//!   closer than delta).
//! - **Why it fired**, from what the strategy was handed when it returned
//!   an interrupt: an Urgent, a Barrier or an erroneous completion
//!   (`urgent`, `barrier`, `error`: TOS Algorithm 2 lines 11-15, and NVMe's
//!   "commands that complete in error are not coalesced", TOS 4.2.1); an
//!   unmarked one (`threshold`: cint's thr reached, Algorithm 2 lines
//!   16-18; a strategy that does not coalesce, `default`, fires so for
//!   every completion); or its timer (`timeout`: cint's quiescent gap of
//!   delta, lines 19-21). The policy crate's strategies return only the
//!   interrupt's kind, so the reason is read from the call that fired it.
//!
//! The counts are the strategy's view: the handler may reap, with one
//! interrupt, entries posted after it was raised; the report's
//! `completions` and `interrupts` are the handler's.

use std::sync::{Arc, Mutex};

use emu::device::{depth_bounds, DeviceStats, DEPTH_BUCKETS};
use policy::{Command, Completion, Interrupt, Marks, Nanos, Policy};
use serde::{Deserialize, Serialize};

/// Urgent, Barrier, unmarked, as `counts` orders them.
const MARKS: usize = 3;
const URGENT: usize = 0;

fn mark_index(m: Marks) -> usize {
    match (m.urgent, m.barrier) {
        (true, _) => 0,
        (false, true) => 1,
        (false, false) => 2,
    }
}

/// Why the strategy fired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reason {
    Urgent,
    Barrier,
    Error,
    Threshold,
    Timeout,
}

const REASONS: usize = 5;

/// What one strategy instance saw, added into the shared log when the
/// device drops it (at its stop): nothing is shared while it runs.
#[derive(Clone, Debug, Default)]
struct Tally {
    /// Per mark: completions handed, fires that delivered some, and the
    /// completions those delivered.
    completions: [u64; MARKS],
    interrupts: [u64; MARKS],
    delivered: [u64; MARKS],
    /// Per reason: fires, and the completions they delivered.
    fires: [u64; REASONS],
    fired_completions: [u64; REASONS],
    /// Handed but not delivered by a fire when the device stopped.
    pending: [u64; MARKS],
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        for m in 0..MARKS {
            self.completions[m] += o.completions[m];
            self.interrupts[m] += o.interrupts[m];
            self.delivered[m] += o.delivered[m];
            self.pending[m] += o.pending[m];
        }
        for r in 0..REASONS {
            self.fires[r] += o.fires[r];
            self.fired_completions[r] += o.fired_completions[r];
        }
    }
}

/// Where the wrapped strategies leave their tallies.
#[derive(Clone, Debug, Default)]
pub struct FireLog(Arc<Mutex<Tally>>);

impl FireLog {
    /// `policy`, watched into this log.
    pub fn watch(&self, policy: Box<dyn Policy>) -> Box<dyn Policy> {
        Box::new(Watched {
            inner: policy,
            log: self.clone(),
            tally: Tally::default(),
        })
    }

    /// What every watched strategy saw (complete once the device
    /// stopped), beside the device's depths from its `stats`; `reaped`
    /// is what the handler reaped from the interrupt-driven CQ.
    pub fn fires(&self, stats: &DeviceStats, reaped: u64) -> Fires {
        Fires::of(&self.0.lock().expect("fire log"), stats, reaped)
    }
}

/// A strategy and what it is handed and fires.
struct Watched {
    inner: Box<dyn Policy>,
    log: FireLog,
    tally: Tally,
}

impl Watched {
    fn fired(&mut self, kind: Option<Interrupt>, reason: Reason) -> Option<Interrupt> {
        let kind = kind?;
        let t = &mut self.tally;
        let marks = match kind {
            Interrupt::Full => URGENT..MARKS,
            Interrupt::UrgentOnly => URGENT..URGENT + 1,
        };
        let mut delivered = 0;
        for m in marks {
            if t.pending[m] > 0 {
                t.interrupts[m] += 1;
                t.delivered[m] += t.pending[m];
                delivered += t.pending[m];
                t.pending[m] = 0;
            }
        }
        t.fires[reason as usize] += 1;
        t.fired_completions[reason as usize] += delivered;
        Some(kind)
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if let Ok(mut l) = self.log.0.lock() {
            l.add(&self.tally);
        }
    }
}

impl Policy for Watched {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn submitted(&mut self, now: Nanos, cmd: Command) {
        self.inner.submitted(now, cmd);
    }

    fn completed(&mut self, now: Nanos, cqe: Completion) -> Option<Interrupt> {
        let marks = cqe.marks.normalized();
        let m = mark_index(marks);
        let t = &mut self.tally;
        t.completions[m] += 1;
        t.pending[m] += 1;
        let kind = self.inner.completed(now, cqe);
        let reason = if cqe.error {
            Reason::Error
        } else if marks.urgent {
            Reason::Urgent
        } else if marks.barrier {
            Reason::Barrier
        } else {
            Reason::Threshold
        };
        self.fired(kind, reason)
    }

    fn deadline_reached(&mut self, now: Nanos) -> Option<Interrupt> {
        let kind = self.inner.deadline_reached(now);
        self.fired(kind, Reason::Timeout)
    }

    fn deadline(&self) -> Option<Nanos> {
        self.inner.deadline()
    }

    fn delay_bound(&self) -> Nanos {
        self.inner.delay_bound()
    }
}

/// The report's `exec.routing.fires`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Fires {
    /// Completions the strategy was handed, and the interrupts it fired.
    pub completions: u64,
    pub fires: u64,
    pub by_mark: FiresByMark,
    pub reasons: Reasons,
    /// Completions no fire had delivered when the device stopped (the
    /// handler reaped them with an earlier interrupt's entries).
    pub undelivered_at_stop: u64,
    /// Completions the handler reaped that the strategy was never handed:
    /// the device's poller was a lap behind the CQ while a fire waited for
    /// the call slot (`DeviceStats::unwalked_lapped`; the authors'
    /// `irq_poller` skips so too).
    pub not_walked: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FiresByMark {
    pub urgent: MarkFires,
    pub barrier: MarkFires,
    pub unmarked: MarkFires,
}

/// One mark's completions and the interrupts that delivered them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MarkFires {
    pub completions: u64,
    /// Fires that delivered at least one of them.
    pub interrupts: u64,
    /// Delivered by those fires, per fire.
    pub completions_per_interrupt: f64,
    /// The device's commands in flight in the pass one of them finished
    /// (itself and those finishing with it included; the device's count,
    /// `DeviceStats::depth`, over every completion of the mark): mean,
    /// and the histogram.
    pub depth_mean: f64,
    pub depth: Vec<DepthBucket>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DepthBucket {
    pub from: u64,
    /// `None`: and more.
    pub to: Option<u64>,
    pub completions: u64,
}

/// Fires by reason, and the completions each delivered.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Reasons {
    pub urgent: ReasonCount,
    pub barrier: ReasonCount,
    pub error: ReasonCount,
    /// An unmarked completion fired: cint's thr reached (or, for a
    /// strategy that does not coalesce, every completion).
    pub threshold: ReasonCount,
    /// The strategy's timer: cint's quiescent gap of delta.
    pub timeout: ReasonCount,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReasonCount {
    pub fires: u64,
    pub completions: u64,
}

impl Fires {
    fn of(t: &Tally, stats: &DeviceStats, reaped: u64) -> Fires {
        let mark = |m: usize| MarkFires {
            completions: t.completions[m],
            interrupts: t.interrupts[m],
            completions_per_interrupt: report::schema::per_interrupt(
                t.delivered[m],
                t.interrupts[m],
            ),
            depth_mean: ratio(stats.depth_sum[m], stats.depth_completions[m]),
            depth: (0..DEPTH_BUCKETS)
                .filter(|&b| stats.depth[m][b] > 0)
                .map(|b| {
                    let (from, to) = depth_bounds(b);
                    DepthBucket {
                        from,
                        to,
                        completions: stats.depth[m][b],
                    }
                })
                .collect(),
        };
        let reason = |r: Reason| ReasonCount {
            fires: t.fires[r as usize],
            completions: t.fired_completions[r as usize],
        };
        Fires {
            completions: t.completions.iter().sum(),
            fires: t.fires.iter().sum(),
            by_mark: FiresByMark {
                urgent: mark(0),
                barrier: mark(1),
                unmarked: mark(2),
            },
            reasons: Reasons {
                urgent: reason(Reason::Urgent),
                barrier: reason(Reason::Barrier),
                error: reason(Reason::Error),
                threshold: reason(Reason::Threshold),
                timeout: reason(Reason::Timeout),
            },
            undelivered_at_stop: t.pending.iter().sum(),
            not_walked: reaped.saturating_sub(t.completions.iter().sum()),
        }
    }

    /// The text report's lines: one per mark that had completions, one
    /// for the reasons.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (name, m) in [
            ("urgent", &self.by_mark.urgent),
            ("barrier", &self.by_mark.barrier),
            ("unmarked", &self.by_mark.unmarked),
        ] {
            if m.completions == 0 {
                continue;
            }
            let hist = m
                .depth
                .iter()
                .map(|b| match b.to {
                    Some(to) if to == b.from => format!("{}:{}", b.from, b.completions),
                    Some(to) => format!("{}-{}:{}", b.from, to, b.completions),
                    None => format!("{}+:{}", b.from, b.completions),
                })
                .collect::<Vec<_>>()
                .join(" ");
            out.push(format!(
                "{name}: {} completions by {} interrupts, {:.2} per interrupt; in flight at completion mean {:.2} ({hist})",
                m.completions, m.interrupts, m.completions_per_interrupt, m.depth_mean
            ));
        }
        let r = &self.reasons;
        let part = |n: &str, c: &ReasonCount| {
            format!(
                "{n} {} ({:.2} each)",
                c.fires,
                report::schema::per_interrupt(c.completions, c.fires)
            )
        };
        out.push(format!(
            "fired: {}, {}, {}, {}, {}; {} undelivered at stop, {} never handed to the strategy (its poller lapped)",
            part("urgent", &r.urgent),
            part("barrier", &r.barrier),
            part("threshold", &r.threshold),
            part("timeout", &r.timeout),
            part("error", &r.error),
            self.undelivered_at_stop,
            self.not_walked
        ));
        out
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cint() -> Box<dyn Policy> {
        policy::build(&policy::PolicySpec::named("cint")).unwrap()
    }

    #[test]
    fn depth_buckets_are_powers_of_two() {
        let b: Vec<usize> = [1, 2, 3, 4, 5, 8, 9, 16, 17, 64, 65, 1000]
            .iter()
            .map(|&d| emu::device::depth_bucket(d))
            .collect();
        assert_eq!(b, [0, 1, 2, 2, 3, 3, 4, 4, 5, 6, 7, 7]);
        assert_eq!(depth_bounds(2), (3, Some(4)));
        assert_eq!(depth_bounds(6), (33, Some(64)));
        assert_eq!(depth_bounds(7), (65, None));
    }

    #[test]
    fn reasons_of_a_cint_stream() {
        let log = FireLog::default();
        {
            let mut p = log.watch(cint());
            for id in 0..3 {
                p.submitted(
                    0,
                    Command {
                        id,
                        marks: Marks::NONE,
                    },
                );
            }
            // Two unmarked completions 1 us apart (delta 6 us): coalesced,
            // then the timer delivers both.
            assert_eq!(p.completed(1_000, Completion::ok(0, Marks::NONE)), None);
            assert_eq!(p.completed(2_000, Completion::ok(1, Marks::NONE)), None);
            let d = p.deadline().unwrap();
            assert_eq!(p.deadline_reached(d), Some(Interrupt::Full));
            // An Urgent one alone: an urgent-only interrupt.
            assert_eq!(
                p.completed(d + 50_000, Completion::ok(2, Marks::URGENT)),
                Some(Interrupt::UrgentOnly)
            );
        }
        let f = log.fires(&DeviceStats::default(), 3);
        assert_eq!(f.completions, 3);
        assert_eq!(f.fires, 2);
        let u = &f.by_mark.unmarked;
        assert_eq!((u.completions, u.interrupts), (2, 1));
        assert_eq!(u.completions_per_interrupt, 2.0);
        assert_eq!(
            f.reasons.timeout,
            ReasonCount {
                fires: 1,
                completions: 2
            }
        );
        assert_eq!(
            f.reasons.urgent,
            ReasonCount {
                fires: 1,
                completions: 1
            }
        );
        assert_eq!(f.undelivered_at_stop, 0);
        assert_eq!(f.not_walked, 0);
        assert_eq!(f.lines().len(), 3);
    }

    #[test]
    fn an_urgent_only_interrupt_leaves_unmarked_entries_held() {
        let log = FireLog::default();
        {
            let mut p = log.watch(cint());
            assert_eq!(p.completed(1_000, Completion::ok(0, Marks::NONE)), None);
            assert_eq!(
                p.completed(1_500, Completion::ok(1, Marks::URGENT)),
                Some(Interrupt::UrgentOnly)
            );
        }
        let f = log.fires(&DeviceStats::default(), 2);
        assert_eq!(f.by_mark.urgent.interrupts, 1);
        assert_eq!(f.by_mark.unmarked.interrupts, 0);
        assert_eq!(f.undelivered_at_stop, 1, "the unmarked one still held");
        assert_eq!(f.not_walked, 0);
    }
}
