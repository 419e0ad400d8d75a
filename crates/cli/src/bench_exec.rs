//! `cinterrupts bench exec JOB.fio`: the cross-validation of issue 14 item
//! 7. The same fio job runs under `cinterrupts run` (our fio loop on the
//! emulator) and under `cinterrupts exec` with the real fio (its direct I/O
//! routed through the same emulated device), with the same policy and
//! device, and the figures are set side by side: IOPS and mean latency
//! within 15%, interrupts per completion within 10%.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use serde_json::Value;

use crate::args::OutputFormat;

#[derive(Args, Debug)]
pub struct BenchExecArgs {
    /// fio job file (both sides read it; real fio lays out its file)
    #[arg(required_unless_present = "cost")]
    pub job_file: Option<PathBuf>,
    /// Instead: what routing costs (issue 38 item 2). fio natively and under
    /// `exec` on FILE (put it on a fast device: zram), psync QD1, io_uring
    /// QD1 and QD16, each with native beside it and its delay split;
    /// then an idle program's exec CPU. Run it alone, under
    /// `flock /tmp/cint-measure.lock`
    #[arg(long, value_name = "FILE", conflicts_with = "job_file")]
    pub cost: Option<PathBuf>,
    /// With --cost: a JSON of an earlier `--cost --output-format json`
    /// run, whose exec figures are set beside these as ratios
    #[arg(long, value_name = "FILE", requires = "cost")]
    pub baseline: Option<PathBuf>,
    /// The modelled device, as `run --device` and `exec --device` take it
    #[arg(long, default_value = "optane", value_name = "NAME|FILE.toml")]
    pub device: String,
    /// The policy, as `run --policy` and `exec --policy` take it (the
    /// authors' system names carry parameters: cint-6-32)
    #[arg(long, default_value = "cint", value_name = "POLICY")]
    pub policy: String,
    /// Every job's runtime on both sides (e.g. 2s), instead of the job
    /// file's runtime=
    #[arg(long, value_name = "TIME")]
    pub runtime: Option<String>,
    /// Runs of each side, alternated (run, exec, run, ...); the median of
    /// each figure is compared
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100), value_name = "N")]
    pub repeat: u32,
    /// Results as text or JSON
    #[arg(long, value_enum, default_value = "normal", value_name = "FORMAT")]
    pub output_format: OutputFormat,
}

/// One side's figures, every job of the run together.
#[derive(Clone, Copy, Debug, Default)]
struct Side {
    iops: f64,
    /// Mean latency of a request from its submission (fio's lat; our fio
    /// loop's clat, which is measured from the posting of the command:
    /// it has no submission step apart).
    lat_ns: f64,
    /// fio's clat: from the end of the submitting call.
    clat_ns: f64,
    interrupts_per_completion: f64,
}

/// The bounds of issue 14 item 7.
const IOPS_BOUND: f64 = 0.15;
const LAT_BOUND: f64 = 0.15;
const IRQ_BOUND: f64 = 0.10;

/// `bench exec` without `--cost` (`bench_cmd` sends `--cost` to
/// `bench_cost`, which uses this module's jobs: no module cycle).
pub fn run(a: &BenchExecArgs) -> Result<()> {
    let me = std::env::current_exe().context("cannot find this program")?;
    let mut runs = Vec::new();
    let mut execs = Vec::new();
    for _ in 0..a.repeat {
        runs.push(side_run(&me, a)?);
        execs.push(side_exec(&me, a)?);
    }
    let run = median(&runs);
    let exec = median(&execs);
    let rows = [
        ("IOPS", run.iops, exec.iops, IOPS_BOUND),
        (
            "mean lat (us)",
            run.lat_ns / 1e3,
            exec.lat_ns / 1e3,
            LAT_BOUND,
        ),
        (
            "irq/completion",
            run.interrupts_per_completion,
            exec.interrupts_per_completion,
            IRQ_BOUND,
        ),
    ];
    let pass = |r: f64, b: f64| (r - 1.0).abs() <= b;
    match a.output_format {
        OutputFormat::Normal => {
            println!(
                "bench exec: {} --device {} --policy {}, median of {} run(s) each",
                job_file(a).display(),
                a.device,
                a.policy,
                a.repeat
            );
            println!(
                "  {:<16} {:>12} {:>12} {:>10} {:>7}  result",
                "figure", "run", "exec", "exec/run", "bound"
            );
            for (name, r, e, b) in rows {
                let ratio = e / r;
                println!(
                    "  {name:<16} {r:>12.2} {e:>12.2} {ratio:>10.3} {:>6.0}%  {}",
                    b * 100.0,
                    if pass(ratio, b) { "pass" } else { "FAIL" }
                );
            }
            println!(
                "  (exec's fio clat, from the end of its submitting call: {:.2} us)",
                exec.clat_ns / 1e3
            );
        }
        OutputFormat::Json => {
            let fig = |s: &Side| {
                serde_json::json!({
                    "iops": s.iops, "lat_mean_ns": s.lat_ns, "clat_mean_ns": s.clat_ns,
                    "interrupts_per_completion": s.interrupts_per_completion,
                })
            };
            let v = serde_json::json!({
                "job_file": a.job_file, "device": a.device, "policy": a.policy,
                "repeat": a.repeat,
                "run": fig(&run), "exec": fig(&exec),
                "runs": runs.iter().map(fig).collect::<Vec<_>>(),
                "execs": execs.iter().map(fig).collect::<Vec<_>>(),
                "checks": rows.iter().map(|&(name, r, e, b)| serde_json::json!({
                    "figure": name, "ratio": e / r, "bound": b, "pass": pass(e / r, b),
                })).collect::<Vec<_>>(),
            });
            println!("{}", serde_json::to_string_pretty(&v).expect("json"));
        }
    }
    Ok(())
}

fn job_file(a: &BenchExecArgs) -> &Path {
    a.job_file
        .as_deref()
        .expect("clap: required without --cost")
}

fn median(v: &[Side]) -> Side {
    let m = |f: fn(&Side) -> f64| {
        let mut x: Vec<f64> = v.iter().map(f).collect();
        x.sort_by(f64::total_cmp);
        x[x.len() / 2]
    };
    Side {
        iops: m(|s| s.iops),
        lat_ns: m(|s| s.lat_ns),
        clat_ns: m(|s| s.clat_ns),
        interrupts_per_completion: m(|s| s.interrupts_per_completion),
    }
}

pub(crate) fn output(cmd: &mut Command, what: &str) -> Result<Vec<u8>> {
    let o = cmd
        .output()
        .with_context(|| format!("cannot start {what}"))?;
    if !o.status.success() {
        bail!(
            "{what} failed ({}): {}",
            o.status,
            String::from_utf8_lossy(&o.stderr).trim_end()
        );
    }
    Ok(o.stdout)
}

fn side_run(me: &Path, a: &BenchExecArgs) -> Result<Side> {
    let mut cmd = Command::new(me);
    cmd.arg("run")
        .arg(job_file(a))
        .args(["--device", &a.device, "--policy", &a.policy])
        .args(["--output-format", "json", "--quiet"]);
    if let Some(t) = &a.runtime {
        cmd.args(["--runtime", t]);
    }
    let v: Value = serde_json::from_slice(&output(&mut cmd, "cinterrupts run")?)
        .context("cinterrupts run: not JSON")?;
    let (iops, clat, _) = fio_jobs(&v)?;
    let c = &v["cinterrupts"];
    Ok(Side {
        iops,
        lat_ns: clat,
        clat_ns: clat,
        interrupts_per_completion: per(&c["interrupts"], &c["completions"])?,
    })
}

fn side_exec(me: &Path, a: &BenchExecArgs) -> Result<Side> {
    let report = std::env::temp_dir().join(format!(
        "cinterrupts-bench-exec-{}.json",
        std::process::id()
    ));
    let mut cmd = Command::new(me);
    cmd.arg("exec")
        .args(["--device", &a.device, "--policy", &a.policy])
        .args(["--output-format", "json", "--quiet", "-o"])
        .arg(&report)
        .args(["--", "fio", "--output-format=json"]);
    if let Some(t) = &a.runtime {
        cmd.arg(format!("--runtime={t}"));
    }
    cmd.arg(job_file(a));
    let out = output(&mut cmd, "cinterrupts exec -- fio");
    let rep = std::fs::read(&report);
    let _ = std::fs::remove_file(&report);
    let v: Value = serde_json::from_slice(&out?).context("fio: not JSON")?;
    let r: Value = serde_json::from_slice(&rep.context("exec's report")?)?;
    let (iops, clat, lat) = fio_jobs(&v)?;
    let c = &r["cinterrupts"];
    Ok(Side {
        iops,
        lat_ns: lat,
        clat_ns: clat,
        interrupts_per_completion: per(&c["interrupts"], &c["completions"])?,
    })
}

fn per(n: &Value, d: &Value) -> Result<f64> {
    let (n, d) = (n.as_f64(), d.as_f64());
    match (n, d) {
        (Some(n), Some(d)) if d > 0.0 => Ok(n / d),
        _ => Err(anyhow!("no completions counted")),
    }
}

/// Total IOPS, and the mean clat and lat (weighted by requests) of every
/// job's reads and writes. `lat` is clat where the JSON has none.
pub(crate) fn fio_jobs(v: &Value) -> Result<(f64, f64, f64)> {
    let jobs = v["jobs"]
        .as_array()
        .ok_or_else(|| anyhow!("no jobs in the JSON"))?;
    let (mut iops, mut n, mut clat, mut lat) = (0.0, 0.0, 0.0, 0.0);
    for j in jobs {
        for dir in ["read", "write"] {
            let d = &j[dir];
            iops += d["iops"].as_f64().unwrap_or(0.0);
            let k = d["clat_ns"]["N"].as_f64().unwrap_or(0.0);
            let c = d["clat_ns"]["mean"].as_f64().unwrap_or(0.0);
            n += k;
            clat += k * c;
            lat += k * d["lat_ns"]["mean"].as_f64().unwrap_or(c);
        }
    }
    if n == 0.0 {
        bail!("no I/O completed");
    }
    Ok((iops, clat / n, lat / n))
}
