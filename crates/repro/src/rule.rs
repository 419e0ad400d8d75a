//! The tolerance rule, written once (issue 23): a claim states the paper's
//! number and its [`Kind`]; its band, and its qualitative band, come from
//! [`bands`] and nowhere else. The header of `claims.toml` says the same in
//! words; `tests/rule.rs` holds every shipped claim to it.
//!
//! Two things the rule guards against, both seen in the audit of 1ae4e5e:
//! - an effect "holding" at no effect: a band of a claimed difference (a
//!   ratio other than 1, a non-zero change) keeps clear of the neutral
//!   value by [`margin`], never less than the spread we measure across
//!   seeds;
//! - "holds qualitatively" standing for misses of 10x to 170x: it is the
//!   paper's direction *and* within [`QUALITATIVE_FACTOR`] of its number.

use std::fmt;

/// A stated value or measured difference holds within this factor of the
/// paper's number (10 us -> 6.67..15 us); a stated change (a ratio, a
/// range of ratios) within this factor of its effect (2.74x, +174% ->
/// +116%..+261%: 2.16x..3.61x).
pub const FACTOR: f64 = 1.5;

/// "Holds qualitatively": the paper's direction, within this factor of its
/// number, or of its effect for a change (issue 23 item 4, issue 36 item
/// 2). Beyond it, "right direction, far off".
pub const QUALITATIVE_FACTOR: f64 = 3.0;

/// The least clearance, in ratio units, a claimed effect keeps from 1 (2%):
/// below it a ratio of two of our runs is indistinguishable from none. A
/// claim whose own effect is smaller (FR Fig 14's -1.2%) keeps half of it.
pub const NEUTRAL_FLOOR: f64 = 0.02;

/// The clearance is at least this many standard deviations of the figure
/// across seeds (repetitions on the emulator).
pub const SPREADS: f64 = 2.0;

/// "Equal", "matches", "the same": within 10%.
pub const EQUAL: (f64, f64) = (0.9, 1.1);

/// Latencies the paper calls equal to the microsecond (TOS 3.2, 5.3: 10 us
/// against 10 us): within 5%.
pub const SAME_LATENCY: (f64, f64) = (0.95, 1.05);

/// "None" (a portion a mechanism removes, FR 4.3's T_Sched): at most
/// 0.5 us.
pub const NOTHING_US: f64 = 0.5;

/// What the paper says, as a claim states it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// A factor (2.74x; a change of -36% is 0.64): its effect (N - 1)
    /// within [`FACTOR`].
    Ratio(f64),
    /// A range of factors (12-15x): the effects of its ends within
    /// [`FACTOR`] (`1 + (lo - 1) / FACTOR .. 1 + (hi - 1) * FACTOR`).
    Range(f64, f64),
    /// "Equal", "matches": [`EQUAL`].
    Equal,
    /// Latencies equal to the microsecond: [`SAME_LATENCY`].
    SameLatency,
    /// A direction only: more than the baseline.
    More,
    /// A direction only: less than the baseline.
    Less,
    /// A time a scheme adds by its design (its timeout, delta), us:
    /// within [`added_tolerance`] of it.
    Added(f64),
    /// A difference the paper measured (run - baseline, the metric's unit):
    /// within [`FACTOR`].
    Difference(f64),
    /// A measured value, "about" it: within [`FACTOR`].
    About(f64),
    /// A bound the paper states ("never exceeds 100K/s", "over 160").
    AtLeast(f64),
    AtMost(f64),
    /// "None": at most [`NOTHING_US`].
    Nothing,
    /// Agreement within a measured tolerance T (the cross-validation's: the
    /// model against the real program): `1 - T .. 1 + T`, T set from the
    /// real program's run-to-run spread before the model runs.
    Within(f64),
}

/// How our figure is formed, which fixes the neutral value (no effect).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compare {
    /// run / baseline: neutral 1.
    Ratio,
    /// run - baseline: neutral 0.
    Diff,
    /// the run's own value: no neutral.
    Value,
}

impl Compare {
    pub fn neutral(self) -> Option<f64> {
        match self {
            Compare::Ratio => Some(1.0),
            Compare::Diff => Some(0.0),
            Compare::Value => None,
        }
    }
}

/// The side of no effect a claimed effect lies on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sense {
    Above,
    Below,
}

/// An interval our figure must fall in (ends inclusive; `lo > hi` admits
/// nothing).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Band {
    pub lo: f64,
    pub hi: f64,
}

impl Band {
    pub fn new(lo: f64, hi: f64) -> Band {
        Band { lo, hi }
    }

    /// A finite figure inside the band. Infinite and undefined figures
    /// never hold (issue 23 item 2).
    pub fn admits(&self, v: f64) -> bool {
        v.is_finite() && self.lo <= v && v <= self.hi
    }

    pub fn is_empty(&self) -> bool {
        self.lo > self.hi
    }

    /// `"1.83..4.11"`, `">= 1.02"`, `"<= 0.98"`, as `claims.toml` writes it.
    pub fn parse(s: &str) -> Result<Band, String> {
        let num = |t: &str| {
            t.trim()
                .parse::<f64>()
                .map_err(|_| format!("holds_if '{s}': '{}' is not a number", t.trim()))
        };
        let s = s.trim();
        if let Some(x) = s.strip_prefix(">=") {
            Ok(Band::new(num(x)?, f64::INFINITY))
        } else if let Some(x) = s.strip_prefix("<=") {
            Ok(Band::new(f64::NEG_INFINITY, num(x)?))
        } else if let Some((a, b)) = s.split_once("..") {
            let (a, b) = (num(a)?, num(b)?);
            if a > b {
                return Err(format!("holds_if '{s}': an empty range"));
            }
            Ok(Band::new(a, b))
        } else {
            Err(format!("holds_if '{s}': write '>= X', '<= X' or 'A..B'"))
        }
    }

    fn clear_of(self, neutral: f64, sense: Option<Sense>, margin: f64) -> Band {
        match sense {
            Some(Sense::Above) => Band::new(self.lo.max(neutral + margin), self.hi),
            Some(Sense::Below) => Band::new(self.lo, self.hi.min(neutral - margin)),
            None => self,
        }
    }
}

impl fmt::Display for Band {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = |x: f64| {
            let r = format!("{x:.4}");
            let r = r.trim_end_matches('0').trim_end_matches('.').to_string();
            if r == "-0" {
                "0".into()
            } else {
                r
            }
        };
        if self.is_empty() {
            write!(f, "none ({} .. {})", n(self.lo), n(self.hi))
        } else if self.hi == f64::INFINITY {
            write!(f, ">= {}", n(self.lo))
        } else if self.lo == f64::NEG_INFINITY {
            write!(f, "<= {}", n(self.hi))
        } else {
            write!(f, "{} .. {}", n(self.lo), n(self.hi))
        }
    }
}

/// The tolerance of a time a scheme adds by design (TOS 3.2's timeouts,
/// 5.3's delta): 1 us up to 10 us, 2 us up to 50 us, 5% beyond (6 us ->
/// 5..7, 15 us -> 13..17, 100 us -> 95..105): the simulator's own
/// rounding, not a measured spread.
pub fn added_tolerance(d: f64) -> f64 {
    let a = d.abs();
    if a <= 10.0 {
        1.0
    } else if a <= 50.0 {
        2.0
    } else {
        0.05 * a
    }
}

impl Kind {
    /// Reads `kind` and `number` as `claims.toml` writes them.
    pub fn parse(kind: &str, number: Option<&[f64]>) -> Result<Kind, String> {
        let one = |k: fn(f64) -> Kind| match number {
            Some([n]) if n.is_finite() => Ok(k(*n)),
            _ => Err(format!("kind '{kind}' needs number = N")),
        };
        let none = |k: Kind| match number {
            None => Ok(k),
            Some(_) => Err(format!("kind '{kind}' takes no number")),
        };
        let k = match kind {
            "ratio" => one(Kind::Ratio)?,
            "range" => match number {
                Some([a, b]) if a.is_finite() && b.is_finite() && a < b => Kind::Range(*a, *b),
                _ => return Err("kind 'range' needs number = [LO, HI], LO < HI".into()),
            },
            "equal" => none(Kind::Equal)?,
            "same-latency" => none(Kind::SameLatency)?,
            "more" => none(Kind::More)?,
            "less" => none(Kind::Less)?,
            "added" => one(Kind::Added)?,
            "difference" => one(Kind::Difference)?,
            "about" => one(Kind::About)?,
            "at-least" => one(Kind::AtLeast)?,
            "at-most" => one(Kind::AtMost)?,
            "none" => none(Kind::Nothing)?,
            "within" => match number {
                Some([t]) if t.is_finite() && *t > 0.0 => Kind::Within(*t),
                _ => return Err("kind 'within' needs number = T > 0".into()),
            },
            other => {
                return Err(format!(
                    "kind '{other}': ratio, range, equal, same-latency, more, less, added, \
                     difference, about, at-least, at-most, none or within"
                ))
            }
        };
        Ok(k)
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Ratio(_) => "ratio",
            Kind::Range(..) => "range",
            Kind::Equal => "equal",
            Kind::SameLatency => "same-latency",
            Kind::More => "more",
            Kind::Less => "less",
            Kind::Added(_) => "added",
            Kind::Difference(_) => "difference",
            Kind::About(_) => "about",
            Kind::AtLeast(_) => "at-least",
            Kind::AtMost(_) => "at-most",
            Kind::Nothing => "none",
            Kind::Within(_) => "within",
        }
    }

    /// The paper's number(s) the kind states: none, one, or a range's two.
    pub fn numbers(self) -> Vec<f64> {
        match self {
            Kind::Ratio(n)
            | Kind::Added(n)
            | Kind::Difference(n)
            | Kind::About(n)
            | Kind::AtLeast(n)
            | Kind::AtMost(n)
            | Kind::Within(n) => vec![n],
            Kind::Range(a, b) => vec![a, b],
            Kind::Equal | Kind::SameLatency | Kind::More | Kind::Less | Kind::Nothing => vec![],
        }
    }

    /// Whether the kind fits how the figure is formed, and its number the
    /// neutral value: an effect cannot be stated as no effect.
    pub fn check(self, compare: Compare) -> Result<(), String> {
        use Compare as C;
        let fits = match self {
            Kind::Ratio(_)
            | Kind::Range(..)
            | Kind::Equal
            | Kind::SameLatency
            | Kind::Within(_) => compare == C::Ratio,
            Kind::More | Kind::Less => compare == C::Ratio,
            Kind::Added(_) | Kind::Difference(_) => compare == C::Diff,
            Kind::About(_) | Kind::Nothing => compare == C::Value,
            Kind::AtLeast(_) | Kind::AtMost(_) => compare != C::Diff,
        };
        if !fits {
            return Err(format!(
                "kind '{}' does not fit compare '{}'",
                self.name(),
                match compare {
                    C::Ratio => "ratio",
                    C::Diff => "diff",
                    C::Value => "value",
                }
            ));
        }
        match self {
            Kind::Ratio(n) if n <= 0.0 || n == 1.0 => Err(format!(
                "ratio {n}: a claimed factor is positive and not 1 (use 'equal')"
            )),
            Kind::Range(a, b) if a <= 0.0 || (a <= 1.0 && b >= 1.0) => Err(format!(
                "range {a}..{b}: a range of factors lies on one side of 1"
            )),
            Kind::Added(d) | Kind::Difference(d) if d == 0.0 => {
                Err("a claimed difference is not 0 (use 'none' or 'equal')".into())
            }
            _ => Ok(()),
        }
    }

    /// The side of no effect the claim puts our figure on, if it claims an
    /// effect (issue 23 item 2: those bands keep clear of the neutral value).
    pub fn sense(self) -> Option<Sense> {
        let side = |x: f64, neutral: f64| {
            if x > neutral {
                Sense::Above
            } else {
                Sense::Below
            }
        };
        match self {
            Kind::Ratio(n) => Some(side(n, 1.0)),
            Kind::Range(a, _) => Some(side(a, 1.0)),
            Kind::More => Some(Sense::Above),
            Kind::Less => Some(Sense::Below),
            Kind::Added(d) | Kind::Difference(d) => Some(side(d, 0.0)),
            _ => None,
        }
    }

    /// The size of the claimed effect in the figure's unit (|n - 1|, |d|),
    /// for the floor of the margin; none for a direction alone.
    fn effect(self) -> Option<f64> {
        match self {
            Kind::Ratio(n) => Some((n - 1.0).abs()),
            Kind::Range(a, b) => Some((a - 1.0).abs().min((b - 1.0).abs())),
            Kind::Added(d) | Kind::Difference(d) => Some(d.abs()),
            _ => None,
        }
    }

    /// The band within `factor` of the paper's number (the tolerance with
    /// [`FACTOR`], the qualitative one with [`QUALITATIVE_FACTOR`]); `None`
    /// for kinds without a number to be near.
    ///
    /// A claimed change is held to the factor on its *effect* (issue 36
    /// item 2): a ratio N's effect is N - 1, so 1.23x holds from 1.153x to
    /// 1.345x (+15%..+35% against the paper's +23%), not from 0.82x; a
    /// range's ends likewise; a difference is its own effect. A ratio of
    /// two non-negative figures is never below 0, so a cut's far end stops
    /// there (-86% holds from -57% to a cut of everything). Absolute values
    /// ("about N") and added times keep their bands.
    fn near(self, factor: f64) -> Option<Band> {
        let within = |n: f64| {
            let (a, b) = (n / factor, n * factor);
            Band::new(a.min(b), a.max(b))
        };
        let on_effect = |lo: f64, hi: f64| {
            let ends = [
                effect_end(lo, 1.0 / factor),
                effect_end(lo, factor),
                effect_end(hi, 1.0 / factor),
                effect_end(hi, factor),
            ];
            Band::new(
                ends.iter().copied().fold(f64::INFINITY, f64::min).max(0.0),
                ends.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            )
        };
        match self {
            Kind::Ratio(n) => Some(on_effect(n, n)),
            Kind::Range(a, b) => Some(on_effect(a, b)),
            Kind::Difference(n) | Kind::About(n) => Some(within(n)),
            Kind::Added(d) if factor == FACTOR => {
                let t = added_tolerance(d);
                Some(Band::new(d - t, d + t))
            }
            Kind::Added(d) => Some(within(d)),
            _ => None,
        }
    }
}

/// The ratio whose effect (ratio - 1) is `ratio`'s effect scaled by `k`.
fn effect_end(ratio: f64, k: f64) -> f64 {
    1.0 + (ratio - 1.0) * k
}

/// The clearance an effect's band keeps from the neutral value: the larger
/// of [`SPREADS`] standard deviations of our figure across seeds and, for
/// ratios, [`NEUTRAL_FLOOR`] (half the claimed effect where that is
/// smaller, so the paper's own number stays admissible).
pub fn margin(kind: Kind, compare: Compare, spread: f64) -> f64 {
    let measured = SPREADS * spread.max(0.0);
    let floor = match compare {
        Compare::Ratio => kind
            .effect()
            .map_or(NEUTRAL_FLOOR, |e| NEUTRAL_FLOOR.min(e / 2.0)),
        _ => 0.0,
    };
    measured.max(floor)
}

/// A claim's bands: the one it holds in, and the qualitative one (the
/// paper's direction, within [`QUALITATIVE_FACTOR`]) for kinds with a
/// number. `stated` replaces the derived tolerance for a claim that carries
/// a `tolerance_reason`; it too keeps clear of the neutral value.
pub fn bands(
    kind: Kind,
    compare: Compare,
    stated: Option<Band>,
    spread: f64,
) -> (Band, Option<Band>) {
    let neutral = compare.neutral().unwrap_or(0.0);
    let m = margin(kind, compare, spread);
    let sense = kind.sense();
    let derived = match kind {
        Kind::Equal => Band::new(EQUAL.0, EQUAL.1),
        Kind::SameLatency => Band::new(SAME_LATENCY.0, SAME_LATENCY.1),
        Kind::More => Band::new(neutral, f64::INFINITY),
        Kind::Less => Band::new(f64::NEG_INFINITY, neutral),
        Kind::AtLeast(n) => Band::new(n, f64::INFINITY),
        Kind::AtMost(n) => Band::new(f64::NEG_INFINITY, n),
        Kind::Nothing => Band::new(0.0, NOTHING_US),
        Kind::Within(t) => Band::new((1.0 - t).max(0.0), 1.0 + t),
        k => k.near(FACTOR).expect("every other kind has a number"),
    };
    let band = stated.unwrap_or(derived).clear_of(neutral, sense, m);
    let qualitative = kind
        .near(QUALITATIVE_FACTOR)
        .map(|q| q.clear_of(neutral, sense, m));
    (band, qualitative)
}

/// Whether `v` lies on the claim's side of no effect, clear of it by the
/// margin: a figure outside both bands but in the paper's direction is
/// "right direction, far off".
pub fn right_direction(kind: Kind, compare: Compare, spread: f64, v: f64) -> bool {
    let neutral = compare.neutral().unwrap_or(0.0);
    let m = margin(kind, compare, spread);
    v.is_finite()
        && match kind.sense() {
            Some(Sense::Above) => v >= neutral + m,
            Some(Sense::Below) => v <= neutral - m,
            None => false,
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(k: Kind, c: Compare) -> Band {
        bands(k, c, None, 0.0).0
    }

    #[test]
    fn the_papers_tolerances_come_out_of_the_rule() {
        // 2.74x is +174%: +116%..+261% (issue 36 item 2).
        let r = b(Kind::Ratio(2.74), Compare::Ratio);
        assert!(
            (r.lo - 2.16).abs() < 1e-9 && (r.hi - 3.61).abs() < 1e-9,
            "{r}"
        );
        // A cut of 36%: 24%..54%.
        let r = b(Kind::Ratio(0.64), Compare::Ratio);
        assert!(
            (r.lo - 0.46).abs() < 1e-9 && (r.hi - 0.76).abs() < 1e-9,
            "{r}"
        );
        // A cut of 86%: from 57% to everything, never below 0.
        let r = b(Kind::Ratio(0.14), Compare::Ratio);
        assert!(
            r.lo == 0.0 && (r.hi - (1.0 - 0.86 / 1.5)).abs() < 1e-9,
            "{r}"
        );
        // 12-15x: +1100%..+1400%, so +733%..+2100%.
        let r = b(Kind::Range(12.0, 15.0), Compare::Ratio);
        assert!((r.lo - (1.0 + 11.0 / 1.5)).abs() < 1e-9 && (r.hi - 22.0).abs() < 1e-9);
        // Values and differences keep the factor on the number.
        assert_eq!(b(Kind::About(15.0), Compare::Value), Band::new(10.0, 22.5));
        assert_eq!(
            b(Kind::Difference(600.0), Compare::Diff),
            Band::new(400.0, 900.0)
        );
        assert_eq!(b(Kind::Added(100.0), Compare::Diff), Band::new(95.0, 105.0));
        assert_eq!(b(Kind::Added(6.0), Compare::Diff), Band::new(5.0, 7.0));
        assert_eq!(b(Kind::Added(15.0), Compare::Diff), Band::new(13.0, 17.0));
        assert_eq!(b(Kind::Equal, Compare::Ratio), Band::new(0.9, 1.1));
        assert_eq!(b(Kind::Nothing, Compare::Value), Band::new(0.0, 0.5));
    }

    #[test]
    fn no_effect_never_holds_an_effect() {
        // The audit's cases: TOS Fig 15's 0.7x at 0.9875, FR's +4% at
        // 1.0001, FR Fig 12's -1.6% at 1.000, hybrid's 1.5x-2.7x at 1.000.
        let (c, s) = (Compare::Ratio, 0.0);
        assert!(!bands(Kind::Ratio(0.7), c, None, s).0.admits(0.9875));
        assert!(!bands(Kind::Ratio(1.04), c, None, s).0.admits(1.0001));
        assert!(bands(Kind::Ratio(1.04), c, None, s).0.admits(1.04));
        assert!(!bands(Kind::Ratio(0.984), c, None, s).0.admits(1.0));
        assert!(bands(Kind::Ratio(0.984), c, None, s).0.admits(0.984));
        assert!(!bands(Kind::Range(1.5, 2.7), c, None, s).0.admits(1.0));
        assert!(!bands(Kind::More, c, None, s).0.admits(1.0));
        assert!(!bands(Kind::Less, c, None, s).0.admits(1.0));
        // A stated band keeps clear too.
        let stated = Band::parse("1.0..1.5").unwrap();
        assert!(!bands(Kind::More, c, Some(stated), s).0.admits(1.0));
        // Only "equal" contains it.
        assert!(bands(Kind::Equal, c, None, s).0.admits(1.0));
    }

    #[test]
    fn a_change_is_held_on_its_effect_not_its_ratio() {
        // The audit's cases (issue 36 item 2): TOS Fig 15's +23% held at
        // +2.6% on the ratio (0.82..1.85); on the effect it does not, nor
        // qualitatively (+7.7%..+69%).
        let (band, q) = bands(Kind::Ratio(1.23), Compare::Ratio, None, 0.0);
        assert!(!band.admits(1.026) && band.admits(1.23));
        assert!(!q.unwrap().admits(1.026));
        // Fig 11's +4% "qualitatively" right at +149%: 37x the effect.
        let (band, q) = bands(Kind::Ratio(1.04), Compare::Ratio, None, 0.0);
        assert!(!band.admits(2.49) && !q.unwrap().admits(2.49));
        assert!(right_direction(
            Kind::Ratio(1.04),
            Compare::Ratio,
            0.0,
            2.49
        ));
        // A cut 1.2x the paper's holds; one a third of it is qualitative.
        let (band, q) = bands(Kind::Ratio(0.5), Compare::Ratio, None, 0.0);
        assert!(band.admits(0.4) && !band.admits(0.8) && q.unwrap().admits(0.8));
    }

    #[test]
    fn the_clearance_grows_with_the_measured_spread() {
        let quiet = bands(Kind::Ratio(1.2), Compare::Ratio, None, 0.0).0;
        let noisy = bands(Kind::Ratio(1.2), Compare::Ratio, None, 0.08).0;
        assert!(quiet.admits(1.15) && !noisy.admits(1.15));
        assert!((noisy.lo - 1.16).abs() < 1e-12);
        // So noisy that the paper's own number is within the noise: it
        // cannot hold at the paper's number.
        assert!(!bands(Kind::Ratio(1.04), Compare::Ratio, None, 0.05)
            .0
            .admits(1.04));
    }

    #[test]
    fn qualitative_is_the_direction_within_three_times() {
        // 4x is +300%: qualitatively +100%..+900%.
        let q = bands(Kind::Ratio(4.0), Compare::Ratio, None, 0.0)
            .1
            .unwrap();
        assert!(q.admits(2.0) && q.admits(10.0));
        assert!(!q.admits(1.5) && !q.admits(12.0));
        assert!(!q.admits(31.6) && !q.admits(1.0));
        assert!(right_direction(Kind::Ratio(4.0), Compare::Ratio, 0.0, 31.6));
        // A cut of 64%: qualitatively 21% and more.
        let q = bands(Kind::Ratio(0.36), Compare::Ratio, None, 0.0)
            .1
            .unwrap();
        assert!(q.admits(0.036) && !q.admits(0.85));
        let q = bands(Kind::Added(400.0), Compare::Diff, None, 0.0)
            .1
            .unwrap();
        assert!(!q.admits(2.4) && q.admits(150.0));
        assert!(bands(Kind::Equal, Compare::Ratio, None, 0.0).1.is_none());
        assert!(bands(Kind::More, Compare::Ratio, None, 0.0).1.is_none());
    }

    #[test]
    fn infinite_and_undefined_figures_never_hold() {
        let (band, q) = bands(Kind::AtLeast(16.0), Compare::Ratio, None, 0.0);
        assert!(!band.admits(f64::INFINITY) && !band.admits(f64::NAN));
        assert!(q.is_none());
        assert!(!right_direction(
            Kind::More,
            Compare::Ratio,
            0.0,
            f64::INFINITY
        ));
    }

    #[test]
    fn kinds_are_read_and_checked_against_the_comparison() {
        assert_eq!(Kind::parse("ratio", Some(&[2.0])), Ok(Kind::Ratio(2.0)));
        assert!(Kind::parse("ratio", None).is_err());
        assert!(Kind::parse("equal", Some(&[1.0])).is_err());
        assert!(Kind::parse("range", Some(&[3.0, 2.0])).is_err());
        assert!(Kind::parse("dozens", None).is_err());
        assert!(Kind::Ratio(1.0).check(Compare::Ratio).is_err());
        assert!(Kind::Range(0.8, 1.2).check(Compare::Ratio).is_err());
        assert!(Kind::Added(6.0).check(Compare::Ratio).is_err());
        assert!(Kind::About(10.0).check(Compare::Value).is_ok());
        assert!(Kind::Difference(0.0).check(Compare::Diff).is_err());
    }
}
