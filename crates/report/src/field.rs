//! The metrics the completion field reports (issue 40 item 4), one set for
//! every run, so that a device-side strategy (cint, NVMe aggregation) and
//! a host-side one (polling, PAS/DPAS, EHP, a central poller) are read on
//! one scale:
//!
//! - **ops/s per CPU**, DPAS's efficiency metric: operations completed per
//!   second over the CPU cores the run kept busy. The DPAS artifact
//!   (DongDongJu/DPAS_FAST26) records, per mode, the throughput and the
//!   CPU as the percent of one core the workload's process used: fio's
//!   `cpu : usr=..%, sys=..%` summed for the microbenchmarks
//!   (`scripts/micro_4krr/parse.py`, `getCPU`), and the mean of `ps -o
//!   %cpu` of the YCSB process sampled every 0.5 s for RocksDB/YCSB
//!   (`utils/track_cpu.sh`, `utils/postprocessing.py` `parse_cpu`; its
//!   `REPRODUCE_EXCEL.xlsx` then divides that percent by the machine's 4
//!   cores). Per CPU is the throughput over that CPU in cores (percent /
//!   100). Ours: the operations (a job file's I/Os, an application's
//!   foreground operations) per second of the measured window, over the
//!   workload cores' busy time (user + kernel + irq, summed over the cores
//!   `RunReport::cores` lists) over the window: [`Field::cpus_busy`]. It
//!   counts the interrupts and any other thread on those cores, where a
//!   process's `%cpu` leaves out what the kernel does not charge to it
//!   (interrupt time, with `CONFIG_IRQ_TIME_ACCOUNTING`).
//! - **cycles per I/O**: the simulator's busy time per I/O at the host's
//!   clock ([`crate::cpu`]), or the cycles `perf_event_open` counted
//!   (`run`, `exec`).
//! - **p50, p99, p99.9** completion latency over every I/O of the run (the
//!   simulator merges the jobs' histograms: `RunReport::clat_all`), else
//!   the worst job's, which bounds the all-I/O figure from above; an
//!   application run's over its foreground operations (the worst
//!   instance's).
//! - **interrupts/s**, and **wake-ups per I/O** (threads made runnable
//!   after sleeping, over the I/Os completed).
//! - The **oracle floor** of a trace's replay ([`OracleFloor`]).

use serde::{Deserialize, Serialize};

use crate::RunReport;

/// The field's metrics of one run. Figures a run has no source for are
/// `None` (and absent from the JSON).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Field {
    /// What is counted as an operation: `io` (a job file's I/Os) or `op`
    /// (an application's foreground operations).
    pub unit: String,
    /// Operations completed per second of the measured window.
    pub ops_per_sec: f64,
    /// The workload cores' busy time (user + kernel + irq) over the window,
    /// summed over the cores: cores' worth of CPU the run used.
    pub cpus_busy: f64,
    /// `ops_per_sec / cpus_busy` (DPAS's ops/s per CPU); absent with no
    /// busy time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops_per_sec_per_cpu: Option<f64>,
    /// CPU cycles per I/O: the simulator's busy time per I/O at the host's
    /// clock, or the counted cycles (`run`, `exec`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_per_io: Option<f64>,
    /// Latency percentiles, us, and what they are over: `all I/Os`, `worst
    /// job` or `worst instance's operations`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_9_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_over: Option<String>,
    pub interrupts_per_sec: f64,
    /// Threads made runnable after sleeping, per I/O completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wakeups_per_io: Option<f64>,
    /// A trace's replay only: the oracle floor beside the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oracle: Option<OracleFloor>,
}

/// The oracle floor of a replay (`policy::oracle`, issue 27 item 4): the
/// fewest interrupts that deliver every completion the simulated device
/// posted in the window within its budget (Urgent: none, the rest
/// `budget_ns`), beside the interrupts the run took.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OracleFloor {
    pub budget_ns: u64,
    /// The completions floored (posted in the measured window).
    pub completions: u64,
    /// The floor: interrupts.
    pub interrupts: u64,
    /// The run's interrupts over the floor (absent for a floor of 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_over_floor: Option<f64>,
}

impl OracleFloor {
    /// The floor, and the run's `interrupts` over it.
    pub fn new(budget_ns: u64, completions: u64, floor: u64, interrupts: u64) -> OracleFloor {
        OracleFloor {
            budget_ns,
            completions,
            interrupts: floor,
            run_over_floor: (floor > 0).then(|| interrupts as f64 / floor as f64),
        }
    }
}

impl Field {
    /// The metrics of `r`.
    pub fn of(r: &RunReport) -> Field {
        let secs = r.duration_ns as f64 / 1e9;
        let ios = r.completed_ios();
        // An application run counts its foreground operations (the `all`
        // entry repeats its kinds: left out).
        let app_ops: Option<Vec<&crate::OpReport>> = r.apps.as_ref().map(|a| {
            a.ops
                .iter()
                .filter(|o| !o.background && o.kind != "all")
                .collect()
        });
        let (unit, ops) = match &app_ops {
            Some(v) if !v.is_empty() => ("op", v.iter().map(|o| o.ops).sum::<u64>()),
            _ => ("io", ios),
        };
        let ops_per_sec = if secs > 0.0 { ops as f64 / secs } else { 0.0 };
        let cpus_busy: f64 = r.cores.iter().map(|c| 1.0 - c.idle).sum();
        let cycles_per_io = match (&r.cpu_parts, &r.counters) {
            (Some(p), _) if ios > 0 => Some(p.busy_ns as f64 / ios as f64 * p.ghz),
            (_, Some(c)) if c.ios > 0 => c.cycles.map(|cy| cy as f64 / c.ios as f64),
            _ => None,
        };
        let wakeups = match (r.wakeups, &r.uring) {
            (Some(w), _) => Some((w, ios)),
            (None, Some(u)) => Some((u.wakeups, u.ios)),
            _ => None,
        };
        let (pct, latency_over) = latency(r, app_ops.as_deref());
        Field {
            unit: unit.into(),
            ops_per_sec,
            cpus_busy,
            ops_per_sec_per_cpu: (cpus_busy > 0.0).then(|| ops_per_sec / cpus_busy),
            cycles_per_io,
            p50_us: pct.map(|p| p[0]),
            p99_us: pct.map(|p| p[1]),
            p99_9_us: pct.map(|p| p[2]),
            latency_over,
            interrupts_per_sec: r.interrupts_per_sec(),
            wakeups_per_io: wakeups
                .filter(|w| w.1 > 0)
                .map(|(w, n)| w as f64 / n as f64),
            oracle: r.oracle,
        }
    }
}

/// p50, p99 and p99.9 in us, and what they are over.
fn latency(r: &RunReport, ops: Option<&[&crate::OpReport]>) -> (Option<[f64; 3]>, Option<String>) {
    let us = |ns: u64| ns as f64 / 1e3;
    let three = |l: &crate::LatencyStats| {
        [
            us(l.percentile(50.0)),
            us(l.percentile(99.0)),
            us(l.percentile(99.9)),
        ]
    };
    let worst = |v: Vec<[f64; 3]>| {
        v.into_iter()
            .reduce(|a, b| [a[0].max(b[0]), a[1].max(b[1]), a[2].max(b[2])])
    };
    if let Some(ops) = ops.filter(|v| !v.is_empty()) {
        // The instances' joint entries where they have one, else each kind.
        let all: Vec<[f64; 3]> = r
            .apps
            .iter()
            .flat_map(|a| &a.ops)
            .filter(|o| o.kind == "all" && !o.background && o.ops > 0)
            .map(|o| three(&o.lat))
            .collect();
        let v = if all.is_empty() {
            ops.iter()
                .filter(|o| o.ops > 0)
                .map(|o| three(&o.lat))
                .collect()
        } else {
            all
        };
        return (worst(v), Some("worst instance's operations".into()));
    }
    if let Some(l) = r.clat_all.as_ref().filter(|l| l.samples > 0) {
        return (Some(three(l)), Some("all I/Os".into()));
    }
    let v: Vec<[f64; 3]> = r
        .jobs
        .iter()
        .flat_map(|j| [&j.read, &j.write])
        .filter(|d| d.clat.samples > 0)
        .map(|d| three(&d.clat))
        .collect();
    let over = match v.len() {
        0 => None,
        1 => Some("all I/Os".into()),
        _ => Some("worst job".into()),
    };
    (worst(v), over)
}

/// The text line(s) of the field's metrics.
pub fn write(out: &mut String, f: &Field) {
    use std::fmt::Write;
    let _ = write!(
        out,
        "  field: {} {}/s on {:.2} CPUs busy",
        crate::human::count(f.ops_per_sec),
        f.unit,
        f.cpus_busy
    );
    if let Some(per) = f.ops_per_sec_per_cpu {
        let _ = write!(out, " = {} {}/s per CPU", crate::human::count(per), f.unit);
    }
    if let Some(c) = f.cycles_per_io {
        let _ = write!(out, "; {c:.0} cycles per I/O");
    }
    if let (Some(a), Some(b), Some(c), Some(over)) =
        (f.p50_us, f.p99_us, f.p99_9_us, &f.latency_over)
    {
        let _ = write!(out, "; p50/p99/p99.9 {a:.2}/{b:.2}/{c:.2} us ({over})");
    }
    let _ = write!(
        out,
        "; {} interrupts/s",
        crate::human::count(f.interrupts_per_sec)
    );
    if let Some(w) = f.wakeups_per_io {
        let _ = write!(out, "; {w:.2} wake-ups per I/O");
    }
    out.push('\n');
    if let Some(o) = &f.oracle {
        let _ = write!(
            out,
            "  oracle floor: {} interrupts deliver the {} completions posted in the window within {} us each (Urgent: at once)",
            o.interrupts,
            o.completions,
            o.budget_ns as f64 / 1e3
        );
        if let Some(x) = o.run_over_floor {
            let _ = write!(out, "; this run took {x:.2}x the floor");
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CoreUtil, DirReport, JobReport, LatencyStats};

    fn run(ios: u64, idle: &[f64]) -> RunReport {
        RunReport {
            duration_ns: 1_000_000_000,
            jobs: vec![JobReport {
                name: "j".into(),
                read: DirReport {
                    io_ops: ios,
                    ..DirReport::default()
                },
                ..JobReport::default()
            }],
            cores: idle
                .iter()
                .enumerate()
                .map(|(core, &idle)| CoreUtil {
                    core,
                    idle,
                    ..CoreUtil::default()
                })
                .collect(),
            interrupts: 500,
            ..RunReport::default()
        }
    }

    #[test]
    fn ops_per_cpu_divides_by_the_busy_cores_summed() {
        // 100K I/Os in 1 s on one core 50% busy and one 25% busy: 0.75
        // CPUs, 133,333 per CPU.
        let f = Field::of(&run(100_000, &[0.5, 0.75]));
        assert_eq!(f.unit, "io");
        assert!((f.cpus_busy - 0.75).abs() < 1e-12);
        assert!((f.ops_per_sec_per_cpu.unwrap() - 100_000.0 / 0.75).abs() < 1e-6);
        assert_eq!(f.interrupts_per_sec, 500.0);
        // No busy time: no ratio, not an infinity.
        assert_eq!(Field::of(&run(10, &[1.0])).ops_per_sec_per_cpu, None);
    }

    #[test]
    fn wakeups_per_io_and_percentiles_over_all_ios() {
        let mut r = run(1_000, &[0.0]);
        r.wakeups = Some(250);
        let mut h = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        for ns in 1..=1_000u64 {
            h.record(ns * 1_000).unwrap();
        }
        r.clat_all = Some(LatencyStats::from_histogram(&h));
        let f = Field::of(&r);
        assert_eq!(f.wakeups_per_io, Some(0.25));
        assert_eq!(f.latency_over.as_deref(), Some("all I/Os"));
        let p99 = f.p99_us.unwrap();
        assert!((989.0..=991.0).contains(&p99), "{p99}");
        let mut text = String::new();
        write(&mut text, &f);
        assert!(text.contains("0.25 wake-ups per I/O"), "{text}");
        assert!(!text.contains("oracle"), "{text}");
    }

    #[test]
    fn the_oracle_floor_is_beside_the_run() {
        let mut r = run(10, &[0.5]);
        r.oracle = Some(OracleFloor::new(50_000, 10, 4, 500));
        let f = Field::of(&r);
        assert_eq!(f.oracle.unwrap().run_over_floor, Some(125.0));
        let mut text = String::new();
        write(&mut text, &f);
        assert!(text.contains("oracle floor: 4 interrupts"), "{text}");
        assert!(text.contains("125.00x the floor"), "{text}");
    }
}
