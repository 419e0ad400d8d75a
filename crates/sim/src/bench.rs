//! `bench sim`: how fast the simulator itself runs, on a fixed workload, so
//! a change to the engine can be measured before and after; and, with
//! `cores`, whether its cost per simulated completion and its memory stay
//! flat as the simulated machine grows.

pub mod traces;

use std::fmt::Write as _;
use std::time::Instant;

use policy::{Nanos, PolicySpec};
use report::human::count;
use serde_json::json;
use service::with_device_defaults;

use crate::SimError;
use crate::{simulate_audited, DeviceProfile, HostProfile, SimConfig};

/// The paper's mixed workload (TOS Fig. 10): a blocking reader beside a
/// libaio batch reader on one core, so the run exercises Urgent, Barrier and
/// coalescing alike.
pub const WORKLOAD: &str = include_str!("../../../examples/mixed-16.fio");
pub const WORKLOAD_NAME: &str = "examples/mixed-16.fio";
pub const DEVICE: &str = "optane";
pub const HOST: &str = "xeon-e5-2660v4";
pub const POLICY: &str = "cint";
pub const SEED: u64 = 1;
/// Timings on a shared machine are noisy: the best of a few says what the
/// code can do, the median what to expect.
pub const RUNS: usize = 3;

/// One timed run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    pub wall_seconds: f64,
    pub virtual_seconds: f64,
    /// Completions delivered to the host by interrupts.
    pub completions: u64,
    /// The simulated workload's IOPS (all jobs).
    pub iops: f64,
    /// Events the engine processed.
    pub events: u64,
    /// The same by kind ([`crate::EVENT_KINDS`]; the last, stale core-done
    /// events, are counted in `core-done` too).
    pub events_by_kind: [u64; 10],
    /// The simulator's own state at the end of the run, bytes.
    pub state_bytes: u64,
}

impl Timing {
    /// Engine events per delivered completion (where the time goes).
    pub fn events_per_completion(&self) -> f64 {
        if self.completions == 0 {
            0.0
        } else {
            self.events as f64 / self.completions as f64
        }
    }

    /// Events per delivered completion, by kind (the kinds that occur).
    pub fn by_kind(&self) -> Vec<(String, serde_json::Value)> {
        crate::EVENT_KINDS
            .iter()
            .zip(self.events_by_kind)
            .filter(|&(_, n)| n > 0)
            .map(|(k, n)| {
                (
                    k.to_string(),
                    json!(n as f64 / self.completions.max(1) as f64),
                )
            })
            .collect()
    }

    /// Wall-clock nanoseconds per engine event.
    pub fn ns_per_event(&self) -> f64 {
        if self.events == 0 {
            0.0
        } else {
            self.wall_seconds * 1e9 / self.events as f64
        }
    }

    /// Wall-clock nanoseconds per simulated completion.
    pub fn ns_per_completion(&self) -> f64 {
        if self.completions == 0 {
            0.0
        } else {
            self.wall_seconds * 1e9 / self.completions as f64
        }
    }

    /// Simulated completions per wall-clock second: the simulator's speed.
    pub fn completions_per_sec(&self) -> f64 {
        if self.wall_seconds > 0.0 {
            self.completions as f64 / self.wall_seconds
        } else {
            0.0
        }
    }

    fn json(&self) -> serde_json::Value {
        json!({
            "wall_seconds": self.wall_seconds,
            "virtual_seconds": self.virtual_seconds,
            "completions": self.completions,
            "completions_per_sec": self.completions_per_sec(),
            "iops": self.iops,
            "events": self.events,
            "events_per_completion": self.events_per_completion(),
            "events_per_completion_by_kind": self.by_kind().into_iter().collect::<serde_json::Map<_, _>>(),
            "ns_per_event": self.ns_per_event(),
            "ns_per_completion": self.ns_per_completion(),
            "state_bytes": self.state_bytes,
        })
    }
}

/// The fastest and the median of `runs` (by completions per second).
pub fn best_and_median(runs: &[Timing]) -> Option<(Timing, Timing)> {
    let mut sorted = runs.to_vec();
    sorted.sort_by(|a, b| a.completions_per_sec().total_cmp(&b.completions_per_sec()));
    Some((*sorted.last()?, sorted[sorted.len() / 2]))
}

/// What `bench sim` measured: [`RUNS`] runs of the workload on one core.
#[derive(Clone, Debug, PartialEq)]
pub struct SimBench {
    /// The policy as run, with its parameters.
    pub policy: String,
    pub runtime_ns: Nanos,
    pub runs: Vec<Timing>,
    /// The machine's load averages (`/proc/loadavg`) before the first run
    /// and after the last: timings on a shared machine need them beside.
    pub load_before: Option<String>,
    pub load_after: Option<String>,
}

/// One row of `bench sim --cores`: the workload on each of `cores` cores.
#[derive(Clone, Debug, PartialEq)]
pub struct CoresRow {
    pub cores: usize,
    pub runs: Vec<Timing>,
    /// The process's peak resident set after this row's runs (VmHWM), bytes,
    /// where the system tells it.
    pub peak_rss_bytes: Option<u64>,
}

/// What `bench sim --cores` measured.
#[derive(Clone, Debug, PartialEq)]
pub struct CoresBench {
    pub policy: String,
    pub runtime_ns: Nanos,
    pub rows: Vec<CoresRow>,
}

fn config(runtime: Nanos) -> Result<SimConfig, SimError> {
    let profile = |e: crate::ProfileError| SimError::Config(e.to_string());
    let device = DeviceProfile::load(DEVICE).map_err(profile)?;
    let host = HostProfile::load(HOST).map_err(profile)?;
    let policy = with_device_defaults(PolicySpec::named(POLICY), &device);
    Ok(SimConfig {
        device,
        host,
        policy,
        seed: SEED,
        runtime: Some(runtime),
    })
}

fn workload() -> Result<Vec<jobs::Job>, SimError> {
    jobs::parse_str(WORKLOAD, WORKLOAD_NAME, &|_| None)
        .map(|f| f.jobs)
        .map_err(|e| SimError::Config(e.to_string()))
}

fn timed(jobs: &[jobs::Job], config: &SimConfig) -> Result<Timing, SimError> {
    let start = Instant::now();
    let (report, audit) = simulate_audited(jobs, config, &mut |_, _| {})?;
    let wall_seconds = start.elapsed().as_secs_f64();
    Ok(Timing {
        wall_seconds,
        virtual_seconds: report.duration_ns as f64 / 1e9,
        completions: report.completions,
        iops: report.total_iops(),
        events: audit.events,
        events_by_kind: audit.events_by_kind,
        state_bytes: audit.state_bytes,
    })
}

/// Times [`RUNS`] runs of the workload for `runtime` of virtual time.
pub fn run(runtime: Nanos) -> Result<SimBench, SimError> {
    let jobs = workload()?;
    let config = config(runtime)?;
    let load_before = load_average();
    let runs = (0..RUNS)
        .map(|_| timed(&jobs, &config))
        .collect::<Result<_, _>>()?;
    Ok(SimBench {
        policy: policy::describe(&config.policy),
        runtime_ns: runtime,
        runs,
        load_before,
        load_after: load_average(),
    })
}

/// 1, 2, 4, ... up to `max` (and `max` itself).
pub fn core_counts(max: usize) -> Vec<usize> {
    let mut v: Vec<usize> = std::iter::successors(Some(1usize), |n| n.checked_mul(2))
        .take_while(|&n| n < max)
        .collect();
    v.push(max.max(1));
    v
}

/// The workload's jobs once per core, each pinned to its core
/// (`cpus_allowed=c`), so every core is as busy as the single core of
/// [`run`].
pub fn replicate(jobs: &[jobs::Job], cores: usize) -> Vec<jobs::Job> {
    (0..cores)
        .flat_map(|c| {
            jobs.iter().map(move |j| {
                let mut j = j.clone();
                j.name = format!("{}-{c}", j.name);
                j.cpus_allowed = Some(vec![c].into());
                j
            })
        })
        .collect()
}

/// The host with `cores` cores, and the device grown with it: a queue per
/// core, and `cores` times the units and the IOPS (and bandwidth) ceilings, so no core waits
/// longer for the device than the single core of [`run`] does (a device of
/// fixed size would make the rows measure its saturation, not the
/// simulator). The units are pooled, so commands queue less than on one
/// core's share: each core completes somewhat more.
pub fn scaled(config: &SimConfig, cores: usize) -> SimConfig {
    let mut c = config.clone();
    let n = cores as u32;
    c.host.cores = n;
    c.host.name = format!("{} ({cores} cores)", config.host.name);
    let d = &mut c.device;
    d.queues = d.queues.max(n);
    d.parallelism = d.parallelism.saturating_mul(n);
    d.max_read_iops = d.max_read_iops.saturating_mul(cores as u64);
    d.max_write_iops = d.max_write_iops.saturating_mul(cores as u64);
    d.max_read_bw = d.max_read_bw.map(|bw| bw.saturating_mul(cores as u64));
    d.max_write_bw = d.max_write_bw.map(|bw| bw.saturating_mul(cores as u64));
    c
}

/// Times the workload on 1, 2, 4, ... `max` busy cores.
pub fn run_cores(runtime: Nanos, max: usize) -> Result<CoresBench, SimError> {
    let jobs = workload()?;
    let config = config(runtime)?;
    let mut rows = Vec::new();
    for cores in core_counts(max) {
        let config = scaled(&config, cores);
        let jobs = replicate(&jobs, cores);
        let runs = (0..RUNS)
            .map(|_| timed(&jobs, &config))
            .collect::<Result<_, _>>()?;
        rows.push(CoresRow {
            cores,
            runs,
            peak_rss_bytes: peak_rss(),
        });
    }
    Ok(CoresBench {
        policy: policy::describe(&config.policy),
        runtime_ns: runtime,
        rows,
    })
}

/// The process's peak resident set so far (Linux's VmHWM), bytes.
pub fn peak_rss() -> Option<u64> {
    status_bytes("VmHWM:")
}

/// A field of `/proc/self/status` given in kB (`VmRSS:`, `VmHWM:`), bytes.
fn status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The closing lines of a bench's text: the load averages before and
/// after, and a note when the build is not optimized.
fn load_and_build(s: &mut String, before: &Option<String>, after: &Option<String>) {
    let unknown = |l: &Option<String>| l.clone().unwrap_or_else(|| "unknown".into());
    let _ = writeln!(
        s,
        "  load average (1, 5, 15 min): {} before, {} after",
        unknown(before),
        unknown(after)
    );
    if cfg!(debug_assertions) {
        s.push_str(DEBUG_NOTE);
    }
}

const DEBUG_NOTE: &str = "  (a debug build: timings mean little without --release)\n";

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}

impl SimBench {
    pub fn text(&self) -> String {
        let mut s = format!(
            "bench sim: {WORKLOAD_NAME} for {:.3}s virtual on {DEVICE} / {HOST}, policy {}, seed {SEED}\n",
            self.runtime_ns as f64 / 1e9,
            self.policy
        );
        for (i, r) in self.runs.iter().enumerate() {
            let _ = writeln!(
                s,
                "  run {}: {:.3}s wall, {:.3}s virtual, {} completions ({}/s), simulated IOPS {}, {} events ({:.2} per completion, {:.0} ns each)",
                i + 1,
                r.wall_seconds,
                r.virtual_seconds,
                r.completions,
                count(r.completions_per_sec()),
                count(r.iops),
                r.events,
                r.events_per_completion(),
                r.ns_per_event()
            );
        }
        if let Some((best, median)) = best_and_median(&self.runs) {
            let _ = writeln!(
                s,
                "  completions per wall-clock second: best {}, median {} (goal >= {} on a quiet machine, issue 41 item 7)",
                count(best.completions_per_sec()),
                count(median.completions_per_sec()),
                count(GOAL_COMPLETIONS_PER_SEC)
            );
            let kinds: Vec<String> = best
                .by_kind()
                .iter()
                .map(|(k, v)| format!("{k} {:.2}", v.as_f64().unwrap_or(0.0)))
                .collect();
            let _ = writeln!(s, "  events per completion by kind: {}", kinds.join(", "));
        }
        load_and_build(&mut s, &self.load_before, &self.load_after);
        s
    }

    pub fn json(&self) -> serde_json::Value {
        let (best, median) = best_and_median(&self.runs).expect("a bench has runs");
        let mut v = setup_json("sim", &self.policy, self.runtime_ns);
        let extra = json!({
            "completions_per_sec": best.completions_per_sec(),
            "median_completions_per_sec": median.completions_per_sec(),
            "best": best.json(),
            "median": median.json(),
            "runs": self.runs.iter().map(Timing::json).collect::<Vec<_>>(),
            "load_average_before": self.load_before,
            "load_average_after": self.load_after,
        });
        extend(&mut v, extra);
        v
    }
}

impl CoresBench {
    pub fn text(&self) -> String {
        let mut s = format!(
            "bench sim --cores: {WORKLOAD_NAME} on each core (cpus_allowed=c) for {:.3}s virtual, {HOST} with N cores, {DEVICE} grown per core (a queue, {} units and the IOPS ceiling each), policy {}, seed {SEED}, best and median of {RUNS}\n",
            self.runtime_ns as f64 / 1e9,
            DeviceProfile::load(DEVICE).map_or(0, |d| d.parallelism),
            self.policy
        );
        s.push_str("  cores  completions  events/compl  ns/compl best  median  compl/s best  sim state/core  peak RSS\n");
        for row in &self.rows {
            let Some((best, median)) = best_and_median(&row.runs) else {
                continue;
            };
            let _ = writeln!(
                s,
                "  {:>5}  {:>11}  {:>12.2}  {:>13.0}  {:>6.0}  {:>12}  {:>14}  {:>8}",
                row.cores,
                best.completions,
                best.events_per_completion(),
                best.ns_per_completion(),
                median.ns_per_completion(),
                count(best.completions_per_sec()),
                mib(best.state_bytes / row.cores as u64),
                row.peak_rss_bytes.map_or("-".into(), mib)
            );
        }
        if cfg!(debug_assertions) {
            s.push_str(DEBUG_NOTE);
        }
        s
    }

    pub fn json(&self) -> serde_json::Value {
        let rows: Vec<_> = self
            .rows
            .iter()
            .filter_map(|row| {
                let (best, median) = best_and_median(&row.runs)?;
                Some(json!({
                    "cores": row.cores,
                    "ns_per_completion": best.ns_per_completion(),
                    "median_ns_per_completion": median.ns_per_completion(),
                    "completions_per_sec": best.completions_per_sec(),
                    "state_bytes_per_core": best.state_bytes / row.cores as u64,
                    "peak_rss_bytes": row.peak_rss_bytes,
                    "best": best.json(),
                    "median": median.json(),
                }))
            })
            .collect();
        let mut v = setup_json("sim-cores", &self.policy, self.runtime_ns);
        extend(&mut v, json!({ "rows": rows }));
        v
    }
}

/// What both benches' JSON starts with: the fixed set-up they ran.
fn setup_json(bench: &str, policy: &str, runtime_ns: Nanos) -> serde_json::Value {
    json!({
        "bench": bench,
        "workload": WORKLOAD_NAME,
        "device": DEVICE,
        "host": HOST,
        "policy": policy,
        "seed": SEED,
        "runtime_ns": runtime_ns,
        "debug_build": cfg!(debug_assertions),
    })
}

/// Appends `more`'s fields to the object `v`, in order.
fn extend(v: &mut serde_json::Value, more: serde_json::Value) {
    if let (Some(v), serde_json::Value::Object(more)) = (v.as_object_mut(), more) {
        v.extend(more);
    }
}

/// The speed issue 41 item 7 asks of the simulator: completions per wall
/// second on a quiet machine (printed beside the figure, never asserted).
pub const GOAL_COMPLETIONS_PER_SEC: f64 = 8e6;

/// The first field of a saved baseline (`bench sim --save-baseline`).
pub const BASELINE_FORMAT: &str = "cinterrupts bench sim baseline 1";

/// A saved `bench sim` result that later runs are compared against
/// (`bench sim --baseline FILE`): where and when it ran, and its figures.
#[derive(Clone, Debug, PartialEq)]
pub struct Baseline {
    /// UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    pub date: String,
    /// The machine: CPU model, CPUs, kernel (what [`machine`] says).
    pub machine: String,
    /// `/proc/loadavg`'s 1, 5 and 15 minute averages when it ran.
    pub load_average: Option<String>,
    /// Virtual time per run, ns, and the policy as run.
    pub runtime_ns: Nanos,
    pub policy: String,
    pub completions_per_sec: f64,
    pub median_completions_per_sec: f64,
    pub events_per_completion: f64,
    pub ns_per_event: f64,
    pub median_ns_per_event: f64,
}

/// One figure of a comparison with a baseline.
#[derive(Clone, Debug, PartialEq)]
pub struct Ratio {
    pub name: &'static str,
    pub now: f64,
    pub baseline: f64,
    /// Whether more is better (completions per second) or worse (ns).
    pub higher_is_better: bool,
}

impl Ratio {
    /// Now over the baseline (0 when the baseline is 0).
    pub fn ratio(&self) -> f64 {
        if self.baseline == 0.0 {
            0.0
        } else {
            self.now / self.baseline
        }
    }

    /// The figure as `bench sim` prints it.
    pub fn shown(&self) -> String {
        if self.name.starts_with("completions/s") {
            count(self.now)
        } else if self.name.starts_with("ns/") {
            format!("{:.1} ns", self.now)
        } else {
            format!("{:.2}", self.now)
        }
    }
}

impl SimBench {
    /// `bench sim`'s text: the figures, each one's ratio to `base` when
    /// given, and where this run was saved as a baseline (`saved`).
    pub fn report_text(&self, base: Option<&Baseline>, saved: Option<&std::path::Path>) -> String {
        let mut s = self.text();
        if let Some(base) = base {
            s.push_str(&self.compare_text(base));
        }
        if let Some(path) = saved {
            s.push_str(&format!("  baseline saved to {}\n", path.display()));
        }
        s
    }

    /// `bench sim --output-format json`: the figures and, when `base` is
    /// given, each one's ratio to it.
    pub fn report_json(&self, base: Option<&Baseline>) -> serde_json::Value {
        let mut v = self.json();
        if let (Some(base), Some(o)) = (base, v.as_object_mut()) {
            if let serde_json::Value::Object(more) = self.compare_json(base) {
                o.extend(more);
            }
        }
        v
    }

    /// This run as the baseline saved by `--save-baseline`: now, on this
    /// machine, under the load measured before it.
    pub fn baseline_now(&self) -> Baseline {
        self.baseline(utc_now(), machine(), self.load_before.clone())
    }

    /// This bench as a baseline, run at `date` on `machine` under `load`.
    pub fn baseline(&self, date: String, machine: String, load: Option<String>) -> Baseline {
        let (best, median) = best_and_median(&self.runs).expect("a bench has runs");
        let mut by_event: Vec<f64> = self.runs.iter().map(Timing::ns_per_event).collect();
        by_event.sort_by(f64::total_cmp);
        Baseline {
            date,
            machine,
            load_average: load,
            runtime_ns: self.runtime_ns,
            policy: self.policy.clone(),
            completions_per_sec: best.completions_per_sec(),
            median_completions_per_sec: median.completions_per_sec(),
            events_per_completion: best.events_per_completion(),
            ns_per_event: by_event[0],
            median_ns_per_event: by_event[by_event.len() / 2],
        }
    }

    /// Each figure beside the baseline's.
    pub fn compare(&self, base: &Baseline) -> Vec<Ratio> {
        let now = self.baseline(String::new(), String::new(), None);
        let r = |name, now, baseline, higher_is_better| Ratio {
            name,
            now,
            baseline,
            higher_is_better,
        };
        vec![
            r(
                "completions/s best",
                now.completions_per_sec,
                base.completions_per_sec,
                true,
            ),
            r(
                "completions/s median",
                now.median_completions_per_sec,
                base.median_completions_per_sec,
                true,
            ),
            r(
                "events/completion",
                now.events_per_completion,
                base.events_per_completion,
                false,
            ),
            r("ns/event best", now.ns_per_event, base.ns_per_event, false),
            r(
                "ns/event median",
                now.median_ns_per_event,
                base.median_ns_per_event,
                false,
            ),
        ]
    }

    /// The comparison as text: a line per figure with its ratio, and a
    /// warning when the baseline ran another set-up.
    pub fn compare_text(&self, base: &Baseline) -> String {
        let mut s = format!(
            "  against the baseline of {} on {} (load {}):\n",
            base.date,
            base.machine,
            base.load_average.as_deref().unwrap_or("unknown")
        );
        if base.runtime_ns != self.runtime_ns || base.policy != self.policy {
            let _ = writeln!(
                s,
                "  warning: the baseline ran {:.3}s virtual with {}; the ratios compare unlike runs",
                base.runtime_ns as f64 / 1e9,
                base.policy
            );
        }
        for r in self.compare(base) {
            let _ = writeln!(
                s,
                "    {} {} ({:.2}x baseline{})",
                r.name,
                r.shown(),
                r.ratio(),
                // Within the printed precision of 1 (a figure read back
                // from JSON may differ in its last bit): neither.
                if r.ratio() == 0.0 || (r.ratio() - 1.0).abs() < 0.005 {
                    ""
                } else if (r.ratio() > 1.0) == r.higher_is_better {
                    ", better"
                } else {
                    ", worse"
                }
            );
        }
        s
    }

    /// The comparison as JSON: each figure, the baseline's and the ratio.
    pub fn compare_json(&self, base: &Baseline) -> serde_json::Value {
        let figures: serde_json::Map<String, serde_json::Value> = self
            .compare(base)
            .into_iter()
            .map(|r| {
                (
                    r.name.replace(['/', ' '], "_"),
                    json!({ "now": r.now, "baseline": r.baseline, "ratio": r.ratio() }),
                )
            })
            .collect();
        json!({ "baseline": base.json(), "ratios": figures })
    }
}

impl Baseline {
    /// The baseline saved at `path` (`bench sim --save-baseline`), read
    /// before the runs so that a bad file fails at once; errors name it.
    pub fn load(path: &std::path::Path) -> Result<Baseline, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("reading the baseline {}: {e}", path.display()))?;
        Baseline::parse(&text)
            .map_err(|e| format!("{}: {}", path.display(), policy::quote::one_line(&e)))
    }

    pub fn json(&self) -> serde_json::Value {
        json!({
            "format": BASELINE_FORMAT,
            "date": self.date,
            "machine": self.machine,
            "load_average": self.load_average,
            "workload": WORKLOAD_NAME,
            "device": DEVICE,
            "host": HOST,
            "policy": self.policy,
            "seed": SEED,
            "runtime_ns": self.runtime_ns,
            "completions_per_sec": self.completions_per_sec,
            "median_completions_per_sec": self.median_completions_per_sec,
            "events_per_completion": self.events_per_completion,
            "ns_per_event": self.ns_per_event,
            "median_ns_per_event": self.median_ns_per_event,
        })
    }

    /// Reads a baseline written by [`Baseline::json`]; the error names
    /// what is missing or wrong.
    pub fn parse(text: &str) -> Result<Baseline, String> {
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let format = v.get("format").and_then(|f| f.as_str());
        if format != Some(BASELINE_FORMAT) {
            return Err(format!(
                "not a bench sim baseline (its \"format\" is {}, expected \"{BASELINE_FORMAT}\")",
                format.map_or("missing".into(), |f| format!(
                    "\"{}\"",
                    policy::quote::quoted(f)
                ))
            ));
        }
        let text = |k: &str| {
            v.get(k)
                .and_then(|x| x.as_str())
                .map(str::to_string)
                .ok_or_else(|| format!("\"{k}\" missing or not a string"))
        };
        let number = |k: &str| {
            v.get(k)
                .and_then(serde_json::Value::as_f64)
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| format!("\"{k}\" missing or not a number at least 0"))
        };
        Ok(Baseline {
            date: text("date")?,
            machine: text("machine")?,
            load_average: v
                .get("load_average")
                .and_then(|x| x.as_str())
                .map(str::to_string),
            runtime_ns: v
                .get("runtime_ns")
                .and_then(serde_json::Value::as_u64)
                .ok_or("\"runtime_ns\" missing or not a whole number")?,
            policy: text("policy")?,
            completions_per_sec: number("completions_per_sec")?,
            median_completions_per_sec: number("median_completions_per_sec")?,
            events_per_completion: number("events_per_completion")?,
            ns_per_event: number("ns_per_event")?,
            median_ns_per_event: number("median_ns_per_event")?,
        })
    }
}

/// `/proc/loadavg`'s 1, 5 and 15 minute load averages, where the system
/// tells them (printed beside every timing: the machine is shared).
pub fn load_average() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let three: Vec<&str> = text.split_whitespace().take(3).collect();
    (three.len() == 3).then(|| three.join(" "))
}

/// The machine, for a baseline: CPU model, CPUs, kernel, read as
/// `report::made_by::Machine` reads them (one reader of /proc), spelt as
/// baselines and emulator points' keys have always had it.
pub fn machine() -> String {
    let m = report::made_by::Machine::this();
    let kernel = if m.kernel == report::made_by::UNKNOWN_KERNEL {
        String::new()
    } else {
        format!(", Linux {}", m.kernel)
    };
    format!("{}, {} CPUs{kernel}", m.cpu_model, m.cpus)
}

/// Now and a time as `YYYY-MM-DDTHH:MM:SSZ` (UTC): `report::made_by`'s.
pub use report::made_by::{utc, utc_now};

/// Issue 16 item 5's scale case: "a 24-core host with 16 application
/// threads and a million operations runs in well under a minute; memory
/// stays flat with run length".
pub const APP_CORES: u32 = 24;
pub const APP_THREADS: usize = 16;
pub const APP_OPS: u64 = 1_000_000;
/// The longer run's length, in [`APP_OPS`] (the issue's "flat with run
/// length": the same state at four times the operations).
pub const APP_LONGER: u64 = 4;

/// The application bench's threads: [`APP_THREADS`] closed-loop threads
/// ([`apps::closed::ClosedLoop`]) on cores 0 to 15 of the 24, `ops`
/// operations in all: half a key-value store's `get`s (instance `kv`: 2 us
/// of user CPU, one blocking 4 KiB read, Urgent), half a batch reader's
/// (instance `batch`: 2 us, four 4 KiB reads in one `io_submit`, Barrier on
/// the last, then `io_getevents` for all four). Our choice of mix: both of
/// TOS Table 1's marks, and thread switches as well as interrupts.
pub fn app_threads(ops: u64) -> Vec<apps::PlacedThread> {
    use apps::closed::{Closed, ClosedLoop};
    let n = APP_THREADS as u64;
    (0..APP_THREADS)
        .map(|i| {
            let blocking = i % 2 == 0;
            let instance = usize::from(!blocking);
            let own = ops / n + u64::from((i as u64) < ops % n);
            let cfg = Closed {
                waiter: if blocking {
                    apps::Waiter::Blocking
                } else {
                    apps::Waiter::Libaio
                },
                kind: if blocking {
                    apps::OpKind::Read
                } else {
                    apps::OpKind::Scan
                },
                user_ns: 2 * policy::US,
                ios_per_op: if blocking { 1 } else { 4 },
                bytes: 4096,
                write: false,
                ops: Some(own),
            };
            apps::PlacedThread {
                name: format!("{}/t{i}", if blocking { "kv" } else { "batch" }),
                instance,
                core: i,
                background: false,
                index: i / 2,
                thread: Box::new(ClosedLoop::new(cfg)),
            }
        })
        .collect()
}

/// One run of the application bench.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AppTiming {
    /// Operations asked of the threads, and finished in the window.
    pub ops: u64,
    pub measured_ops: u64,
    pub timing: Timing,
}

/// What `bench sim --apps` measured: the run at [`APP_OPS`] and at
/// [`APP_LONGER`] times that.
#[derive(Clone, Debug, PartialEq)]
pub struct AppBench {
    pub policy: String,
    pub host: String,
    pub runs: Vec<AppTiming>,
}

/// Times the application case at `ops` and at [`APP_LONGER`] times `ops`.
pub fn run_apps(ops: u64) -> Result<AppBench, SimError> {
    // The threads end on their counts; the runtime only bounds a run that
    // would not (far above the ~5 s of virtual time a million take).
    let mut config = config(1_000 * policy::SEC)?;
    config.host.cores = APP_CORES;
    config.host.name = format!("{} ({APP_CORES} cores)", config.host.name);
    let mut runs = Vec::new();
    for n in [ops, ops.saturating_mul(APP_LONGER)] {
        let start = Instant::now();
        let mut again = || Ok(app_threads(n));
        let (report, audit) =
            crate::simulate_app_with(app_threads(n), &mut again, &config, &mut |_, _| {})?;
        let wall_seconds = start.elapsed().as_secs_f64();
        let measured_ops = report.apps.iter().flat_map(|a| &a.ops).map(|o| o.ops).sum();
        runs.push(AppTiming {
            ops: n,
            measured_ops,
            timing: Timing {
                wall_seconds,
                virtual_seconds: report.duration_ns as f64 / 1e9,
                completions: report.completions,
                iops: report.total_iops(),
                events: audit.events,
                events_by_kind: audit.events_by_kind,
                state_bytes: audit.state_bytes,
            },
        });
    }
    Ok(AppBench {
        policy: policy::describe(&config.policy),
        host: config.host.name,
        runs,
    })
}

impl AppBench {
    /// The longer run's state over the shorter's (1.0: flat).
    pub fn state_ratio(&self) -> f64 {
        match self.runs.as_slice() {
            [a, b, ..] if a.timing.state_bytes > 0 => {
                b.timing.state_bytes as f64 / a.timing.state_bytes as f64
            }
            _ => 0.0,
        }
    }

    pub fn text(&self) -> String {
        let mut s = format!(
            "bench sim --apps: {APP_THREADS} closed-loop application threads (8 blocking gets, 8 libaio batches of 4) on {}, {DEVICE}, policy {}, seed {SEED}\n",
            self.host, self.policy
        );
        s.push_str("         ops  measured ops     wall  virtual  sim ops/wall s   completions  events/compl  sim state\n");
        for r in &self.runs {
            let t = &r.timing;
            let _ = writeln!(
                s,
                "  {:>10}  {:>12}  {:>6.2}s  {:>6.2}s  {:>14}  {:>12}  {:>12.2}  {:>9}",
                r.ops,
                r.measured_ops,
                t.wall_seconds,
                t.virtual_seconds,
                count(r.measured_ops as f64 / t.wall_seconds.max(1e-9)),
                t.completions,
                t.events_per_completion(),
                mib(t.state_bytes)
            );
        }
        let _ = writeln!(
            s,
            "  state at {APP_LONGER}x the operations / at 1x: {:.3}; peak RSS {}",
            self.state_ratio(),
            peak_rss().map_or("-".into(), mib)
        );
        if cfg!(debug_assertions) {
            s.push_str(DEBUG_NOTE);
        }
        s
    }

    pub fn json(&self) -> serde_json::Value {
        let runs: Vec<_> = self
            .runs
            .iter()
            .map(|r| {
                let mut v = r.timing.json();
                extend(
                    &mut v,
                    json!({ "ops": r.ops, "measured_ops": r.measured_ops }),
                );
                v
            })
            .collect();
        json!({
            "bench": "sim-apps",
            "threads": APP_THREADS,
            "host": self.host,
            "device": DEVICE,
            "policy": self.policy,
            "seed": SEED,
            "debug_build": cfg!(debug_assertions),
            "runs": runs,
            "state_ratio": self.state_ratio(),
            "peak_rss_bytes": peak_rss(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing(wall: f64, completions: u64) -> Timing {
        Timing {
            wall_seconds: wall,
            virtual_seconds: 2.0,
            completions,
            iops: 0.0,
            events: 0,
            events_by_kind: [0; 10],
            state_bytes: 0,
        }
    }

    #[test]
    fn best_is_fastest_and_median_is_middle() {
        let runs = [timing(2.0, 1000), timing(1.0, 1000), timing(4.0, 1000)];
        let (best, median) = best_and_median(&runs).unwrap();
        assert_eq!(best.completions_per_sec(), 1000.0);
        assert_eq!(median.completions_per_sec(), 500.0);
        assert_eq!(best.ns_per_completion(), 1e6);
        assert!(best_and_median(&[]).is_none());
    }

    #[test]
    fn an_instant_run_has_no_rate() {
        assert_eq!(timing(0.0, 10).completions_per_sec(), 0.0);
        assert_eq!(timing(1.0, 0).ns_per_completion(), 0.0);
    }

    #[test]
    fn the_embedded_workload_parses() {
        let names: Vec<String> = workload().unwrap().into_iter().map(|j| j.name).collect();
        assert_eq!(names, ["sync", "async"]);
    }

    #[test]
    fn core_counts_double_up_to_the_maximum() {
        assert_eq!(core_counts(1), [1]);
        assert_eq!(core_counts(64), [1, 2, 4, 8, 16, 32, 64]);
        assert_eq!(core_counts(6), [1, 2, 4, 6]);
    }

    #[test]
    fn each_core_gets_its_own_pinned_copy_of_the_workload() {
        let jobs = replicate(&workload().unwrap(), 3);
        let placed: Vec<(String, Option<Vec<usize>>)> = jobs
            .into_iter()
            .map(|j| (j.name.clone(), j.cpus()))
            .collect();
        assert_eq!(placed[0], ("sync-0".into(), Some(vec![0])));
        assert_eq!(placed[3], ("async-1".into(), Some(vec![1])));
        assert_eq!(placed[5], ("async-2".into(), Some(vec![2])));
    }

    #[test]
    fn the_app_threads_share_out_the_operations() {
        let threads = app_threads(1_000_003);
        assert_eq!(threads.len(), APP_THREADS);
        assert!(threads.iter().all(|t| t.core < APP_CORES as usize));
        // Indices are unique within each instance.
        let mut keys: Vec<(usize, usize)> = threads.iter().map(|t| (t.instance, t.index)).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), APP_THREADS);
    }

    #[test]
    fn every_core_completes_at_least_as_much_as_one_core_alone() {
        // The device grows with the cores: four cores do at least four times
        // the single core's work (more: the pooled units queue less), and
        // the simulator's state per core does not grow.
        let jobs = workload().unwrap();
        let config = config(5_000_000).unwrap();
        let one = timed(&replicate(&jobs, 1), &scaled(&config, 1)).unwrap();
        let four = timed(&replicate(&jobs, 4), &scaled(&config, 4)).unwrap();
        let ratio = four.completions as f64 / one.completions as f64;
        assert!((3.9..8.0).contains(&ratio), "{ratio}");
        let per_core = |t: &Timing, n: u64| t.state_bytes / n;
        let (a, b) = (per_core(&one, 1), per_core(&four, 4));
        assert!(a > 0 && b <= a + a / 10, "{a} {b}");
    }

    fn bench(walls: &[f64]) -> SimBench {
        SimBench {
            policy: "cint".into(),
            runtime_ns: 2_000_000_000,
            runs: walls
                .iter()
                .map(|&w| Timing {
                    events: 4_000,
                    ..timing(w, 1_000)
                })
                .collect(),
            load_before: None,
            load_after: None,
        }
    }

    #[test]
    fn a_baseline_reads_back_as_saved_and_compares_as_ratios() {
        // Runs of 1 ms, 2 ms and 4 ms wall for 1,000 completions and
        // 4,000 events: best 1M/s, median 500k/s, 250 ns and 500 ns/event.
        let base = bench(&[0.002, 0.001, 0.004]).baseline(
            "2026-11-27T23:30:00Z".into(),
            "a test machine, 2 CPUs".into(),
            Some("0.10 0.20 0.30".into()),
        );
        assert_eq!(base.completions_per_sec, 1e6);
        assert_eq!(base.median_completions_per_sec, 5e5);
        assert_eq!(base.events_per_completion, 4.0);
        assert_eq!(base.ns_per_event, 250.0);
        assert_eq!(base.median_ns_per_event, 500.0);
        let text = serde_json::to_string_pretty(&base.json()).unwrap();
        assert_eq!(Baseline::parse(&text).unwrap(), base);

        // Twice as fast: 2x the completions, half the ns per event.
        let now = bench(&[0.001, 0.0005, 0.002]);
        let ratios: Vec<(&str, f64)> = now
            .compare(&base)
            .iter()
            .map(|r| (r.name, r.ratio()))
            .collect();
        assert_eq!(
            ratios,
            [
                ("completions/s best", 2.0),
                ("completions/s median", 2.0),
                ("events/completion", 1.0),
                ("ns/event best", 0.5),
                ("ns/event median", 0.5),
            ]
        );
        let shown = now.compare_text(&base);
        assert!(
            shown.contains("completions/s best 2000k (2.00x baseline, better)"),
            "{shown}"
        );
        assert!(
            shown.contains("ns/event best 125.0 ns (0.50x baseline, better)"),
            "{shown}"
        );
        assert!(
            shown.contains("events/completion 4.00 (1.00x baseline)"),
            "{shown}"
        );
        assert!(shown.contains("load 0.10 0.20 0.30"), "{shown}");
        assert!(!shown.contains("warning"), "{shown}");
        let json = now.compare_json(&base);
        assert_eq!(json["ratios"]["completions_s_best"]["ratio"], 2.0);
        assert_eq!(json["baseline"]["date"], "2026-11-27T23:30:00Z");

        // Slower, on another set-up: worse, and said.
        let mut slow = bench(&[0.004, 0.004, 0.004]);
        slow.runtime_ns = 1_000_000_000;
        let shown = slow.compare_text(&base);
        assert!(shown.contains("(0.25x baseline, worse)"), "{shown}");
        assert!(
            shown.contains("warning: the baseline ran 2.000s virtual"),
            "{shown}"
        );
    }

    #[test]
    fn a_file_that_is_not_a_baseline_is_refused_naming_why() {
        let err = |t: &str| Baseline::parse(t).unwrap_err();
        assert!(err("{").starts_with("not JSON"));
        assert!(err(r#"{"format": "other"}"#).contains("not a bench sim baseline"));
        let base = bench(&[0.001]).baseline("d".into(), "m".into(), None);
        let mut v = base.json();
        v["ns_per_event"] = json!("fast");
        assert!(err(&v.to_string()).contains("\"ns_per_event\" missing or not a number"));
        v["ns_per_event"] = json!(-1.0);
        assert!(err(&v.to_string()).contains("ns_per_event"));
        // No load average is fine: an old file, or a system without one.
        let mut v = base.json();
        v.as_object_mut().unwrap().remove("load_average");
        assert_eq!(Baseline::parse(&v.to_string()).unwrap().load_average, None);
    }

    #[test]
    fn utc_dates_are_civil_dates() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_795_822_245), "2026-11-27T23:30:45Z");
    }
}
