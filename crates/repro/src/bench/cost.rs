//! What routing through `exec` costs on this machine (issue 38 item 2).
//! The same fio job (4 KiB random O_DIRECT reads of a file) runs natively
//! and under `cinterrupts exec`, one after the other, for psync at QD1 and
//! io_uring at QD1 and QD16; each is set beside native against the issue's
//! goal, with exec's own split of a completion's delay (`exec::Cost`:
//! fetch, device model, hold, interrupt, handler, waiter wake-up) and the
//! rest (exec's latency less native's less those: the interposition, the
//! library's hand-offs). Last, an idle program (`sleep`) under exec:
//! exec's CPU as a share of one core.
//!
//! exec runs with `--policy default` (an interrupt per completion: no
//! strategy holds) and no `--device` (the program's own I/O is the
//! device), so that what is measured is the routing alone.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{fail, fio_jobs, json_of, output, pretty, BenchError};

/// What to measure, as `bench exec --cost` takes it.
#[derive(Clone, Debug)]
pub struct CostConfig {
    /// The `cinterrupts` binary whose `exec` is measured.
    pub binary: PathBuf,
    /// The file fio reads (laid out by fio when missing).
    pub file: PathBuf,
    /// Each case's runtime, as fio takes it; default 3s.
    pub runtime: Option<String>,
    /// A JSON of an earlier run, whose exec figures are set beside these.
    pub baseline: Option<PathBuf>,
}

/// One measured case and its goal (issue 38, Build item 2).
#[derive(Debug)]
struct Case {
    name: &'static str,
    engine: &'static str,
    depth: u32,
    goal: Goal,
}

#[derive(Clone, Copy, Debug)]
enum Goal {
    /// exec's mean latency at most this many us over native's.
    OverUs(f64),
    /// exec's IOPS at least this share of native's.
    IopsRatio(f64),
}

const CASES: [Case; 3] = [
    Case {
        name: "psync QD1",
        engine: "psync",
        depth: 1,
        goal: Goal::OverUs(3.0),
    },
    Case {
        name: "io_uring QD1",
        engine: "io_uring",
        depth: 1,
        goal: Goal::OverUs(5.0),
    },
    Case {
        name: "io_uring QD16",
        engine: "io_uring",
        depth: 16,
        goal: Goal::IopsRatio(0.8),
    },
];

/// The idle goal: exec's CPU under 5% of one core.
const IDLE_GOAL: f64 = 0.05;

#[derive(Clone, Copy, Debug, Default)]
struct Fio {
    iops: f64,
    lat_ns: f64,
}

/// Every case's sides, exec's cost split, the idle program's CPU.
#[derive(Debug)]
pub struct Cost {
    file: PathBuf,
    runtime: String,
    baseline: Option<Value>,
    load_before: String,
    load_after: String,
    rows: Vec<(&'static Case, Fio, Fio, Value)>,
    idle: Idle,
}

/// Runs every case, native then exec, and the idle program.
pub fn measure(c: &CostConfig) -> Result<Cost, BenchError> {
    let file = &c.file;
    let runtime = c.runtime.clone().unwrap_or_else(|| "3s".into());
    let size = match std::fs::metadata(file) {
        Ok(m) if m.len() >= 1 << 20 => m.len(),
        Ok(_) => {
            return Err(BenchError(format!(
                "--cost {}: smaller than 1 MiB",
                file.display()
            )))
        }
        // fio lays it out.
        Err(_) => 256 << 20,
    };
    let baseline: Option<Value> = match &c.baseline {
        Some(p) => {
            let bytes = std::fs::read(p)
                .map_err(|e| fail(format_args!("--baseline {}", p.display()), e))?;
            Some(json_of(&bytes, &format!("--baseline {}", p.display()))?)
        }
        None => None,
    };
    let load_before = loadavg();
    let mut rows = Vec::new();
    for case in &CASES {
        let fio = || fio_args(file, size, case, &runtime);
        let native = side(Command::new("fio").args(fio()), "fio")?;
        let report =
            std::env::temp_dir().join(format!("cinterrupts-cost-{}.json", std::process::id()));
        let mut cmd = Command::new(&c.binary);
        cmd.args(["exec", "--policy", "default", "--quiet"])
            .args(["--output-format", "json", "-o"])
            .arg(&report)
            .arg("--")
            .arg("fio")
            .args(fio());
        let exec = side(&mut cmd, "cinterrupts exec -- fio");
        let rep = std::fs::read(&report);
        let _ = std::fs::remove_file(&report);
        let exec = exec?;
        let rep = json_of(&rep.map_err(|e| fail("exec's report", e))?, "exec's report")?;
        let cost = rep["cinterrupts"]["exec"]["routing"]["cost"].clone();
        rows.push((case, native, exec, cost));
    }
    let idle = idle_cpu(&c.binary)?;
    Ok(Cost {
        file: file.clone(),
        runtime,
        baseline,
        load_before,
        load_after: loadavg(),
        rows,
        idle,
    })
}

fn met(c: &Case, n: &Fio, e: &Fio) -> bool {
    match c.goal {
        Goal::OverUs(us) => (e.lat_ns - n.lat_ns) / 1e3 <= us,
        Goal::IopsRatio(r) => e.iops / n.iops >= r,
    }
}

impl Cost {
    /// The baseline's exec figures of the case `name`.
    fn base_of(&self, name: &str) -> Option<Fio> {
        let b = self.baseline.as_ref()?;
        let r = b["cases"].as_array()?.iter().find(|r| r["case"] == name)?;
        Some(Fio {
            iops: r["exec"]["iops"].as_f64()?,
            lat_ns: r["exec"]["lat_mean_ns"].as_f64()?,
        })
    }

    pub fn text(&self) -> String {
        let idle = &self.idle;
        let mut s = format!(
            "bench exec --cost {}: fio 4 KiB randread O_DIRECT, {} each, native then `exec --policy default` (no --device)\n",
            self.file.display(),
            self.runtime
        );
        s += &format!(
            "  load (1/5/15 min) before: {}; after: {}\n",
            self.load_before, self.load_after
        );
        s += &format!(
            "  {:<14} {:>20} {:>20} {:>14} {:>10}  result{}\n",
            "case",
            "native",
            "exec",
            "exec-native",
            "goal",
            if self.baseline.is_some() {
                "  (exec vs baseline)"
            } else {
                ""
            }
        );
        for (c, n, e, _) in &self.rows {
            let fig = |f: &Fio| format!("{:.2} us {:.0}K IOPS", f.lat_ns / 1e3, f.iops / 1e3);
            let (diff, goal) = match c.goal {
                Goal::OverUs(us) => (
                    format!("{:+.2} us", (e.lat_ns - n.lat_ns) / 1e3),
                    format!("<= +{us} us"),
                ),
                Goal::IopsRatio(r) => (format!("{:.2}x IOPS", e.iops / n.iops), format!(">= {r}x")),
            };
            let vs = self.base_of(c.name).map_or(String::new(), |b| {
                format!(
                    "  (lat {:.2}x, IOPS {:.2}x of baseline)",
                    e.lat_ns / b.lat_ns,
                    e.iops / b.iops
                )
            });
            s += &format!(
                "  {:<14} {:>20} {:>20} {:>14} {:>10}  {}{vs}\n",
                c.name,
                fig(n),
                fig(e),
                diff,
                goal,
                if met(c, n, e) { "met" } else { "MISSED" }
            );
        }
        s += &format!(
            "  {:<14} {:>20} {:>20} {:>14} {:>10}  {}\n",
            "idle exec CPU",
            "-",
            format!("{:.1}% of a core", idle.share * 100.0),
            "",
            format!("< {:.0}%", IDLE_GOAL * 100.0),
            if idle.share < IDLE_GOAL {
                "met"
            } else {
                "MISSED"
            }
        );
        s += "  where exec's time goes, mean per completion (exec's report, `routing.cost`):\n";
        for (c, n, e, cost) in &self.rows {
            let g = |k: &str| cost[k].as_f64().unwrap_or(0.0) / 1e3;
            let known = g("machine_ns") + g("device_model_ns") + g("strategy_hold_ns");
            s += &format!(
                "    {:<14} fetch {:.2}, device model {:.2}, hold {:.2}, interrupt {:.2}, handler {:.2}, waiter wake-up {:.2} us; the rest (exec - native - these) {:.2} us; waiters spun {:.1} ms CPU, slept {} times\n",
                c.name,
                g("fetch_ns"),
                g("device_model_ns"),
                g("strategy_hold_ns"),
                g("interrupt_ns"),
                g("handler_ns"),
                g("wake_ns"),
                (e.lat_ns - n.lat_ns) / 1e3 - known,
                cost["waiter_spin_cpu_ns"].as_f64().unwrap_or(0.0) / 1e6,
                cost["sleeps"].as_u64().unwrap_or(0),
            );
        }
        if let Some((_, _, _, cost)) = self.rows.first() {
            s += &format!("  {}\n", cost["delivered_by"].as_str().unwrap_or(""));
        }
        s
    }

    pub fn json(&self) -> String {
        let idle = &self.idle;
        let fig = |f: &Fio| json!({"iops": f.iops, "lat_mean_ns": f.lat_ns});
        pretty(&json!({
            "file": self.file, "runtime": self.runtime, "policy": "default",
            "load_before": self.load_before, "load_after": self.load_after,
            "cases": self.rows.iter().map(|(c, n, e, cost)| json!({
                "case": c.name, "native": fig(n), "exec": fig(e),
                "over_ns": e.lat_ns - n.lat_ns, "iops_ratio": e.iops / n.iops,
                "goal": match c.goal {
                    Goal::OverUs(us) => json!({"max_over_us": us}),
                    Goal::IopsRatio(r) => json!({"min_iops_ratio": r}),
                },
                "met": met(c, n, e), "cost": cost,
            })).collect::<Vec<_>>(),
            "idle": {"cpu_ns": idle.cpu_ns, "wall_ns": idle.wall_ns,
                     "share_of_a_core": idle.share, "goal": IDLE_GOAL,
                     "met": idle.share < IDLE_GOAL},
        }))
    }
}

/// Both sides run the same job: nothing differs but the routing.
fn fio_args(file: &Path, size: u64, c: &Case, runtime: &str) -> Vec<String> {
    vec![
        "--name=cost".to_string(),
        format!("--filename={}", file.display()),
        "--rw=randread".into(),
        "--bs=4k".into(),
        "--direct=1".into(),
        format!("--size={size}"),
        format!("--ioengine={}", c.engine),
        format!("--iodepth={}", c.depth),
        "--time_based".into(),
        format!("--runtime={runtime}"),
        "--output-format=json".into(),
    ]
}

fn side(cmd: &mut Command, what: &str) -> Result<Fio, BenchError> {
    let v = json_of(&output(cmd, what)?, what)?;
    let (iops, _, lat) = fio_jobs(&v)?;
    Ok(Fio { iops, lat_ns: lat })
}

#[derive(Debug)]
struct Idle {
    cpu_ns: u64,
    wall_ns: u64,
    share: f64,
}

/// `exec -- sleep 4`: exec's own CPU (every thread of it, from
/// /proc/PID/stat, in the kernel's 10 ms clock ticks) from its start to
/// 3.5 s in, over that wall time, as a share of one core.
fn idle_cpu(me: &Path) -> Result<Idle, BenchError> {
    const WHAT: &str = "cinterrupts exec -- sleep 4";
    let start = Instant::now();
    let mut child = Command::new(me)
        .args([
            "exec",
            "--policy",
            "default",
            "--quiet",
            "-o",
            "/dev/null",
            "--",
            "sleep",
            "4",
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .map_err(|e| fail(format_args!("cannot start {WHAT}"), e))?;
    std::thread::sleep(Duration::from_millis(3500));
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", child.id()));
    let wall = start.elapsed();
    let status = child.wait().map_err(|e| fail(WHAT, e))?;
    if !status.success() {
        return Err(BenchError(format!("{WHAT} failed ({status})")));
    }
    let ticks = cpu_ticks(&stat.map_err(|e| fail("exec's /proc/PID/stat", e))?);
    // USER_HZ is 100 on Linux x86_64 (sysconf(_SC_CLK_TCK)).
    let cpu = ticks * 10_000_000;
    Ok(Idle {
        cpu_ns: cpu,
        wall_ns: wall.as_nanos() as u64,
        share: cpu as f64 / wall.as_nanos() as f64,
    })
}

/// Fields 14 and 15 of /proc/PID/stat (utime, stime), after the command's
/// name in parens (proc(5)).
fn cpu_ticks(stat: &str) -> u64 {
    stat.rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|t| t.parse::<u64>().ok())
        .sum()
}

/// /proc/loadavg's three load averages.
fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_ticks_are_utime_and_stime_after_the_name() {
        // A name with a space and a paren: fields count from the last ')'.
        let stat = "42 (a b) c) S 1 2 3 4 5 6 7 8 9 10 120 30 0 0";
        assert_eq!(cpu_ticks(stat), 150);
    }

    #[test]
    fn each_goal_is_judged_by_its_own_figure() {
        let n = Fio {
            iops: 100.0,
            lat_ns: 10_000.0,
        };
        let slow = Fio {
            iops: 70.0,
            lat_ns: 14_000.0,
        };
        assert!(!met(&CASES[0], &n, &slow), "4 us over a 3 us goal");
        assert!(met(&CASES[1], &n, &slow), "4 us under a 5 us goal");
        assert!(!met(&CASES[2], &n, &slow), "0.7x under a 0.8x goal");
    }
}
