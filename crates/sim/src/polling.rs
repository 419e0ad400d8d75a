//! The completion mode as one mechanism ([`crate::world::completion`] has the
//! model and its choices): which threads poll rather than sleep for their
//! completions, and hybrid polling's sleeps, from the statistics
//! [`host::poll::Completions`] keeps (Linux's `blk_mq_poll_hybrid`). Its
//! state is its own; the threads' spinning and reaping are the host's
//! ([`crate::world::completion`] wires them).
//!
//! The sleep-then-poll strategies of issue 40 (`pas`, `dpas`, `ehp`,
//! `hybrid-iopoll`: [`host::sleep::SleepPoll`]) decide per request at its
//! preparation ([`Polling::decide`]): interrupts (DPAS's INT, an EHP bucket
//! above its threshold: the request goes to the interrupt queue), a spin,
//! or a sleep then a spin. One strategy per core for PAS, DPAS and EHP
//! (the DPAS artifact keeps their state per CPU; our threads are pinned),
//! one per thread for HYBRID_IOPOLL (its ring). DPAS's depth is the core's
//! requests between their sleep decision and their wake-up, this one
//! included (the artifact's `sc->qd`). Each request's completion is
//! reported back when its thread takes it ([`Polling::found`]): UNDER if
//! its thread woke from the sleep before the device posted it, OVER if it
//! was there at the first poll after waking.

use host::poll::{bucket, Completions, HybridSleep, Io};
use host::sleep::{Decision, Found, SleepPoll};
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
    /// The sleep-then-poll strategy's state, under its modes.
    sleepers: Option<Sleepers>,
}

/// One request decided by a sleep strategy, until its thread takes it.
#[derive(Clone, Copy, Debug)]
struct Pending {
    slot: u32,
    io: host::sleep::Io,
    decision: Decision,
    /// Its waiter woke from the sleep (and polled first) at.
    woke: Option<Nanos>,
    /// The device posted it at (polled requests).
    posted: Option<Nanos>,
    /// Counted in its core's sleepers (DPAS's depth).
    asleep: bool,
}

/// What the strategies did in the measured window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SleepCounts {
    /// Requests sent to interrupts by the strategy.
    pub interrupts: u64,
    /// Requests that slept, then were found UNDER or OVER.
    pub under: u64,
    pub over: u64,
    /// Requests polled without a sleep.
    pub spins: u64,
}

struct Sleepers {
    mode: crate::Completion,
    /// By core (PAS, DPAS, EHP) or by thread (HYBRID_IOPOLL).
    waiters: Vec<Option<Box<dyn SleepPoll>>>,
    /// Per thread: its decided requests not yet taken.
    pending: Vec<Vec<Pending>>,
    /// Per thread: it took a sleep and has not polled since.
    slept: Vec<bool>,
    /// Per core: requests decided to sleep, not yet woken.
    asleep: Vec<u32>,
    counts: SleepCounts,
}

impl Sleepers {
    fn new(mode: crate::Completion, threads: usize) -> Option<Sleepers> {
        use crate::Completion::*;
        matches!(mode, Pas | Dpas | Ehp | HybridIopoll).then(|| Sleepers {
            mode,
            waiters: Vec::new(),
            pending: vec![Vec::new(); threads],
            slept: vec![false; threads],
            asleep: Vec::new(),
            counts: SleepCounts::default(),
        })
    }

    fn strategy(&self) -> Box<dyn SleepPoll> {
        use crate::Completion::*;
        match self.mode {
            Pas => Box::new(host::pas::Pas::default()),
            // The NAND threshold (param3 = 10) whatever the profile: the
            // artifact's scripts pick 30 for its Optane 5800X only.
            Dpas => Box::new(host::dpas::Dpas::default()),
            Ehp => Box::new(host::ehp::Ehp::default()),
            _ => Box::new(host::iopoll::HybridIopoll::default()),
        }
    }

    /// The waiter of thread `tid` on `core`.
    fn waiter(&mut self, tid: u32, core: u32) -> &mut dyn SleepPoll {
        let at = if self.mode == crate::Completion::HybridIopoll {
            tid as usize
        } else {
            core as usize
        };
        if self.waiters.len() <= at {
            self.waiters.resize_with(at + 1, || None);
        }
        if self.waiters[at].is_none() {
            self.waiters[at] = Some(self.strategy());
        }
        self.waiters[at].as_deref_mut().expect("made above")
    }

    fn asleep(&mut self, core: u32) -> &mut u32 {
        let c = core as usize;
        if self.asleep.len() <= c {
            self.asleep.resize(c + 1, 0);
        }
        &mut self.asleep[c]
    }
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
            sleepers: Sleepers::new(mode, threads),
        }
    }

    /// Whether a sleep strategy decides for a polling thread waiting as
    /// `waiter`: PAS, DPAS and EHP for blocking calls (the DPAS artifact
    /// patches the synchronous direct-I/O paths, `block/fops.c` and
    /// `fs/iomap/direct-io.c`; its io_uring polls without sleeping, as
    /// Linux's since 5.16, d729cf9acb93), HYBRID_IOPOLL for io_uring rings
    /// only (IOPOLL rings; a blocking engine takes interrupts under it,
    /// [`host::poll::Mode::polls`]).
    pub(crate) fn decides(&self, waiter: Waiter) -> bool {
        match self.sleepers.as_ref().map(|s| s.mode) {
            Some(Completion::HybridIopoll) => waiter == Waiter::IoUring,
            Some(_) => waiter == Waiter::Blocking,
            None => false,
        }
    }

    /// A request of thread `tid` on `core`, `bytes` (a write or not), is
    /// prepared at `now`: the strategy's decision. The caller routes it
    /// ([`Decision::polled`]) and then records it ([`Polling::record`]).
    pub(crate) fn decide(
        &mut self,
        tid: u32,
        core: u32,
        now: Nanos,
        bytes: u64,
        write: bool,
    ) -> (host::sleep::Io, Decision) {
        let s = self.sleepers.as_mut().expect("a sleep strategy");
        let depth = *s.asleep(core) + 1;
        let io = host::sleep::Io {
            bytes,
            write,
            depth,
        };
        let d = s.waiter(tid, core).decide(now, io);
        (io, d)
    }

    /// The decided request is `slot`; `measuring` says whether it counts.
    pub(crate) fn record(
        &mut self,
        tid: u32,
        core: u32,
        slot: u32,
        io: host::sleep::Io,
        d: Decision,
        measuring: bool,
    ) {
        let s = self.sleepers.as_mut().expect("a sleep strategy");
        let asleep = d.sleep() > 0;
        if asleep {
            *s.asleep(core) += 1;
        }
        if measuring {
            match d {
                Decision::Interrupt => s.counts.interrupts += 1,
                Decision::Spin => s.counts.spins += 1,
                Decision::Sleep { .. } => {}
            }
        }
        s.pending[tid as usize].push(Pending {
            slot,
            io,
            decision: d,
            woke: None,
            posted: None,
            asleep,
        });
        let sleep = &mut self.sleep[tid as usize];
        *sleep = (*sleep).max(d.sleep());
    }

    /// Whether thread `tid` waits by interrupt: every request it waits
    /// for was sent to interrupts (it blocks, the handler wakes it).
    pub(crate) fn waits_by_interrupt(&self, tid: u32) -> bool {
        self.sleepers.as_ref().is_some_and(|s| {
            let p = &s.pending[tid as usize];
            !p.is_empty() && p.iter().all(|p| p.decision == Decision::Interrupt)
        })
    }

    /// The device posted thread `tid`'s polled request `slot` at `now`.
    pub(crate) fn posted(&mut self, tid: u32, slot: u32, now: Nanos) {
        if let Some(s) = self.sleepers.as_mut() {
            if let Some(p) = s.pending[tid as usize].iter_mut().find(|p| p.slot == slot) {
                p.posted = Some(now);
            }
        }
    }

    /// Thread `tid` on `core` polls at `now` (its reaping call): if it
    /// slept, it woke now, and its sleeping requests with it.
    pub(crate) fn polls_now(&mut self, tid: u32, core: u32, now: Nanos) {
        let Some(s) = self.sleepers.as_mut() else {
            return;
        };
        if !std::mem::take(&mut s.slept[tid as usize]) {
            return;
        }
        let mut woken = 0;
        for p in s.pending[tid as usize].iter_mut() {
            if p.decision.sleep() > 0 && p.woke.is_none() {
                p.woke = Some(now);
                if std::mem::take(&mut p.asleep) {
                    woken += 1;
                }
            }
        }
        let a = s.asleep(core);
        *a = a.saturating_sub(woken);
    }

    /// Thread `tid` on `core` took request `slot` at `now`, issued at
    /// `issued`: the strategy's feedback.
    pub(crate) fn found(
        &mut self,
        tid: u32,
        core: u32,
        slot: u32,
        issued: Nanos,
        now: Nanos,
        measuring: bool,
    ) {
        let Some(s) = self.sleepers.as_mut() else {
            return;
        };
        let pending = &mut s.pending[tid as usize];
        let Some(i) = pending.iter().position(|p| p.slot == slot) else {
            return;
        };
        let p = pending.swap_remove(i);
        if pending
            .iter()
            .all(|p| p.decision.sleep() == 0 || p.woke.is_some())
        {
            // Nothing of this thread is left to sleep for.
            self.sleep[tid as usize] = 0;
        }
        if p.asleep {
            let a = s.asleep(core);
            *a = a.saturating_sub(1);
        }
        let f = Found {
            decision: p.decision,
            submitted: issued,
            // Found before it slept: at its first poll.
            woke: p.woke.unwrap_or(now),
            posted: p.posted.unwrap_or(now).min(now),
            found: now,
        };
        if measuring {
            match f.outcome() {
                Some(host::sleep::Outcome::Under) => s.counts.under += 1,
                Some(host::sleep::Outcome::Over) => s.counts.over += 1,
                None => {}
            }
        }
        s.waiter(tid, core).found(p.io, f);
    }

    /// What the sleep strategy did (`None` under the other modes).
    pub(crate) fn sleep_counts(&self) -> Option<SleepCounts> {
        self.sleepers.as_ref().map(|s| s.counts)
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
        let sleep = std::mem::take(&mut self.sleep[tid as usize]);
        if sleep > 0 {
            if let Some(s) = self.sleepers.as_mut() {
                s.slept[tid as usize] = true;
            }
        }
        sleep
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
    fn sleep_strategies_decide_for_the_waiters_their_sources_patch() {
        use Completion::*;
        let p = |m| Polling::new(m, costs(), HybridSleep::HalfMean, 1);
        for m in [Pas, Dpas, Ehp] {
            assert!(p(m).decides(Waiter::Blocking), "{m:?}");
            assert!(!p(m).decides(Waiter::IoUring), "{m:?}");
        }
        assert!(p(HybridIopoll).decides(Waiter::IoUring));
        assert!(!p(HybridIopoll).decides(Waiter::Blocking));
        for m in [Interrupt, Poll, Hybrid, SelectIsr] {
            assert!(!p(m).decides(Waiter::Blocking) && p(m).sleep_counts().is_none());
        }
    }

    #[test]
    fn a_slept_request_is_over_if_posted_before_the_first_poll_after_waking() {
        let mut p = Polling::new(Completion::Pas, costs(), HybridSleep::HalfMean, 1);
        let (io, d) = p.decide(0, 0, 0, 4096, false);
        assert_eq!(d.sleep(), 100, "PAS's first sleep: d_init");
        p.record(0, 0, 7, io, d, true);
        assert_eq!(p.take_sleep(0), 100);
        p.posted(0, 7, 50);
        p.polls_now(0, 0, 1_200);
        p.found(0, 0, 7, 0, 1_200, true);
        let c = p.sleep_counts().unwrap();
        assert_eq!((c.under, c.over), (0, 1));
        // The next: woken at 1.2 us, posted at 10 us: UNDER.
        let (io, d) = p.decide(0, 0, 20_000, 4096, false);
        p.record(0, 0, 8, io, d, true);
        p.take_sleep(0);
        p.polls_now(0, 0, 21_200);
        p.posted(0, 8, 30_000);
        p.found(0, 0, 8, 20_000, 30_100, true);
        assert_eq!(p.sleep_counts().unwrap().under, 1);
        // Nothing pending is left to sleep for.
        assert_eq!(p.take_sleep(0), 0);
    }

    #[test]
    fn a_request_sent_to_interrupts_makes_its_thread_block() {
        let mut p = Polling::new(Completion::Ehp, costs(), HybridSleep::HalfMean, 1);
        // EHP: the first request turns statistics on and spins; an 80 us
        // minimum sends the bucket to interrupts once its window closes.
        let (io, d) = p.decide(0, 0, 0, 4096, false);
        assert_eq!(d, Decision::Spin);
        p.record(0, 0, 1, io, d, true);
        assert!(!p.waits_by_interrupt(0));
        p.found(0, 0, 1, 0, 80 * US, true);
        let (io, d) = p.decide(0, 0, 20_000 * US, 4096, false);
        assert_eq!(d, Decision::Interrupt);
        p.record(0, 0, 2, io, d, true);
        assert!(p.waits_by_interrupt(0));
        assert_eq!(p.sleep_counts().unwrap().interrupts, 1);
        p.found(0, 0, 2, 20_000 * US, 20_090 * US, true);
        assert!(!p.waits_by_interrupt(0), "nothing pending");
    }

    #[test]
    fn dpas_depth_counts_the_cores_sleepers() {
        let mut p = Polling::new(Completion::Dpas, costs(), HybridSleep::HalfMean, 3);
        // Two threads on core 0 sleeping; a third decides at depth 3.
        for (tid, slot) in [(0, 1), (1, 2)] {
            let (io, d) = p.decide(tid, 0, 0, 4096, false);
            assert!(d.sleep() > 0);
            p.record(tid, 0, slot, io, d, true);
        }
        let (io, _) = p.decide(2, 0, 0, 4096, false);
        assert_eq!(io.depth, 3);
        // Thread 0 wakes: one fewer asleep.
        p.take_sleep(0);
        p.polls_now(0, 0, 1_000);
        assert_eq!(p.decide(2, 0, 0, 4096, false).0.depth, 2);
        // Another core has its own.
        assert_eq!(p.decide(2, 1, 0, 4096, false).0.depth, 1);
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
