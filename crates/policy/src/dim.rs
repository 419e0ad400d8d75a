//! `dim`: Linux's net_dim (lib/dim/net_dim.c) moved to the device side.
//!
//! A table of moderation profiles {usec, completions}; the active profile
//! coalesces completions like a NIC's moderation (a timer of `usec` and a
//! count of `completions`). Every DIM_NEVENTS = 64 interrupts DIM compares the
//! window's rates with the previous window's (completions per ms, then
//! interrupts per ms; a change under 10% is "same") and steps the profile
//! right (more moderation) or left, turning when things get worse and
//! parking on top or when tired, exactly as net_dim's state machine does.
//!
//! Differences from net_dim, chosen here: there is no byte counter (a
//! completion is the unit, like a packet), so the bytes-per-ms comparison is
//! skipped; a profile change applies at once, and measurement restarts at the
//! next interrupt (net_dim's DIM_APPLY_NEW_PROFILE then DIM_START_MEASURE).
//! Modes: `eqe` (default; the timer starts with the first pending completion,
//! as NVMe's does) with NET_DIM_RX_EQE_PROFILES, or `cqe` (the timer restarts
//! on every completion) with NET_DIM_RX_CQE_PROFILES.

use crate::aggregation::Aggregator;
use crate::{Completion, Interrupt, Nanos, Policy, US};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Profile {
    pub usec: u64,
    pub completions: u32,
}

const fn p(usec: u64, completions: u32) -> Profile {
    Profile { usec, completions }
}

/// NET_DIM_RX_EQE_PROFILES.
pub const EQE_PROFILES: [Profile; 5] = [p(1, 256), p(8, 256), p(64, 256), p(128, 256), p(256, 256)];
/// NET_DIM_RX_CQE_PROFILES.
pub const CQE_PROFILES: [Profile; 5] = [p(2, 256), p(8, 128), p(16, 64), p(32, 64), p(64, 64)];
/// NET_DIM_DEF_PROFILE_EQE / _CQE.
pub const DEFAULT_PROFILE: usize = 1;
/// DIM_NEVENTS: interrupts per measurement window.
pub const NEVENTS: u64 = 64;
const NUM_PROFILES: usize = 5;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DimMode {
    Eqe,
    Cqe,
}

impl DimMode {
    pub fn as_str(self) -> &'static str {
        match self {
            DimMode::Eqe => "eqe",
            DimMode::Cqe => "cqe",
        }
    }

    pub fn profiles(self) -> &'static [Profile; 5] {
        match self {
            DimMode::Eqe => &EQE_PROFILES,
            DimMode::Cqe => &CQE_PROFILES,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TuneState {
    ParkingOnTop,
    ParkingTired,
    GoingRight,
    GoingLeft,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Sample {
    time: Nanos,
    events: u64,
    completions: u64,
}

/// Per-ms rates of one window (struct dim_stats without bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Stats {
    cpms: u64,
    epms: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Compare {
    Better,
    Worse,
    Same,
}

/// IS_SIGNIFICANT_DIFF: more than 10% away from the reference.
fn significant(val: u64, reference: u64) -> bool {
    reference != 0 && 100 * val.abs_diff(reference) / reference > 10
}

/// net_dim_stats_compare, bytes skipped.
fn compare(curr: &Stats, prev: &Stats) -> Compare {
    if prev.cpms == 0 {
        return if curr.cpms != 0 {
            Compare::Better
        } else {
            Compare::Same
        };
    }
    if significant(curr.cpms, prev.cpms) {
        return if curr.cpms > prev.cpms {
            Compare::Better
        } else {
            Compare::Worse
        };
    }
    if prev.epms == 0 {
        return Compare::Same;
    }
    if significant(curr.epms, prev.epms) {
        return if curr.epms < prev.epms {
            Compare::Better
        } else {
            Compare::Worse
        };
    }
    Compare::Same
}

#[derive(Clone, Debug)]
pub struct Dim {
    mode: DimMode,
    profile_ix: usize,
    tune_state: TuneState,
    steps_left: u32,
    steps_right: u32,
    tired: u32,
    prev_stats: Stats,
    start: Option<Sample>,
    events: u64,
    completions: u64,
    agg: Aggregator,
}

impl Dim {
    pub fn new(mode: DimMode) -> Self {
        Dim {
            mode,
            profile_ix: DEFAULT_PROFILE,
            tune_state: TuneState::GoingRight,
            steps_left: 0,
            steps_right: 0,
            tired: 0,
            prev_stats: Stats::default(),
            start: None,
            events: 0,
            completions: 0,
            agg: Aggregator::default(),
        }
    }

    pub fn profile(&self) -> Profile {
        self.mode.profiles()[self.profile_ix]
    }

    pub fn profile_ix(&self) -> usize {
        self.profile_ix
    }

    pub fn tune_state(&self) -> TuneState {
        self.tune_state
    }

    fn fire(&mut self, now: Nanos) -> Option<Interrupt> {
        self.agg.reset();
        self.events += 1;
        self.sample(now);
        Some(Interrupt::Full)
    }

    /// net_dim(): called with a sample at the end of every interrupt.
    fn sample(&mut self, now: Nanos) {
        let end = Sample {
            time: now,
            events: self.events,
            completions: self.completions,
        };
        let Some(start) = self.start else {
            self.start = Some(end); // DIM_START_MEASURE
            return;
        };
        if end.events - start.events < NEVENTS {
            return;
        }
        let delta_us = (end.time - start.time) / US;
        if delta_us == 0 {
            return; // dim_calc_stats() refuses an empty interval
        }
        let curr = Stats {
            cpms: ((end.completions - start.completions) * 1000).div_ceil(delta_us),
            epms: (NEVENTS * 1000).div_ceil(delta_us),
        };
        if self.decide(&curr) {
            self.start = None; // apply, then start a new measurement
        } else {
            self.start = Some(end);
        }
    }

    /// net_dim_decision(); true when the profile changed.
    fn decide(&mut self, curr: &Stats) -> bool {
        let prev_state = self.tune_state;
        let prev_ix = self.profile_ix;
        match self.tune_state {
            TuneState::ParkingOnTop => {
                if compare(curr, &self.prev_stats) != Compare::Same {
                    self.exit_parking();
                }
            }
            TuneState::ParkingTired => {
                self.tired -= 1;
                if self.tired == 0 {
                    self.exit_parking();
                }
            }
            TuneState::GoingRight | TuneState::GoingLeft => {
                if compare(curr, &self.prev_stats) != Compare::Better {
                    self.turn();
                }
                if self.on_top() {
                    self.park_on_top();
                } else {
                    match self.step() {
                        Step::OnEdge => self.park_on_top(),
                        Step::TooTired => self.park_tired(),
                        Step::Stepped => {}
                    }
                }
            }
        }
        if prev_state != TuneState::ParkingOnTop || self.tune_state != TuneState::ParkingOnTop {
            self.prev_stats = *curr;
        }
        self.profile_ix != prev_ix
    }

    fn step(&mut self) -> Step {
        if self.tired == (NUM_PROFILES * 2) as u32 {
            return Step::TooTired;
        }
        match self.tune_state {
            TuneState::ParkingOnTop | TuneState::ParkingTired => {}
            TuneState::GoingRight => {
                if self.profile_ix == NUM_PROFILES - 1 {
                    return Step::OnEdge;
                }
                self.profile_ix += 1;
                self.steps_right += 1;
            }
            TuneState::GoingLeft => {
                if self.profile_ix == 0 {
                    return Step::OnEdge;
                }
                self.profile_ix -= 1;
                self.steps_left += 1;
            }
        }
        self.tired += 1;
        Step::Stepped
    }

    fn exit_parking(&mut self) {
        self.tune_state = if self.profile_ix > 0 {
            TuneState::GoingLeft
        } else {
            TuneState::GoingRight
        };
        self.step();
    }

    fn on_top(&self) -> bool {
        match self.tune_state {
            TuneState::ParkingOnTop | TuneState::ParkingTired => true,
            TuneState::GoingRight => self.steps_left > 1 && self.steps_right == 1,
            TuneState::GoingLeft => self.steps_right > 1 && self.steps_left == 1,
        }
    }

    fn turn(&mut self) {
        match self.tune_state {
            TuneState::ParkingOnTop | TuneState::ParkingTired => {}
            TuneState::GoingRight => {
                self.tune_state = TuneState::GoingLeft;
                self.steps_left = 0;
            }
            TuneState::GoingLeft => {
                self.tune_state = TuneState::GoingRight;
                self.steps_right = 0;
            }
        }
    }

    fn park_on_top(&mut self) {
        self.steps_right = 0;
        self.steps_left = 0;
        self.tired = 0;
        self.tune_state = TuneState::ParkingOnTop;
    }

    fn park_tired(&mut self) {
        self.steps_right = 0;
        self.steps_left = 0;
        self.tune_state = TuneState::ParkingTired;
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Stepped,
    TooTired,
    OnEdge,
}

impl Policy for Dim {
    fn name(&self) -> &str {
        "dim"
    }

    fn completed(&mut self, now: Nanos, cqe: Completion) -> Option<Interrupt> {
        self.completions += 1;
        let prof = self.profile();
        let restart = self.mode == DimMode::Cqe;
        let reached = self
            .agg
            .arrive(now, prof.usec * US, prof.completions, restart);
        if reached || cqe.error {
            return self.fire(now);
        }
        None
    }

    fn deadline_reached(&mut self, now: Nanos) -> Option<Interrupt> {
        if self.agg.expired(now) {
            return self.fire(now);
        }
        None
    }

    fn deadline(&self) -> Option<Nanos> {
        self.agg.deadline()
    }

    fn delay_bound(&self) -> Nanos {
        self.mode
            .profiles()
            .iter()
            .map(|p| match self.mode {
                DimMode::Eqe => p.usec * US,
                DimMode::Cqe => p.usec * US * (p.completions as u64 - 1),
            })
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Marks;

    #[test]
    fn significance_is_more_than_ten_percent() {
        assert!(!significant(110, 100));
        assert!(significant(112, 100));
        assert!(significant(88, 100));
        assert!(!significant(5, 0));
    }

    #[test]
    fn compare_prefers_throughput_then_fewer_events() {
        let prev = Stats {
            cpms: 100,
            epms: 50,
        };
        assert_eq!(
            compare(
                &Stats {
                    cpms: 150,
                    epms: 50
                },
                &prev
            ),
            Compare::Better
        );
        assert_eq!(
            compare(&Stats { cpms: 50, epms: 50 }, &prev),
            Compare::Worse
        );
        assert_eq!(
            compare(
                &Stats {
                    cpms: 100,
                    epms: 20
                },
                &prev
            ),
            Compare::Better
        );
        assert_eq!(
            compare(
                &Stats {
                    cpms: 100,
                    epms: 80
                },
                &prev
            ),
            Compare::Worse
        );
        assert_eq!(
            compare(
                &Stats {
                    cpms: 105,
                    epms: 52
                },
                &prev
            ),
            Compare::Same
        );
    }

    /// A steady stream: the first window is "better" than nothing, so DIM
    /// steps right from the default profile; a flat load then brings it to
    /// park on top rather than wander.
    #[test]
    fn steady_load_steps_then_parks() {
        let mut d = Dim::new(DimMode::Eqe);
        assert_eq!(
            d.profile(),
            Profile {
                usec: 8,
                completions: 256
            }
        );
        let mut t = 0;
        let mut changes = 0;
        let mut last = d.profile_ix();
        for i in 0..200_000u64 {
            t += 2 * US;
            while d.deadline().is_some_and(|dl| dl <= t) {
                d.deadline_reached(d.deadline().unwrap());
            }
            d.completed(t, Completion::ok(i, Marks::NONE));
            if d.profile_ix() != last {
                changes += 1;
                last = d.profile_ix();
            }
        }
        assert!(changes >= 1, "DIM must move off its default profile");
        assert_eq!(d.tune_state(), TuneState::ParkingOnTop);

        // The load drops tenfold: the window's rates differ, DIM leaves the
        // park and steps again.
        let parked_at = d.profile_ix();
        let mut moved = false;
        for i in 0..20_000u64 {
            t += 20 * US;
            while d.deadline().is_some_and(|dl| dl <= t) {
                d.deadline_reached(d.deadline().unwrap());
            }
            d.completed(t, Completion::ok(1_000_000 + i, Marks::NONE));
            moved |= d.profile_ix() != parked_at;
        }
        assert!(moved, "a changed load must unpark DIM");
    }
}
