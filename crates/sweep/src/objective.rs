//! The objectives a front is drawn on (issue 42 item 6), named as
//! `sweep merge --front Y,X` spells them: two figures, each a metric of the
//! whole run or of one job (`JOB:METRIC`, the job named as its job file's
//! section is, `[sync]`), the first drawn up the page and the second
//! across. `sync:p99,interrupts` is the synchronous reader's p99 against
//! interrupts/s; `sync:p99,async:iops` the reader's p99 against the batch's
//! throughput; `p99,interrupts` the worst job's p99 against interrupts/s
//! (the front drawn before issue 42).
//!
//! A worst-job front hides a strategy that helps one job: on the mixed
//! workload (TOS 5.3's blocking reader beside a libaio batch) cint keeps
//! the reader's p99 at 17-18 us, where adaptive's is 42 us or more, but it
//! slows the batch, whose p99 is then the worst; on the worst job's p99
//! cint is off every front (crates/sweep/README.md, "Fronts").

use std::fmt;
use std::str::FromStr;

/// A figure of a point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Metric {
    /// The 99th percentile of completion latency (the worst job's, or
    /// one job's: the worst of its clones).
    P99,
    /// The median of completion latency, as [`Metric::P99`].
    P50,
    /// Reads and writes per second (all jobs', or one job's: its clones'
    /// sum). The only one where more is better.
    Iops,
    /// Interrupts per second: the whole run's (a job has none of its own).
    Interrupts,
    /// The workload cores' busy time per I/O, ns per core
    /// (`front::Setting::cpu_per_io_ns`): the whole run's.
    Cpu,
}

impl Metric {
    /// Every metric, in the order errors list them.
    pub const ALL: [Metric; 5] = [
        Metric::P99,
        Metric::P50,
        Metric::Iops,
        Metric::Interrupts,
        Metric::Cpu,
    ];

    /// As `--front` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Metric::P99 => "p99",
            Metric::P50 => "p50",
            Metric::Iops => "iops",
            Metric::Interrupts => "interrupts",
            Metric::Cpu => "cpu",
        }
    }

    /// Whether a job has this figure of its own.
    pub fn per_job(self) -> bool {
        matches!(self, Metric::P99 | Metric::P50 | Metric::Iops)
    }

    /// Whether more is better (throughput); less is, for the others.
    pub fn more_is_better(self) -> bool {
        self == Metric::Iops
    }

    fn names(per_job: bool) -> String {
        Metric::ALL
            .iter()
            .filter(|m| !per_job || m.per_job())
            .map(|m| m.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// One axis of a front: a metric, of the whole run or of one job.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Axis {
    /// The job as its job file names it (fio's section name); `None`: the
    /// whole run (the worst job's latency, all jobs' IOPS).
    pub job: Option<String>,
    pub metric: Metric,
}

impl Axis {
    pub fn of(metric: Metric) -> Axis {
        Axis { job: None, metric }
    }

    pub fn of_job(job: &str, metric: Metric) -> Axis {
        Axis {
            job: Some(job.to_string()),
            metric,
        }
    }

    /// What the axis shows, in words: `sync's p99`, `the worst job's p99`,
    /// `interrupts/s`.
    pub fn words(&self) -> String {
        let what = match self.metric {
            Metric::P99 => "p99",
            Metric::P50 => "p50",
            Metric::Iops => "IOPS",
            Metric::Interrupts => return "interrupts/s".into(),
            Metric::Cpu => return "CPU per I/O".into(),
        };
        match &self.job {
            Some(j) => format!("{j}'s {what}"),
            None if self.metric == Metric::Iops => "all jobs' IOPS".into(),
            None => format!("the worst job's {what}"),
        }
    }

    /// The axis' label on a figure, with the unit it is drawn in.
    pub fn label(&self) -> String {
        let unit = match self.metric {
            Metric::P99 | Metric::P50 => "us",
            Metric::Iops => "thousands",
            Metric::Interrupts => "thousands",
            Metric::Cpu => "us per workload core",
        };
        format!("{} ({unit})", self.words())
    }

    /// A value in the figure's unit (`label`): latencies and CPU per I/O
    /// from ns to us, rates in thousands.
    pub fn scaled(&self, v: f64) -> f64 {
        v / 1e3
    }
}

impl fmt::Display for Axis {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match &self.job {
            Some(j) => write!(f, "{j}:{}", self.metric.name()),
            None => f.write_str(self.metric.name()),
        }
    }
}

impl FromStr for Axis {
    type Err = String;

    fn from_str(s: &str) -> Result<Axis, String> {
        // A job's name may hold a colon (fio's section names may); a
        // metric never does.
        let (job, metric) = match s.rsplit_once(':') {
            Some((j, m)) => (Some(j.trim()), m.trim()),
            None => (None, s.trim()),
        };
        let metric = Metric::ALL
            .into_iter()
            .find(|m| m.name() == metric)
            .ok_or_else(|| {
                format!(
                    "no metric '{metric}' (metrics: {}; a job's: JOB:METRIC)",
                    Metric::names(false)
                )
            })?;
        match job {
            Some("") => Err(format!("'{s}': no job before the ':'")),
            Some(_) if !metric.per_job() => Err(format!(
                "'{s}': {} are the whole run's, not a job's (a job's metrics: {})",
                Axis::of(metric).words(),
                Metric::names(true)
            )),
            Some(j) => Ok(Axis::of_job(j, metric)),
            None => Ok(Axis::of(metric)),
        }
    }
}

/// A front: `y` against `x`, less (more, for IOPS) better on both.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Objective {
    /// Drawn up the page (a latency, usually).
    pub y: Axis,
    /// Drawn across (the cost: interrupts/s, CPU per I/O, or throughput).
    pub x: Axis,
}

impl Objective {
    pub fn new(y: Axis, x: Axis) -> Objective {
        Objective { y, x }
    }

    /// In words: `sync's p99 against interrupts/s`.
    pub fn words(&self) -> String {
        format!("{} against {}", self.y.words(), self.x.words())
    }

    /// The jobs it names.
    pub fn jobs(&self) -> impl Iterator<Item = &str> {
        [&self.y.job, &self.x.job]
            .into_iter()
            .filter_map(|j| j.as_deref())
    }

    /// The fronts drawn when none are named: the worst job's p99 against
    /// interrupts/s and against CPU per I/O (the fronts before issue 42),
    /// then each job's p99 against both, when there is more than one job
    /// (with one, its p99 is the worst job's).
    pub fn defaults(jobs: &[String]) -> Vec<Objective> {
        let costs = [Metric::Interrupts, Metric::Cpu];
        let mut out: Vec<Objective> = costs
            .iter()
            .map(|&c| Objective::new(Axis::of(Metric::P99), Axis::of(c)))
            .collect();
        if jobs.len() > 1 {
            for j in jobs {
                for &c in &costs {
                    out.push(Objective::new(Axis::of_job(j, Metric::P99), Axis::of(c)));
                }
            }
        }
        out
    }
}

impl fmt::Display for Objective {
    /// As `--front` spells it: `sync:p99,interrupts`.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{},{}", self.y, self.x)
    }
}

impl FromStr for Objective {
    type Err = String;

    fn from_str(s: &str) -> Result<Objective, String> {
        let Some((y, x)) = s.split_once(',') else {
            return Err(format!(
                "'{s}': a front is two figures, Y,X (e.g. sync:p99,interrupts)"
            ));
        };
        let y: Axis = y.parse()?;
        let x: Axis = x.parse()?;
        if x == y {
            return Err(format!("'{s}': the same figure on both axes"));
        }
        Ok(Objective { y, x })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fronts_are_spelled_y_comma_x_with_a_job_before_a_colon() {
        let o: Objective = "sync:p99,interrupts".parse().unwrap();
        assert_eq!(o.y, Axis::of_job("sync", Metric::P99));
        assert_eq!(o.x, Axis::of(Metric::Interrupts));
        assert_eq!(o.to_string(), "sync:p99,interrupts");
        assert_eq!(o.words(), "sync's p99 against interrupts/s");
        let o: Objective = "sync:p99,async:iops".parse().unwrap();
        assert_eq!(o.words(), "sync's p99 against async's IOPS");
        assert!(o.x.metric.more_is_better());
        assert_eq!(o.jobs().collect::<Vec<_>>(), ["sync", "async"]);
        let o: Objective = "p99,cpu".parse().unwrap();
        assert_eq!(o.words(), "the worst job's p99 against CPU per I/O");
        // Every spelling reads back as itself.
        for s in ["p50,iops", "a:b:p99,cpu", "iops,interrupts"] {
            assert_eq!(s.parse::<Objective>().unwrap().to_string(), s);
        }
    }

    #[test]
    fn a_wrong_front_is_one_line_naming_it_and_the_valid_ones() {
        let e = "sync:p98,interrupts".parse::<Objective>().unwrap_err();
        assert_eq!(
            e,
            "no metric 'p98' (metrics: p99, p50, iops, interrupts, cpu; a job's: JOB:METRIC)"
        );
        let e = "sync:interrupts,p99".parse::<Objective>().unwrap_err();
        assert!(
            e.contains("not a job's (a job's metrics: p99, p50, iops)"),
            "{e}"
        );
        let e = "p99".parse::<Objective>().unwrap_err();
        assert!(e.contains("two figures, Y,X"), "{e}");
        let e = "p99,p99".parse::<Objective>().unwrap_err();
        assert!(e.contains("the same figure"), "{e}");
        let e = ":p99,cpu".parse::<Objective>().unwrap_err();
        assert!(e.contains("no job"), "{e}");
        for e in ["x:p1,cpu", "cpu:cpu,p99", "a"].map(|s| s.parse::<Objective>().unwrap_err()) {
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn the_default_fronts_are_the_worst_jobs_then_each_jobs_when_there_are_two() {
        let names = |v: Vec<Objective>| v.iter().map(|o| o.to_string()).collect::<Vec<_>>();
        assert_eq!(
            names(Objective::defaults(&["only".into()])),
            ["p99,interrupts", "p99,cpu"]
        );
        assert_eq!(
            names(Objective::defaults(&["sync".into(), "async".into()])),
            [
                "p99,interrupts",
                "p99,cpu",
                "sync:p99,interrupts",
                "sync:p99,cpu",
                "async:p99,interrupts",
                "async:p99,cpu"
            ]
        );
    }
}
