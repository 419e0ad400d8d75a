//! The cross-validation of issue 14 item 7. The same fio job runs under
//! `cinterrupts run` (our fio loop on the emulator) and under `cinterrupts
//! exec` with the real fio (its direct I/O routed through the same emulated
//! device), with the same policy and device, and the figures are set side
//! by side: IOPS and mean latency within 15%, interrupts per completion
//! within 10%.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{json, Value};

use super::{fail, fio_jobs, json_of, output, pretty, BenchError};

/// What to cross-validate, as `bench exec` takes it.
#[derive(Clone, Debug)]
pub struct Crossval {
    /// The `cinterrupts` binary both sides run.
    pub binary: PathBuf,
    /// The fio job file (both sides read it; real fio lays out its file).
    pub job_file: PathBuf,
    /// The modelled device, as `run --device` and `exec --device` take it.
    pub device: String,
    /// The policy, as `run --policy` and `exec --policy` take it.
    pub policy: String,
    /// Every job's runtime on both sides, instead of the job file's.
    pub runtime: Option<String>,
    /// Runs of each side, alternated; the median of each figure is compared.
    pub repeat: u32,
}

/// One side's figures, every job of the run together.
#[derive(Clone, Copy, Debug, Default)]
pub struct Side {
    pub iops: f64,
    /// Mean latency of a request from its submission (fio's lat; our fio
    /// loop's clat, which is measured from the posting of the command:
    /// it has no submission step apart).
    pub lat_ns: f64,
    /// fio's clat: from the end of the submitting call.
    pub clat_ns: f64,
    pub interrupts_per_completion: f64,
}

/// The bounds of issue 14 item 7.
const IOPS_BOUND: f64 = 0.15;
const LAT_BOUND: f64 = 0.15;
const IRQ_BOUND: f64 = 0.10;

/// Both sides' runs and their medians.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub config: Crossval,
    pub runs: Vec<Side>,
    pub execs: Vec<Side>,
    pub run: Side,
    pub exec: Side,
}

/// Runs each side `repeat` times, alternated (run, exec, run, ...).
pub fn measure(c: &Crossval) -> Result<Outcome, BenchError> {
    let mut runs = Vec::new();
    let mut execs = Vec::new();
    for _ in 0..c.repeat {
        runs.push(side_run(c)?);
        execs.push(side_exec(c)?);
    }
    Ok(Outcome {
        config: c.clone(),
        run: median(&runs),
        exec: median(&execs),
        runs,
        execs,
    })
}

impl Outcome {
    /// Each figure: its name, run's, exec's and the bound on their ratio.
    fn rows(&self) -> [(&'static str, f64, f64, f64); 3] {
        let (run, exec) = (&self.run, &self.exec);
        [
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
        ]
    }

    pub fn text(&self) -> String {
        let c = &self.config;
        let mut s = format!(
            "bench exec: {} --device {} --policy {}, median of {} run(s) each\n",
            c.job_file.display(),
            c.device,
            c.policy,
            c.repeat
        );
        s += &format!(
            "  {:<16} {:>12} {:>12} {:>10} {:>7}  result\n",
            "figure", "run", "exec", "exec/run", "bound"
        );
        for (name, r, e, b) in self.rows() {
            let ratio = e / r;
            s += &format!(
                "  {name:<16} {r:>12.2} {e:>12.2} {ratio:>10.3} {:>6.0}%  {}\n",
                b * 100.0,
                if pass(ratio, b) { "pass" } else { "FAIL" }
            );
        }
        s += &format!(
            "  (exec's fio clat, from the end of its submitting call: {:.2} us)\n",
            self.exec.clat_ns / 1e3
        );
        s
    }

    pub fn json(&self) -> String {
        let c = &self.config;
        let fig = |s: &Side| {
            json!({
                "iops": s.iops, "lat_mean_ns": s.lat_ns, "clat_mean_ns": s.clat_ns,
                "interrupts_per_completion": s.interrupts_per_completion,
            })
        };
        pretty(&json!({
            "job_file": c.job_file, "device": c.device, "policy": c.policy,
            "repeat": c.repeat,
            "run": fig(&self.run), "exec": fig(&self.exec),
            "runs": self.runs.iter().map(fig).collect::<Vec<_>>(),
            "execs": self.execs.iter().map(fig).collect::<Vec<_>>(),
            "checks": self.rows().iter().map(|&(name, r, e, b)| json!({
                "figure": name, "ratio": e / r, "bound": b, "pass": pass(e / r, b),
            })).collect::<Vec<_>>(),
        }))
    }
}

/// Whether exec/run is within the bound of 1.
fn pass(ratio: f64, bound: f64) -> bool {
    (ratio - 1.0).abs() <= bound
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

fn side_run(c: &Crossval) -> Result<Side, BenchError> {
    let mut cmd = Command::new(&c.binary);
    cmd.arg("run")
        .arg(&c.job_file)
        .args(["--device", &c.device, "--policy", &c.policy])
        .args(["--output-format", "json", "--quiet"]);
    if let Some(t) = &c.runtime {
        cmd.args(["--runtime", t]);
    }
    let v = json_of(&output(&mut cmd, "cinterrupts run")?, "cinterrupts run")?;
    let (iops, clat, _) = fio_jobs(&v)?;
    let r = &v["cinterrupts"];
    Ok(Side {
        iops,
        lat_ns: clat,
        clat_ns: clat,
        interrupts_per_completion: per(&r["interrupts"], &r["completions"])?,
    })
}

fn side_exec(c: &Crossval) -> Result<Side, BenchError> {
    let report = std::env::temp_dir().join(format!(
        "cinterrupts-bench-exec-{}.json",
        std::process::id()
    ));
    let mut cmd = Command::new(&c.binary);
    cmd.arg("exec")
        .args(["--device", &c.device, "--policy", &c.policy])
        .args(["--output-format", "json", "--quiet", "-o"])
        .arg(&report)
        .args(["--", "fio", "--output-format=json"]);
    if let Some(t) = &c.runtime {
        cmd.arg(format!("--runtime={t}"));
    }
    cmd.arg(&c.job_file);
    let out = output(&mut cmd, "cinterrupts exec -- fio");
    let rep = std::fs::read(&report);
    let _ = std::fs::remove_file(&report);
    let v = json_of(&out?, "fio")?;
    let rep = rep.map_err(|e| fail("exec's report", e))?;
    let r: Value = serde_json::from_slice(&rep).map_err(|e| BenchError(e.to_string()))?;
    let (iops, clat, lat) = fio_jobs(&v)?;
    let r = &r["cinterrupts"];
    Ok(Side {
        iops,
        lat_ns: lat,
        clat_ns: clat,
        interrupts_per_completion: per(&r["interrupts"], &r["completions"])?,
    })
}

fn per(n: &Value, d: &Value) -> Result<f64, BenchError> {
    match (n.as_f64(), d.as_f64()) {
        (Some(n), Some(d)) if d > 0.0 => Ok(n / d),
        _ => Err(BenchError("no completions counted".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_taken_figure_by_figure() {
        let s = |iops, lat_ns| Side {
            iops,
            lat_ns,
            ..Side::default()
        };
        let m = median(&[s(3.0, 10.0), s(1.0, 30.0), s(2.0, 20.0)]);
        assert_eq!((m.iops, m.lat_ns), (2.0, 20.0));
    }

    #[test]
    fn a_ratio_passes_within_its_bound_either_way() {
        assert!(pass(1.15, IOPS_BOUND));
        assert!(pass(0.9, IRQ_BOUND));
        assert!(!pass(1.2, IOPS_BOUND));
        assert!(!pass(0.85, IRQ_BOUND));
    }
}
