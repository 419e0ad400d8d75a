//! A job thread's "sleep, then poll" strategy on real threads (`run
//! --completion pas|dpas|ehp|hybrid-iopoll`, issue 40 item 2): the
//! decisions are [`host::sleep::SleepPoll`]'s, the simulator's; this module
//! applies them to the thread's real requests and tells the strategy how
//! each wait went.
//!
//! - **Where a request goes.** [`Decision::Interrupt`] sends it to its
//!   core's interrupt-driven queue pair (DPAS's INT mode and EHP's
//!   interrupt buckets clear `REQ_POLLED` at submission: the DPAS
//!   artifact's `kernel/block/fops.c`), so the device's policy sees it and
//!   the handler delivers it; the others go to the thread's poll queue
//!   (interrupts off).
//! - **The sleep.** A wait sleeps once, for the earliest wake-up its
//!   requests were given since the thread last slept, on the thread's
//!   timer with 1 ns of slack ([`crate::sys::timer_sleep`]), for exactly
//!   what the strategy asked: unlike `hybrid`'s
//!   [`crate::sys::HybridTimer`], no correction for this VM's 25-90 us
//!   timer overshoot (PLATFORM.md section 3). The strategies that learn
//!   from their wake-ups (PAS's UNDER/OVER, DPAS's timer-floor count,
//!   HYBRID_IOPOLL's shortest poll) then learn this machine's timer as
//!   they would a kernel's hrtimer, and the others pay for it in latency:
//!   what each would do here. Then the thread spins on its poll queue,
//!   taking its core's interrupts meanwhile.
//! - **UNDER and OVER.** The device's posting time does not travel with a
//!   completion here, so the artifact's own test decides
//!   (`blk_mq_poll_classic`: `if (!poll_count) sr_last = 0`): a request
//!   found by the first poll at or after its wake-up (or before it) was
//!   overslept, one found by a later poll underslept. A request whose
//!   sleep had ended before its wait began (the thread was busy) wakes, for
//!   this test, when its sleep would have ended. [`Found::posted`] is reported
//!   accordingly: its wake-up when overslept, when it was found when not.
//! - **Whose state.** One strategy per job thread: the artifact keeps PAS,
//!   DPAS and EHP per CPU and io_uring per ring; `run` places one job per
//!   core in the comparisons, where the two are the same
//!   ([`host::sleep::SleepPoll::per_cpu`]).

use host::sleep::{Decision, Found, Io, SleepPoll};
use policy::Nanos;

/// One request's part in the strategy, by the thread's slot (cookie).
#[derive(Clone, Copy, Debug)]
struct Pending {
    io: Io,
    decision: Decision,
    submitted: Nanos,
    /// When it is taken to have woken (the first poll after it may find it
    /// overslept); `None` until its wait slept or spun past its sleep.
    woke: Option<Nanos>,
    /// Outside the measured requests (the verify pass): not reported.
    reported: bool,
}

/// What the strategy did in the thread's measured part.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SleepStats {
    /// Decisions, by kind.
    pub spin: u64,
    pub sleep: u64,
    pub interrupt: u64,
    /// Feedback of the requests that slept: woke before the entry (spun
    /// after waking) or after it.
    pub under: u64,
    pub over: u64,
    /// Sum of the sleeps decided (ns), for their mean.
    pub decided_ns: Nanos,
    /// Waits that slept on the timer, the time they asked and the time
    /// they slept (the timer's overshoot and any wait for the CPU).
    pub timer_sleeps: u64,
    pub asked_ns: Nanos,
    pub slept_ns: Nanos,
    /// Waits whose sleep had ended before they began (no sleep).
    pub elapsed: u64,
}

/// The strategy of one job thread and what it needs to apply it.
pub struct Sleeper {
    strategy: Box<dyn SleepPoll + Send>,
    pending: Vec<Option<Pending>>,
    /// Requests in flight on the poll queue.
    polled: u32,
    /// The earliest wake-up of the requests decided since the last sleep.
    until: Option<Nanos>,
    pub(crate) stats: SleepStats,
}

impl Sleeper {
    /// For the calling thread (it sets its timer slack to 1 ns).
    pub fn new(strategy: Box<dyn SleepPoll + Send>, slots: usize) -> Sleeper {
        let _ = crate::sys::set_timer_slack_min();
        Sleeper {
            strategy,
            pending: vec![None; slots],
            polled: 0,
            until: None,
            stats: SleepStats::default(),
        }
    }

    /// Request `cookie` is submitted at `now`: the strategy's decision,
    /// counted when `measuring`.
    pub fn decide(&mut self, cookie: u32, now: Nanos, io: Io, measuring: bool) -> Decision {
        let decision = self.strategy.decide(now, io);
        self.start(cookie, now, io, decision, measuring);
        decision
    }

    /// A request the strategy does not decide (the verify pass's reads):
    /// classic polling, not reported.
    pub fn unreported(&mut self, cookie: u32, now: Nanos, io: Io) {
        self.start(cookie, now, io, Decision::Spin, false);
    }

    fn start(&mut self, cookie: u32, now: Nanos, io: Io, decision: Decision, reported: bool) {
        if decision.polled() {
            self.polled += 1;
        }
        if let Decision::Sleep { ns, .. } = decision {
            let at = now + ns;
            self.until = Some(self.until.map_or(at, |u| u.min(at)));
        }
        if reported {
            let s = &mut self.stats;
            match decision {
                Decision::Interrupt => s.interrupt += 1,
                Decision::Spin => s.spin += 1,
                Decision::Sleep { ns, .. } => {
                    s.sleep += 1;
                    s.decided_ns += ns;
                }
            }
        }
        self.pending[cookie as usize] = Some(Pending {
            io,
            decision,
            submitted: now,
            woke: (decision == Decision::Spin).then_some(now),
            reported,
        });
    }

    /// Requests in flight on the poll queue.
    pub fn polled_in_flight(&self) -> u32 {
        self.polled
    }

    /// The wait's sleep, if its requests were given one since the last:
    /// sleeps on the timer for what is left of it and marks when its
    /// requests woke; counted when `measuring`.
    pub fn sleep(&mut self, clock: &crate::sys::Clock, measuring: bool) {
        let Some(until) = self.until.take() else {
            return;
        };
        let start = clock.now();
        let want = until.saturating_sub(start);
        let woke = if want > 0 {
            let slept = crate::sys::timer_sleep(want);
            if measuring {
                self.stats.timer_sleeps += 1;
                self.stats.asked_ns += want;
                self.stats.slept_ns += slept;
            }
            clock.now()
        } else {
            if measuring {
                self.stats.elapsed += 1;
            }
            0
        };
        for p in self.pending.iter_mut().flatten() {
            if let (None, Decision::Sleep { ns, .. }) = (p.woke, p.decision) {
                // The thread's wake-up, or its own sleep's end if that
                // comes later (a longer sleep of the same wait).
                p.woke = Some((p.submitted + ns).max(woke));
            }
        }
    }

    /// Request `cookie`'s completion was taken at `now`, delivered by a poll
    /// whose previous poll was at `prev` (0: none in this wait, or it came
    /// by an interrupt): tells the strategy, and counts its feedback when
    /// `measuring`.
    pub fn found(&mut self, cookie: u32, prev: Nanos, now: Nanos, measuring: bool) {
        let Some(p) = self.pending[cookie as usize].take() else {
            return;
        };
        if p.decision.polled() {
            self.polled -= 1;
        }
        let woke = p.woke.unwrap_or(now);
        // Found by the first poll at or after its wake-up (or earlier):
        // the entry was there when it woke.
        let over = prev < woke;
        let posted = if over { woke.min(now) } else { now };
        let f = Found {
            decision: p.decision,
            submitted: p.submitted,
            woke: if p.decision.polled() {
                woke
            } else {
                p.submitted
            },
            posted: posted.max(p.submitted),
            found: now,
        };
        if measuring && p.reported {
            match f.outcome() {
                Some(host::sleep::Outcome::Over) => self.stats.over += 1,
                Some(host::sleep::Outcome::Under) => self.stats.under += 1,
                None => {}
            }
        }
        if p.reported {
            self.strategy.found(p.io, f);
        }
    }
}

/// The strategy of a completion mode, one per job thread; `None` for the
/// modes that are not "sleep, then poll" ones (Linux's own hybrid polling
/// keeps its path, `host::poll::HybridStats`).
pub fn strategy(mode: host::poll::Mode) -> Option<Box<dyn SleepPoll + Send>> {
    use host::poll::Mode;
    // The artifact's constants (`host::pas::Constants::ARTIFACT`, DPAS's
    // NAND `switch_param3`, EHP's `ctx_time`/`isr_time`), as the simulator
    // takes them.
    match mode {
        Mode::Pas => Some(Box::new(host::pas::Pas::default())),
        Mode::Dpas => Some(Box::new(host::dpas::Dpas::default())),
        Mode::Ehp => Some(Box::new(host::ehp::Ehp::default())),
        Mode::HybridIopoll => Some(Box::new(host::iopoll::HybridIopoll::default())),
        Mode::Interrupt | Mode::Poll | Mode::Hybrid | Mode::SelectIsr | Mode::Central => None,
    }
}
