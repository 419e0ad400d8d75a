//! The completion mode as one mechanism ([`crate::world::completion`] has the
//! model and its choices): which threads poll rather than sleep for their
//! completions, and hybrid polling's sleeps, from the statistics
//! [`host::poll::Completions`] keeps (Linux's `blk_mq_poll_hybrid`). Its
//! state is its own; the threads' spinning and reaping are the host's
//! ([`crate::world::completion`] wires them).

use host::poll::{bucket, Completions, HybridSleep, Io};
use jobs::Job;
use policy::Nanos;

use crate::workload::Waiter;
use crate::Completion;

pub(crate) struct Polling {
    mode: Completion,
    hybrid: Completions,
    /// Per thread: how long its next reaping call sleeps before it spins,
    /// the longest of the polled requests it submitted since it last slept
    /// (0: spin at once, or slept already).
    sleep: Vec<Nanos>,
}

impl Polling {
    /// The host's `mode` for `threads` threads, hybrid's decisions priced
    /// by `costs`, its sleep `io_poll_delay`.
    pub(crate) fn new(
        mode: Completion,
        costs: host::poll::Costs,
        io_poll_delay: HybridSleep,
        threads: usize,
    ) -> Polling {
        Polling {
            mode,
            hybrid: Completions::new(mode, costs).with_hybrid_sleep(io_poll_delay),
            sleep: vec![0; threads],
        }
    }

    pub(crate) fn mode(&self) -> Completion {
        self.mode
    }

    /// Whether a thread of `job`, waiting as `waiter`, polls: a `hipri`
    /// job always (pvsync2 and io_uring; the workload refuses it
    /// elsewhere), another blocking engine's when the mode polls for its
    /// job.
    pub(crate) fn polls(&self, job: &Job, waiter: Waiter) -> bool {
        job.hipri || (waiter == Waiter::Blocking && self.mode.polls(job.critical))
    }

    /// Hybrid polling: thread `tid` submitted polled requests of these
    /// sizes and directions at `now`; its next reaping call sleeps the
    /// longest of their sleeps (an io_uring thread may submit again before
    /// it reaps: the longest of what is pending).
    pub(crate) fn submitted(
        &mut self,
        tid: u32,
        now: Nanos,
        polled: impl Iterator<Item = (u64, bool)>,
    ) {
        if self.mode != Completion::Hybrid {
            return;
        }
        let sleep = &mut self.sleep[tid as usize];
        for (bytes, write) in polled {
            let io = Io {
                bytes,
                write,
                critical: false,
            };
            *sleep = (*sleep).max(self.hybrid.submitted(now, io));
        }
    }

    /// Thread `tid`'s hybrid sleep before it spins, taken (0: spin now).
    pub(crate) fn take_sleep(&mut self, tid: u32) -> Nanos {
        std::mem::take(&mut self.sleep[tid as usize])
    }

    /// A polled request of `bytes` (a write or not) ended at `now`,
    /// `latency` after its submission: a sample of hybrid's statistics.
    pub(crate) fn ended(&mut self, now: Nanos, bytes: u64, write: bool, latency: Nanos) {
        if self.mode == Completion::Hybrid {
            self.hybrid
                .stats()
                .ended(now, bucket(bytes, write), latency);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Nanos = 1_000;

    fn costs() -> host::poll::Costs {
        host::poll::Costs {
            irq: 2 * US,
            wakeup: 2 * US,
            timer: US,
            reap: 300,
        }
    }

    fn job(hipri: bool, critical: bool) -> Job {
        Job {
            hipri,
            critical,
            ..Job::default()
        }
    }

    #[test]
    fn hipri_always_polls_and_the_mode_decides_for_blocking_calls_only() {
        use Completion::*;
        let cases = [
            // (mode, hipri, critical, waiter, polls)
            (Interrupt, true, false, Waiter::IoUring, true),
            (Interrupt, false, true, Waiter::Blocking, false),
            (Poll, false, false, Waiter::Blocking, true),
            (Poll, false, false, Waiter::Libaio, false),
            (Hybrid, false, false, Waiter::Blocking, true),
            (SelectIsr, false, true, Waiter::Blocking, true),
            (SelectIsr, false, false, Waiter::Blocking, false),
        ];
        for (mode, hipri, critical, waiter, polls) in cases {
            let p = Polling::new(mode, costs(), HybridSleep::HalfMean, 1);
            assert_eq!(
                p.polls(&job(hipri, critical), waiter),
                polls,
                "{mode:?} hipri={hipri} critical={critical} {waiter:?}"
            );
        }
    }

    #[test]
    fn a_hybrid_sleep_is_the_longest_of_what_was_submitted_and_taken_once() {
        let mut p = Polling::new(Completion::Hybrid, costs(), HybridSleep::HalfMean, 2);
        // The same statistics beside it: what each submission sleeps.
        let mut reference = Completions::new(Completion::Hybrid, costs());
        let io = |bytes, write| Io {
            bytes,
            write,
            critical: false,
        };
        // The first hybrid poll turns the statistics on (Linux's
        // blk_stat_enable_accounting); nothing to sleep on yet.
        p.submitted(0, 0, [(4096, false)].into_iter());
        assert_eq!(reference.submitted(0, io(4096, false)), 0);
        assert_eq!(p.take_sleep(0), 0);
        for i in 0..2_000 {
            let now = i * 100 * US;
            p.ended(now, 4096, false, 10 * US);
            p.ended(now, 65536, true, 40 * US);
            reference.stats().ended(now, bucket(4096, false), 10 * US);
            reference.stats().ended(now, bucket(65536, true), 40 * US);
        }
        let now = 2_000 * 100 * US;
        let small = reference.submitted(now, io(4096, false));
        let large = reference.submitted(now, io(65536, true));
        assert!(large > small, "{large} > {small}");
        p.submitted(1, now, [(4096, false), (65536, true)].into_iter());
        assert_eq!(p.take_sleep(0), 0, "another thread's");
        assert_eq!(p.take_sleep(1), large);
        assert_eq!(p.take_sleep(1), 0, "slept already");
    }

    #[test]
    fn a_fixed_io_poll_delay_sleeps_that_long_from_the_first_request() {
        let mut p = Polling::new(Completion::Hybrid, costs(), HybridSleep::Fixed(8 * US), 1);
        p.submitted(0, 0, [(4096, false), (65536, true)].into_iter());
        assert_eq!(p.take_sleep(0), 8 * US);
        let mut p = Polling::new(Completion::Poll, costs(), HybridSleep::Fixed(8 * US), 1);
        p.submitted(0, 0, [(4096, false)].into_iter());
        assert_eq!(p.take_sleep(0), 0, "classic polling never sleeps");
    }

    #[test]
    fn only_hybrid_sleeps() {
        for mode in [
            Completion::Poll,
            Completion::Interrupt,
            Completion::SelectIsr,
        ] {
            let mut p = Polling::new(mode, costs(), HybridSleep::HalfMean, 1);
            p.submitted(0, 0, [(4096, false)].into_iter());
            for i in 0..2_000 {
                p.ended(i * 20 * US, 4096, false, 10 * US);
            }
            p.submitted(0, 40_000 * US, [(4096, false)].into_iter());
            assert_eq!(p.take_sleep(0), 0, "{mode:?}");
        }
    }
}
