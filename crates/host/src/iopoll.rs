//! `iopoll`: io_uring's `IORING_SETUP_HYBRID_IOPOLL` (Linux 6.13, commit
//! 01ee194d1aba "io_uring: add support for hybrid IOPOLL", hexue,
//! Samsung; read in the patch as posted and merged, not copied): an
//! IOPOLL ring that sleeps before it polls, per ring.
//!
//! - **State** (`struct io_ring_ctx`, `include/linux/io_uring_types.h`):
//!   one `hybrid_poll_time` per ring, "runtime in hybrid polling, without
//!   scheduling time", `LLONG_MAX` at creation (`io_ring_ctx_alloc`).
//! - **Sleep** (io_uring/rw.c `io_hybrid_iopoll_delay`): a request sleeps
//!   once (`REQ_F_IOPOLL_STATE`, cleared at issue in
//!   `io_rw_init_file`, which also stamps `iopoll_start`), half the ring's
//!   `hybrid_poll_time` ("Using half the running time to do schedule"),
//!   and not at all while that is still `LLONG_MAX`: the ring's first
//!   request is polled classically.
//! - **Feedback** (io_uring/rw.c `io_uring_hybrid_poll`): after the poll,
//!   `runtime = now - iopoll_start - sleep_time`, and the ring keeps the
//!   least it has seen (`if (ctx->hybrid_poll_time > runtime)
//!   ctx->hybrid_poll_time = runtime;`: "Use minimum sleep time if we're
//!   polling devices with different latencies"). It never grows.
//!
//! So on a steady device of latency `L` (and negligible overheads) the
//! first request spins (`hybrid_poll_time = L`), the second sleeps `L/2`
//! and polls `L/2` (`L/2`), and from the third on every request sleeps
//! `L/4` and polls `3L/4`, which is not less than `L/2`: a quarter of the
//! latency asleep for good. One fast completion (a cache hit) lowers the
//! sleep for the ring's life. Linux measures after each poll call, found
//! or not; a front end that reports only the poll that found the entry
//! (as ours do) sees the same minimum whenever the waiter spins until it
//! finds it (a poll without `BLK_POLL_ONESHOT`, one device per ring).
//!
//! IOPOLL rings only: `io_uring_create` refuses HYBRID_IOPOLL without
//! IOPOLL (`-EINVAL`). Synchronous `preadv2(RWF_HIPRI)` has not polled
//! since 5.19 (9650b453a3d4), so this is the only hybrid polling Linux has
//! had since blk-mq's was removed in 6.4 (54bdd67d0f88).

use policy::Nanos;

use crate::sleep::{Decision, Found, Io, SleepPoll};

/// One ring's hybrid IOPOLL.
#[derive(Clone, Debug, Default)]
pub struct HybridIopoll {
    /// `hybrid_poll_time`; `None` is `LLONG_MAX`.
    poll_time: Option<Nanos>,
}

impl HybridIopoll {
    /// The ring's `hybrid_poll_time`, if it has one.
    pub fn poll_time(&self) -> Option<Nanos> {
        self.poll_time
    }
}

impl SleepPoll for HybridIopoll {
    fn decide(&mut self, _now: Nanos, _io: Io) -> Decision {
        match self.poll_time {
            // `sleep_time = ctx->hybrid_poll_time / 2`; a zero sleep arms
            // a timer already expired, and the task does not schedule.
            Some(t) if t / 2 > 0 => Decision::Sleep {
                ns: t / 2,
                epoch: 0,
            },
            _ => Decision::Spin,
        }
    }

    fn found(&mut self, _io: Io, f: Found) {
        if !f.decision.polled() {
            return;
        }
        let runtime = f
            .found
            .saturating_sub(f.submitted)
            .saturating_sub(f.slept());
        self.poll_time = Some(self.poll_time.map_or(runtime, |t| t.min(runtime)));
    }

    /// Per ring, not per CPU.
    fn per_cpu(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use policy::US;

    use crate::sleep::READ_4K;

    /// A request submitted at `at` on a device of `latency`, found at
    /// the later of its entry and the end of its sleep.
    fn one(r: &mut HybridIopoll, at: Nanos, latency: Nanos) -> Decision {
        let d = r.decide(at, READ_4K);
        let woke = at + d.sleep();
        let posted = at + latency;
        r.found(
            READ_4K,
            Found {
                decision: d,
                submitted: at,
                woke,
                posted,
                found: posted.max(woke),
            },
        );
        d
    }

    #[test]
    fn the_first_request_spins_then_the_ring_sleeps_a_quarter() {
        let mut r = HybridIopoll::default();
        assert_eq!(one(&mut r, 0, 20 * US), Decision::Spin);
        assert_eq!(r.poll_time(), Some(20 * US));
        assert_eq!(one(&mut r, 100 * US, 20 * US).sleep(), 10 * US);
        assert_eq!(r.poll_time(), Some(10 * US));
        for i in 2..50 {
            assert_eq!(one(&mut r, i * 100 * US, 20 * US).sleep(), 5 * US);
        }
        assert_eq!(r.poll_time(), Some(10 * US));
        assert!(!r.per_cpu());
    }

    #[test]
    fn one_fast_completion_lowers_the_sleep_for_good() {
        let mut r = HybridIopoll::default();
        one(&mut r, 0, 20 * US);
        one(&mut r, 100 * US, 20 * US);
        // A 2 us completion (found at the end of a 5 us sleep: runtime 0).
        one(&mut r, 200 * US, 2 * US);
        assert_eq!(r.poll_time(), Some(0));
        // Then it spins from submission: the sleep is gone.
        assert_eq!(one(&mut r, 300 * US, 20 * US), Decision::Spin);
        assert_eq!(one(&mut r, 400 * US, 20 * US), Decision::Spin);
    }
}
