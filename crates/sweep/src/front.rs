//! Per workload, device and host, the Pareto front of interrupts per second
//! against p99 latency, the front of CPU per I/O against p99 (what an
//! interrupt costs is CPU, TOS 2: a setting may save interrupts and not
//! CPU), and the best setting for each objective.
//!
//! A front is drawn over settings (a strategy and its parameters), each the
//! mean of its seeds: seeds are repetitions, not choices, and a setting
//! should not sit on the front twice for two lucky draws. It is drawn per
//! workload, device and host because a trade-off is a machine's (TOS 5.2
//! tunes per device).

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::merge::{field, Row, Table};

/// One setting of one group, averaged over its seeds.
#[derive(Clone, Debug, PartialEq)]
pub struct Setting {
    /// `adaptive delta=6us thr=32`: every parameter in force.
    pub policy: String,
    pub host: String,
    pub mode: String,
    pub runtime_ns: u64,
    /// How many seeds (points) the means are over.
    pub seeds: usize,
    pub interrupts_per_sec: f64,
    pub iops: f64,
    pub p99_ns: f64,
    pub cpu: f64,
}

impl Setting {
    fn of(rows: &[&Row]) -> Setting {
        let n = rows.len() as f64;
        let mean = |f: &dyn Fn(&Row) -> f64| rows.iter().map(|r| f(r)).sum::<f64>() / n;
        Setting {
            policy: rows[0].policy.clone(),
            host: rows[0].host.clone(),
            mode: rows[0].mode.clone(),
            runtime_ns: rows[0].runtime_ns,
            seeds: rows.len(),
            interrupts_per_sec: mean(&|r| r.interrupts_per_sec),
            iops: mean(&|r| r.iops),
            p99_ns: mean(&|r| r.p99_ns as f64),
            cpu: mean(&|r| r.cpu),
        }
    }

    /// The workload cores' busy time per I/O, ns per core: the busy share
    /// over IOPS. The busy share alone would favour a setting that does
    /// less work (fewer IOPS, less CPU); within a group the cores are the
    /// same, so this ranks settings by CPU per I/O. NaN without I/O (never
    /// on a front).
    pub fn cpu_per_io_ns(&self) -> f64 {
        if self.iops > 0.0 {
            self.cpu * 1e9 / self.iops
        } else {
            f64::NAN
        }
    }

    pub(crate) fn to_json(&self) -> Value {
        json!({
            "policy": self.policy,
            "host": self.host,
            "mode": self.mode,
            "runtime_ns": self.runtime_ns,
            "seeds": self.seeds,
            "interrupts_per_sec": self.interrupts_per_sec,
            "iops": self.iops,
            "p99_ns": self.p99_ns,
            "cpu": self.cpu,
            "cpu_per_io_ns": self.cpu_per_io_ns(),
        })
    }
}

/// One workload's front on one device.
#[derive(Clone, Debug, PartialEq)]
pub struct Front {
    pub workload: String,
    pub device: String,
    pub host: String,
    /// The group's settings, on the front or not.
    pub settings: usize,
    /// Those settings, each the mean of its seeds, in (mode, runtime,
    /// policy) order.
    pub all: Vec<Setting>,
    /// The settings on the front of interrupts/s against p99, by
    /// increasing interrupts/s.
    pub front: Vec<Setting>,
    /// The settings on the front of CPU per I/O
    /// ([`Setting::cpu_per_io_ns`]) against p99, by increasing CPU per I/O.
    pub cpu_front: Vec<Setting>,
    /// The best setting for each objective: the fewest interrupts/s, the
    /// lowest p99, the most IOPS, the least CPU per I/O (ties: the first
    /// in policy order).
    pub best: Vec<(&'static str, Setting)>,
}

/// Every (workload, device, host) group's front.
pub fn fronts(table: &Table) -> Vec<Front> {
    // Group by workload, device and host, then by everything else that
    // makes a setting (mode, runtime, policy): the seeds fall together.
    type Group<'a> = BTreeMap<(String, String, u64, String), Vec<&'a Row>>;
    let mut groups: BTreeMap<(String, String, String), Group> = BTreeMap::new();
    for r in &table.rows {
        groups
            .entry((r.workload.clone(), r.device.clone(), r.host.clone()))
            .or_default()
            .entry((
                r.host.clone(),
                r.mode.clone(),
                r.runtime_ns,
                r.policy.clone(),
            ))
            .or_default()
            .push(r);
    }
    groups
        .into_iter()
        .map(|((workload, device, host), by_setting)| {
            let settings: Vec<Setting> =
                by_setting.values().map(|rows| Setting::of(rows)).collect();
            let front = front_of(&settings, |s| (s.interrupts_per_sec, s.p99_ns));
            let cpu_front = front_of(&settings, |s| (s.cpu_per_io_ns(), s.p99_ns));
            let best_by = |name: &'static str, score: &dyn Fn(&Setting) -> f64| {
                let mut best = &settings[0];
                for s in &settings[1..] {
                    if score(s) < score(best) {
                        best = s;
                    }
                }
                (name, best.clone())
            };
            let best = vec![
                best_by("fewest interrupts/s", &|s| s.interrupts_per_sec),
                best_by("lowest p99", &|s| s.p99_ns),
                best_by("most IOPS", &|s| -s.iops),
                best_by("least CPU per I/O", &|s| s.cpu_per_io_ns()),
            ];
            Front {
                workload,
                device,
                host,
                settings: settings.len(),
                front,
                cpu_front,
                best,
                all: settings,
            }
        })
        .collect()
}

/// The settings on the Pareto front of `at` (x, y; lower is better on
/// both), by increasing x, then y, then policy.
fn front_of(settings: &[Setting], at: impl Fn(&Setting) -> (f64, f64)) -> Vec<Setting> {
    let xy: Vec<(f64, f64)> = settings.iter().map(&at).collect();
    let mut front: Vec<Setting> = pareto(&xy)
        .into_iter()
        .map(|i| settings[i].clone())
        .collect();
    front.sort_by(|a, b| {
        let (a_at, b_at) = (at(a), at(b));
        a_at.0
            .total_cmp(&b_at.0)
            .then(a_at.1.total_cmp(&b_at.1))
            .then(a.policy.cmp(&b.policy))
    });
    front
}

/// The indices of `points` (x, y; lower is better on both) on the Pareto
/// front: no other point is at most as bad on both and strictly better on
/// one. Equal points are both on it (neither is strictly better). NaN
/// coordinates never dominate and are never on the front.
pub fn pareto(points: &[(f64, f64)]) -> Vec<usize> {
    let dominates =
        |q: (f64, f64), p: (f64, f64)| q.0 <= p.0 && q.1 <= p.1 && (q.0 < p.0 || q.1 < p.1);
    (0..points.len())
        .filter(|&i| {
            let p = points[i];
            !p.0.is_nan() && !p.1.is_nan() && !points.iter().any(|&q| dominates(q, p))
        })
        .collect()
}

/// Whether `q` is at most as bad as `p` on both interrupts/s and p99 and
/// strictly better on one (the relation [`pareto`] draws the front by).
pub fn dominates(q: &Setting, p: &Setting) -> bool {
    let (q, p) = (
        (q.interrupts_per_sec, q.p99_ns),
        (p.interrupts_per_sec, p.p99_ns),
    );
    q.0 <= p.0 && q.1 <= p.1 && (q.0 < p.0 || q.1 < p.1)
}

pub(crate) fn line(s: &Setting) -> String {
    let per_io = s.cpu_per_io_ns();
    format!(
        "{:>12.0} irq/s  p99 {:>10}  {:>10.0} IOPS  cpu {:.2} ({}/io)  {} ({} seed{})",
        s.interrupts_per_sec,
        policy::format_nanos(s.p99_ns.round() as u64),
        s.iops,
        s.cpu,
        if per_io.is_nan() {
            "-".to_string()
        } else {
            policy::format_nanos(per_io.round() as u64)
        },
        s.policy,
        s.seeds,
        if s.seeds == 1 { "" } else { "s" }
    )
}

/// The fronts as text: a block per group, a line per setting on the front,
/// then the best for each objective.
pub fn text(fronts: &[Front]) -> String {
    let mut out = String::new();
    for f in fronts {
        out.push_str(&format!(
            "{} on {} ({}): {} of {} settings on the front (interrupts/s against p99)\n",
            f.workload,
            f.device,
            f.host,
            f.front.len(),
            f.settings
        ));
        for s in &f.front {
            out.push_str(&format!("  {}\n", line(s)));
        }
        out.push_str(&format!(
            "  {} of {} settings on the front of CPU per I/O against p99\n",
            f.cpu_front.len(),
            f.settings
        ));
        for s in &f.cpu_front {
            out.push_str(&format!("  {}\n", line(s)));
        }
        for (objective, s) in &f.best {
            out.push_str(&format!(
                "  best, {:<20} {}\n",
                format!("{objective}:"),
                line(s).trim_start()
            ));
        }
    }
    out
}

/// The fronts as CSV, a row per setting on a front: `front` is
/// `interrupts` (interrupts/s against p99) or `cpu` (CPU against p99).
pub fn csv(fronts: &[Front]) -> String {
    let mut out = String::from(
        "front,workload,device,host,mode,runtime_ns,policy,seeds,interrupts_per_sec,iops,p99_ns,cpu\n",
    );
    for f in fronts {
        let on = f.front.iter().map(|s| ("interrupts", s));
        for (front, s) in on.chain(f.cpu_front.iter().map(|s| ("cpu", s))) {
            out.push_str(&format!(
                "{},{},{},{},{},{},{},{},{},{},{},{}\n",
                front,
                field(&f.workload),
                field(&f.device),
                field(&s.host),
                field(&s.mode),
                s.runtime_ns,
                field(&s.policy),
                s.seeds,
                s.interrupts_per_sec,
                s.iops,
                s.p99_ns,
                s.cpu
            ));
        }
    }
    out
}

/// The fronts and the best settings as JSON.
pub fn json(fronts: &[Front]) -> String {
    let v: Vec<Value> = fronts
        .iter()
        .map(|f| {
            let best: serde_json::Map<String, Value> = f
                .best
                .iter()
                .map(|(k, s)| (k.to_string(), s.to_json()))
                .collect();
            json!({
                "workload": f.workload,
                "device": f.device,
                "host": f.host,
                "settings": f.settings,
                "front": f.front.iter().map(Setting::to_json).collect::<Vec<_>>(),
                "cpu_front": f.cpu_front.iter().map(Setting::to_json).collect::<Vec<_>>(),
                "best": best,
            })
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}

/// The fronts as one SVG figure (`report::svg`): two panels per workload,
/// device and host, p99 against interrupts/s (thousands) and p99 against
/// CPU per I/O (us per workload core), each front's settings in order
/// along it.
pub fn svg(fronts: &[Front]) -> Result<String, String> {
    svg_marked(fronts, &[])
}

/// A setting drawn as a point of its own in its group's panel (tune's pick,
/// [`crate::picks::marks`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    /// The index of the group's front in `fronts`.
    pub group: usize,
    /// The legend's text.
    pub name: String,
    pub setting: Setting,
}

/// As [`svg`], with each mark a point of its own (a one-point series) in
/// its group's panel.
pub fn svg_marked(fronts: &[Front], marks: &[Mark]) -> Result<String, String> {
    use report::svg::{Figure, LineChart, LineSeries, Panel};
    let at = |s: &Setting| (s.interrupts_per_sec / 1e3, s.p99_ns / 1e3);
    let at_cpu = |s: &Setting| (s.cpu_per_io_ns() / 1e3, s.p99_ns / 1e3);
    let panels = fronts
        .iter()
        .enumerate()
        .flat_map(|(i, f)| {
            let mut series = vec![LineSeries {
                errors: Vec::new(),
                name: format!("front ({} of {} settings)", f.front.len(), f.settings),
                points: f.front.iter().map(at).collect(),
            }];
            let mut cpu_series = vec![LineSeries {
                errors: Vec::new(),
                name: format!("front ({} of {} settings)", f.cpu_front.len(), f.settings),
                points: f.cpu_front.iter().map(at_cpu).collect(),
            }];
            for m in marks.iter().filter(|m| m.group == i) {
                series.push(LineSeries {
                    errors: Vec::new(),
                    name: m.name.clone(),
                    points: vec![at(&m.setting)],
                });
                cpu_series.push(LineSeries {
                    errors: Vec::new(),
                    name: m.name.clone(),
                    points: vec![at_cpu(&m.setting)],
                });
            }
            let title = format!("{} on {} ({})", f.workload, f.device, f.host);
            [
                Panel::Lines(LineChart {
                    title: title.clone(),
                    x_label: "interrupts/s (thousands)".into(),
                    y_label: "p99 latency (us)".into(),
                    series,
                    x_log2: false,
                    markers: Vec::new(),
                }),
                Panel::Lines(LineChart {
                    title,
                    x_label: "CPU per I/O (us per workload core)".into(),
                    y_label: "p99 latency (us)".into(),
                    series: cpu_series,
                    x_log2: false,
                    markers: Vec::new(),
                }),
            ]
        })
        .collect();
    Figure {
        title: "Pareto fronts: interrupts/s and CPU per I/O against p99 (lower is better on both)"
            .into(),
        panels,
    }
    .render()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_front_is_the_points_nothing_beats() {
        // (interrupts/s, p99): a beats d on both; b and c trade off;
        // e ties b on x and is worse on y; f equals c.
        let pts = [
            (100.0, 10.0), // a
            (50.0, 30.0),  // b
            (200.0, 5.0),  // c
            (150.0, 20.0), // d: a is better on both
            (50.0, 31.0),  // e: b is as good on x, better on y
            (200.0, 5.0),  // f: the same as c
        ];
        assert_eq!(pareto(&pts), vec![0, 1, 2, 5]);
        assert_eq!(pareto(&[]), Vec::<usize>::new());
        assert_eq!(pareto(&[(1.0, 1.0)]), vec![0]);
        assert_eq!(pareto(&[(f64::NAN, 1.0), (2.0, 2.0)]), vec![1]);
        // A line of trade-offs is all front; one point better on both
        // takes it all.
        let line = [(1.0, 4.0), (2.0, 3.0), (3.0, 2.0), (4.0, 1.0)];
        assert_eq!(pareto(&line).len(), 4);
        let mut beaten = line.to_vec();
        beaten.push((0.5, 0.5));
        assert_eq!(pareto(&beaten), vec![4]);
    }

    fn row(policy: &str, seed: u64, irq: f64, p99: u64, iops: f64, cpu: f64) -> Row {
        Row {
            key: format!("{policy}-{seed}"),
            seed,
            interrupts_per_sec: irq,
            iops,
            p99_ns: p99,
            cpu,
            ..Row::sample(policy)
        }
    }

    #[test]
    fn fewer_interrupts_is_not_less_cpu_and_each_front_says_so() {
        // d saves interrupts and burns CPU (a poller): on the interrupts
        // front, beaten on the CPU per I/O one by a and b.
        let table = Table {
            rows: vec![
                row("a", 1, 150.0, 10, 10.0, 0.5),
                row("b", 1, 50.0, 30, 5.0, 0.2),
                row("d", 1, 10.0, 35, 5.0, 0.95),
            ],
            ..Table::default()
        };
        let f = &fronts(&table)[0];
        let names = |v: &[Setting]| v.iter().map(|s| s.policy.clone()).collect::<Vec<_>>();
        assert_eq!(names(&f.front), ["d", "b", "a"]);
        assert_eq!(names(&f.cpu_front), ["b", "a"]);
        let csv = csv(&fronts(&table));
        assert_eq!(csv.lines().filter(|l| l.starts_with("cpu,")).count(), 2);
        assert_eq!(
            csv.lines().filter(|l| l.starts_with("interrupts,")).count(),
            3
        );
        let json: Value = serde_json::from_str(&json(&fronts(&table))).unwrap();
        assert_eq!(json[0]["cpu_front"].as_array().map(Vec::len), Some(2));
        assert!(text(&fronts(&table)).contains("2 of 3 settings on the front of CPU per I/O"));
        let svg = svg(&fronts(&table)).unwrap();
        assert!(svg.contains("CPU per I/O"), "{svg}");
    }

    #[test]
    fn seeds_are_averaged_into_settings_and_the_best_are_named() {
        let table = Table {
            rows: vec![
                // a: mean (150, 10); b: (50, 30); c: (300, 40) is beaten by a.
                row("a", 1, 100.0, 8, 10.0, 0.5),
                row("a", 2, 200.0, 12, 30.0, 0.5),
                row("b", 1, 50.0, 30, 5.0, 0.2),
                row("c", 1, 300.0, 40, 99.0, 0.9),
            ],
            ..Table::default()
        };
        let f = &fronts(&table)[0];
        assert_eq!(f.settings, 3);
        let on: Vec<(&str, usize, f64, f64)> = f
            .front
            .iter()
            .map(|s| (s.policy.as_str(), s.seeds, s.interrupts_per_sec, s.p99_ns))
            .collect();
        assert_eq!(on, vec![("b", 1, 50.0, 30.0), ("a", 2, 150.0, 10.0)]);
        let best: Vec<(&str, &str)> = f
            .best
            .iter()
            .map(|(k, s)| (*k, s.policy.as_str()))
            .collect();
        let svg = svg(&fronts(&table)).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains("w.fio on optane"),
            "{svg}"
        );
        assert_eq!(
            best,
            vec![
                ("fewest interrupts/s", "b"),
                ("lowest p99", "a"),
                ("most IOPS", "c"),
                ("least CPU per I/O", "c"),
            ]
        );
    }
}
