//! IRQ suspension for a storage completion queue (issue 40): Linux 6.13's
//! napi IRQ suspension (Martin Karsten and Joe Damato, "Suspend IRQs during
//! application busy periods", net-next v7, 2024-11-08) carried from a
//! network queue to an NVMe CQ, as a pure state machine: state, one entry
//! per event, time passed in as `u64` nanoseconds, no clock.
//!
//! # The Linux mechanism (read in the series' patches)
//!
//! - `5dc51ec86df6` "net: Add napi_struct parameter irq_suspend_timeout":
//!   a per-NAPI `irq_suspend_timeout` (ns, netlink `napi-set` only, "There
//!   is no global sysfs parameter for this value"; 0 is off).
//! - `3fcbecbdeb04` "net: Add control functions for irq suspension"
//!   (net/core/dev.c): `napi_suspend_irqs` "bootstraps irq suspension by
//!   elongating the defer timeout to irq_suspend_timeout" (it
//!   `hrtimer_start`s the NAPI's timer with it: a restart pushes the
//!   deadline later); `napi_resume_irqs` "effectively cancels irq
//!   suspension by forcing the napi to be scheduled immediately".
//! - `ab5b28b007a7` "eventpoll: Trigger napi_busy_loop, if
//!   prefer_busy_poll is set": an epoll context with `prefer_busy_poll`
//!   makes one non-blocking pass of the busy loop per `epoll_wait`, even
//!   with `busy_poll_usecs` 0 ("exactly one iteration of the napi busy
//!   loop", v5 cover letter).
//! - `8a6de2627fd3` "eventpoll: Control irq suspension for
//!   prefer_busy_poll" (fs/eventpoll.c): `ep_poll` calls
//!   `ep_suspend_napi_irqs` when `ep_send_events` returns a positive count
//!   ("IRQs are not suspended in error (e.g. EINTR) cases", v5), and
//!   `ep_busy_loop` calls `napi_resume_irqs` when the busy poll found
//!   nothing and the thread would sleep; `ep_free` resumes as well.
//! - Documentation/networking/napi.rst, "IRQ suspension" (same series):
//!   "While application calls to epoll_wait successfully retrieve events,
//!   the kernel will defer the IRQ suspension timer. If the kernel does not
//!   retrieve any events while busy polling ... IRQ suspension is disabled
//!   and the IRQ mitigation strategies described above are engaged"; the
//!   timeout "serves as a safety mechanism to restart IRQ driver interrupt
//!   processing if the application has stalled".
//!
//! Its published numbers (memcached 1.6.29 under mutilate, AMD EPYC 7662,
//! ConnectX-5; gro_flush_timeout 20 us, defer_hard_irqs 100,
//! irq_suspend_timeout 20 ms), at 200K qps, average/p99 latency in us and
//! CPU: v5 cover letter (2024-11-03) base 127/458 at 25%, suspend20 69/170
//! at 29%, fullbusy 58/167 at 100%; v7 (the merged revision, re-run)
//! base 112/416 at 26%, suspend20 58/151 at 30%, fullbusy 46/133 at 100%.
//!
//! # The states here
//!
//! - [`State::Armed`]: the queue's vector is unmasked; an interrupt the
//!   device raises is delivered.
//! - [`State::Suspended`]: masked until `deadline`; an interrupt the device
//!   raises meanwhile is held (the MSI-X Pending Bit: one per vector, so
//!   held interrupts merge), delivered when the queue resumes.
//!
//! The events, each one method:
//! - [`Suspension::interrupt`]: the device raises the vector. Armed: it is
//!   delivered and the queue is masked with the timer armed (as a NAPI
//!   driver masks in its hardirq handler, napi.rst "Scheduling and IRQ
//!   masking", before the consumer's call keeps it masked). Suspended:
//!   held.
//! - [`Suspension::polled`]: a consumer's reaping call took completions
//!   from the CQ itself (its one pass of the busy loop) or returned
//!   completions to its caller: `found > 0` re-arms the timer at
//!   `now + timeout` (`napi_suspend_irqs`'s restart); a pass that took the
//!   CQ's entries also takes what a held interrupt was for.
//! - [`Suspension::sleep`]: a consumer found nothing and is about to sleep:
//!   the queue resumes (`napi_resume_irqs`), and a held interrupt is
//!   delivered now.
//! - [`Suspension::timer`]: the timer fires: the queue resumes and a held
//!   interrupt is delivered (`napi_watchdog` schedules the NAPI); a timer
//!   whose deadline was pushed later is not due yet.
//! - [`Suspension::error`]: a completion with an error status: delivered at
//!   once and the queue resumes (errors are never held; storage has this,
//!   the NIC's queue has no counterpart).
//!
//! # From a network queue to a storage queue
//!
//! Who the consumer is. In Linux it is the thread in `epoll_wait` on a
//! context whose sockets share one NAPI ID. Here it is any thread whose
//! requests complete on the CQ (blk-mq maps a hardware queue to the threads
//! of its cores), in its reaping call:
//! - a **blocking `pread`** thread's call waits right after it submitted
//!   its own request, which the device cannot have served yet; its pass
//!   finds nothing (unless another thread's entries are there) and it
//!   sleeps, which resumes the queue. A QD1 synchronous reader therefore
//!   keeps one interrupt per request: suspension never outlives one
//!   wake-up.
//! - a **libaio `io_getevents` or io_uring `io_uring_enter(GETEVENTS)`**
//!   batch reaper with a queue depth of requests in flight finds the
//!   entries the device posted while it processed and resubmitted the last
//!   batch: the queue stays masked through its busy period and interrupts
//!   come back only when it drains (its call finds nothing) or stalls (the
//!   timer). That is epoll's busy period.
//!
//! Where it does not transfer:
//! - Linux has no such mechanism for NVMe: NAPI's masking, its
//!   `gro_flush_timeout`/`napi_defer_hard_irqs` deferral (the "Loop 2" the
//!   cover letter's FAQ names) and busy polling are the network stack's;
//!   blk-mq completes an NVMe CQ in the hard interrupt and polls only queues
//!   created without a vector (`poll_queues`, `HCTX_TYPE_POLL`). A storage
//!   version needs the driver to mask a queue's MSI-X vector and a reaping
//!   call to poll an interrupt-driven CQ: out of tree, no published patch
//!   ([`crate::era::IRQ_SUSPEND_STORAGE`]).
//! - The fallback after a resume: Linux engages the software deferral; a
//!   storage queue has the device's own policy (NVMe aggregation, adaptive,
//!   cint, a Feature 09h plan), which decides when the vector fires once it
//!   is unmasked. With `poll` completion there is no vector to suspend.
//! - Completions are the consumer's own answers, not unsolicited packets;
//!   and one CQ serves every thread of its cores, so one reaper's busy
//!   period holds a synchronous neighbour's interrupt until the reaper's
//!   next pass or the timer, as the cover letter says of "concurrent
//!   applications using the same RX queue(s)".
//! - Errors: an NVMe completion can carry an error status, which must not
//!   wait for the reaper or the timer.

use std::fmt;
use std::str::FromStr;

use policy::{Interrupt, Nanos};

/// The option's value: `off`, or the timeout (Linux's per-NAPI
/// `irq_suspend_timeout`, ns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IrqSuspend {
    Off,
    /// The longest a queue stays masked without a consumer finding
    /// completions.
    Timeout(Nanos),
}

impl IrqSuspend {
    /// The timeout, `None` when off.
    pub fn timeout(self) -> Option<Nanos> {
        match self {
            IrqSuspend::Off => None,
            IrqSuspend::Timeout(t) => Some(t),
        }
    }
}

impl fmt::Display for IrqSuspend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IrqSuspend::Off => f.write_str("off"),
            IrqSuspend::Timeout(t) => f.write_str(&policy::format_nanos(*t)),
        }
    }
}

/// `off`, or a duration with its unit (`200us`, `20ms`); a bare number is
/// nanoseconds, as netlink's `irq-suspend-timeout` takes it. 0 is Linux's
/// off: written `off` here.
impl FromStr for IrqSuspend {
    type Err = String;

    fn from_str(s: &str) -> Result<IrqSuspend, String> {
        match s.trim() {
            "off" => Ok(IrqSuspend::Off),
            other => match policy::time::parse_duration(other, Some(1)) {
                Ok(0) => Err(format!(
                    "irq suspend '{other}': a timeout is above 0 (Linux's 0 is off: write off)"
                )),
                Ok(ns) => Ok(IrqSuspend::Timeout(ns)),
                Err(e) => Err(format!("irq suspend '{other}': off or a timeout ({e})")),
            },
        }
    }
}

/// The combination that cannot coexist: with `poll` completion every
/// request goes to a queue created without a vector, so there is no
/// interrupt to suspend. One line naming both options.
pub fn refuse_with(completion: crate::poll::Mode, suspend: IrqSuspend) -> Result<(), String> {
    match (completion, suspend) {
        (crate::poll::Mode::Poll, IrqSuspend::Timeout(_)) => Err(format!(
            "--irq-suspend {suspend} cannot be used with --completion poll: every request polls a queue with no interrupt vector, so there is no interrupt to suspend"
        )),
        _ => Ok(()),
    }
}

/// Where a queue's vector stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Unmasked: interrupts are delivered.
    Armed,
    /// Masked until `deadline` (or a consumer's sleep); `held` is the
    /// interrupt the device raised meanwhile, if any (one pending bit per
    /// vector: held interrupts merge, a full reap over an urgent-only one).
    Suspended {
        deadline: Nanos,
        held: Option<Interrupt>,
    },
}

/// What the host does with an interrupt the device raised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Irq {
    /// Deliver it now.
    Deliver(Interrupt),
    /// Masked: held until the queue resumes.
    Hold,
}

/// What the timer's event found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// Not suspended: nothing to do.
    Stale,
    /// The deadline moved later (a consumer found completions): the timer
    /// fires then.
    Later(Nanos),
    /// The queue resumed; deliver the held interrupt, if any.
    Expired(Option<Interrupt>),
}

/// One queue's IRQ suspension.
#[derive(Clone, Debug)]
pub struct Suspension {
    timeout: Nanos,
    state: State,
}

/// Two held interrupts are one pending bit: the handler reaps what the
/// wider one asks (`Full` over `UrgentOnly`).
fn merge(a: Option<Interrupt>, b: Interrupt) -> Interrupt {
    match (a, b) {
        (Some(Interrupt::Full), _) | (_, Interrupt::Full) => Interrupt::Full,
        _ => b,
    }
}

impl Suspension {
    /// A queue with suspension at `timeout` (> 0), armed.
    pub fn new(timeout: Nanos) -> Suspension {
        assert!(timeout > 0, "a suspension timeout is above 0");
        Suspension {
            timeout,
            state: State::Armed,
        }
    }

    pub fn state(&self) -> State {
        self.state
    }

    pub fn timeout(&self) -> Nanos {
        self.timeout
    }

    /// When the timer fires, while suspended.
    pub fn deadline(&self) -> Option<Nanos> {
        match self.state {
            State::Armed => None,
            State::Suspended { deadline, .. } => Some(deadline),
        }
    }

    pub fn suspended(&self) -> bool {
        matches!(self.state, State::Suspended { .. })
    }

    /// The device raises the vector at `now` (`kind`: what the handler
    /// reaps). Armed: delivered, and masked with the timer armed, as a NAPI
    /// driver masks in its hardirq handler. Suspended: held. A timer that
    /// is due (its event not yet run) counts as fired: delivered.
    pub fn interrupt(&mut self, now: Nanos, kind: Interrupt) -> Irq {
        match self.state {
            State::Suspended { deadline, held } if now < deadline => {
                self.state = State::Suspended {
                    deadline,
                    held: Some(merge(held, kind)),
                };
                Irq::Hold
            }
            State::Suspended { held, .. } => {
                let kind = merge(held, kind);
                self.mask(now);
                Irq::Deliver(kind)
            }
            State::Armed => {
                self.mask(now);
                Irq::Deliver(kind)
            }
        }
    }

    fn mask(&mut self, now: Nanos) {
        self.state = State::Suspended {
            deadline: now.saturating_add(self.timeout),
            held: None,
        };
    }

    /// A consumer's reaping call at `now` found `found` completions (its
    /// own pass over the CQ, or those it returns to its caller; fs/eventpoll.c
    /// `ep_poll`: `if (res > 0) ep_suspend_napi_irqs(ep)`). `took_cq`: its
    /// pass took every entry the CQ held, and with them what a held
    /// interrupt was raised for. Found some: masked, the timer restarted at
    /// `now + timeout` (`napi_suspend_irqs`'s `hrtimer_start`). Found none:
    /// nothing changes here (the call resumes if it sleeps,
    /// [`Suspension::sleep`]).
    pub fn polled(&mut self, now: Nanos, found: u32, took_cq: bool) {
        let held = match self.state {
            State::Suspended { held, .. } if !took_cq => held,
            _ => None,
        };
        if found == 0 {
            if let State::Suspended { deadline, .. } = self.state {
                self.state = State::Suspended { deadline, held };
            }
            return;
        }
        self.state = State::Suspended {
            deadline: now.saturating_add(self.timeout),
            held,
        };
    }

    /// A consumer found nothing and is about to sleep
    /// (`ep_busy_loop`'s `napi_resume_irqs`): the queue resumes; the held
    /// interrupt, if any, is delivered now.
    pub fn sleep(&mut self) -> Option<Interrupt> {
        self.resume()
    }

    fn resume(&mut self) -> Option<Interrupt> {
        match std::mem::replace(&mut self.state, State::Armed) {
            State::Armed => None,
            State::Suspended { held, .. } => held,
        }
    }

    /// The timer's event at `now`.
    pub fn timer(&mut self, now: Nanos) -> Timer {
        match self.state {
            State::Armed => Timer::Stale,
            State::Suspended { deadline, .. } if now < deadline => Timer::Later(deadline),
            State::Suspended { .. } => Timer::Expired(self.resume()),
        }
    }

    /// A completion with an error status is posted: never held. The queue
    /// resumes and the interrupt (merged with a held one) is delivered now.
    pub fn error(&mut self, kind: Interrupt) -> Interrupt {
        let held = self.resume();
        merge(held, kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Nanos = 1_000;
    const T: Nanos = 200 * US;

    #[test]
    fn an_interrupt_is_delivered_then_masks_the_queue_with_the_timer_armed() {
        let mut s = Suspension::new(T);
        assert_eq!(s.state(), State::Armed);
        assert_eq!(
            s.interrupt(10 * US, Interrupt::Full),
            Irq::Deliver(Interrupt::Full)
        );
        assert_eq!(s.deadline(), Some(10 * US + T));
        // The next one, within the timeout, is held.
        assert_eq!(s.interrupt(20 * US, Interrupt::UrgentOnly), Irq::Hold);
        assert_eq!(
            s.state(),
            State::Suspended {
                deadline: 10 * US + T,
                held: Some(Interrupt::UrgentOnly)
            }
        );
    }

    #[test]
    fn a_consumer_finding_completions_keeps_it_masked_and_pushes_the_timer() {
        let mut s = Suspension::new(T);
        s.interrupt(0, Interrupt::Full);
        s.polled(50 * US, 3, true);
        assert_eq!(s.deadline(), Some(50 * US + T));
        // The old deadline is stale: not due yet, fires at the new one.
        assert_eq!(s.timer(T), Timer::Later(50 * US + T));
        assert!(s.suspended());
        // A consumer can start a suspension itself (epoll returns events
        // before any interrupt was delivered).
        let mut s = Suspension::new(T);
        s.polled(5 * US, 1, true);
        assert_eq!(s.deadline(), Some(5 * US + T));
    }

    #[test]
    fn finding_nothing_and_sleeping_resumes_and_delivers_what_was_held() {
        let mut s = Suspension::new(T);
        s.interrupt(0, Interrupt::Full);
        assert_eq!(s.interrupt(US, Interrupt::Full), Irq::Hold);
        // A pass that found nothing changes nothing by itself...
        s.polled(2 * US, 0, true);
        assert!(s.suspended());
        // ...and the sleep that follows resumes. Its CQ pass took the
        // entries, so nothing is left to deliver.
        assert_eq!(s.sleep(), None);
        assert_eq!(s.state(), State::Armed);
        // Held, then the consumer sleeps without having taken the CQ: the
        // held interrupt is delivered now.
        let mut s = Suspension::new(T);
        s.interrupt(0, Interrupt::Full);
        s.interrupt(US, Interrupt::UrgentOnly);
        assert_eq!(s.sleep(), Some(Interrupt::UrgentOnly));
        // Sleeping while armed: nothing.
        assert_eq!(s.sleep(), None);
    }

    #[test]
    fn a_pass_that_takes_the_cq_takes_what_a_held_interrupt_was_for() {
        let mut s = Suspension::new(T);
        s.interrupt(0, Interrupt::Full);
        s.interrupt(US, Interrupt::Full);
        s.polled(2 * US, 1, true);
        assert_eq!(
            s.state(),
            State::Suspended {
                deadline: 2 * US + T,
                held: None
            }
        );
        // Returning completions it already had (no pass): the held
        // interrupt stays held.
        s.interrupt(3 * US, Interrupt::Full);
        s.polled(4 * US, 2, false);
        assert_eq!(
            s.state(),
            State::Suspended {
                deadline: 4 * US + T,
                held: Some(Interrupt::Full)
            }
        );
    }

    #[test]
    fn the_timer_resumes_and_delivers_the_held_interrupt() {
        let mut s = Suspension::new(T);
        assert_eq!(s.timer(0), Timer::Stale);
        s.interrupt(0, Interrupt::Full);
        s.interrupt(5 * US, Interrupt::UrgentOnly);
        s.interrupt(6 * US, Interrupt::Full);
        assert_eq!(s.timer(T - 1), Timer::Later(T));
        assert_eq!(s.timer(T), Timer::Expired(Some(Interrupt::Full)));
        assert_eq!(s.state(), State::Armed);
        assert_eq!(s.timer(T + 1), Timer::Stale);
        // Nothing held: the queue just resumes.
        s.interrupt(T + 1, Interrupt::Full);
        assert_eq!(s.timer(2 * T + 1), Timer::Expired(None));
    }

    #[test]
    fn an_interrupt_at_a_due_deadline_is_delivered_not_held() {
        // The timer's event not yet run at the same instant: the bound is
        // the deadline, inclusive.
        let mut s = Suspension::new(T);
        s.interrupt(0, Interrupt::UrgentOnly);
        s.interrupt(1, Interrupt::UrgentOnly);
        assert_eq!(
            s.interrupt(T, Interrupt::Full),
            Irq::Deliver(Interrupt::Full)
        );
        assert_eq!(s.deadline(), Some(2 * T));
    }

    #[test]
    fn an_error_is_never_held() {
        let mut s = Suspension::new(T);
        s.interrupt(0, Interrupt::Full);
        s.interrupt(US, Interrupt::UrgentOnly);
        assert_eq!(s.error(Interrupt::UrgentOnly), Interrupt::UrgentOnly);
        assert_eq!(s.state(), State::Armed);
        let mut s = Suspension::new(T);
        s.interrupt(0, Interrupt::Full);
        s.interrupt(US, Interrupt::Full);
        assert_eq!(s.error(Interrupt::UrgentOnly), Interrupt::Full);
        assert_eq!(Suspension::new(T).error(Interrupt::Full), Interrupt::Full);
    }

    /// The invariant stated once: an interrupt held at `t` is delivered
    /// (by a sleep, the timer or an error) or its entries taken by a
    /// consumer's pass no later than `t + timeout`, whatever the order of
    /// events, as long as the timer's event runs at the deadline.
    #[test]
    fn no_held_interrupt_waits_beyond_the_timeout() {
        use proptest::prelude::*;
        proptest!(|(ops in proptest::collection::vec((0u8..5, 0u64..300_000), 1..60))| {
            let mut s = Suspension::new(T);
            let mut now = 0;
            let mut held_since: Option<Nanos> = None;
            for (op, gap) in ops {
                let next = now + gap;
                // The timer's event runs at its deadline if that comes first.
                if let Some(d) = s.deadline() {
                    if d <= next {
                        now = d;
                        if let Timer::Expired(_) = s.timer(now) {
                            held_since = None;
                        }
                    }
                }
                now = now.max(next);
                if let Some(t) = held_since {
                    prop_assert!(now <= t + T || !s.suspended(), "held since {t}, now {now}");
                }
                match op {
                    0 => match s.interrupt(now, Interrupt::Full) {
                        Irq::Hold => { held_since.get_or_insert(now); }
                        Irq::Deliver(_) => held_since = None,
                    },
                    1 => { s.polled(now, 1, true); held_since = None; }
                    2 => { s.polled(now, 0, true); held_since = None; }
                    3 => { s.sleep(); held_since = None; }
                    _ => { s.error(Interrupt::UrgentOnly); held_since = None; }
                }
                if let (Some(t), Some(d)) = (held_since, s.deadline()) {
                    prop_assert!(d <= t + T, "deadline {d} beyond {t} + timeout");
                }
            }
        });
    }

    #[test]
    fn the_option_reads_off_or_a_timeout() {
        assert_eq!("off".parse(), Ok(IrqSuspend::Off));
        assert_eq!("200us".parse(), Ok(IrqSuspend::Timeout(200 * US)));
        assert_eq!("20ms".parse(), Ok(IrqSuspend::Timeout(20_000 * US)));
        // A bare number is nanoseconds, as netlink's irq-suspend-timeout.
        assert_eq!("20000000".parse(), Ok(IrqSuspend::Timeout(20_000 * US)));
        for v in [IrqSuspend::Off, IrqSuspend::Timeout(150 * US)] {
            assert_eq!(v.to_string().parse(), Ok(v));
        }
        let e = "0".parse::<IrqSuspend>().unwrap_err();
        assert!(e.contains("above 0") && e.contains("off"), "{e}");
        let e = "soon".parse::<IrqSuspend>().unwrap_err();
        assert!(e.starts_with("irq suspend 'soon'"), "{e}");
        assert_eq!(IrqSuspend::Off.timeout(), None);
        assert_eq!(IrqSuspend::Timeout(5).timeout(), Some(5));
    }

    #[test]
    fn polling_completion_refuses_it_naming_both_options() {
        use crate::poll::Mode;
        let on = IrqSuspend::Timeout(T);
        let e = refuse_with(Mode::Poll, on).unwrap_err();
        assert!(
            e.contains("--irq-suspend 200us") && e.contains("--completion poll"),
            "{e}"
        );
        assert_eq!(e.lines().count(), 1);
        for ok in [Mode::Interrupt, Mode::Hybrid, Mode::SelectIsr] {
            assert_eq!(refuse_with(ok, on), Ok(()));
        }
        assert_eq!(refuse_with(Mode::Poll, IrqSuspend::Off), Ok(()));
    }
}
