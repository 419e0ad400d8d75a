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

use std::collections::{BTreeMap, HashMap};

use serde_json::{json, Value};

use crate::merge::{field, Row, Table};
use crate::objective::{Axis, Metric, Objective};

/// One job's figures in a setting, by the name its job file gives it:
/// its clones folded (the worst clone's latency, their IOPS summed), each
/// the mean of the setting's seeds.
#[derive(Clone, Debug, PartialEq)]
pub struct JobFigures {
    pub name: String,
    pub iops: f64,
    pub p50_ns: f64,
    pub p99_ns: f64,
}

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
    /// The worst job's.
    pub p99_ns: f64,
    pub cpu: f64,
    /// The worst job's.
    pub p50_ns: f64,
    /// Each job's, in the job file's order.
    pub jobs: Vec<JobFigures>,
}

/// A point's jobs with their clones folded: the worst clone's latency,
/// the clones' IOPS summed (fio's `group_reporting` sums a group's
/// bandwidth the same way), in the order the jobs first appear.
fn jobs_of(r: &Row) -> Vec<JobFigures> {
    let mut out: Vec<JobFigures> = Vec::new();
    for j in &r.jobs {
        match out.iter_mut().find(|f| f.name == j.name) {
            Some(f) => {
                f.iops += j.iops;
                f.p50_ns = f.p50_ns.max(j.p50_ns as f64);
                f.p99_ns = f.p99_ns.max(j.p99_ns as f64);
            }
            None => out.push(JobFigures {
                name: j.name.clone(),
                iops: j.iops,
                p50_ns: j.p50_ns as f64,
                p99_ns: j.p99_ns as f64,
            }),
        }
    }
    out
}

impl Setting {
    fn of(rows: &[&Row]) -> Setting {
        let n = rows.len() as f64;
        let mean = |f: &dyn Fn(&Row) -> f64| rows.iter().map(|r| f(r)).sum::<f64>() / n;
        let per_row: Vec<Vec<JobFigures>> = rows.iter().map(|r| jobs_of(r)).collect();
        // A job a seed lacks (never, from one spec) makes its means NaN:
        // it is then on no front.
        let job_mean = |name: &str, f: &dyn Fn(&JobFigures) -> f64| {
            per_row
                .iter()
                .map(|js| js.iter().find(|j| j.name == name).map_or(f64::NAN, f))
                .sum::<f64>()
                / n
        };
        let jobs = per_row[0]
            .iter()
            .map(|j| JobFigures {
                name: j.name.clone(),
                iops: job_mean(&j.name, &|j| j.iops),
                p50_ns: job_mean(&j.name, &|j| j.p50_ns),
                p99_ns: job_mean(&j.name, &|j| j.p99_ns),
            })
            .collect();
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
            p50_ns: mean(&|r| r.p50_ns as f64),
            jobs,
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

    /// The setting's figure on `axis` (ns, per second, or ns per I/O);
    /// NaN when it names a job the setting lacks.
    pub fn value(&self, axis: &Axis) -> f64 {
        let job = |f: &dyn Fn(&JobFigures) -> f64| match &axis.job {
            Some(name) => self
                .jobs
                .iter()
                .find(|j| &j.name == name)
                .map_or(f64::NAN, f),
            None => f64::NAN,
        };
        match (axis.metric, axis.job.is_some()) {
            (Metric::P99, false) => self.p99_ns,
            (Metric::P50, false) => self.p50_ns,
            (Metric::Iops, false) => self.iops,
            (Metric::P99, true) => job(&|j| j.p99_ns),
            (Metric::P50, true) => job(&|j| j.p50_ns),
            (Metric::Iops, true) => job(&|j| j.iops),
            (Metric::Interrupts, _) => self.interrupts_per_sec,
            (Metric::Cpu, _) => self.cpu_per_io_ns(),
        }
    }

    /// The strategy: the policy's first word (`adaptive`).
    pub fn strategy(&self) -> &str {
        self.policy.split(' ').next().unwrap_or("")
    }

    /// The parameters in force, `(name, value)`, as the policy spells them.
    fn params(&self) -> impl Iterator<Item = (&str, &str)> {
        self.policy
            .split(' ')
            .skip(1)
            .filter_map(|kv| kv.split_once('='))
    }

    /// What a setting measured, as bits: settings with equal keys
    /// measured the same on every figure (a parameter the run never
    /// exercised: adaptive's thr above the batch's 16 on the mixed
    /// workload) and are one point, drawn and listed once.
    fn figures_key(&self) -> (String, u64, usize, Vec<u64>) {
        let mut bits = vec![
            self.interrupts_per_sec.to_bits(),
            self.iops.to_bits(),
            self.p99_ns.to_bits(),
            self.p50_ns.to_bits(),
            self.cpu.to_bits(),
        ];
        for j in &self.jobs {
            bits.extend([j.iops.to_bits(), j.p50_ns.to_bits(), j.p99_ns.to_bits()]);
        }
        (self.mode.clone(), self.runtime_ns, self.seeds, bits)
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
            "p50_ns": self.p50_ns,
            "cpu": self.cpu,
            "cpu_per_io_ns": self.cpu_per_io_ns(),
            "jobs": self.jobs.iter().map(|j| json!({
                "name": j.name,
                "iops": j.iops,
                "p50_ns": j.p50_ns,
                "p99_ns": j.p99_ns,
            })).collect::<Vec<_>>(),
        })
    }
}

/// One point of a named front's figure: a setting, or several that
/// measured the same on every figure (the mode, runtime, seeds, and
/// every figure of the run and of each job).
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// In policy order; equal on every figure.
    pub settings: Vec<Setting>,
    /// The objective's x and y (ns, per second, ns per I/O).
    pub x: f64,
    pub y: f64,
    /// No other point is at most as bad on both and better on one.
    pub on_front: bool,
}

/// A front on an objective the user named (or a default one): every
/// point of the group, each marked on the front or not.
#[derive(Clone, Debug, PartialEq)]
pub struct Named {
    pub objective: Objective,
    /// Every setting with both figures, folded into points, by increasing
    /// x, then y, then policy.
    pub points: Vec<Entry>,
}

impl Named {
    fn of(objective: Objective, settings: &[Setting]) -> Named {
        // Fold settings with the same figures into one point.
        let mut points: Vec<Entry> = Vec::new();
        let mut index: HashMap<(String, u64, usize, Vec<u64>), usize> = HashMap::new();
        for s in settings {
            let (x, y) = (s.value(&objective.x), s.value(&objective.y));
            if x.is_nan() || y.is_nan() {
                continue;
            }
            match index.get(&s.figures_key()) {
                Some(&i) => points[i].settings.push(s.clone()),
                None => {
                    index.insert(s.figures_key(), points.len());
                    points.push(Entry {
                        settings: vec![s.clone()],
                        x,
                        y,
                        on_front: false,
                    });
                }
            }
        }
        // A point's settings by their parameters' values (thr=24, 32, 48,
        // 64, 128; not as text, 128 before 24).
        for e in &mut points {
            e.settings.sort_by(by_params);
        }
        let cost = |a: &Axis, v: f64| if a.metric.more_is_better() { -v } else { v };
        let at: Vec<(f64, f64)> = points
            .iter()
            .map(|e| (cost(&objective.x, e.x), cost(&objective.y, e.y)))
            .collect();
        for i in pareto(&at) {
            points[i].on_front = true;
        }
        points.sort_by(|a, b| {
            a.x.total_cmp(&b.x)
                .then(a.y.total_cmp(&b.y))
                .then(a.settings[0].policy.cmp(&b.settings[0].policy))
        });
        Named { objective, points }
    }

    /// The points on the front, by increasing x.
    pub fn front(&self) -> impl Iterator<Item = &Entry> {
        self.points.iter().filter(|e| e.on_front)
    }

    /// How many settings the front's points stand for.
    pub fn front_settings(&self) -> usize {
        self.front().map(|e| e.settings.len()).sum()
    }
}

/// One workload's fronts on one device.
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
    /// The settings on the front of interrupts/s against the worst job's
    /// p99, by increasing interrupts/s (settings with the same figures
    /// each listed: `tune` recommends from them, `picks` judges by them).
    pub front: Vec<Setting>,
    /// The settings on the front of CPU per I/O
    /// ([`Setting::cpu_per_io_ns`]) against p99, by increasing CPU per I/O.
    pub cpu_front: Vec<Setting>,
    /// The best setting for each objective: the fewest interrupts/s, the
    /// lowest p99, the most IOPS, the least CPU per I/O (ties: the first
    /// in policy order).
    pub best: Vec<(&'static str, Setting)>,
    /// The group's jobs, as the job file names them, in its order.
    pub jobs: Vec<String>,
    /// The fronts drawn, printed and written: those named, or
    /// [`Objective::defaults`].
    pub named: Vec<Named>,
}

impl Front {
    /// A point's label on the figure and in the tables: the strategy and
    /// the parameters its settings in this group vary in (`adaptive
    /// δ=25us thr=24..128`: a run of the group's values, or `2us|8us`),
    /// with the mode and runtime when the group has several.
    pub fn label(&self, e: &Entry) -> String {
        let first = &e.settings[0];
        let strategy = first.strategy();
        let of_strategy: Vec<&Setting> = self
            .all
            .iter()
            .filter(|s| s.strategy() == strategy)
            .collect();
        let mut label = strategy.to_string();
        for (name, _) in first.params() {
            let values = |set: &mut dyn Iterator<Item = &Setting>| -> Vec<String> {
                let mut v: Vec<String> = set
                    .filter_map(|s| {
                        s.params()
                            .find(|(k, _)| *k == name)
                            .map(|(_, v)| v.to_string())
                    })
                    .collect();
                v.sort_by(|a, b| order(a).total_cmp(&order(b)).then(a.cmp(b)));
                v.dedup();
                v
            };
            let all = values(&mut of_strategy.iter().copied());
            if all.len() < 2 {
                continue;
            }
            let here = values(&mut e.settings.iter());
            let shown = if name == "delta" { "δ" } else { name };
            let run = all
                .iter()
                .position(|v| *v == here[0])
                .is_some_and(|i| all.get(i..i + here.len()) == Some(&here[..]));
            let v = if here.len() > 2 && run {
                format!("{}..{}", here[0], here[here.len() - 1])
            } else {
                here.join("|")
            };
            label.push_str(&format!(" {shown}={v}"));
        }
        let modes: std::collections::BTreeSet<&str> =
            self.all.iter().map(|s| s.mode.as_str()).collect();
        if modes.len() > 1 {
            label.push_str(&format!(" ({})", first.mode));
        }
        let runtimes: std::collections::BTreeSet<u64> =
            self.all.iter().map(|s| s.runtime_ns).collect();
        if runtimes.len() > 1 {
            label.push_str(&format!(" {}", policy::format_nanos(first.runtime_ns)));
        }
        if e.settings.len() > 1 {
            label.push_str(&format!(" ({} settings)", e.settings.len()));
        }
        label
    }

    /// Each strategy's parameters that are the same in all its settings
    /// of the group (left out of [`Front::label`]): `(strategy, "ooo=on
    /// barrier=relaxed")`.
    pub fn fixed(&self) -> Vec<(String, String)> {
        let mut strategies: Vec<&str> = self.all.iter().map(|s| s.strategy()).collect();
        strategies.dedup();
        let mut out = Vec::new();
        for strategy in strategies {
            let of: Vec<&Setting> = self
                .all
                .iter()
                .filter(|s| s.strategy() == strategy)
                .collect();
            let fixed: Vec<String> = of[0]
                .params()
                .filter(|(k, v)| {
                    of.iter()
                        .all(|s| s.params().any(|(k2, v2)| k2 == *k && v2 == *v))
                })
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            if !fixed.is_empty() {
                out.push((strategy.to_string(), fixed.join(" ")));
            }
        }
        out
    }
}

/// Two settings by their parameters, each by its value as a number
/// ([`order`]), then as text.
fn by_params(a: &Setting, b: &Setting) -> std::cmp::Ordering {
    let key = |s: &Setting| -> Vec<(f64, String)> {
        s.params().map(|(_, v)| (order(v), v.to_string())).collect()
    };
    let (ka, kb) = (key(a), key(b));
    ka.iter()
        .zip(&kb)
        .map(|((na, ta), (nb, tb))| na.total_cmp(nb).then(ta.cmp(tb)))
        .find(|o| o.is_ne())
        .unwrap_or(std::cmp::Ordering::Equal)
        .then(a.policy.cmp(&b.policy))
}

/// A parameter's value as a number to order by: a duration in ns, else a
/// number, else NaN (then by text).
fn order(v: &str) -> f64 {
    policy::time::parse_duration(v, None)
        .map(|ns| ns as f64)
        .or_else(|_| v.parse::<f64>())
        .unwrap_or(f64::NAN)
}

/// Every (workload, device, host) group's fronts: the default ones
/// ([`Objective::defaults`]).
pub fn fronts(table: &Table) -> Vec<Front> {
    groups(table, &[])
}

/// Every group's fronts on the objectives `named` (`sweep merge --front`;
/// none: the defaults). A front is drawn in each group that has the jobs
/// it names; a job no group has is an error, one line naming it and the
/// jobs there are.
pub fn fronts_named(table: &Table, named: &[Objective]) -> Result<Vec<Front>, String> {
    let fronts = groups(table, named);
    let mut jobs: Vec<&str> = Vec::new();
    for f in &fronts {
        for j in &f.jobs {
            if !jobs.contains(&j.as_str()) {
                jobs.push(j);
            }
        }
    }
    for o in named {
        if let Some(missing) = o.jobs().find(|j| !jobs.contains(j)) {
            return Err(format!(
                "--front {o}: no job '{missing}' in the stores (jobs: {})",
                if jobs.is_empty() {
                    "none".to_string()
                } else {
                    jobs.join(", ")
                }
            ));
        }
    }
    Ok(fronts)
}

fn groups(table: &Table, named: &[Objective]) -> Vec<Front> {
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
            let mut jobs: Vec<String> = Vec::new();
            for s in &settings {
                for j in &s.jobs {
                    if !jobs.contains(&j.name) {
                        jobs.push(j.name.clone());
                    }
                }
            }
            let objectives = if named.is_empty() {
                Objective::defaults(&jobs)
            } else {
                named
                    .iter()
                    .filter(|o| o.jobs().all(|j| jobs.iter().any(|k| k == j)))
                    .cloned()
                    .collect()
            };
            let named = objectives
                .into_iter()
                .map(|o| Named::of(o, &settings))
                .collect();
            Front {
                workload,
                device,
                host,
                settings: settings.len(),
                front,
                cpu_front,
                best,
                jobs,
                named,
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
    // Sorted by x, a point is on the front when its y is its x's least and
    // below every y of a smaller x: O(n log n), for stores of 10^6 points.
    let mut order: Vec<usize> = (0..points.len())
        .filter(|&i| !points[i].0.is_nan() && !points[i].1.is_nan())
        .collect();
    order.sort_by(|&a, &b| {
        points[a]
            .0
            .total_cmp(&points[b].0)
            .then(points[a].1.total_cmp(&points[b].1))
    });
    let mut on = Vec::new();
    let mut best_before = f64::INFINITY;
    let mut i = 0;
    while i < order.len() {
        let x = points[order[i]].0;
        let same_x = order[i..].iter().take_while(|&&k| points[k].0 == x).count();
        // Sorted by y within an x: the first is the least.
        let least = points[order[i]].1;
        if least < best_before {
            on.extend(
                order[i..i + same_x]
                    .iter()
                    .filter(|&&k| points[k].1 == least),
            );
            best_before = least;
        }
        i += same_x;
    }
    on.sort_unstable();
    on
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

/// A figure as the text and the tables show it: latencies and CPU per
/// I/O as times, rates as whole numbers.
pub(crate) fn shown(axis: &Axis, v: f64) -> String {
    match axis.metric {
        Metric::P99 | Metric::P50 | Metric::Cpu => policy::format_nanos(v.round() as u64),
        Metric::Iops | Metric::Interrupts => format!("{v:.0}"),
    }
}

/// The fronts as text: a block per group, a block per front (a line per
/// point on it: its figures on the front's axes and its label), each
/// strategy's fixed parameters, then the best for each objective.
pub fn text(fronts: &[Front]) -> String {
    let mut out = String::new();
    for f in fronts {
        out.push_str(&format!(
            "{} on {} ({}): {} settings\n",
            f.workload, f.device, f.host, f.settings
        ));
        for (strategy, fixed) in f.fixed() {
            out.push_str(&format!("  {strategy} in every setting: {fixed}\n"));
        }
        for n in &f.named {
            out.push_str(&format!(
                "  {} ({}): {} points on the front, {} of {} settings\n",
                n.objective.words(),
                n.objective,
                n.front().count(),
                n.front_settings(),
                f.settings
            ));
            for e in n.front() {
                out.push_str(&format!(
                    "    {} {:>10}  {} {:>10}  {}\n",
                    n.objective.y,
                    shown(&n.objective.y, e.y),
                    n.objective.x,
                    shown(&n.objective.x, e.x),
                    f.label(e)
                ));
            }
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

/// The fronts as CSV, a row per point on a front: `front` is its
/// objective as `--front` spells it (`p99,interrupts`,
/// `sync:p99,cpu`), `x` and `y` its figures there, `policy` every setting
/// at the point (`; ` between them), `label` as the figure's.
pub fn csv(fronts: &[Front]) -> String {
    let mut out = String::from(
        "front,workload,device,host,mode,runtime_ns,label,policy,settings,seeds,x,y,interrupts_per_sec,iops,p99_ns,cpu\n",
    );
    for f in fronts {
        for n in &f.named {
            for e in n.front() {
                let s = &e.settings[0];
                let policies: Vec<&str> = e.settings.iter().map(|s| s.policy.as_str()).collect();
                out.push_str(&format!(
                    "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                    field(&n.objective.to_string()),
                    field(&f.workload),
                    field(&f.device),
                    field(&s.host),
                    field(&s.mode),
                    s.runtime_ns,
                    field(&f.label(e)),
                    field(&policies.join("; ")),
                    e.settings.len(),
                    s.seeds,
                    e.x,
                    e.y,
                    s.interrupts_per_sec,
                    s.iops,
                    s.p99_ns,
                    s.cpu
                ));
            }
        }
    }
    out
}

/// The fronts and the best settings as JSON: per group its jobs, each
/// front (`front`: its spelling; `points`: the points on it, each with
/// its settings; `dominated`: how many points are not), the best.
pub fn json(fronts: &[Front]) -> String {
    let v: Vec<Value> = fronts
        .iter()
        .map(|f| {
            let best: serde_json::Map<String, Value> = f
                .best
                .iter()
                .map(|(k, s)| (k.to_string(), s.to_json()))
                .collect();
            let named: Vec<Value> = f
                .named
                .iter()
                .map(|n| {
                    json!({
                        "front": n.objective.to_string(),
                        "title": n.objective.words(),
                        "points": n.front().map(|e| json!({
                            "x": e.x,
                            "y": e.y,
                            "label": f.label(e),
                            "settings": e.settings.iter().map(Setting::to_json).collect::<Vec<_>>(),
                        })).collect::<Vec<_>>(),
                        "dominated": n.points.len() - n.front().count(),
                    })
                })
                .collect();
            json!({
                "workload": f.workload,
                "device": f.device,
                "host": f.host,
                "settings": f.settings,
                "jobs": f.jobs,
                "fronts": named,
                "best": best,
            })
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}

/// A setting drawn as a point of its own in each panel of its group
/// (tune's pick, [`crate::picks::marks`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    /// The index of the group's front in `fronts`.
    pub group: usize,
    /// The legend's text.
    pub name: String,
    pub setting: Setting,
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
        assert_eq!(
            csv.lines()
                .filter(|l| l.starts_with("\"p99,cpu\","))
                .count(),
            2
        );
        assert_eq!(
            csv.lines()
                .filter(|l| l.starts_with("\"p99,interrupts\","))
                .count(),
            3
        );
        let json: Value = serde_json::from_str(&json(&fronts(&table))).unwrap();
        assert_eq!(json[0]["fronts"][1]["front"], "p99,cpu");
        assert_eq!(
            json[0]["fronts"][1]["points"].as_array().map(Vec::len),
            Some(2)
        );
        assert_eq!(json[0]["fronts"][1]["dominated"], 1);
        let text = text(&fronts(&table));
        assert!(
            text.contains("the worst job's p99 against CPU per I/O (p99,cpu): 2 points on the front, 2 of 3 settings"),
            "{text}"
        );
        let svg = crate::figure::svg(&fronts(&table)).unwrap();
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
        let svg = crate::figure::svg(&fronts(&table)).unwrap();
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

    use crate::store::JobResult;

    /// A point of the mixed workload: interrupts/s, the reader's and the
    /// batch's p99 (us) and IOPS.
    fn mixed(policy: &str, irq: f64, sync: (u64, f64), batch: (u64, f64)) -> Row {
        let job = |name: &str, (p99_us, iops): (u64, f64)| JobResult {
            name: name.into(),
            clone: 0,
            iops,
            p50_ns: p99_us * 500,
            p99_ns: p99_us * 1000,
        };
        Row {
            key: policy.into(),
            interrupts_per_sec: irq,
            iops: sync.1 + batch.1,
            p99_ns: sync.0.max(batch.0) * 1000,
            p50_ns: sync.0.max(batch.0) * 500,
            jobs: vec![job("sync", sync), job("async", batch)],
            ..Row::sample(policy)
        }
    }

    /// The shape of the shipped mixed sweep (crates/sweep/README.md):
    /// adaptive keeps the batch fast and the reader at 42 us or more; cint
    /// gives the reader 17 us and slows the batch, whose p99 is then the
    /// worst job's.
    fn mixed_table() -> Table {
        Table {
            rows: vec![
                mixed(
                    "adaptive delta=12us thr=32",
                    32_130.0,
                    (42, 17_900.0),
                    (62, 161_300.0),
                ),
                mixed(
                    "adaptive delta=25us thr=32",
                    21_440.0,
                    (56, 21_400.0),
                    (75, 171_400.0),
                ),
                mixed(
                    "adaptive delta=6us thr=4",
                    93_500.0,
                    (49, 20_000.0),
                    (49, 230_000.0),
                ),
                mixed(
                    "cint delta=25us thr=128",
                    85_890.0,
                    (17, 60_000.0),
                    (1_450, 12_000.0),
                ),
                mixed(
                    "cint delta=2us thr=1",
                    120_000.0,
                    (30, 50_000.0),
                    (900, 20_000.0),
                ),
            ],
            ..Table::default()
        }
    }

    fn on_front(n: &Named) -> Vec<String> {
        n.front()
            .flat_map(|e| e.settings.iter().map(|s| s.policy.clone()))
            .collect()
    }

    #[test]
    fn the_readers_own_front_shows_what_the_worst_jobs_hides() {
        let f = &fronts(&mixed_table())[0];
        assert_eq!(f.jobs, ["sync", "async"]);
        let by = |spelling: &str| {
            f.named
                .iter()
                .find(|n| n.objective.to_string() == spelling)
                .unwrap_or_else(|| panic!("no front {spelling} in {:?}", f.named))
        };
        let worst = on_front(by("p99,interrupts"));
        assert!(worst.iter().all(|p| p.starts_with("adaptive")), "{worst:?}");
        let reader = on_front(by("sync:p99,interrupts"));
        assert!(
            reader.contains(&"cint delta=25us thr=128".to_string()),
            "{reader:?}"
        );
        // The batch's own front is the worst job's here.
        assert_eq!(on_front(by("async:p99,interrupts")), worst);
        assert_eq!(f.named.len(), 6, "the worst job's two and each job's two");
        // The reader's p99 against the batch's throughput, named: more
        // IOPS is better, so adaptive's 230K with its 49 us is on it (and
        // beats adaptive's 171K at 56 us), cint's 17 us beside it.
        let named: Objective = "sync:p99,async:iops".parse().unwrap();
        let f = &fronts_named(&mixed_table(), &[named]).unwrap()[0];
        assert_eq!(f.named.len(), 1);
        let mut on = on_front(&f.named[0]);
        on.sort();
        assert_eq!(
            on,
            [
                "adaptive delta=12us thr=32",
                "adaptive delta=6us thr=4",
                "cint delta=25us thr=128",
                "cint delta=2us thr=1"
            ]
        );
    }

    #[test]
    fn a_front_of_an_unknown_job_fails_in_one_line_naming_the_jobs() {
        let named: Objective = "syncc:p99,interrupts".parse().unwrap();
        let e = fronts_named(&mixed_table(), &[named]).unwrap_err();
        assert_eq!(
            e,
            "--front syncc:p99,interrupts: no job 'syncc' in the stores (jobs: sync, async)"
        );
    }

    #[test]
    fn settings_that_measured_the_same_are_one_point_labelled_once() {
        // adaptive's thr above the batch's 16 is never reached on the
        // mixed workload: thr 24 to 128 at one delta measure the same.
        let mut rows: Vec<Row> = [24, 32, 48, 64, 128]
            .iter()
            .map(|thr| {
                let mut r = mixed(
                    &format!("adaptive delta=25us thr={thr}"),
                    21_440.0,
                    (56, 21_400.0),
                    (75, 171_400.0),
                );
                r.key = format!("k{thr}");
                r
            })
            .collect();
        rows.push(mixed(
            "adaptive delta=25us thr=16",
            28_380.0,
            (51, 20_000.0),
            (70, 150_000.0),
        ));
        rows.push(mixed(
            "adaptive delta=6us thr=16",
            50_000.0,
            (45, 20_000.0),
            (60, 150_000.0),
        ));
        rows.push(mixed(
            "adaptive delta=6us thr=32",
            90_000.0,
            (50, 20_000.0),
            (65, 150_000.0),
        ));
        let table = Table {
            rows,
            ..Table::default()
        };
        let fronts = fronts(&table);
        let f = &fronts[0];
        // The old front lists each of the five; the named one once.
        assert_eq!(f.front.len(), 7);
        for n in &f.named {
            let keys: Vec<_> = n
                .points
                .iter()
                .map(|e| e.settings[0].figures_key())
                .collect();
            let mut distinct = keys.clone();
            distinct.sort();
            distinct.dedup();
            assert_eq!(distinct.len(), keys.len(), "{}: a point twice", n.objective);
        }
        let n = &f.named[0];
        assert_eq!(n.points.len(), 4);
        assert_eq!(n.front().count(), 3);
        let first = n.front().next().unwrap();
        assert_eq!(first.settings.len(), 5);
        let thrs: Vec<&str> = first
            .settings
            .iter()
            .map(|s| s.policy.rsplit('=').next().unwrap())
            .collect();
        assert_eq!(thrs, ["24", "32", "48", "64", "128"]);
        assert_eq!(f.label(first), "adaptive δ=25us thr=24..128 (5 settings)");
        let labels: Vec<String> = n.front().map(|e| f.label(e)).collect();
        assert_eq!(labels[1], "adaptive δ=25us thr=16");
        let csv = csv(&fronts);
        let rows: Vec<&str> = csv
            .lines()
            .filter(|l| l.starts_with("\"p99,interrupts\""))
            .collect();
        assert_eq!(rows.len(), 3, "{csv}");
        assert!(rows[0].contains(",5,"), "{}", rows[0]);
    }

    #[test]
    fn the_front_is_found_fast_on_many_points() {
        // The sort-based front against the definition, on points with
        // ties: pseudo-random from a fixed LCG (Knuth's MMIX constants).
        let mut state = 7u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) % 50) as f64
        };
        let pts: Vec<(f64, f64)> = (0..400).map(|_| (next(), next())).collect();
        let slow: Vec<usize> = (0..pts.len())
            .filter(|&i| {
                let p = pts[i];
                !pts.iter()
                    .any(|&q| q.0 <= p.0 && q.1 <= p.1 && (q.0 < p.0 || q.1 < p.1))
            })
            .collect();
        assert_eq!(pareto(&pts), slow);
        assert!(!slow.is_empty());
    }
}
