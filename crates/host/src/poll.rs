//! `poll`: how a waiter learns that its I/O completed, and what that costs
//! the CPU.
//!
//! - [`Mode::Interrupt`]: the waiter sleeps; the device's interrupt runs the
//!   handler, which wakes it (FR 2.1, read path steps 4-5). When the
//!   interrupt fires is the device's policy's business (`policy`: at once,
//!   coalesced, calibrated), so it is an input here.
//! - [`Mode::Poll`]: the waiter spins on its completion queue from
//!   submission until it finds the entry; every nanosecond of it is CPU busy
//!   ("polling provides the lowest latency ... at the expense of 100% CPU
//!   utilization", TOS 2, Fig. 5).
//! - [`Mode::Hybrid`]: Linux's hybrid polling (block/blk-mq.c,
//!   `blk_mq_poll_hybrid_sleep`, Linux 5.3 as FastResponse's base): sleep
//!   on a high-resolution timer for half the mean completion time of the
//!   request's size bucket in the last statistics window, or a fixed
//!   `io_poll_delay`, then spin. It "breaks down when requests having
//!   varying size" (TOS 2, Fig. 5(b)-(c)): the mean is over a bucket, not
//!   this request.
//! - [`Mode::SelectIsr`]: FR's baseline, the software half of FlashShare
//!   (FR 4.1): critical I/O polls (classic), the rest takes interrupts. Its
//!   other half, critical I/O bypassing the block layer's scheduler, is
//!   `ld`'s critical path (or no scheduler at all).
//! - [`Mode::Pas`], [`Mode::Dpas`], [`Mode::Ehp`], [`Mode::HybridIopoll`]:
//!   the sleep-then-poll strategies after hybrid polling (issue 40), each
//!   deciding per request through [`crate::sleep::SleepPoll`]
//!   ([`crate::pas`], [`crate::dpas`], [`crate::ehp`], [`crate::iopoll`]);
//!   a front end applies their decisions, and [`hybrid`] prices a sleep
//!   then a spin whoever chose the sleep.
//!
//! Pure: given when the request was submitted, when the device posted its
//! completion and (for interrupts) when the interrupt reached the host, say
//! when the waiter notices it and what the CPU spent. The interrupt path's
//! costs are parameters ([`Costs`]): the papers measure them on their
//! machines (FR 4.2 puts the interrupt's context switch at "about 2 us");
//! the simulator's calibrated host model supplies them. The waiter is taken
//! to run as soon as it is woken (an idle CPU): waiting behind another
//! runnable task is the CPU scheduler's part, not this one.

use policy::{Nanos, MS};

/// A completion mode: how a waiter learns of its completion. The one
/// enum every front end applies (`sim --completion`, `run`, `exec`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    Interrupt,
    Poll,
    Hybrid,
    SelectIsr,
    /// PAS (DPAS, FAST'26): [`crate::pas`].
    Pas,
    /// DPAS: [`crate::dpas`].
    Dpas,
    /// EHP (JSA 2022), as the DPAS artifact's baseline: [`crate::ehp`].
    Ehp,
    /// io_uring's IORING_SETUP_HYBRID_IOPOLL (Linux 6.13): [`crate::iopoll`].
    HybridIopoll,
    /// UnICom's central poller (FAST'26; [`crate::central`]): one kernel
    /// thread polls every blocking thread's queue, which raises no
    /// interrupt; a waiter alone on its core spins on its request's status,
    /// one with company is skipped by the scheduler until the poller
    /// completes its tag.
    Central,
}

impl Mode {
    pub const ALL: [Mode; 9] = [
        Mode::Interrupt,
        Mode::Poll,
        Mode::Hybrid,
        Mode::SelectIsr,
        Mode::Pas,
        Mode::Dpas,
        Mode::Ehp,
        Mode::HybridIopoll,
        Mode::Central,
    ];

    /// How the command line and the profiles write it
    /// ([`crate::mechanism`]).
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Interrupt => "interrupt",
            Mode::Poll => "poll",
            Mode::Hybrid => "hybrid",
            Mode::SelectIsr => "select-isr",
            Mode::Pas => "pas",
            Mode::Dpas => "dpas",
            Mode::Ehp => "ehp",
            Mode::HybridIopoll => "hybrid-iopoll",
            Mode::Central => "central",
        }
    }
}

/// The host's costs on the completion path, measured elsewhere.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Costs {
    /// CPU time of one interrupt: delivery, handler, reaping the entry and
    /// ending the request. Coalesced interrupts share it: pass the share.
    pub irq: Nanos,
    /// From a wake-up to the woken waiter running: the context switch (FR
    /// 4.2: "the cost of context-switching introduced by interrupts (about
    /// 2 us)").
    pub wakeup: Nanos,
    /// The hrtimer interrupt that ends hybrid polling's sleep, before its
    /// wake-up.
    pub timer: Nanos,
    /// One poll of the completion queue that finds and reaps the entry.
    pub reap: Nanos,
}

/// The times one request's completion depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Times {
    /// The waiter starts waiting (the doorbell was rung).
    pub submitted: Nanos,
    /// The device posts the completion entry.
    pub posted: Nanos,
    /// The interrupt that delivers it reaches the host (taken as at least
    /// `posted`). Ignored by polling.
    pub interrupt: Nanos,
}

impl Times {
    /// An interrupt as soon as the entry is posted (no coalescing).
    pub fn new(submitted: Nanos, posted: Nanos) -> Self {
        Times {
            submitted,
            posted,
            interrupt: posted,
        }
    }

    /// The interrupt fires at `at` (a coalescing policy's decision).
    pub fn interrupted_at(mut self, at: Nanos) -> Self {
        self.interrupt = at;
        self
    }
}

/// How one waiter's wait went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wait {
    /// The waiter runs with its completion in hand.
    pub noticed: Nanos,
    /// The block layer ends the request (`blk_mq_end_request`): in the
    /// interrupt handler, or at the poll that finds it. Linux's poll
    /// statistics measure up to here (`blk_stat_add`).
    pub ended: Nanos,
    /// CPU busy spinning on the completion queue.
    pub spun: Nanos,
    /// The waiter off the CPU (free for others).
    pub slept: Nanos,
    /// CPU in the interrupt path: the device's interrupt or hybrid's timer,
    /// and the wake-up.
    pub irq: Nanos,
    pub wakeups: u32,
}

impl Wait {
    /// CPU the wait cost: spinning and the interrupt path.
    pub fn busy(&self) -> Nanos {
        self.spun + self.irq
    }

    /// From submission to the waiter noticing.
    pub fn latency(&self, t: Times) -> Nanos {
        self.noticed.saturating_sub(t.submitted)
    }
}

/// Interrupt-driven completion (FR 2.1, steps 4-5): the waiter sleeps until
/// the interrupt's handler wakes it.
pub fn interrupt(costs: Costs, t: Times) -> Wait {
    let at = t.interrupt.max(t.posted).max(t.submitted);
    let ended = at + costs.irq;
    Wait {
        noticed: ended + costs.wakeup,
        ended,
        spun: 0,
        slept: at - t.submitted,
        irq: costs.irq + costs.wakeup,
        wakeups: 1,
    }
}

/// Classic polling: spin from submission until the poll that finds the
/// entry (TOS 2, Fig. 5: lowest latency, 100% CPU).
pub fn classic(costs: Costs, t: Times) -> Wait {
    let noticed = t.posted.max(t.submitted) + costs.reap;
    Wait {
        noticed,
        ended: noticed,
        spun: noticed - t.submitted,
        slept: 0,
        irq: 0,
        wakeups: 0,
    }
}

/// Hybrid polling: sleep `sleep` ns on a timer, then spin
/// (`blk_mq_poll_hybrid_sleep`). A sleep of 0 is classic polling (Linux
/// spins at once when it has no estimate). The timer wakes the waiter even
/// if the entry was posted meanwhile: a polled queue raises no interrupt.
pub fn hybrid(costs: Costs, t: Times, sleep: Nanos) -> Wait {
    if sleep == 0 {
        return classic(costs, t);
    }
    let running = t.submitted + sleep + costs.timer + costs.wakeup;
    let noticed = t.posted.max(running) + costs.reap;
    Wait {
        noticed,
        ended: noticed,
        spun: noticed - running,
        slept: sleep,
        irq: costs.timer + costs.wakeup,
        wakeups: 1,
    }
}

/// FR's SelectISR (FR 4.1, FlashShare's software part): critical I/O polls,
/// the rest is interrupt-driven.
pub fn select_isr(costs: Costs, t: Times, critical: bool) -> Wait {
    if critical {
        classic(costs, t)
    } else {
        interrupt(costs, t)
    }
}

/// Size buckets of Linux's poll statistics: `BLK_MQ_POLL_STATS_BKTS`
/// (include/linux/blkdev.h, Linux 5.3).
pub const POLL_STATS_BUCKETS: usize = 16;

/// The statistics window: `blk_mq_poll_stats_start` arms it for 100 ms
/// (`blk_stat_activate_msecs(q->poll_cb, 100)`, block/blk-mq.c, Linux 5.3).
pub const POLL_STATS_WINDOW: Nanos = 100 * MS;

/// A request's statistics bucket, as `blk_mq_poll_stats_bkt`: direction
/// plus twice the log2 of its 512-byte sectors, the largest sizes sharing
/// the last pair; `None` below one sector (Linux keeps no statistics, so
/// hybrid polling does not sleep).
pub fn bucket(bytes: u64, write: bool) -> Option<usize> {
    let sectors = bytes / 512;
    if sectors == 0 {
        return None;
    }
    let dir = usize::from(write);
    let b = dir + 2 * sectors.ilog2() as usize;
    Some(if b >= POLL_STATS_BUCKETS {
        dir + POLL_STATS_BUCKETS - 2
    } else {
        b
    })
}

/// How long hybrid polling sleeps: sysfs `io_poll_delay`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HybridSleep {
    /// `io_poll_delay = 0`: half the bucket's mean ("as an optimistic
    /// guess, use half of the mean service time for this type of request",
    /// `blk_mq_poll_nsecs`).
    HalfMean,
    /// `io_poll_delay > 0`: this long, whatever the request.
    Fixed(Nanos),
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Stat {
    sum: u64,
    samples: u64,
}

/// Linux's per-queue poll statistics, as hybrid polling reads them.
///
/// Statistics are off until the first hybrid sleep asks for them
/// (`blk_poll_stats_enable`: that request does not sleep). From then on
/// every request ended on the queue is a sample, its latency from issue to
/// its end. A window opens at the first sample when none is open and lasts
/// [`POLL_STATS_WINDOW`]; when it closes, each bucket with samples takes the
/// window's mean (`blk_mq_poll_stats_fn`), the others keep theirs. We close
/// a window lazily, at the first event at or after its end: nothing reads
/// the means in between.
#[derive(Clone, Debug, Default)]
pub struct HybridStats {
    enabled: bool,
    window_end: Option<Nanos>,
    window: [Stat; POLL_STATS_BUCKETS],
    mean: [Option<Nanos>; POLL_STATS_BUCKETS],
}

impl HybridStats {
    /// How long a request of `bucket` submitted at `now` sleeps before it
    /// spins (`blk_mq_poll_nsecs`: `(mean + 1) / 2`, 0 without samples).
    pub fn sleep(&mut self, now: Nanos, bucket: Option<usize>) -> Nanos {
        if !self.enabled {
            self.enabled = true;
            return 0;
        }
        self.close(now);
        bucket
            .and_then(|b| self.mean[b])
            // Linux: `(mean + 1) / 2`, half rounded up.
            .map_or(0, |mean| mean.div_ceil(2))
    }

    /// A request of `bucket` ended at `now`, `latency` after its issue.
    pub fn ended(&mut self, now: Nanos, bucket: Option<usize>, latency: Nanos) {
        if !self.enabled {
            return;
        }
        self.close(now);
        self.window_end.get_or_insert(now + POLL_STATS_WINDOW);
        if let Some(b) = bucket {
            self.window[b].sum += latency;
            self.window[b].samples += 1;
        }
    }

    /// The mean in force for `bucket` at `now`, if it has one.
    pub fn mean(&mut self, now: Nanos, bucket: usize) -> Option<Nanos> {
        self.close(now);
        self.mean.get(bucket).copied().flatten()
    }

    fn close(&mut self, now: Nanos) {
        if self.window_end.is_some_and(|end| now >= end) {
            for (mean, stat) in self.mean.iter_mut().zip(&mut self.window) {
                if let Some(m) = stat.sum.checked_div(stat.samples) {
                    *mean = Some(m);
                }
                *stat = Stat::default();
            }
            self.window_end = None;
        }
    }
}

/// A request as the completion path sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Io {
    pub bytes: u64,
    pub write: bool,
    /// For [`Mode::SelectIsr`] (FR 3.2's critical flag).
    pub critical: bool,
}

/// One queue's completion mode, with the statistics hybrid polling keeps.
/// Three entries, one per event: [`Completions::submitted`] (what hybrid
/// will sleep), [`Completions::wait`] (once the device's times are known;
/// pure), [`Completions::ended`] (the request ended: a statistics sample).
#[derive(Clone, Debug)]
pub struct Completions {
    mode: Mode,
    costs: Costs,
    hybrid: HybridSleep,
    stats: HybridStats,
}

impl Completions {
    pub fn new(mode: Mode, costs: Costs) -> Self {
        Completions {
            mode,
            costs,
            hybrid: HybridSleep::HalfMean,
            stats: HybridStats::default(),
        }
    }

    pub fn with_hybrid_sleep(mut self, sleep: HybridSleep) -> Self {
        self.hybrid = sleep;
        self
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn stats(&mut self) -> &mut HybridStats {
        &mut self.stats
    }

    /// `io` is submitted at `now`: how long its waiter will sleep before
    /// spinning (hybrid only; 0 otherwise).
    pub fn submitted(&mut self, now: Nanos, io: Io) -> Nanos {
        match (self.mode, self.hybrid) {
            (Mode::Hybrid, HybridSleep::Fixed(ns)) => ns,
            (Mode::Hybrid, HybridSleep::HalfMean) => {
                self.stats.sleep(now, bucket(io.bytes, io.write))
            }
            _ => 0,
        }
    }

    /// How `io`'s waiter learns of its completion, `sleep` being what
    /// [`Completions::submitted`] returned for it.
    pub fn wait(&self, io: Io, t: Times, sleep: Nanos) -> Wait {
        match self.mode {
            Mode::Interrupt => interrupt(self.costs, t),
            Mode::Poll => classic(self.costs, t),
            Mode::Hybrid => hybrid(self.costs, t, sleep),
            Mode::SelectIsr => select_isr(self.costs, t, io.critical),
            // The sleep is the strategy's (`crate::sleep`), passed in.
            Mode::Pas | Mode::Dpas | Mode::Ehp | Mode::HybridIopoll => hybrid(self.costs, t, sleep),
            // A waiter alone on its core spins on its status word until the
            // central poller, spinning on a core of its own, reaps the entry
            // as it is posted (`crate::central`): classic polling's times,
            // the reap paid on the poller's core instead.
            Mode::Central => classic(self.costs, t),
        }
    }

    /// `io`'s request ended (at `w.ended`): a sample for the statistics.
    pub fn ended(&mut self, io: Io, t: Times, w: &Wait) {
        let latency = w.ended.saturating_sub(t.submitted);
        self.stats
            .ended(w.ended, bucket(io.bytes, io.write), latency);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use policy::US;

    const COSTS: Costs = Costs {
        irq: 1_500,
        wakeup: 2_000,
        timer: 1_000,
        reap: 100,
    };

    const READ_4K: Io = Io {
        bytes: 4096,
        write: false,
        critical: false,
    };

    #[test]
    fn interrupt_wakes_the_sleeper_after_handler_and_switch() {
        let w = interrupt(COSTS, Times::new(0, 10 * US));
        assert_eq!(w.noticed, 10 * US + 1_500 + 2_000);
        assert_eq!(w.ended, 10 * US + 1_500);
        assert_eq!((w.spun, w.slept, w.irq, w.wakeups), (0, 10 * US, 3_500, 1));
        assert_eq!(w.busy(), 3_500);
    }

    #[test]
    fn an_interrupted_waiter_sleeps_from_its_submission_to_the_interrupt() {
        // FR 2.1 steps 4-5: the waiter is off the CPU from the doorbell
        // until the handler runs.
        let w = interrupt(COSTS, Times::new(3 * US, 10 * US).interrupted_at(12 * US));
        assert_eq!(w.slept, 9 * US);
        assert_eq!(w.latency(Times::new(3 * US, 10 * US)), 9 * US + 3_500);
    }

    #[test]
    fn modes_are_named_as_the_command_line_and_the_reports_write_them() {
        // One spelling (issue 26 item 2): `--completion`'s words, which the
        // emulator's report prints and matches ("hybrid").
        let names: Vec<_> = Mode::ALL.iter().map(|m| m.as_str()).collect();
        assert_eq!(
            names,
            [
                "interrupt",
                "poll",
                "hybrid",
                "select-isr",
                "pas",
                "dpas",
                "ehp",
                "hybrid-iopoll",
                "central"
            ]
        );
        for m in Mode::ALL {
            assert_eq!(m.as_str().parse::<Mode>(), Ok(m));
        }
    }

    #[test]
    fn a_coalesced_interrupt_delays_the_waiter_not_the_cpu() {
        let t = Times::new(0, 10 * US).interrupted_at(16 * US);
        let w = interrupt(COSTS, t);
        assert_eq!(w.noticed, 16 * US + 3_500);
        assert_eq!(w.slept, 16 * US);
        assert_eq!(w.busy(), 3_500);
        // An interrupt "before" the entry is posted is taken at the post.
        let w = interrupt(COSTS, Times::new(0, 10 * US).interrupted_at(5 * US));
        assert_eq!(w.noticed, 10 * US + 3_500);
    }

    #[test]
    fn classic_polling_spins_the_whole_wait() {
        let t = Times::new(2 * US, 12 * US);
        let w = classic(COSTS, t);
        assert_eq!(w.noticed, 12 * US + 100);
        assert_eq!(w.spun, 10 * US + 100);
        assert_eq!((w.slept, w.irq, w.wakeups), (0, 0, 0));
        assert_eq!(w.latency(t), 10 * US + 100);
        // Lowest latency of all, at the most CPU (TOS 2, Fig. 5).
        let i = interrupt(COSTS, t);
        assert!(w.noticed < i.noticed && w.busy() > i.busy());
    }

    #[test]
    fn hybrid_sleeping_short_of_the_completion_spins_the_rest() {
        let w = hybrid(COSTS, Times::new(0, 10 * US), 5 * US);
        // Awake and spinning at 5 + 1 + 2 us; found at 10 us.
        assert_eq!(w.noticed, 10 * US + 100);
        assert_eq!(w.spun, 10 * US + 100 - 8 * US);
        assert_eq!((w.slept, w.irq, w.wakeups), (5 * US, 3_000, 1));
    }

    #[test]
    fn hybrid_sleeping_past_the_completion_notices_it_late() {
        // The mixed-size failure of TOS 2, Fig. 5(c): a 4 us request in a
        // bucket whose mean is 20 us sleeps 10 us.
        let w = hybrid(COSTS, Times::new(0, 4 * US), 10 * US);
        assert_eq!(w.noticed, 13 * US + 100);
        assert_eq!(w.spun, 100);
    }

    #[test]
    fn hybrid_without_an_estimate_is_classic() {
        let t = Times::new(0, 10 * US);
        assert_eq!(hybrid(COSTS, t, 0), classic(COSTS, t));
    }

    #[test]
    fn selectisr_polls_critical_and_interrupts_the_rest() {
        let t = Times::new(0, 10 * US);
        assert_eq!(select_isr(COSTS, t, true), classic(COSTS, t));
        assert_eq!(select_isr(COSTS, t, false), interrupt(COSTS, t));
    }

    #[test]
    fn buckets_are_direction_plus_twice_log2_sectors() {
        assert_eq!(bucket(511, false), None);
        assert_eq!(bucket(512, false), Some(0));
        assert_eq!(bucket(512, true), Some(1));
        assert_eq!(bucket(4096, false), Some(6));
        assert_eq!(bucket(4096, true), Some(7));
        assert_eq!(bucket(64 * 1024, false), Some(14));
        // 128 KB and up share the last pair.
        assert_eq!(bucket(128 * 1024, false), Some(14));
        assert_eq!(bucket(1 << 30, true), Some(15));
    }

    #[test]
    fn hybrid_sleeps_half_the_last_windows_mean() {
        let mut s = HybridStats::default();
        let b = bucket(4096, false);
        // The first ask turns statistics on and does not sleep.
        assert_eq!(s.sleep(0, b), 0);
        s.ended(1_000, b, 10 * US);
        s.ended(2_000, b, 13 * US);
        // The window (opened at 1 us) is still open: no mean yet.
        assert_eq!(s.sleep(50 * MS, b), 0);
        // Closed: (11.5 us + 1) / 2.
        assert_eq!(s.sleep(1_000 + POLL_STATS_WINDOW, b), 5_750);
        // A window without samples for the bucket keeps its mean.
        s.ended(200 * MS, bucket(4096, true), 40 * US);
        assert_eq!(s.sleep(400 * MS, b), 5_750);
        assert_eq!(s.mean(400 * MS, 7), Some(40 * US));
        // Another size has its own bucket, empty here.
        assert_eq!(s.sleep(400 * MS, bucket(64 * 1024, false)), 0);
    }

    #[test]
    fn statistics_are_off_until_hybrid_asks() {
        let mut s = HybridStats::default();
        s.ended(0, Some(6), 10 * US);
        assert_eq!(s.mean(policy::SEC, 6), None);
    }

    #[test]
    fn completions_drive_hybrid_from_its_own_samples() {
        let mut c = Completions::new(Mode::Hybrid, COSTS);
        let mut now = 0;
        let mut sleeps = Vec::new();
        // A 10 us device, one request at a time, for 300 ms.
        while now < 300 * MS {
            let sleep = c.submitted(now, READ_4K);
            let t = Times::new(now, now + 10 * US);
            let w = c.wait(READ_4K, t, sleep);
            c.ended(READ_4K, t, &w);
            sleeps.push(sleep);
            now = w.noticed;
        }
        assert_eq!(sleeps[0], 0);
        // After the first window: classic polling found each at 10.1 us,
        // so hybrid sleeps half of it.
        assert_eq!(*sleeps.last().unwrap(), 5_050);
    }

    #[test]
    fn completions_expose_the_statistics_hybrid_sleeps_by() {
        let mut c = Completions::new(Mode::Hybrid, COSTS);
        assert_eq!(c.submitted(0, READ_4K), 0);
        let t = Times::new(0, 10 * US);
        let w = c.wait(READ_4K, t, 0);
        c.ended(READ_4K, t, &w);
        // The queue's own window: closed, it holds the sample's mean.
        let b = bucket(4096, false).unwrap();
        assert_eq!(c.stats().mean(POLL_STATS_WINDOW + MS, b), Some(w.ended));
    }

    #[test]
    fn a_queue_reports_the_mode_it_was_given() {
        // The front ends read the queue's mode back (whether its waiters
        // poll); each of the four is kept, not the default (interrupts).
        for m in Mode::ALL {
            assert_eq!(Completions::new(m, COSTS).mode(), m);
        }
    }

    #[test]
    fn completions_fixed_delay_and_other_modes_do_not_sleep_by_statistics() {
        let mut c =
            Completions::new(Mode::Hybrid, COSTS).with_hybrid_sleep(HybridSleep::Fixed(7 * US));
        assert_eq!(c.submitted(0, READ_4K), 7 * US);
        for mode in [Mode::Interrupt, Mode::Poll, Mode::SelectIsr] {
            let mut c = Completions::new(mode, COSTS);
            assert_eq!(c.submitted(0, READ_4K), 0);
        }
        let c = Completions::new(Mode::SelectIsr, COSTS);
        let t = Times::new(0, 10 * US);
        let crit = Io {
            critical: true,
            ..READ_4K
        };
        assert_eq!(c.wait(crit, t, 0), classic(COSTS, t));
        assert_eq!(c.wait(READ_4K, t, 0), interrupt(COSTS, t));
    }
}
