//! The per-volume table and the fleet summary: per strategy, the
//! distribution over volumes (min, p50, p90, max; nearest rank) of the
//! interrupts it saved against `default` (percent of default's) and of the
//! p99 completion latency it added (us).

use serde::Serialize;

/// One strategy's replay of one volume.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Run {
    pub strategy: String,
    /// The I/Os it completed (all of the volume's, unless its runtime
    /// ended first).
    pub completed: u64,
    /// Completed I/Os per second over the replay's window.
    pub iops: f64,
    pub interrupts: u64,
    /// The completion latency's p99 over every I/O, ns.
    pub p99_ns: u64,
}

/// One volume: its requests and each strategy's run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VolumeRow {
    pub volume: String,
    pub requests: u64,
    pub runs: Vec<Run>,
}

/// Min, p50, p90 and max of a value over volumes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Dist {
    /// The volumes it is over.
    pub volumes: usize,
    pub min: f64,
    pub p50: f64,
    pub p90: f64,
    pub max: f64,
}

impl Dist {
    pub fn of(mut v: Vec<f64>) -> Dist {
        if v.is_empty() {
            return Dist::default();
        }
        v.sort_by(f64::total_cmp);
        let rank = |q: f64| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
        Dist {
            volumes: v.len(),
            min: v[0],
            p50: rank(0.5),
            p90: rank(0.9),
            max: v[v.len() - 1],
        }
    }
}

/// One strategy against `default` over the fleet.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StrategySummary {
    pub strategy: String,
    /// `100 * (default's - its) / default's`, over the volumes where
    /// default interrupted at all.
    pub interrupts_saved_pct: Dist,
    /// Its p99 minus default's, us.
    pub p99_added_us: Dist,
    pub interrupts: u64,
}

/// Every volume's row and the summary.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Fleet {
    /// The strategies, `default` first.
    pub strategies: Vec<String>,
    /// The rule by which a volume's requests reach its device's queues.
    pub queues: String,
    pub volumes: Vec<VolumeRow>,
    /// The sum over volumes.
    pub requests: u64,
    pub summary: Vec<StrategySummary>,
}

impl Fleet {
    /// The table and the summary from the rows (default's run first in
    /// each).
    pub fn new(strategies: Vec<String>, queues: String, volumes: Vec<VolumeRow>) -> Fleet {
        let requests = volumes.iter().map(|v| v.requests).sum();
        let summary = strategies
            .iter()
            .enumerate()
            .skip(1)
            .map(|(s, name)| {
                let mut saved = Vec::new();
                let mut added = Vec::new();
                for v in &volumes {
                    let (base, run) = (&v.runs[0], &v.runs[s]);
                    if base.interrupts > 0 {
                        let d = base.interrupts as f64 - run.interrupts as f64;
                        saved.push(100.0 * d / base.interrupts as f64);
                    }
                    added.push((run.p99_ns as f64 - base.p99_ns as f64) / 1e3);
                }
                StrategySummary {
                    strategy: name.clone(),
                    interrupts_saved_pct: Dist::of(saved),
                    p99_added_us: Dist::of(added),
                    interrupts: volumes.iter().map(|v| v.runs[s].interrupts).sum(),
                }
            })
            .collect();
        Fleet {
            strategies,
            queues,
            volumes,
            requests,
            summary,
        }
    }

    /// The per-volume table, then the fleet summary.
    pub fn render(&self) -> String {
        let mut s = format!(
            "per volume ({} volumes, each on its own device; queues: {}):\n{:<16} {:>9} {:>10}",
            self.volumes.len(),
            self.queues,
            "volume",
            "requests",
            "IOPS"
        );
        for name in &self.strategies {
            s += &format!(" {:>14} {:>10}", format!("{name} irqs"), "p99(us)");
        }
        s += "\n";
        for v in &self.volumes {
            s += &format!(
                "{:<16} {:>9} {:>10.0}",
                v.volume, v.requests, v.runs[0].iops
            );
            for r in &v.runs {
                s += &format!(" {:>14} {:>10.2}", r.interrupts, r.p99_ns as f64 / 1e3);
            }
            s += "\n";
        }
        s += &format!(
            "fleet: {} volumes, {} requests; interrupts: default {}",
            self.volumes.len(),
            self.requests,
            self.volumes
                .iter()
                .map(|v| v.runs[0].interrupts)
                .sum::<u64>()
        );
        for x in &self.summary {
            s += &format!(", {} {}", x.strategy, x.interrupts);
        }
        s += "\n";
        if self.summary.is_empty() {
            s += "  (one strategy: nothing to compare against default; give --policy NAME[,NAME..] or all)\n";
        }
        for x in &self.summary {
            let d = |d: &Dist| {
                format!(
                    "min {:.1}, p50 {:.1}, p90 {:.1}, max {:.1}",
                    d.min, d.p50, d.p90, d.max
                )
            };
            s += &format!(
                "  {} vs default: interrupts saved % over {} volumes: {}; p99 added us over {}: {}\n",
                x.strategy,
                x.interrupts_saved_pct.volumes,
                d(&x.interrupts_saved_pct),
                x.p99_added_us.volumes,
                d(&x.p99_added_us)
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(strategy: &str, interrupts: u64, p99_ns: u64) -> Run {
        Run {
            strategy: strategy.into(),
            completed: 1,
            iops: 1000.0,
            interrupts,
            p99_ns,
        }
    }

    #[test]
    fn the_summary_is_over_volumes_against_default() {
        let volumes: Vec<VolumeRow> = (1..=10u64)
            .map(|i| VolumeRow {
                volume: i.to_string(),
                requests: i,
                // cint saves i * 10% of default's 100 and adds i us.
                runs: vec![
                    run("default", 100, 10_000),
                    run("cint", 100 - 10 * i, 10_000 + 1_000 * i),
                ],
            })
            .collect();
        let f = Fleet::new(
            vec!["default".into(), "cint".into()],
            "per process".into(),
            volumes,
        );
        assert_eq!(f.requests, 55);
        let s = &f.summary[0];
        assert_eq!(
            (s.interrupts_saved_pct.min, s.interrupts_saved_pct.p50),
            (10.0, 50.0)
        );
        assert_eq!(
            (s.interrupts_saved_pct.p90, s.interrupts_saved_pct.max),
            (90.0, 100.0)
        );
        assert_eq!((s.p99_added_us.min, s.p99_added_us.max), (1.0, 10.0));
        assert_eq!(s.interrupts, 1000 - 550);
        let text = f.render();
        assert_eq!(text.lines().count(), 2 + 10 + 2, "{text}");
    }
}
