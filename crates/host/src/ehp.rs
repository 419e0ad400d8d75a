//! `ehp`: EHP, efficient hybrid polling (Lee, Shin, Jeong, "Efficient
//! hybrid polling for ultra-low latency storage devices", J. Systems
//! Architecture 122, 2022, 102338), as the DPAS artifact implements it for
//! its baseline (`DongDongJu/DPAS_FAST26`, Linux 5.18-rc6 patched,
//! `kernel/block/blk-mq.c`, `blk-stat.c`, `fops.c`; read, not copied).
//!
//! What is from where. The paper (its abstract; the full text was not
//! read here): a sleep decided "by considering I/O time characteristics
//! of idle and busy storage devices", CPU 5-40% below Linux's hybrid
//! polling and latency up to 10% lower, the latency of classic polling
//! whether the SSD is heavily or lightly loaded. The artifact's EHP,
//! which is what this module ports:
//!
//! - **Statistics** (`blk_stat_timer_fn`, `blk_mq_poll_stats_start`):
//!   Linux's poll statistics, but over 10 ms windows instead of 100 ms
//!   (`blk_stat_activate_msecs(q->poll_cb, 10); // EHP`), kept per CPU
//!   (`cb->percpu_stat`): each bucket keeps the minimum, maximum and mean
//!   latency of the last window in which it had samples. Every request of
//!   the queue is a sample once statistics are on, interrupt-driven ones
//!   included (`blk_stat_add`). A window opens at a request's end when none
//!   is open, as Linux's.
//! - **Sleep** (`blk_mq_poll_ehp_nsecs`): the bucket's minimum latency
//!   less two context switches and an interrupt, `min - 2 ctx_time -
//!   isr_time`, when it is above that; else no sleep. The first request
//!   turns statistics on and does not sleep (`blk_poll_stats_enable`). The
//!   paper's busy state has a branch (`busy_state`: sleep "forever", that
//!   is until woken) but nothing sets it: its assignment in
//!   `blk_mq_poll_stats_fn` is commented out, so the artifact's EHP always
//!   sleeps by the idle (minimum) latency.
//! - **Poll or interrupt** (`blk_mq_poll_stats_fn` at each window's end;
//!   applied at submission in `fops.c`): a bucket whose minimum latency is
//!   below `(2 ctx_time + isr_time) * benefit_ratio` polls, one above it
//!   takes interrupts (`ehpmode[bucket] = _INT` clears `REQ_POLLED`).
//!   Until the first window with samples closes, every request polls (the
//!   CPU's switch is still in its first mode).
//!
//! Constants: `ctx_time = 1487` ns, `isr_time = 1076` ns, `benefit_ratio
//! = 10` are globals of the artifact's blk-mq.c under "Parameters
//! dependent on system configuration": its authors' values for their
//! machine, how they were measured not published (labelled
//! [`Constants::ARTIFACT`]). A front end pricing its own machine may pass
//! its own context-switch and interrupt costs ([`Constants`]).

use policy::{Nanos, MS};

use crate::poll::{bucket, POLL_STATS_BUCKETS};
use crate::sleep::{Decision, Found, Io, SleepPoll};

/// EHP's costs and window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Constants {
    /// One context switch (`ctx_time`).
    pub ctx: Nanos,
    /// One interrupt (`isr_time`).
    pub isr: Nanos,
    /// Poll a bucket whose minimum latency is below `benefit_ratio` times
    /// the interrupt path (`2 ctx + isr`).
    pub benefit_ratio: u64,
    /// The statistics window.
    pub window: Nanos,
}

impl Constants {
    /// The artifact's values (module docs: not published, its machine's).
    pub const ARTIFACT: Constants = Constants {
        ctx: 1487,
        isr: 1076,
        benefit_ratio: 10,
        window: 10 * MS,
    };

    /// What a wake-up by interrupt costs: two switches and the handler.
    pub fn interrupt_path(&self) -> Nanos {
        2 * self.ctx + self.isr
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Window {
    min: Option<Nanos>,
    samples: u64,
}

/// EHP for one waiter (per CPU in the artifact).
#[derive(Clone, Debug)]
pub struct Ehp {
    c: Constants,
    enabled: bool,
    window_end: Option<Nanos>,
    window: [Window; POLL_STATS_BUCKETS],
    /// The minimum latency of each bucket's last window with samples.
    min: [Option<Nanos>; POLL_STATS_BUCKETS],
    /// Per bucket: poll (true) or interrupts, once a window has closed
    /// (`ehpmode[]`, all `_EHP` at first).
    polls: [bool; POLL_STATS_BUCKETS],
    /// A window with samples has closed (`sc->mode = _EHP`).
    switched: bool,
}

impl Default for Ehp {
    fn default() -> Ehp {
        Ehp::new(Constants::ARTIFACT)
    }
}

impl Ehp {
    pub fn new(c: Constants) -> Ehp {
        Ehp {
            c,
            enabled: false,
            window_end: None,
            window: [Window::default(); POLL_STATS_BUCKETS],
            min: [None; POLL_STATS_BUCKETS],
            polls: [true; POLL_STATS_BUCKETS],
            switched: false,
        }
    }

    /// The minimum latency in force for `bucket` at `now`.
    pub fn min(&mut self, now: Nanos, bucket: usize) -> Option<Nanos> {
        self.close(now);
        self.min[bucket]
    }

    /// Whether `bucket` polls at `now`.
    pub fn polls(&mut self, now: Nanos, bucket: usize) -> bool {
        self.close(now);
        !self.switched || self.polls[bucket]
    }

    fn close(&mut self, now: Nanos) {
        if !self.window_end.is_some_and(|end| now >= end) {
            return;
        }
        let threshold = self.c.interrupt_path() * self.c.benefit_ratio;
        for b in 0..POLL_STATS_BUCKETS {
            let w = std::mem::take(&mut self.window[b]);
            if w.samples > 0 {
                self.min[b] = w.min;
            }
            if let Some(min) = self.min[b] {
                self.switched = true;
                self.polls[b] = threshold > min;
            }
        }
        self.window_end = None;
    }
}

impl SleepPoll for Ehp {
    fn decide(&mut self, now: Nanos, io: Io) -> Decision {
        let Some(b) = bucket(io.bytes, io.write) else {
            return Decision::Spin;
        };
        if !self.polls(now, b) {
            return Decision::Interrupt;
        }
        if !self.enabled {
            self.enabled = true;
            return Decision::Spin;
        }
        let path = self.c.interrupt_path();
        match self.min[b] {
            Some(min) if min > path => Decision::Sleep {
                ns: min - path,
                epoch: 0,
            },
            _ => Decision::Spin,
        }
    }

    fn found(&mut self, io: Io, f: Found) {
        if !self.enabled {
            return;
        }
        self.close(f.found);
        self.window_end.get_or_insert(f.found + self.c.window);
        if let Some(b) = bucket(io.bytes, io.write) {
            let w = &mut self.window[b];
            let l = f.latency();
            w.min = Some(w.min.map_or(l, |m| m.min(l)));
            w.samples += 1;
        }
    }

    fn per_cpu(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use policy::US;

    use crate::sleep::READ_4K;

    fn done(e: &mut Ehp, d: Decision, at: Nanos, latency: Nanos) {
        e.found(
            READ_4K,
            Found {
                decision: d,
                submitted: at,
                woke: at,
                posted: at + latency,
                found: at + latency,
            },
        );
    }

    #[test]
    fn ehp_sleeps_the_windows_minimum_less_the_interrupt_path() {
        let mut e = Ehp::default();
        // The first request turns statistics on and spins.
        let d = e.decide(0, READ_4K);
        assert_eq!(d, Decision::Spin);
        done(&mut e, d, 0, 12 * US);
        done(&mut e, d, US, 10 * US);
        done(&mut e, d, 2 * US, 15 * US);
        // The window (opened at 12 us) is open: no minimum yet.
        assert_eq!(e.decide(5 * MS, READ_4K), Decision::Spin);
        // Closed: 10 us - (2 x 1487 + 1076) ns.
        assert_eq!(
            e.decide(11 * MS, READ_4K),
            Decision::Sleep {
                ns: 10 * US - 4_050,
                epoch: 0
            }
        );
    }

    #[test]
    fn a_device_faster_than_the_interrupt_path_is_polled_without_sleep() {
        let mut e = Ehp::default();
        let d = e.decide(0, READ_4K);
        done(&mut e, d, 0, 3 * US);
        assert_eq!(e.decide(20 * MS, READ_4K), Decision::Spin);
    }

    #[test]
    fn a_slow_bucket_takes_interrupts_and_keeps_sampling() {
        let mut e = Ehp::default();
        let d = e.decide(0, READ_4K);
        // 80 us minimum: above 10 x 4.05 us, interrupts.
        done(&mut e, d, 0, 80 * US);
        let d = e.decide(20 * MS, READ_4K);
        assert_eq!(d, Decision::Interrupt);
        // Interrupt-driven requests are samples too: a faster device
        // brings polling back.
        done(&mut e, d, 20 * MS, 20 * US);
        assert!(e.polls(40 * MS, 6));
        assert_eq!(e.min(40 * MS, 6), Some(20 * US));
        // Another bucket never sampled still polls.
        assert!(e.polls(40 * MS, 14));
    }

    #[test]
    fn a_window_without_samples_keeps_the_last_minimum() {
        let mut e = Ehp::default();
        let d = e.decide(0, READ_4K);
        done(&mut e, d, 0, 10 * US);
        assert_eq!(e.min(20 * MS, 6), Some(10 * US));
        // A write's window closes; the read bucket keeps its minimum.
        e.found(
            Io {
                write: true,
                ..READ_4K
            },
            Found {
                decision: d,
                submitted: 30 * MS,
                woke: 30 * MS,
                posted: 30 * MS + 50 * US,
                found: 30 * MS + 50 * US,
            },
        );
        assert_eq!(e.min(60 * MS, 6), Some(10 * US));
        assert_eq!(e.min(60 * MS, 7), Some(50 * US));
        assert!(e.per_cpu());
    }
}
