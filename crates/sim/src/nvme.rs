//! The NVMe controller as one mechanism: the device model behind the SQ
//! doorbell (crate `service`, the model every front end applies), one
//! completion queue per interrupt vector, and each CQ's interrupt policy,
//! which decides when the vector fires (TOS 2 and 3; NVMe 1.4 5.21.1.8 for
//! aggregation).
//!
//! The controller owns its state; nothing else reads a CQ, a policy or the
//! device's units. The host reaches it through a few calls and learns what
//! to do from what they return (a command started, an entry written or
//! held, an interrupt to raise); the one thing it does on its own is
//! schedule its events (a started command's service end, a policy's
//! deadline). Which request is which, and what an interrupt does to a core,
//! stay the host's ([`crate::world::device`] wires the two).

use std::collections::VecDeque;

use hdrhistogram::Histogram;
use policy::cq::{CompletionQueue, Reaped};
use policy::oracle::{Budget, Floor};
use policy::{Command, Completion, Interrupt, Marks, Nanos, Policy};

use crate::events::{Ev, Events};

/// A command as the device holds it: the request, and the core whose
/// event run its service end waits in ([`crate::events`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tag {
    pub req: u32,
    pub core: u32,
}

/// The device model, its commands tagged with their requests.
pub(crate) type Device = service::Device<Tag>;

/// An interrupt a CQ's policy decided on: the vector's core, the queue and
/// what the handler reaps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Irq {
    pub core: u32,
    pub queue: u32,
    pub kind: Interrupt,
}

/// What posting a completion did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Post {
    /// The CQ was full: the device holds the entry until the handler frees
    /// slots ([`Controller::held`]).
    Held,
    /// The entry is in the CQ; the policy may have decided to interrupt.
    Written(Option<Irq>),
}

/// One completion queue: its policy and the controller's view of it.
struct Queue {
    cq: CompletionQueue,
    policy: Box<dyn Policy>,
    /// The policy's deadline.
    armed: Option<Nanos>,
    /// The earliest Deadline event in the queue, if any.
    scheduled: Option<Nanos>,
    /// Completions the device holds because the CQ is full, in order.
    overflow: VecDeque<u32>,
    irq_core: u32,
    /// When the last completion was posted to this CQ, for the gaps.
    last_post: Option<Nanos>,
    /// The oracle floor of this CQ's posts in the window (an interrupt
    /// delivers one queue's completions only: the run's floor is the
    /// queues' sum).
    floor: Floor,
}

/// The oracle floor's budget for an unmarked or Barrier completion, as
/// `coalesce --trace` floors a trace by default (its `--budget`, 50 us:
/// crates/cli/src/coalesce.rs); Urgent ones none.
pub(crate) const ORACLE_BUDGET: Nanos = 50 * policy::US;

pub(crate) struct Controller {
    device: Device,
    queues: Vec<Queue>,
    /// Time between consecutive posts to the same CQ, for posts in the
    /// measured window (TOS 5.2's inter-arrival CDF).
    gaps: Histogram<u64>,
    /// Completions posted in the window, for the oracle floor.
    floored: u64,
}

impl Controller {
    /// A controller with `device` and one CQ of `depth` entries per policy,
    /// queue `q` interrupting core `q`.
    pub(crate) fn new(device: Device, depth: usize, policies: Vec<Box<dyn Policy>>) -> Controller {
        let queues = policies
            .into_iter()
            .enumerate()
            .map(|(q, policy)| Queue {
                cq: CompletionQueue::with_capacity(depth),
                policy,
                armed: None,
                scheduled: None,
                overflow: VecDeque::new(),
                irq_core: q as u32,
                last_post: None,
                floor: Floor::new(Budget::new(ORACLE_BUDGET)),
            })
            .collect();
        Controller {
            device,
            queues,
            gaps: report::gaps::histogram(),
            floored: 0,
        }
    }

    /// Each queue's interrupt core, by queue.
    pub(crate) fn irq_cores(&self) -> Vec<u32> {
        self.queues.iter().map(|q| q.irq_core).collect()
    }

    /// The host rang the SQ doorbell for `req`. A command on an
    /// interrupting queue is shown to its policy (which may arm a
    /// deadline); a polled one (`queue` `None`) is not. Returns the
    /// command's start if a unit took it at once.
    pub(crate) fn submit(
        &mut self,
        now: Nanos,
        queue: Option<u32>,
        command: service::Command<Tag>,
        marks: Marks,
        events: &mut Events,
    ) -> Option<Nanos> {
        if let Some(q) = queue {
            let id = command.tag.req as u64;
            self.queues[q as usize]
                .policy
                .submitted(now, Command { id, marks });
            self.rearm(q, now, events);
        }
        let started = self.device.submit(now, command)?;
        Some(Self::started(started, events))
    }

    /// A unit is free at `now`: it starts the next waiting command, if
    /// any. Returns the request and its start.
    pub(crate) fn unit_freed(&mut self, now: Nanos, events: &mut Events) -> Option<(u32, Nanos)> {
        let s = self.device.unit_freed(now)?;
        Some((s.tag.req, Self::started(s, events)))
    }

    /// Schedules a started command's service end at its due time.
    fn started(s: service::Started<Tag>, events: &mut Events) -> Nanos {
        let Tag { req, core } = s.tag;
        events.push(s.due, Ev::ServiceDone { req, core });
        s.start
    }

    /// A serviced command's completion for queue `q`: behind entries
    /// already held, it is held too (posts keep their order).
    pub(crate) fn behind_held(&mut self, q: u32, req: u32) -> bool {
        let queue = &mut self.queues[q as usize];
        if queue.overflow.is_empty() {
            return false;
        }
        queue.overflow.push_back(req);
        true
    }

    /// Writes the CQE (or holds it while the CQ is full) and shows it to
    /// the policy. `measuring`: the post counts in the gaps. The host
    /// applies the interrupt, then calls [`Controller::rearm`].
    pub(crate) fn post(
        &mut self,
        now: Nanos,
        q: u32,
        req: u32,
        marks: Marks,
        measuring: bool,
    ) -> Post {
        let cqe = Completion::ok(req as u64, marks);
        let queue = &mut self.queues[q as usize];
        if queue.cq.post(now, cqe).is_err() {
            queue.overflow.push_back(req);
            return Post::Held;
        }
        // The gap ends at a post in the window; it may start before it.
        if let Some(last) = queue.last_post.replace(now) {
            if measuring {
                self.gaps.saturating_record(now - last);
            }
        }
        if measuring {
            // Posts come in time order (the event queue's); a post at an
            // earlier time than the last cannot happen, so the error is
            // ignored rather than carried.
            let _ = queue.floor.complete(now, marks.urgent);
            self.floored += 1;
        }
        let irq = queue.policy.completed(now, cqe).map(|kind| Irq {
            core: queue.irq_core,
            queue: q,
            kind,
        });
        Post::Written(irq)
    }

    /// The next held completion of queue `q`, taken if the CQ has room for
    /// it now (the host then posts it).
    pub(crate) fn held(&mut self, q: u32) -> Option<u32> {
        let queue = &mut self.queues[q as usize];
        if queue.cq.occupied() >= queue.cq.capacity() {
            return None;
        }
        queue.overflow.pop_front()
    }

    /// Keeps an event scheduled no later than the policy's deadline. A
    /// deadline pushed later (adaptive extends its timer on every
    /// completion) does not add an event: the earlier one, when it comes,
    /// schedules the next.
    pub(crate) fn rearm(&mut self, q: u32, now: Nanos, events: &mut Events) {
        let queue = &mut self.queues[q as usize];
        queue.armed = queue.policy.deadline();
        if let Some(t) = queue.armed {
            let t = t.max(now);
            if !matches!(queue.scheduled, Some(s) if s <= t) {
                queue.scheduled = Some(t);
                events.push(t, Ev::Deadline { queue: q });
            }
        }
    }

    /// Queue `q`'s deadline event at `now`: the policy's timer fires if it
    /// is due. The host applies the interrupt, then calls
    /// [`Controller::rearm`].
    pub(crate) fn deadline(&mut self, q: u32, now: Nanos) -> Option<Irq> {
        let queue = &mut self.queues[q as usize];
        if queue.scheduled == Some(now) {
            queue.scheduled = None;
        }
        if !queue.armed.is_some_and(|t| t <= now) {
            return None;
        }
        queue.armed = None;
        let kind = queue.policy.deadline_reached(now)?;
        Some(Irq {
            core: queue.irq_core,
            queue: q,
            kind,
        })
    }

    /// The handler reaps queue `q` as the interrupt's `kind` says
    /// (`policy::cq`: an urgent-only interrupt takes the urgent entries).
    pub(crate) fn reap(&mut self, q: u32, kind: Interrupt, out: &mut Vec<Reaped>) {
        self.queues[q as usize].cq.reap(kind, out);
    }

    pub(crate) fn gaps(&self) -> &Histogram<u64> {
        &self.gaps
    }

    /// The oracle floor of the posts in the window (`policy::oracle`,
    /// [`ORACLE_BUDGET`]): (completions, interrupts), the queues' floors
    /// summed.
    pub(crate) fn oracle_floor(&self) -> (u64, u64) {
        let floor = self
            .queues
            .iter()
            .map(|q| {
                let mut f = q.floor.clone();
                f.finish();
                f.interrupts()
            })
            .sum();
        (self.floored, floor)
    }

    /// What the controller's structures hold, bytes (capacities; the
    /// policies' own state not counted).
    pub(crate) fn bytes(&self) -> usize {
        use std::mem::size_of;
        let queues: usize = self
            .queues
            .iter()
            .map(|q| {
                size_of::<Queue>()
                    + q.cq.capacity() * size_of::<Completion>()
                    + q.overflow.capacity() * size_of::<u32>()
            })
            .sum();
        queues + self.device.memory() + self.gaps.distinct_values() * size_of::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use policy::catalogue::{self, PolicySpec};

    const US: Nanos = 1_000;

    fn controller(policy: PolicySpec, depth: usize, units: u32) -> (Controller, Events) {
        let device = Device::null(10 * US, units);
        let policy = catalogue::build(&policy).expect("a catalogued strategy");
        (
            Controller::new(device, depth, vec![policy]),
            Events::new(1, vec![0], vec![0]),
        )
    }

    fn command(req: u32) -> service::Command<Tag> {
        service::Command {
            tag: Tag { req, core: 0 },
            write: false,
            bytes: 4096,
        }
    }

    fn adaptive_as(name: &str, delta: Nanos, thr: u32) -> PolicySpec {
        PolicySpec {
            delta: Some(delta),
            thr: Some(thr),
            ..PolicySpec::named(name)
        }
    }

    fn adaptive(delta: Nanos, thr: u32) -> PolicySpec {
        adaptive_as("adaptive", delta, thr)
    }

    #[test]
    fn a_started_command_schedules_its_service_end_and_a_freed_unit_starts_the_next() {
        let (mut c, mut ev) = controller(PolicySpec::named("default"), 8, 1);
        let m = Marks::default();
        assert_eq!(c.submit(0, Some(0), command(0), m, &mut ev), Some(0));
        // One unit: the second waits for it.
        assert_eq!(c.submit(US, Some(0), command(1), m, &mut ev), None);
        assert_eq!(
            ev.pop(),
            Some((10 * US, Ev::ServiceDone { req: 0, core: 0 }))
        );
        assert_eq!(c.unit_freed(10 * US, &mut ev), Some((1, 10 * US)));
        assert_eq!(
            ev.pop(),
            Some((20 * US, Ev::ServiceDone { req: 1, core: 0 }))
        );
        assert_eq!(c.unit_freed(20 * US, &mut ev), None);
    }

    #[test]
    fn a_polled_command_is_never_shown_to_the_policy() {
        // cint's strict Barriers hold a Barrier's interrupt until every
        // command submitted before it completed (TOS 3.4, 4.3): an earlier
        // command the policy saw holds it, a polled one does not.
        let strict = || PolicySpec {
            barrier: Some(policy::cint::BarrierMode::Strict),
            ..adaptive_as("cint", 6 * US, 32)
        };
        let barrier = Marks {
            barrier: true,
            ..Marks::default()
        };
        for (first_queue, held) in [(Some(0), true), (None, false)] {
            let (mut c, mut ev) = controller(strict(), 8, 4);
            c.submit(0, first_queue, command(0), Marks::default(), &mut ev);
            c.submit(0, Some(0), command(1), barrier, &mut ev);
            let post = c.post(10 * US, 0, 1, barrier, true);
            assert_eq!(
                post == Post::Written(None),
                held,
                "{first_queue:?}: {post:?}"
            );
        }
    }

    #[test]
    fn a_deadline_interrupts_only_when_due() {
        let (mut c, mut ev) = controller(adaptive(6 * US, 32), 8, 4);
        let m = Marks::default();
        c.submit(0, Some(0), command(0), m, &mut ev);
        assert_eq!(c.post(10 * US, 0, 0, m, true), Post::Written(None));
        c.rearm(0, 10 * US, &mut ev);
        assert_eq!(c.deadline(0, 12 * US), None, "not due yet");
        let irq = c.deadline(0, 16 * US).expect("due: the burst ends");
        assert_eq!((irq.core, irq.queue), (0, 0));
        let mut out = Vec::new();
        c.reap(0, irq.kind, &mut out);
        assert_eq!(out.iter().map(|r| r.id).collect::<Vec<_>>(), [0]);
    }

    #[test]
    fn a_full_cq_holds_entries_in_order_until_the_handler_frees_slots() {
        let (mut c, _ev) = controller(PolicySpec::named("default"), 2, 4);
        let m = Marks::default();
        for req in 0..2 {
            assert!(matches!(
                c.post(US, 0, req, m, true),
                Post::Written(Some(_))
            ));
        }
        assert_eq!(c.post(US, 0, 2, m, true), Post::Held);
        // Behind a held entry, the next is held too, whatever the room.
        assert!(c.behind_held(0, 3));
        assert_eq!(c.held(0), None, "no room yet");
        let mut out = Vec::new();
        c.reap(0, Interrupt::Full, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(c.held(0), Some(2));
        assert!(matches!(c.post(2 * US, 0, 2, m, true), Post::Written(_)));
        assert_eq!(c.held(0), Some(3));
        assert!(matches!(c.post(2 * US, 0, 3, m, true), Post::Written(_)));
        assert_eq!(c.held(0), None);
        assert!(!c.behind_held(0, 4), "nothing held: post at once");
    }

    #[test]
    fn gaps_count_posts_in_the_window_only() {
        let (mut c, _ev) = controller(PolicySpec::named("default"), 8, 4);
        let m = Marks::default();
        c.post(0, 0, 0, m, false);
        c.post(3 * US, 0, 1, m, true);
        c.post(4 * US, 0, 2, m, false);
        assert_eq!(c.gaps().len(), 1);
        assert_eq!(c.gaps().max(), c.gaps().highest_equivalent(3 * US));
    }
}
