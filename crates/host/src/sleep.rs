//! `sleep`: the "sleep, then poll" family of completion strategies of the
//! 2020s (issue 40) behind one interface, [`SleepPoll`], that the
//! simulator and the emulator both apply. Linux's own hybrid polling
//! ([`crate::poll::HybridStats`]) stays where it is, byte for byte; these
//! are the strategies that came after it:
//!
//! - [`crate::pas`]: PAS, a per-I/O adaptive sleep moved by UNDER/OVER
//!   feedback (DPAS, USENIX FAST'26; its artifact's kernel,
//!   `DongDongJu/DPAS_FAST26` `kernel/block/blk-mq.c`).
//! - [`crate::dpas`]: DPAS, a state machine over classic polling, PAS, an
//!   overload mode and interrupts, re-evaluated every 100 I/Os.
//! - [`crate::ehp`]: EHP (Lee, Shin, Jeong, J. Systems Architecture 122,
//!   2022) as the DPAS artifact's baseline.
//! - [`crate::iopoll`]: io_uring's `IORING_SETUP_HYBRID_IOPOLL` (Linux
//!   6.13, 01ee194d1aba).
//!
//! **The interface** (stable: the emulator's `run` builds on it). One
//! [`SleepPoll`] value per *waiter*, the unit that shares the strategy's
//! state. Which unit that is, is the source's: the DPAS artifact keeps
//! PAS's sleep lengths and DPAS's mode per CPU (`per_cpu_ptr(q->pas_stat,
//! cpu)`, `per_cpu_ptr(irq_poll_switch, cpu)`) and EHP's statistics per
//! CPU (`cb->percpu_stat`); io_uring keeps `hybrid_poll_time` per ring
//! (`struct io_ring_ctx`). A front end whose threads each own a CPU (fio's
//! `cpus_allowed_policy=split`, as the artifact's scripts run) or a ring
//! may hold one per thread; [`SleepPoll::per_cpu`] says which the source
//! meant. Two entries, time passed in, no clock:
//!
//! 1. [`SleepPoll::decide`]: a request ([`Io`]: size, direction and the
//!    waiter's requests in flight, this one included) is submitted at
//!    `now`; the strategy answers [`Decision::Interrupt`] (send it to an
//!    interrupt-driven queue: the waiter sleeps until the handler wakes
//!    it), [`Decision::Spin`] (classic polling) or [`Decision::Sleep`]
//!    (sleep on a timer that long, then spin).
//! 2. [`SleepPoll::found`]: its completion was found ([`Found`]: when it
//!    was submitted, what it slept, when the waiter woke and first polled,
//!    when the device posted the entry, when it was found). Every decided
//!    request is reported, interrupts included (EHP's statistics take
//!    every request's latency, as `blk_stat_add` does).
//!
//! UNDER and OVER ([`Outcome`], the DPAS paper's words; the artifact's
//! `sr_last` 1 and 0): a sleeper that woke before the entry was posted
//! and had to spin underslept; one that found the entry already there at
//! its first poll after waking overslept. The artifact decides by that
//! first poll (`blk_mq_poll_classic`: `if (!poll_count) sr_last = 0`),
//! which is `posted <= woke` here.

use policy::Nanos;

/// A request as a sleep strategy sees it at submission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Io {
    pub bytes: u64,
    pub write: bool,
    /// The waiter's requests in flight, this one included: DPAS's queue
    /// depth. The artifact counts, per CPU, the polled requests between
    /// their sleep decision and their wake-up (`sc->qd`, incremented in
    /// `blk_mq_poll_pas_nsecs`, decremented after the sleep in
    /// `blk_mq_poll_hybrid`); a front end passes its nearest count and
    /// says which.
    pub depth: u32,
}

/// How the waiter of one request waits for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Route the request to an interrupt-driven queue and sleep until the
    /// handler wakes the waiter (DPAS's INT mode clears `REQ_POLLED` at
    /// submission: `kernel/block/fops.c` `__blkdev_direct_IO_simple`).
    Interrupt,
    /// Classic polling: spin from submission.
    Spin,
    /// Sleep `ns` on a high-resolution timer, then spin. `epoch` names the
    /// sleep length the strategy handed out (PAS's `dur_cnt`: feedback is
    /// taken only from a request slept at the current length); a front
    /// end hands it back in [`Found::epoch`].
    Sleep { ns: Nanos, epoch: u32 },
}

impl Decision {
    /// The sleep before spinning (0 for the others).
    pub fn sleep(self) -> Nanos {
        match self {
            Decision::Sleep { ns, .. } => ns,
            _ => 0,
        }
    }

    /// Whether the request goes to a polled queue.
    pub fn polled(self) -> bool {
        self != Decision::Interrupt
    }

    fn epoch(self) -> u32 {
        match self {
            Decision::Sleep { epoch, .. } => epoch,
            _ => 0,
        }
    }
}

/// How one request's wait went, reported when its completion was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Found {
    /// What [`SleepPoll::decide`] answered for it.
    pub decision: Decision,
    /// When it was submitted (the `now` of its decision, or later: the
    /// doorbell).
    pub submitted: Nanos,
    /// When its waiter woke from the sleep and polled first (`submitted`
    /// when it did not sleep).
    pub woke: Nanos,
    /// When the device posted its entry (at most `found`).
    pub posted: Nanos,
    /// When its completion was found: the poll that reaped it, or the
    /// interrupt handler that ended it.
    pub found: Nanos,
}

impl Found {
    /// The sleep it was given (0: none).
    pub fn slept(&self) -> Nanos {
        self.decision.sleep()
    }

    /// The epoch of its sleep ([`Decision::Sleep`]).
    pub fn epoch(&self) -> u32 {
        self.decision.epoch()
    }

    /// From submission to its completion being found: Linux's poll
    /// statistics' sample (`blk_stat_add`: issue to the request's end).
    pub fn latency(&self) -> Nanos {
        self.found.saturating_sub(self.submitted)
    }

    /// UNDER or OVER for a request that slept; `None` for one that did
    /// not.
    pub fn outcome(&self) -> Option<Outcome> {
        if self.slept() == 0 {
            None
        } else if self.posted <= self.woke {
            Some(Outcome::Over)
        } else {
            Some(Outcome::Under)
        }
    }
}

/// Whether a sleep was too short or too long (DPAS's binary feedback).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Woke before the entry was posted and had to spin.
    Under,
    /// The entry was already there at wake-up: overslept.
    Over,
}

/// A "sleep, then poll" strategy: one value per waiter (module docs).
pub trait SleepPoll {
    /// A request `io` is submitted at `now`: how its waiter waits.
    fn decide(&mut self, now: Nanos, io: Io) -> Decision;

    /// The completion of `io`, decided as `f.decision`, was found.
    fn found(&mut self, io: Io, f: Found);

    /// Whether the source keeps this state per CPU (PAS, DPAS, EHP in the
    /// DPAS artifact) rather than per ring or thread (HYBRID_IOPOLL).
    fn per_cpu(&self) -> bool;
}

/// A 4 KiB read alone in flight, for the strategies' tests.
#[cfg(test)]
pub(crate) const READ_4K: Io = Io {
    bytes: 4096,
    write: false,
    depth: 1,
};

#[cfg(test)]
mod tests {
    use super::*;

    fn found(decision: Decision, woke: Nanos, posted: Nanos) -> Found {
        Found {
            decision,
            submitted: 0,
            woke,
            posted,
            found: posted.max(woke) + 100,
        }
    }

    #[test]
    fn under_is_waking_before_the_entry_and_over_after_it() {
        let s = Decision::Sleep {
            ns: 5_000,
            epoch: 1,
        };
        assert_eq!(found(s, 6_000, 9_000).outcome(), Some(Outcome::Under));
        assert_eq!(found(s, 6_000, 4_000).outcome(), Some(Outcome::Over));
        // Posted exactly as it polled first: there at the first poll.
        assert_eq!(found(s, 6_000, 6_000).outcome(), Some(Outcome::Over));
        // No sleep, no verdict.
        assert_eq!(found(Decision::Spin, 0, 9_000).outcome(), None);
        assert_eq!(found(Decision::Interrupt, 0, 9_000).outcome(), None);
    }

    #[test]
    fn a_found_request_reports_its_sleep_epoch_and_latency() {
        let f = found(
            Decision::Sleep {
                ns: 5_000,
                epoch: 7,
            },
            6_000,
            9_000,
        );
        assert_eq!((f.slept(), f.epoch(), f.latency()), (5_000, 7, 9_100));
        assert!(Decision::Spin.polled() && !Decision::Interrupt.polled());
        assert_eq!(Decision::Spin.sleep(), 0);
    }
}
