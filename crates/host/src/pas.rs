//! `pas`: PAS, per-I/O adaptive sleep (DPAS, USENIX FAST'26), ported from
//! its artifact's kernel (`DongDongJu/DPAS_FAST26`, a patched Linux
//! 5.18-rc6, `kernel/block/blk-mq.c`; read, not copied). Hybrid polling
//! with a sleep that is not estimated from a mean but steered by whether
//! the last sleep was too short or too long.
//!
//! - **State** (`struct blk_rq_pas_stat`, `include/linux/blkdev.h`): per
//!   CPU and per poll-statistics bucket (direction and size,
//!   [`crate::poll::bucket`], the artifact's `blk_mq_poll_stats_bkt`) a
//!   sleep length `dur`, a multiplier `adj`, step sizes `up` and `dn`, the
//!   last two verdicts (`sr_pnlt`, `sr_last`: 1 underslept, 0 overslept),
//!   the count of lengths handed out (`dur_cnt`, our epoch) and whether a
//!   verdict awaits (`update_req`). Initial values: `init_pas_stat` called
//!   from `blk_mq_init_allocated_queue` with the queue's constants
//!   ([`Constants::ARTIFACT`]).
//! - **Feedback** (`blk_mq_poll_classic`, the branch under
//!   `q->pas_enabled`): the first request found that slept at the current
//!   length (`rq->dur_cnt == stat->dur_cnt`, and not already checked) is
//!   the verdict: OVER if the first poll after waking found it
//!   (`!poll_count`), else UNDER. Later requests of the same length, and
//!   requests slept at an older one, are ignored.
//! - **Sleep** (`blk_mq_poll_pas_nsecs`): with no verdict pending, the
//!   current length. With one, the length moves first, by the pair
//!   (previous, last) of verdicts: OVER, OVER `adj -= dn` (compounding:
//!   `adj` is not reset); OVER, UNDER `adj = 1 + up`; UNDER, OVER
//!   `adj = 1 - dn`; UNDER, UNDER `adj += up`; `adj <= 0` resets to 1;
//!   then `dur = dur * adj`, floored at `d_init` (100 ns; the floor is what DPAS's
//!   `tf` counts). Then the steps adapt (`pas_adaptive_enabled == 1`, what
//!   the artifact's `scripts/micro_4krr/run.sh` sets for PAS and DPAS):
//!   two equal verdicts heat `dn` up by 5% (at most 0.1) with `up = dn /
//!   10`; two different ones cool `up` down by 10% (at least 0.001) with
//!   `dn = 10 up`.
//!
//! The fixed-point arithmetic is the artifact's (`q->div = 1000000`
//! parts per unit, integer division), so the lengths are the kernel's to
//! the nanosecond. The artifact's second adaptive variant
//! (`pas_adaptive_enabled == 2`, up only) is not used by its scripts and
//! not ported.
//!
//! PAS against Linux's hybrid polling ([`crate::poll::HybridStats`],
//! "LHP" in the DPAS paper): LHP sleeps half the mean latency of the last
//! window, and a waiter that overslept ends its request late, so the next
//! window's mean, and sleep, grow with the oversleep: the paper's "latency
//! shelving" (the artifact's `LHP_emulator.html` shows it). PAS never
//! reads a latency, only the verdicts, so an oversleep shortens the next
//! sleep instead.

use policy::Nanos;

use crate::poll::{bucket, POLL_STATS_BUCKETS};
use crate::sleep::{Decision, Found, Io, Outcome, SleepPoll};

/// PAS's constants, in the artifact's fixed point (`div` parts per unit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Constants {
    pub div: i64,
    /// The initial and the least sleep, ns (`q->d_init = 100; // unit: ns`).
    pub d_init: Nanos,
    pub up_init: i64,
    pub dn_init: i64,
    pub heat_up: i64,
    pub cool_dn: i64,
    pub min_dn: i64,
    pub max_dn: i64,
    pub updn_ratio: i64,
}

impl Constants {
    /// `blk_mq_init_allocated_queue`, "PAS init" (kernel/block/blk-mq.c of
    /// the artifact): `up_init = 0.01`, `dn_init = 0.1`, `heat_up = 0.05`,
    /// `cool_dn = 0.1`, `min_dn = 0.01`, `max_dn = 0.1`, `updn_ratio =
    /// 10`, `d_init = 100` ns.
    pub const ARTIFACT: Constants = Constants {
        div: 1_000_000,
        d_init: 100,
        up_init: 10_000,
        dn_init: 100_000,
        heat_up: 50_000,
        cool_dn: 100_000,
        min_dn: 10_000,
        max_dn: 100_000,
        updn_ratio: 10,
    };
}

/// One bucket's `struct blk_rq_pas_stat`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    pub dur: Nanos,
    pub adj: i64,
    pub up: i64,
    pub dn: i64,
    /// The verdict before the last: true underslept (`sr_pnlt`).
    pub sr_pnlt: bool,
    /// The last verdict (`sr_last`).
    pub sr_last: bool,
    pub dur_cnt: u32,
    dur_cnt_checked: u32,
    update_req: bool,
}

impl Stat {
    /// `init_pas_stat(stat, d_init, div, up_init, dn_init)`.
    fn new(c: &Constants) -> Stat {
        Stat {
            dur: c.d_init,
            adj: c.div,
            up: c.up_init,
            dn: c.dn_init,
            sr_pnlt: false,
            sr_last: true,
            dur_cnt: 1,
            dur_cnt_checked: 0,
            update_req: false,
        }
    }
}

/// A sleep handed out: its length, its epoch, and whether moving the
/// length hit the floor (`d_init`: DPAS's timer-floor count, `sc->tf++`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sleep {
    pub ns: Nanos,
    pub epoch: u32,
    pub floored: bool,
}

/// PAS for one waiter (per CPU in the artifact: [`SleepPoll::per_cpu`]).
#[derive(Clone, Debug)]
pub struct Pas {
    c: Constants,
    stat: [Stat; POLL_STATS_BUCKETS],
}

impl Default for Pas {
    fn default() -> Pas {
        Pas::new(Constants::ARTIFACT)
    }
}

impl Pas {
    pub fn new(c: Constants) -> Pas {
        Pas {
            c,
            stat: [Stat::new(&c); POLL_STATS_BUCKETS],
        }
    }

    /// A bucket's state, for reports and tests.
    pub fn stat(&self, bucket: usize) -> &Stat {
        &self.stat[bucket]
    }

    /// DPAS's CP -> PAS: the bucket's next sleep moves by the verdicts it
    /// has (`stat[bucket].update_req = 1` in `blk_mq_poll_pas_nsecs`).
    pub fn request_update(&mut self, bucket: usize) {
        self.stat[bucket].update_req = true;
    }

    /// The sleep of a request of `bucket` (`blk_mq_poll_pas_nsecs`, from
    /// "Update sleep duration").
    pub fn sleep(&mut self, bucket: usize) -> Sleep {
        let c = self.c;
        let s = &mut self.stat[bucket];
        if !s.update_req {
            return Sleep {
                ns: s.dur,
                epoch: s.dur_cnt,
                floored: false,
            };
        }
        s.update_req = false;
        let one = c.div;
        let same = s.sr_pnlt == s.sr_last;
        s.adj = match (s.sr_pnlt, s.sr_last) {
            // [overslept, overslept]
            (false, false) => s.adj - s.dn,
            // [overslept, underslept]
            (false, true) => one + s.up,
            // [underslept, overslept]
            (true, false) => one - s.dn,
            // [underslept, underslept]
            (true, true) => s.adj + s.up,
        };
        if s.adj <= 0 {
            s.adj = one;
        }
        // `dur` is a u32 in the artifact, the product a long long.
        let moved = (s.dur as i64).saturating_mul(s.adj) / one;
        s.dur = u64::from(u32::try_from(moved.max(0)).unwrap_or(u32::MAX));
        let floored = s.dur < c.d_init;
        if floored {
            s.dur = c.d_init;
        }
        s.dur_cnt = s.dur_cnt.wrapping_add(1);
        // Dynamically adjust up and dn (pas_adaptive_enabled == 1).
        if same {
            s.dn = (s.dn * (one + c.heat_up) / one).min(c.max_dn);
            s.up = s.dn / c.updn_ratio;
        } else {
            s.up = (s.up * (one - c.cool_dn) / one).max(c.min_dn / c.updn_ratio);
            s.dn = s.up * c.updn_ratio;
        }
        Sleep {
            ns: s.dur,
            epoch: s.dur_cnt,
            floored,
        }
    }

    /// A request of `bucket` slept at `epoch` and was found `outcome`
    /// (`blk_mq_poll_classic`): the verdict if it is the first of the
    /// current length.
    pub fn feedback(&mut self, bucket: usize, epoch: u32, outcome: Outcome) {
        let s = &mut self.stat[bucket];
        if epoch == s.dur_cnt && s.dur_cnt != s.dur_cnt_checked {
            s.dur_cnt_checked = s.dur_cnt;
            s.sr_pnlt = s.sr_last;
            s.sr_last = outcome == Outcome::Under;
            s.update_req = true;
        }
    }
}

impl SleepPoll for Pas {
    /// Every request sleeps (at least `d_init`) then spins; a request
    /// below one sector has no bucket and spins (`bucket < 0` returns 0).
    fn decide(&mut self, _now: Nanos, io: Io) -> Decision {
        match bucket(io.bytes, io.write) {
            Some(b) => {
                let s = self.sleep(b);
                Decision::Sleep {
                    ns: s.ns,
                    epoch: s.epoch,
                }
            }
            None => Decision::Spin,
        }
    }

    fn found(&mut self, io: Io, f: Found) {
        if let (Some(b), Some(outcome)) = (bucket(io.bytes, io.write), f.outcome()) {
            self.feedback(b, f.epoch(), outcome);
        }
    }

    fn per_cpu(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sleep::Decision;

    use crate::sleep::READ_4K;

    /// One request at a time on a device of `latency`: the waiter wakes
    /// `overhead` after its sleep (timer and context switch).
    fn run(p: &mut Pas, latency: Nanos, overhead: Nanos, n: usize) -> Vec<Nanos> {
        let mut sleeps = Vec::new();
        let mut now = 0;
        for _ in 0..n {
            let d = p.decide(now, READ_4K);
            let woke = now + d.sleep() + overhead;
            let posted = now + latency;
            p.found(
                READ_4K,
                Found {
                    decision: d,
                    submitted: now,
                    woke,
                    posted,
                    found: woke.max(posted),
                },
            );
            sleeps.push(d.sleep());
            now = woke.max(posted) + 1_000;
        }
        sleeps
    }

    #[test]
    fn the_first_sleep_is_d_init_and_a_verdict_moves_the_next() {
        let mut p = Pas::default();
        let b = bucket(4096, false).unwrap();
        let s = p.sleep(b);
        assert_eq!((s.ns, s.epoch, s.floored), (100, 1, false));
        // No verdict yet: the same length, the same epoch.
        assert_eq!(p.sleep(b), s);
        // UNDER after the initial (pnlt OVER, last UNDER) state: the pair
        // is (UNDER, UNDER), adj = 1 + 0.01 -> 101 ns.
        p.feedback(b, 1, Outcome::Under);
        let s = p.sleep(b);
        assert_eq!((s.ns, s.epoch), (101, 2));
        // Equal verdicts heat dn up 5%, capped at max_dn = dn_init = 0.1,
        // so the steps stay 0.1 and 0.01.
        let st = p.stat(b);
        assert_eq!((st.adj, st.dn, st.up), (1_010_000, 100_000, 10_000));
    }

    #[test]
    fn only_the_first_request_of_a_length_is_a_verdict() {
        let mut p = Pas::default();
        let b = bucket(4096, false).unwrap();
        p.feedback(b, 1, Outcome::Under);
        let before = *p.stat(b);
        // A second request of epoch 1, and one of a stale epoch: ignored.
        p.feedback(b, 1, Outcome::Over);
        p.feedback(b, 0, Outcome::Over);
        assert_eq!(*p.stat(b), before);
    }

    #[test]
    fn consecutive_unders_compound_and_an_over_turns_back() {
        let mut p = Pas::default();
        let b = 6;
        let mut lens = Vec::new();
        for _ in 0..4 {
            let s = p.sleep(b);
            lens.push(s.ns);
            p.feedback(b, s.epoch, Outcome::Under);
        }
        // adj grows by `up` each time: 1.01, 1.02, 1.03.
        assert_eq!(lens, [100, 101, 103, 106]);
        let s = p.sleep(b);
        p.feedback(b, s.epoch, Outcome::Over);
        // (UNDER, OVER): adj = 1 - dn.
        let before = p.stat(b).dur;
        let after = p.sleep(b).ns;
        assert!(after < before, "{after} < {before}");
        assert!(p.stat(b).adj < 1_000_000, "{}", p.stat(b).adj);
    }

    #[test]
    fn the_sleep_never_goes_below_d_init_and_says_so() {
        let mut p = Pas::default();
        let b = 6;
        let s = p.sleep(b);
        p.feedback(b, s.epoch, Outcome::Over);
        // (UNDER, OVER) from the initial state: 100 * 0.9 = 90 < 100.
        let s = p.sleep(b);
        assert_eq!((s.ns, s.floored), (100, true));
    }

    #[test]
    fn pas_converges_near_the_device_latency() {
        // 10 us device, 1 us to wake: the sleep climbs from 100 ns and
        // then hovers around latency - overhead, neither far under nor
        // far over.
        let mut p = Pas::default();
        let sleeps = run(&mut p, 10_000, 1_000, 4_000);
        let tail = &sleeps[3_000..];
        let mean = tail.iter().sum::<u64>() / tail.len() as u64;
        assert!((7_000..=10_000).contains(&mean), "mean sleep {mean}");
        // Linux's half-mean would sleep ~5 us here: PAS sleeps longer.
        assert!(mean > 5_500, "{mean}");
    }

    #[test]
    fn pas_does_not_shelve_latency_where_linux_hybrid_does() {
        // The DPAS paper's "latency shelving": a 4 us device and a 3 us
        // wake-up (timer and context switch). Linux's half-mean sleeps 2
        // us, wakes at 5 us, records 5 us, sleeps 2.5 us, ... up to the
        // fixed point m = m/2 + 3 us: 6 us for a 4 us device. PAS is told
        // OVER and sleeps less instead.
        use crate::poll::{hybrid, Completions, Costs, Mode, Times, POLL_STATS_WINDOW};
        let costs = Costs {
            irq: 0,
            wakeup: 2_000,
            timer: 1_000,
            reap: 0,
        };
        let io = crate::poll::Io {
            bytes: 4096,
            write: false,
            critical: false,
        };
        let (mut lhp, mut pas) = (Completions::new(Mode::Hybrid, costs), Pas::default());
        let (mut now, mut lhp_lat, mut pas_lat, mut pas_sleep) = (0, 0, 0, 0);
        while now < 6 * POLL_STATS_WINDOW {
            let t = Times::new(now, now + 4_000);
            let sleep = lhp.submitted(now, io);
            let w = lhp.wait(io, t, sleep);
            lhp.ended(io, t, &w);
            lhp_lat = w.latency(t);
            let d = pas.decide(now, READ_4K);
            let w = hybrid(costs, t, d.sleep());
            let woke = now + d.sleep() + 3_000;
            pas.found(
                READ_4K,
                Found {
                    decision: d,
                    submitted: now,
                    woke,
                    posted: t.posted,
                    found: w.noticed,
                },
            );
            pas_lat = w.latency(t);
            pas_sleep = d.sleep();
            now += 50_000;
        }
        assert!(lhp_lat > 5_500, "LHP {lhp_lat}");
        // PAS still sleeps (near the 1 us the wake-up leaves), and ends
        // within the step of its sleep of the device's 4 us.
        assert!(pas_lat < 4_500, "PAS {pas_lat}");
        assert!((300..=1_200).contains(&pas_sleep), "PAS sleeps {pas_sleep}");
    }

    #[test]
    fn pas_follows_a_slower_device_down_and_up() {
        let mut p = Pas::default();
        run(&mut p, 20_000, 1_000, 3_000);
        let slow = p.stat(6).dur;
        run(&mut p, 5_000, 1_000, 3_000);
        let fast = p.stat(6).dur;
        assert!(slow > 12_000 && fast < 6_000, "{slow} {fast}");
    }

    #[test]
    fn buckets_move_apart_and_sub_sector_requests_spin() {
        let mut p = Pas::default();
        let tiny = Io {
            bytes: 100,
            ..READ_4K
        };
        assert_eq!(p.decide(0, tiny), Decision::Spin);
        run(&mut p, 10_000, 1_000, 500);
        // The 64 KiB write bucket has seen nothing.
        assert_eq!(p.stat(bucket(65_536, true).unwrap()).dur, 100);
        assert!(p.per_cpu());
    }
}
