//! `dpas`: DPAS (USENIX FAST'26), a state machine over four completion
//! modes, ported from its artifact's kernel (`DongDongJu/DPAS_FAST26`,
//! Linux 5.18-rc6 patched; read, not copied). Names and constants are the
//! artifact's.
//!
//! - **Modes** (`#define _INT 0, _CP 1, _PAS 2, _OL 3`,
//!   `kernel/block/blk-mq.c`; `struct blk_switch`,
//!   `include/linux/blk-mq.h`, one per CPU): classic polling, PAS
//!   ([`crate::pas`]), OL ("overloaded": sleeps as PAS does while it
//!   decides between PAS and interrupts) and INT. The first mode is PAS
//!   (`nvme_create_queue`, `drivers/nvme/host/pci.c`: `sc->mode = 2`).
//! - **At submission** (`kernel/block/fops.c`
//!   `__blkdev_direct_IO_simple` and `fs/iomap/direct-io.c`, the two
//!   synchronous direct-I/O paths; only `IOCB_HIPRI` requests): in INT the
//!   request's `REQ_POLLED` is cleared, it goes to an interrupt-driven
//!   queue and counts `int_cnt`; after `param7` = 10000 of them INT
//!   becomes OL. In the other modes it is polled and counts in its mode
//!   (`cp_cnt`, `pas_cnt`, `ol_cnt`).
//! - **At the poll** (`blk_mq_poll_pas_nsecs`, under `sc->enabled`): in
//!   PAS and OL the CPU's queue depth is summed (`sc->qd_sum += sc->qd`,
//!   `qd` counting the requests between this decision and their wake-up;
//!   [`Io::depth`] here). Then one evaluation, each when its mode has
//!   counted enough requests, on `avg = qd_sum * 10 / count` (ten times
//!   the mean depth, integer division):
//!   - CP after `param6` = 1000 requests: to PAS, the bucket's next PAS
//!     sleep re-evaluated (`update_req = 1`).
//!   - PAS after `param5` = 100: to OL if the sleep hit PAS's floor more
//!     than `param1` = 0 times (`tf`, counted where PAS floors `dur` at
//!     `d_init`); else to CP if `param4` >= 1 and `avg == 10` (a mean
//!     depth in [1, 1.1)); else stay.
//!   - OL after `param5` = 100: to PAS if `avg <= param2` = 10; to INT if
//!     `avg > param3`; else stay. The artifact's scripts set `param3` by
//!     device (`scripts/micro_4krr/run.sh`: "theta := 3 for Optane 5800X
//!     (10X)" -> 30, "theta := 1 for NAND SSDs (10X)" -> 10): [`Params`].
//!
//!   Every transition zeroes `qd_sum`, `tf` and the new mode's count.
//!   Then CP spins; PAS and OL sleep PAS's length.
//!
//! The evaluation sits under a try-lock (`sc->N_POLL`) that a concurrent
//! poller skips; one waiter's decisions are sequential here, so it always
//! runs. The paper's "every 100 I/Os" is `param5`.
//!
//! The "re-evaluated every 100 I/Os from the queue depth" holds in
//! PAS and OL; CP waits 1000 and INT 10000 before they look again, and INT
//! goes through OL. At a depth of one per CPU (one synchronous thread per
//! core) PAS passes to CP after 100 requests and comes back after 1000:
//! DPAS is then mostly classic polling.

use policy::Nanos;

use crate::pas::Pas;
use crate::poll::bucket;
use crate::sleep::{Decision, Found, Io, SleepPoll};

/// DPAS's modes, as the artifact numbers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// `_INT`: interrupts.
    Int,
    /// `_CP`: classic polling.
    Cp,
    /// `_PAS`: PAS's sleep, then poll.
    Pas,
    /// `_OL`: overloaded: PAS's sleep while deciding PAS or INT.
    Ol,
}

/// The `switch_param*` sysfs knobs (`queue_switch_param*_store`,
/// `kernel/block/blk-sysfs.c`) with the artifact's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// PAS -> OL when the floor count `tf` is above this (0).
    pub param1: u32,
    /// OL -> PAS when ten times the mean depth is at most this (10).
    pub param2: u32,
    /// OL -> INT when ten times the mean depth is above this: 10 for NAND
    /// SSDs, 30 for the Optane 5800X (the scripts' `THRESHOLD`).
    pub param3: u32,
    /// PAS -> CP allowed (1) or not (0).
    pub param4: u32,
    /// Requests between evaluations in PAS and OL (100).
    pub param5: u32,
    /// Requests in CP before PAS again (1000).
    pub param6: u32,
    /// Requests in INT before OL again (10000).
    pub param7: u32,
}

impl Params {
    /// `nvme_create_queue`'s defaults and `run.sh`'s NAND threshold.
    pub const NAND: Params = Params {
        param1: 0,
        param2: 10,
        param3: 10,
        param4: 1,
        param5: 100,
        param6: 1000,
        param7: 10_000,
    };

    /// The scripts' Optane 5800X threshold (theta 3).
    pub const OPTANE: Params = Params {
        param3: 30,
        ..Params::NAND
    };
}

/// DPAS for one waiter (per CPU in the artifact).
#[derive(Clone, Debug)]
pub struct Dpas {
    p: Params,
    pas: Pas,
    mode: Mode,
    /// `cp_cnt`, `pas_cnt`, `ol_cnt`, `int_cnt`: requests counted in the
    /// current mode.
    count: u32,
    qd_sum: u64,
    tf: u32,
    /// Transitions taken, for reports and tests.
    switches: u64,
}

impl Default for Dpas {
    fn default() -> Dpas {
        Dpas::new(Params::NAND)
    }
}

impl Dpas {
    pub fn new(p: Params) -> Dpas {
        Dpas {
            p,
            pas: Pas::default(),
            mode: Mode::Pas,
            count: 0,
            qd_sum: 0,
            tf: 0,
            switches: 0,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn switches(&self) -> u64 {
        self.switches
    }

    pub fn pas(&self) -> &Pas {
        &self.pas
    }

    fn enter(&mut self, mode: Mode) {
        self.mode = mode;
        self.count = 0;
        self.qd_sum = 0;
        self.tf = 0;
        self.switches += 1;
    }

    /// Ten times the mean depth over the mode's count.
    fn average(&self) -> u64 {
        self.qd_sum * 10 / u64::from(self.count.max(1))
    }

    /// The evaluation of `blk_mq_poll_pas_nsecs`, in its order.
    fn evaluate(&mut self, b: usize) {
        let p = self.p;
        match self.mode {
            Mode::Cp if self.count >= p.param6 => {
                self.pas.request_update(b);
                self.enter(Mode::Pas);
            }
            Mode::Pas if self.count >= p.param5 => {
                let avg = self.average();
                if self.tf > p.param1 {
                    self.enter(Mode::Ol);
                } else if p.param4 >= 1 && avg == 10 {
                    self.enter(Mode::Cp);
                } else {
                    // Stay: a new window.
                    self.count = 0;
                    self.qd_sum = 0;
                    self.tf = 0;
                }
            }
            Mode::Ol if self.count >= p.param5 => {
                let avg = self.average();
                if avg <= u64::from(p.param2) {
                    self.enter(Mode::Pas);
                } else if avg > u64::from(p.param3) {
                    self.enter(Mode::Int);
                } else {
                    self.count = 0;
                    self.qd_sum = 0;
                    self.tf = 0;
                }
            }
            _ => {}
        }
    }
}

impl SleepPoll for Dpas {
    fn decide(&mut self, _now: Nanos, io: Io) -> Decision {
        // Submission (fops.c): INT routes to interrupts and counts.
        if self.mode == Mode::Int {
            self.count += 1;
            if self.count >= self.p.param7 {
                self.enter(Mode::Ol);
            }
            return Decision::Interrupt;
        }
        self.count += 1;
        // The poll (blk_mq_poll_pas_nsecs): no bucket, no sleep and no
        // accounting (`if (bucket < 0) return ret;` comes first).
        let Some(b) = bucket(io.bytes, io.write) else {
            return Decision::Spin;
        };
        if self.mode != Mode::Cp {
            self.qd_sum += u64::from(io.depth.max(1));
        }
        self.evaluate(b);
        if self.mode == Mode::Cp {
            return Decision::Spin;
        }
        let s = self.pas.sleep(b);
        if s.floored {
            self.tf += 1;
        }
        Decision::Sleep {
            ns: s.ns,
            epoch: s.epoch,
        }
    }

    fn found(&mut self, io: Io, f: Found) {
        // PAS's verdicts, whatever the mode (the feedback in
        // blk_mq_poll_classic is under `q->pas_enabled` only).
        self.pas.found(io, f);
    }

    fn per_cpu(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(depth: u32) -> Io {
        Io {
            bytes: 4096,
            write: false,
            depth,
        }
    }

    /// `n` requests at `depth`, each found `outcome`-wise: `over` says
    /// whether the entry was there at wake-up.
    fn drive(d: &mut Dpas, n: u32, depth: u32, over: bool) -> Vec<Decision> {
        let mut out = Vec::new();
        for i in 0..n {
            let now = u64::from(i) * 20_000;
            let dec = d.decide(now, io(depth));
            let woke = now + dec.sleep() + 1_000;
            let posted = if over { woke - 1 } else { woke + 5_000 };
            d.found(
                io(depth),
                Found {
                    decision: dec,
                    submitted: now,
                    woke,
                    posted,
                    found: posted.max(woke),
                },
            );
            out.push(dec);
        }
        out
    }

    #[test]
    fn dpas_starts_in_pas_and_sleeps() {
        let mut d = Dpas::default();
        assert_eq!(d.mode(), Mode::Pas);
        assert!(matches!(
            d.decide(0, io(1)),
            Decision::Sleep { ns: 100, .. }
        ));
    }

    #[test]
    fn at_depth_one_pas_gives_way_to_classic_polling_and_comes_back() {
        let mut d = Dpas::default();
        // Underslept all along: the sleep grows, never floors.
        let first = drive(&mut d, 99, 1, false);
        assert!(first.iter().all(|x| matches!(x, Decision::Sleep { .. })));
        // The 100th request evaluates (counted at submission, evaluated at
        // its poll): mean depth 1.0 -> CP.
        assert_eq!(d.decide(0, io(1)), Decision::Spin);
        assert_eq!(d.mode(), Mode::Cp);
        // The switching request is not counted in CP: 999 more spin, the
        // 1000th counted goes back to PAS.
        let cp = drive(&mut d, 999, 1, false);
        assert!(cp.iter().all(|x| *x == Decision::Spin));
        assert!(matches!(d.decide(0, io(1)), Decision::Sleep { .. }));
        assert_eq!(d.mode(), Mode::Pas);
    }

    #[test]
    fn a_floored_sleep_under_load_goes_overloaded_then_to_interrupts() {
        let mut d = Dpas::default();
        // Overslept all along at a depth of 3: the sleep floors at once.
        drive(&mut d, 99, 3, true);
        // Evaluation at the 100th: tf > 0 -> OL (still sleeps).
        assert!(matches!(d.decide(0, io(3)), Decision::Sleep { .. }));
        assert_eq!(d.mode(), Mode::Ol);
        drive(&mut d, 99, 3, true);
        // OL's evaluation: mean depth 3 > 1 -> INT; this request was
        // routed before it and sleeps; the next go to interrupts.
        assert!(matches!(d.decide(0, io(3)), Decision::Sleep { .. }));
        assert_eq!(d.mode(), Mode::Int);
        // 10000 interrupts (the last switches), then OL again.
        let int = drive(&mut d, 10_000, 3, true);
        assert!(int.iter().all(|x| *x == Decision::Interrupt));
        assert_eq!(d.mode(), Mode::Ol);
    }

    #[test]
    fn optane_threshold_keeps_depth_three_overloaded_not_interrupted() {
        let mut d = Dpas::new(Params::OPTANE);
        drive(&mut d, 100, 3, true);
        assert_eq!(d.mode(), Mode::Ol);
        drive(&mut d, 100, 3, true);
        // avg 30 is not above 30: stay OL.
        assert_eq!(d.mode(), Mode::Ol);
        drive(&mut d, 100, 4, true);
        assert_eq!(d.mode(), Mode::Int);
    }

    #[test]
    fn overloaded_at_depth_one_returns_to_pas() {
        let mut d = Dpas::default();
        drive(&mut d, 100, 1, true);
        assert_eq!(d.mode(), Mode::Ol);
        drive(&mut d, 100, 1, true);
        assert_eq!(d.mode(), Mode::Pas);
        assert_eq!(d.switches(), 2);
    }

    #[test]
    fn pas_at_depth_two_without_floor_hits_stays_pas() {
        let mut d = Dpas::default();
        drive(&mut d, 1_000, 2, false);
        assert_eq!(d.mode(), Mode::Pas);
        assert_eq!(d.switches(), 0);
        assert!(d.per_cpu());
    }
}
