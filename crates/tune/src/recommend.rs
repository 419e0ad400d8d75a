//! The recommendation from the Pareto front (issue 36 item 7): tune's
//! candidates (adaptive at each candidate delta and thr) are a sweep's
//! settings, their fronts are drawn by `sweep::front` (the same fronts
//! `cinterrupts sweep merge` draws: interrupts/s against p99, CPU per I/O
//! against p99), and an objective with optional budgets picks one setting
//! on a front. TOS 5.2's pick is judged against the same front.
//!
//! Every choice is made among a front's settings, so the recommendation is
//! on its front by construction: no candidate is at least as good on both
//! of the front's axes and better on one.

use policy::time::readable;
use policy::{format_nanos, Nanos};
use sweep::front::{Front, Setting};
use sweep::merge::{Row, Table};

use crate::Point;

/// What the recommendation minimises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Objective {
    /// The lowest p99 on the front of interrupts/s against p99 (ties: the
    /// fewer interrupts/s).
    P99,
    /// The fewest interrupts/s on that front (ties: the lower p99).
    Interrupts,
    /// The least CPU per I/O on the front of CPU per I/O against p99 (ties:
    /// the lower p99).
    Cpu,
    /// On the front of interrupts/s against p99, the least sum of the two
    /// axes each log-normalised over the front (see [`balanced_score`]).
    Balanced,
}

/// The default objective: neither axis given up for the other.
pub const DEFAULT_OBJECTIVE: Objective = Objective::Balanced;

impl Objective {
    pub const ALL: [Objective; 4] = [
        Objective::P99,
        Objective::Interrupts,
        Objective::Cpu,
        Objective::Balanced,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Objective::P99 => "p99",
            Objective::Interrupts => "interrupts",
            Objective::Cpu => "cpu",
            Objective::Balanced => "balanced",
        }
    }

    /// `p99`, `interrupts`, `cpu` or `balanced`.
    pub fn parse(s: &str) -> Result<Objective, String> {
        Objective::ALL
            .into_iter()
            .find(|o| o.name() == s)
            .ok_or_else(|| {
                format!(
                    "'{s}' is not an objective (possible values: p99, interrupts, cpu, balanced)"
                )
            })
    }

    /// Which front the objective chooses on.
    pub fn front(self) -> Axes {
        match self {
            Objective::Cpu => Axes::Cpu,
            _ => Axes::Interrupts,
        }
    }
}

/// The two fronts `sweep::front` draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axes {
    /// Interrupts/s against p99.
    Interrupts,
    /// CPU per I/O against p99.
    Cpu,
}

impl Axes {
    /// A setting's (x, y), lower better on both.
    pub fn at(self, s: &Setting) -> (f64, f64) {
        match self {
            Axes::Interrupts => (s.interrupts_per_sec, s.p99_ns),
            Axes::Cpu => (s.cpu_per_io_ns(), s.p99_ns),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Axes::Interrupts => "interrupts/s against p99",
            Axes::Cpu => "CPU per I/O against p99",
        }
    }

    /// The front's settings.
    pub fn of(self, f: &Front) -> &[Setting] {
        match self {
            Axes::Interrupts => &f.front,
            Axes::Cpu => &f.cpu_front,
        }
    }
}

/// Upper bounds a recommended setting must meet; `None`: no bound.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Budget {
    /// The worst job's p99 completion latency, ns.
    pub p99_ns: Option<Nanos>,
    pub interrupts_per_sec: Option<f64>,
}

impl Budget {
    pub fn meets(&self, s: &Setting) -> bool {
        self.p99_ns.map_or(true, |b| s.p99_ns <= b as f64)
            && self
                .interrupts_per_sec
                .map_or(true, |b| s.interrupts_per_sec <= b)
    }

    /// `p99 <= 50us, interrupts/s <= 100000`, or `none`.
    pub fn text(&self) -> String {
        let mut parts = Vec::new();
        if let Some(b) = self.p99_ns {
            parts.push(format!("p99 <= {}", format_nanos(b)));
        }
        if let Some(b) = self.interrupts_per_sec {
            parts.push(format!("interrupts/s <= {b:.0}"));
        }
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(", ")
        }
    }
}

/// The candidates as the rows of a sweep's table (one workload, device,
/// host and seed: a row is a setting), for `sweep::front::fronts`.
pub fn table(candidates: &[Point]) -> Table {
    let rows = candidates
        .iter()
        .map(|p| Row {
            key: policy_of(p),
            workload: "tune".into(),
            device: String::new(),
            host: String::new(),
            mode: String::new(),
            seed: 0,
            runtime_ns: 0,
            policy: policy_of(p),
            interrupts_per_sec: p.irq_per_sec,
            iops: p.iops,
            p50_ns: 0,
            p99_ns: p.p99_ns,
            cpu: p.cpu,
            jobs: Vec::new(),
            version: crate::kept::version(),
        })
        .collect();
    Table {
        rows,
        ..Table::default()
    }
}

/// A candidate's setting as a sweep's table spells it (`adaptive
/// delta=6us thr=32`), as `sweep::picks` matches tune's picks.
pub fn policy_of(p: &Point) -> String {
    match (p.delta, p.thr) {
        (Some(d), Some(t)) => format!("adaptive delta={} thr={t}", format_nanos(d)),
        _ => "default".into(),
    }
}

/// The fronts of the candidates (every candidate is a setting of the one
/// group). `None` without candidates.
pub fn front(candidates: &[Point]) -> Option<Front> {
    sweep::front::fronts(&table(candidates)).into_iter().next()
}

/// `balanced`'s score of a point (x, y) on a front whose settings span
/// [x_min, x_max] and [y_min, y_max]: ln(x/x_min)/ln(x_max/x_min) +
/// ln(y/y_min)/ln(y_max/y_min), each term in [0, 1] (0 where the front
/// does not vary on that axis). Logarithms, because interrupts/s and p99
/// vary by orders of magnitude along a front and a halving should count
/// alike wherever it is; normalised, so neither axis's unit weighs.
/// Values are floored at 1 (interrupt/s, ns) so a logarithm is defined.
pub fn balanced_score(at: (f64, f64), xs: (f64, f64), ys: (f64, f64)) -> f64 {
    let term = |v: f64, (lo, hi): (f64, f64)| {
        let (v, lo, hi) = (v.max(1.0), lo.max(1.0), hi.max(1.0));
        let span = (hi / lo).ln();
        if span > 0.0 {
            (v / lo).ln() / span
        } else {
            0.0
        }
    };
    term(at.0, xs) + term(at.1, ys)
}

/// A setting's score under an objective and its tie-break, lower better.
type Score = Box<dyn Fn(&Setting) -> (f64, f64)>;

/// The setting `objective` picks among the front's settings that meet
/// `budget`; `None` when none does.
pub fn recommend(f: &Front, objective: Objective, budget: Budget) -> Option<Setting> {
    let axes = objective.front();
    let on = axes.of(f);
    let pool: Vec<&Setting> = on.iter().filter(|s| budget.meets(s)).collect();
    let score: Score = match objective {
        Objective::P99 => Box::new(|s| (s.p99_ns, s.interrupts_per_sec)),
        Objective::Interrupts => Box::new(|s| (s.interrupts_per_sec, s.p99_ns)),
        Objective::Cpu => Box::new(|s| (s.cpu_per_io_ns(), s.p99_ns)),
        Objective::Balanced => {
            // Normalised over the whole front: a budget removes choices,
            // it does not rescale the others.
            let span = |v: Vec<f64>| {
                v.iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
                        (lo.min(x), hi.max(x))
                    })
            };
            let xs = span(on.iter().map(|s| axes.at(s).0).collect());
            let ys = span(on.iter().map(|s| axes.at(s).1).collect());
            Box::new(move |s| (balanced_score(axes.at(s), xs, ys), s.p99_ns))
        }
    };
    // Ties past the score: the policy's name, so the choice is the same
    // from run to run.
    pool.into_iter()
        .min_by(|a, b| {
            let (sa, sb) = (score(a), score(b));
            sa.0.total_cmp(&sb.0)
                .then(sa.1.total_cmp(&sb.1))
                .then(a.policy.cmp(&b.policy))
        })
        .cloned()
}

/// Why nothing was recommended, one line: the budget, and how close the
/// candidates came on each bounded axis.
pub fn none_meets(f: &Front, objective: Objective, budget: Budget) -> String {
    let axes = objective.front();
    let mut closest = Vec::new();
    let best = |key: &dyn Fn(&Setting) -> f64| {
        f.all
            .iter()
            .filter(|s| !key(s).is_nan())
            .min_by(|a, b| key(a).total_cmp(&key(b)))
            .cloned()
    };
    if budget.p99_ns.is_some() {
        if let Some(s) = best(&|s| s.p99_ns) {
            closest.push(format!(
                "the lowest p99 is {} ({})",
                readable(s.p99_ns.round() as u64),
                s.policy
            ));
        }
    }
    if budget.interrupts_per_sec.is_some() {
        if let Some(s) = best(&|s| s.interrupts_per_sec) {
            closest.push(format!(
                "the fewest interrupts/s are {:.0} ({})",
                s.interrupts_per_sec, s.policy
            ));
        }
    }
    format!(
        "no setting on the front of {} meets the budget ({}) among {} candidates: {}",
        axes.name(),
        budget.text(),
        f.all.len(),
        closest.join("; ")
    )
}

/// Where a setting stands against a front.
#[derive(Clone, Debug, PartialEq)]
pub enum Standing {
    /// No candidate is at least as good on both axes and better on one.
    OnFront,
    /// `by` is the front's setting that beats it by the most (the largest
    /// sum of the logarithms of the two ratios), one of `of` that beat it.
    Dominated {
        by: Setting,
        of: usize,
        /// How much less `by` has on each axis, as a fraction of the
        /// setting's own: (x, y).
        less: (f64, f64),
    },
}

/// Where `s` stands against the front of `axes`.
pub fn standing(s: &Setting, f: &Front, axes: Axes) -> Standing {
    let p = axes.at(s);
    let beats = |q: (f64, f64)| q.0 <= p.0 && q.1 <= p.1 && (q.0 < p.0 || q.1 < p.1);
    let by: Vec<&Setting> = axes.of(f).iter().filter(|q| beats(axes.at(q))).collect();
    let gain = |q: &Setting| {
        let q = axes.at(q);
        (p.0 / q.0.max(f64::MIN_POSITIVE)).ln() + (p.1 / q.1.max(f64::MIN_POSITIVE)).ln()
    };
    match by
        .iter()
        .max_by(|a, b| gain(a).total_cmp(&gain(b)).then(b.policy.cmp(&a.policy)))
    {
        None => Standing::OnFront,
        Some(best) => {
            let q = axes.at(best);
            let less = |pv: f64, qv: f64| if pv > 0.0 { 1.0 - qv / pv } else { 0.0 };
            Standing::Dominated {
                by: (*best).clone(),
                of: by.len(),
                less: (less(p.0, q.0), less(p.1, q.1)),
            }
        }
    }
}

/// A standing as one line: `on the front of interrupts/s against p99`, or
/// `off the front of ...: adaptive delta=15us thr=255 has 71.2% fewer
/// interrupts/s and 2.1% lower p99 (the best of 3 settings on the front that beat
/// it on both)`.
pub fn standing_text(st: &Standing, axes: Axes) -> String {
    match st {
        Standing::OnFront => format!("on the front of {}", axes.name()),
        Standing::Dominated { by, of, less } => {
            let x = match axes {
                Axes::Interrupts => "fewer interrupts/s",
                Axes::Cpu => "less CPU per I/O",
            };
            let of = if *of == 1 {
                "the one setting on the front that beats it on both".to_string()
            } else {
                format!("the best of {of} settings on the front that beat it on both")
            };
            format!(
                "off the front of {}: {} has {} {x} and {} lower p99 ({of})",
                axes.name(),
                by.policy,
                pct(less.0),
                pct(less.1),
            )
        }
    }
}

/// A fraction as a percentage with one decimal: `0.712` as `71.2%`.
fn pct(f: f64) -> String {
    format!("{:.1}%", f * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(delta_us: u64, thr: u32, irq: f64, p99: u64, iops: f64, cpu: f64) -> Point {
        Point {
            delta: Some(delta_us * 1000),
            thr: Some(thr),
            iops,
            irq_per_sec: irq,
            completions_per_irq: 1.0,
            mean_clat_ns: 1.0,
            p99_ns: p99,
            cpu,
        }
    }

    /// A front a-b-c-d (a: most interrupts, lowest p99) and e, beaten by
    /// b on both.
    fn candidates() -> Vec<Point> {
        vec![
            point(6, 1, 400_000.0, 10_000, 100.0, 1.0),  // a
            point(6, 8, 100_000.0, 20_000, 100.0, 0.5),  // b
            point(6, 32, 20_000.0, 40_000, 100.0, 0.4),  // c
            point(6, 255, 5_000.0, 400_000, 100.0, 0.3), // d
            point(15, 8, 120_000.0, 25_000, 100.0, 0.9), // e
        ]
    }

    fn pick(o: Objective, b: Budget) -> Option<String> {
        recommend(&front(&candidates()).unwrap(), o, b).map(|s| s.policy)
    }

    #[test]
    fn each_objective_takes_its_end_of_the_front() {
        let none = Budget::default();
        assert_eq!(
            pick(Objective::P99, none).as_deref(),
            Some("adaptive delta=6us thr=1")
        );
        assert_eq!(
            pick(Objective::Interrupts, none).as_deref(),
            Some("adaptive delta=6us thr=255")
        );
        assert_eq!(
            pick(Objective::Cpu, none).as_deref(),
            Some("adaptive delta=6us thr=255")
        );
        // Balanced: x spans 5K-400K, y 10-400 us (both 40x or more); b
        // and c sit near the middle of both in log terms, a and d at an
        // end of one. c: ln(4)/ln(80) + ln(4)/ln(40) = 0.316 + 0.376;
        // b: ln(20)/ln(80) + ln(2)/ln(40) = 0.684 + 0.188.
        assert_eq!(
            pick(Objective::Balanced, none).as_deref(),
            Some("adaptive delta=6us thr=32")
        );
    }

    #[test]
    fn budgets_filter_the_front_and_may_leave_nothing() {
        let p99 = |us: u64| Budget {
            p99_ns: Some(us * 1000),
            interrupts_per_sec: None,
        };
        assert_eq!(
            pick(Objective::Interrupts, p99(30)).as_deref(),
            Some("adaptive delta=6us thr=8")
        );
        let irq = Budget {
            p99_ns: None,
            interrupts_per_sec: Some(150_000.0),
        };
        assert_eq!(
            pick(Objective::P99, irq).as_deref(),
            Some("adaptive delta=6us thr=8")
        );
        assert_eq!(pick(Objective::Balanced, p99(5)), None);
        let f = front(&candidates()).unwrap();
        let line = none_meets(&f, Objective::Balanced, p99(5));
        assert!(
            line.contains("p99 <= 5us")
                && line.contains("the lowest p99 is 10.00us (adaptive delta=6us thr=1)"),
            "{line}"
        );
        assert!(!line.contains('\n'));
    }

    #[test]
    fn a_dominated_setting_names_its_best_dominator() {
        let f = front(&candidates()).unwrap();
        let e = f
            .all
            .iter()
            .find(|s| s.policy == "adaptive delta=15us thr=8")
            .unwrap();
        match standing(e, &f, Axes::Interrupts) {
            Standing::Dominated { by, of, less } => {
                assert_eq!(by.policy, "adaptive delta=6us thr=8");
                assert_eq!(of, 1);
                assert!((less.0 - 1.0 / 6.0).abs() < 1e-9, "{less:?}");
                assert!((less.1 - 0.2).abs() < 1e-9, "{less:?}");
                let t = standing_text(&standing(e, &f, Axes::Interrupts), Axes::Interrupts);
                assert!(
                    t.contains("16.7% fewer interrupts/s and 20.0% lower p99"),
                    "{t}"
                );
            }
            other => panic!("{other:?}"),
        }
        for s in &f.front {
            assert_eq!(standing(s, &f, Axes::Interrupts), Standing::OnFront);
        }
    }

    #[test]
    fn objectives_parse_by_name_only() {
        for o in Objective::ALL {
            assert_eq!(Objective::parse(o.name()), Ok(o));
        }
        let e = Objective::parse("fast").unwrap_err();
        assert!(
            e.contains("possible values: p99, interrupts, cpu, balanced"),
            "{e}"
        );
    }
}
