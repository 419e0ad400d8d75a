//! The oracle floor (issue 27 item 4): the fewest interrupts that deliver
//! every completion of a stream within its delay budget, computed exactly
//! offline. No strategy can raise fewer and meet the same budgets, so each
//! strategy's interrupts over the floor says how far from the best
//! possible it is.
//!
//! # The problem
//! Completion `i` is posted at `t_i`, with a budget `b_i` by its mark
//! ([`Budget`]: Urgent 0, the rest `B`): it must be delivered in its window
//! `W_i = [t_i, d_i]`, `d_i = t_i + b_i`. An interrupt at `x` delivers
//! every completion posted by `x` and not yet delivered. A set of interrupt
//! times `X` delivers every completion within budget exactly when every
//! window holds a point of `X`:
//! - if `W_i` holds a point, the first interrupt at or after `t_i` is at or
//!   before that point, so at most `d_i`, and it delivers `i`;
//! - if `i` is delivered within budget, it is by an interrupt at some
//!   `x` in `t_i ..= d_i`.
//!
//! An interrupt that delivers only part of what was posted (an urgent-only
//! one, TOS 3.5) still has to fall in the window of each completion it
//! delivers; so for every strategy, meeting every budget needs a point of
//! its interrupt times in every window, and the fewest points that stab
//! every window is a floor under every strategy that meets the budgets.
//!
//! # The greedy, and why it is optimal
//! Scan the completions in time order, keeping `D`, the earliest deadline
//! among those not yet delivered. When the next completion is posted after
//! `D` (`t > D`), an interrupt fires at `D`, delivering all of them; at the
//! end of the stream, one fires at `D` if any is left. This is the classic
//! greedy for stabbing intervals: always stab at the earliest deadline of
//! the windows not yet stabbed.
//!
//! *It meets every budget.* A completion joins the undelivered set only
//! when `t <= D` (else the interrupt at `D` fires first), and `D` only
//! falls to `min(D, t + b) >= t`; so every undelivered completion has
//! `t_i <= D <= d_i`, and the interrupt at `D` delivers each within its
//! window. (A completion posted exactly at `D` joins before the interrupt:
//! an interrupt at `D` sees it posted.)
//!
//! *None can do with fewer.* Let `g_1 < g_2 < ... < g_m` be the greedy's
//! interrupts and `o_1 < o_2 < ...` any times that stab every window.
//! Every window with `t_i <= g_k` holds one of `g_1 ..= g_k` (each was
//! undelivered, and so stabbed, when the interrupt at or after it fired).
//! Induction on `k`: `o_k <= g_k`. For `k = 1`, `g_1` is the deadline `d_j`
//! of some window, and `o` must stab `W_j`, so `o_1 <= d_j = g_1`. For
//! `k + 1`, `g_{k+1}` is the deadline of a window `W_j` not stabbed by
//! `g_1 ..= g_k`, so `t_j > g_k >= o_k`: `o` stabs `W_j` with a point after
//! `o_k` and at most `d_j = g_{k+1}`, so `o` has a `(k+1)`-th point and
//! `o_{k+1} <= g_{k+1}`. At `k = m`, `o` has at least `m` points.
//!
//! The greedy holds two numbers and a count: a stream of any length is
//! floored in constant memory, as it is read.
//!
//! It lives here, beside the strategies it floors, rather than with the
//! trace readers: it is pure (time passed in, as every strategy), it speaks
//! this crate's vocabulary (completions, Urgent marks, delays), `coalesce`
//! (`stream`) can print each strategy's ratio to it without a new
//! dependency, and the trace readers stay parsing only.

use crate::replay::TimeWentBack;
use crate::Nanos;

/// The longest each completion may wait for its interrupt, by its mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Urgent completions (issue 27: none, delivered at once).
    pub urgent: Nanos,
    /// Every other completion (Barrier and unmarked): the budget the user
    /// gives.
    pub other: Nanos,
}

impl Budget {
    /// Urgent at once, the rest within `other`.
    pub fn new(other: Nanos) -> Self {
        Budget { urgent: 0, other }
    }

    /// The budget of a completion, Urgent or not.
    pub fn of(&self, urgent: bool) -> Nanos {
        if urgent {
            self.urgent
        } else {
            self.other
        }
    }
}

/// The greedy over a stream, fed one completion at a time in time order.
#[derive(Clone, Debug)]
pub struct Floor {
    budget: Budget,
    /// The earliest deadline of the completions not yet delivered.
    deadline: Option<Nanos>,
    last: Nanos,
    interrupts: u64,
}

impl Floor {
    pub fn new(budget: Budget) -> Self {
        Floor {
            budget,
            deadline: None,
            last: 0,
            interrupts: 0,
        }
    }

    /// A completion posted at `time` (not before the previous one). If an
    /// interrupt must fire before it, returns that interrupt's time (before
    /// `time`).
    pub fn complete(&mut self, time: Nanos, urgent: bool) -> Result<Option<Nanos>, TimeWentBack> {
        if time < self.last {
            return Err(TimeWentBack {
                at: time,
                now: self.last,
            });
        }
        self.last = time;
        let fired = match self.deadline {
            Some(d) if time > d => {
                self.interrupts += 1;
                self.deadline = None;
                Some(d)
            }
            _ => None,
        };
        let mine = time.saturating_add(self.budget.of(urgent));
        self.deadline = Some(self.deadline.map_or(mine, |d| d.min(mine)));
        Ok(fired)
    }

    /// The stream has ended: the last interrupt, if any completion is left.
    pub fn finish(&mut self) -> Option<Nanos> {
        let d = self.deadline.take()?;
        self.interrupts += 1;
        Some(d)
    }

    /// Interrupts fired so far.
    pub fn interrupts(&self) -> u64 {
        self.interrupts
    }
}

/// The oracle's interrupt times for `completions` (`(time, urgent)` in time
/// order): the fewest that deliver each within its budget.
pub fn schedule(
    completions: impl IntoIterator<Item = (Nanos, bool)>,
    budget: Budget,
) -> Result<Vec<Nanos>, TimeWentBack> {
    let mut f = Floor::new(budget);
    let mut out = Vec::new();
    for (t, urgent) in completions {
        out.extend(f.complete(t, urgent)?);
    }
    out.extend(f.finish());
    Ok(out)
}

/// The floor: how many interrupts [`schedule`] fires.
pub fn floor(
    completions: impl IntoIterator<Item = (Nanos, bool)>,
    budget: Budget,
) -> Result<u64, TimeWentBack> {
    let mut f = Floor::new(budget);
    for (t, urgent) in completions {
        f.complete(t, urgent)?;
    }
    f.finish();
    Ok(f.interrupts())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::US;

    fn plain(times: &[Nanos]) -> Vec<(Nanos, bool)> {
        times.iter().map(|&t| (t, false)).collect()
    }

    #[test]
    fn hand_computed_floors() {
        let b = Budget::new(10 * US);
        // Nothing: nothing to deliver.
        assert_eq!(schedule([], b).unwrap(), Vec::<Nanos>::new());
        // One completion: one interrupt at its deadline.
        assert_eq!(schedule(plain(&[0]), b).unwrap(), [10 * US]);
        // Three within one budget of the first: one interrupt, at the first's deadline.
        assert_eq!(
            schedule(plain(&[0, 4 * US, 10 * US]), b).unwrap(),
            [10 * US]
        );
        // The third comes 1 ns too late for it: two.
        assert_eq!(
            schedule(plain(&[0, 4 * US, 10 * US + 1]), b).unwrap(),
            [10 * US, 20 * US + 1]
        );
        // Spread out one budget apart and a nanosecond: one each.
        assert_eq!(floor(plain(&[0, 10_001, 20_002, 30_003]), b).unwrap(), 4);
        // An Urgent completion is delivered at once, and takes what is posted with it.
        let s = [
            (0, false),
            (3 * US, true),
            (5 * US, false),
            (12 * US, false),
        ];
        assert_eq!(schedule(s, b).unwrap(), [3 * US, 15 * US]);
        // Two Urgent at the same instant: one interrupt.
        assert_eq!(schedule([(7, true), (7, true)], b).unwrap(), [7]);
        // Every completion Urgent, at distinct times: one interrupt each.
        assert_eq!(floor([(1, true), (2, true), (3, true)], b).unwrap(), 3);
        // A budget of zero for all: one per distinct time.
        assert_eq!(
            floor(plain(&[1, 1, 2, 2, 2, 9]), Budget::new(0)).unwrap(),
            3
        );
        // An unbounded budget: one interrupt at the end, for the whole stream.
        assert_eq!(
            floor(plain(&[0, 1, 1 << 40]), Budget::new(Nanos::MAX)).unwrap(),
            1
        );
    }

    #[test]
    fn a_later_completion_with_an_earlier_deadline_pulls_the_interrupt_in() {
        // Unmarked at 0 (deadline 10us), Urgent at 2us (deadline 2us): the
        // interrupt at 2us takes both; the unmarked one at 20us is alone.
        let s = [(0, false), (2 * US, true), (20 * US, false)];
        assert_eq!(
            schedule(s, Budget::new(10 * US)).unwrap(),
            [2 * US, 30 * US]
        );
    }

    #[test]
    fn time_going_back_is_refused() {
        let e = floor([(5, false), (4, false)], Budget::new(1)).unwrap_err();
        assert_eq!(e, TimeWentBack { at: 4, now: 5 });
    }
}
