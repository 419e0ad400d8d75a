//! `cinterrupts bench exec --cost FILE`: what routing through `exec`
//! costs on this machine (issue 38 item 2). The same fio job (4 KiB random
//! O_DIRECT reads of FILE) runs natively and under `cinterrupts exec`, one
//! after the other, for psync at QD1 and io_uring at QD1 and QD16; each is
//! set beside native against the goal, with exec's own split of a
//! completion's delay (`exec::Cost`: fetch, device model, hold, interrupt,
//! handler, waiter wake-up) and the rest (exec's latency less native's
//! less those: the interposition, the library's hand-offs). Last, an idle
//! program (`sleep`) under exec: exec's CPU as a share of one core.
//!
//! exec runs with `--policy default` (an interrupt per completion: no
//! strategy holds) and no `--device` (the program's own I/O is the
//! device), so that what is measured is the routing alone.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use crate::args::OutputFormat;
use crate::bench_exec::{fio_jobs, output, BenchExecArgs};

/// One measured case and its goal (issue 38, Build item 2).
struct Case {
    name: &'static str,
    engine: &'static str,
    depth: u32,
    goal: Goal,
}

#[derive(Clone, Copy)]
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

pub fn run(a: &BenchExecArgs, file: &Path) -> Result<()> {
    let me = std::env::current_exe().context("cannot find this program")?;
    let runtime = a.runtime.clone().unwrap_or_else(|| "3s".into());
    let size = match std::fs::metadata(file) {
        Ok(m) if m.len() >= 1 << 20 => m.len(),
        Ok(_) => bail!("--cost {}: smaller than 1 MiB", file.display()),
        // fio lays it out.
        Err(_) => 256 << 20,
    };
    let baseline: Option<Value> = match &a.baseline {
        Some(p) => Some(
            serde_json::from_slice(
                &std::fs::read(p).with_context(|| format!("--baseline {}", p.display()))?,
            )
            .with_context(|| format!("--baseline {}: not JSON", p.display()))?,
        ),
        None => None,
    };
    let load_before = loadavg();
    let mut rows = Vec::new();
    for c in &CASES {
        let fio = || fio_args(file, size, c, &runtime);
        let native = side(Command::new("fio").args(fio()), "fio")?;
        let report =
            std::env::temp_dir().join(format!("cinterrupts-cost-{}.json", std::process::id()));
        let mut cmd = Command::new(&me);
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
        let rep: Value = serde_json::from_slice(&rep.context("exec's report")?)
            .context("exec's report: not JSON")?;
        let cost = rep["cinterrupts"]["exec"]["routing"]["cost"].clone();
        rows.push((c, native, exec, cost));
    }
    let idle = idle_cpu(&me)?;
    let load_after = loadavg();
    let met = |c: &Case, n: &Fio, e: &Fio| match c.goal {
        Goal::OverUs(us) => (e.lat_ns - n.lat_ns) / 1e3 <= us,
        Goal::IopsRatio(r) => e.iops / n.iops >= r,
    };
    let base_of = |name: &str| -> Option<Fio> {
        let b = baseline.as_ref()?;
        let r = b["cases"].as_array()?.iter().find(|r| r["case"] == name)?;
        Some(Fio {
            iops: r["exec"]["iops"].as_f64()?,
            lat_ns: r["exec"]["lat_mean_ns"].as_f64()?,
        })
    };
    match a.output_format {
        OutputFormat::Normal => {
            println!(
                "bench exec --cost {}: fio 4 KiB randread O_DIRECT, {runtime} each, native then `exec --policy default` (no --device)",
                file.display()
            );
            println!("  load (1/5/15 min) before: {load_before}; after: {load_after}");
            println!(
                "  {:<14} {:>20} {:>20} {:>14} {:>10}  result{}",
                "case",
                "native",
                "exec",
                "exec-native",
                "goal",
                if baseline.is_some() {
                    "  (exec vs baseline)"
                } else {
                    ""
                }
            );
            for (c, n, e, _) in &rows {
                let fig = |f: &Fio| format!("{:.2} us {:.0}K IOPS", f.lat_ns / 1e3, f.iops / 1e3);
                let (diff, goal) = match c.goal {
                    Goal::OverUs(us) => (
                        format!("{:+.2} us", (e.lat_ns - n.lat_ns) / 1e3),
                        format!("<= +{us} us"),
                    ),
                    Goal::IopsRatio(r) => {
                        (format!("{:.2}x IOPS", e.iops / n.iops), format!(">= {r}x"))
                    }
                };
                let vs = base_of(c.name).map_or(String::new(), |b| {
                    format!(
                        "  (lat {:.2}x, IOPS {:.2}x of baseline)",
                        e.lat_ns / b.lat_ns,
                        e.iops / b.iops
                    )
                });
                println!(
                    "  {:<14} {:>20} {:>20} {:>14} {:>10}  {}{vs}",
                    c.name,
                    fig(n),
                    fig(e),
                    diff,
                    goal,
                    if met(c, n, e) { "met" } else { "MISSED" }
                );
            }
            println!(
                "  {:<14} {:>20} {:>20} {:>14} {:>10}  {}",
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
            println!(
                "  where exec's time goes, mean per completion (exec's report, `routing.cost`):"
            );
            for (c, n, e, cost) in &rows {
                let g = |k: &str| cost[k].as_f64().unwrap_or(0.0) / 1e3;
                let known = g("machine_ns") + g("device_model_ns") + g("strategy_hold_ns");
                println!(
                    "    {:<14} fetch {:.2}, device model {:.2}, hold {:.2}, interrupt {:.2}, handler {:.2}, waiter wake-up {:.2} us; the rest (exec - native - these) {:.2} us; waiters spun {:.1} ms CPU, slept {} times",
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
            if let Some((_, _, _, cost)) = rows.first() {
                println!("  {}", cost["delivered_by"].as_str().unwrap_or(""));
            }
        }
        OutputFormat::Json => {
            let fig = |f: &Fio| json!({"iops": f.iops, "lat_mean_ns": f.lat_ns});
            let v = json!({
                "file": file, "runtime": runtime, "policy": "default",
                "load_before": load_before, "load_after": load_after,
                "cases": rows.iter().map(|(c, n, e, cost)| json!({
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
            });
            println!("{}", serde_json::to_string_pretty(&v).expect("json"));
        }
    }
    Ok(())
}

/// Both sides run the same job: nothing differs but the routing.
fn fio_args(file: &Path, size: u64, c: &Case, runtime: &str) -> Vec<String> {
    let v = vec![
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
    ];
    v
}

fn side(cmd: &mut Command, what: &str) -> Result<Fio> {
    let v: Value =
        serde_json::from_slice(&output(cmd, what)?).with_context(|| format!("{what}: not JSON"))?;
    let (iops, _, lat) = fio_jobs(&v)?;
    Ok(Fio { iops, lat_ns: lat })
}

struct Idle {
    cpu_ns: u64,
    wall_ns: u64,
    share: f64,
}

/// `exec -- sleep 4`: exec's own CPU (every thread of it, from
/// /proc/PID/stat, in the kernel's 10 ms clock ticks) from its start to
/// 3.5 s in, over that wall time, as a share of one core.
fn idle_cpu(me: &Path) -> Result<Idle> {
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
        .context("cannot start cinterrupts exec -- sleep 4")?;
    std::thread::sleep(Duration::from_millis(3500));
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", child.id()));
    let wall = start.elapsed();
    let status = child.wait().context("cinterrupts exec -- sleep 4")?;
    if !status.success() {
        bail!("cinterrupts exec -- sleep 4 failed ({status})");
    }
    // Fields 14 and 15 (utime, stime), after the command's name in parens.
    let ticks: u64 = stat
        .context("exec's /proc/PID/stat")?
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|t| t.parse::<u64>().ok())
        .sum();
    // USER_HZ is 100 on Linux x86_64 (sysconf(_SC_CLK_TCK)).
    let cpu = ticks * 10_000_000;
    Ok(Idle {
        cpu_ns: cpu,
        wall_ns: wall.as_nanos() as u64,
        share: cpu as f64 / wall.as_nanos() as f64,
    })
}

/// /proc/loadavg's three load averages.
fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}
