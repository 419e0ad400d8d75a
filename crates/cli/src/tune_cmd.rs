//! `cinterrupts tune`: picks adaptive coalescing's delta and thr for a
//! device and a workload by TOS 5.2's method (the `tune` crate), prints the
//! recommendation and the sweep, and with `--out` writes the two figures
//! and every number.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, ValueEnum};
use emu::backend::BackendSpec;
use emu::EmuConfig;
use serde_json::json;
use sim::{DeviceProfile, HostProfile};
use tune::{Target, TuneConfig, TuneError, Tuning};

use crate::args;
use crate::jobs_cmd::print_notes;
use crate::output::{fmt_time, write_atomically};
use crate::run_cmd::emu_error;
use crate::sim_cmd::sim_error;

const DEFAULT_DEVICE: &str = "optane";
const DEFAULT_HOST: &str = "xeon-e5-2660v4";

#[derive(Args, Debug)]
pub struct TuneArgs {
    /// fio job file: the workload the gaps are measured on and thr is swept
    /// on (TOS Fig 18: examples/tune-libaio.fio, tune-libaio-batch.fio)
    pub job_file: PathBuf,
    /// Where the workload runs: the simulator, or the emulator on real I/O
    #[arg(long, value_enum, default_value = "sim", value_name = "MODE")]
    pub mode: ModeArg,
    /// sim: device profile, a shipped name or a .toml file [default: optane]
    #[arg(long, value_name = "NAME|FILE")]
    pub device: Option<String>,
    /// sim: host profile, a shipped name or a .toml file [default:
    /// xeon-e5-2660v4]
    #[arg(long, value_name = "NAME|FILE")]
    pub host: Option<String>,
    /// emu: where commands run, file:PATH or null:LATENCY[,depth=N]
    /// [default: the job file's filename=]
    #[arg(long, value_parser = BackendSpec::parse, value_name = "SPEC")]
    pub backend: Option<BackendSpec>,
    /// The percentile of the completion gaps delta is read at (TOS 5.2: 90
    /// on the Optane, 99 on the P3700)
    #[arg(long, default_value = "90", value_parser = percentile, value_name = "P", allow_hyphen_values = true)]
    pub percentile: f64,
    /// How far below the best later point a thr may be and still start the
    /// plateau
    #[arg(long, default_value = "2%", value_parser = tolerance, value_name = "PERCENT", allow_hyphen_values = true)]
    pub tolerance: f64,
    /// Each run's length (the baseline and every sweep point), instead of
    /// the job file's runtime
    #[arg(long, default_value = "200ms", value_parser = args::runtime, value_name = "TIME")]
    pub runtime: u64,
    /// Seed of every random draw; the same seed gives the same results on
    /// the simulator
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seed: u64,
    /// Write tune-cdf.svg, tune-thr.svg and tune.json into this directory
    /// (created if missing); without it, nothing is written
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Nothing on stderr but errors: no notes, no progress lines (shown
    /// only on a terminal anyway), no list of the files written
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// The simulator (--device, --host)
    Sim,
    /// The emulator on real I/O (--backend)
    Emu,
}

/// A percentile in (0, 100]: `90`, `99.9`.
pub fn percentile(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 100.0 => Ok(p),
        _ => Err(format!(
            "'{s}' is not a percentile in (0, 100] (e.g. 90, 99)"
        )),
    }
}

/// A tolerance written as a percentage in [0, 100): `1%`, `0.5%`; as a
/// fraction.
pub fn tolerance(s: &str) -> Result<f64, String> {
    let bad = || format!("'{s}' is not a percentage in [0, 100) such as 1% or 0.5%");
    let number = s.strip_suffix('%').ok_or_else(bad)?;
    match number.trim().parse::<f64>() {
        Ok(p) if (0.0..100.0).contains(&p) => Ok(p / 100.0),
        _ => Err(bad()),
    }
}

/// What the run is on, for the header and the JSON.
struct Describe {
    mode: &'static str,
    /// The device or backend, for figure titles.
    short: String,
    on: String,
    extra: serde_json::Value,
}

fn target(args: &TuneArgs) -> Result<(Target, Describe)> {
    match args.mode {
        ModeArg::Sim => {
            if args.backend.is_some() {
                bail!("--backend is for --mode emu; the simulator runs on --device and --host");
            }
            let device = DeviceProfile::load(args.device.as_deref().unwrap_or(DEFAULT_DEVICE))?;
            let host = HostProfile::load(args.host.as_deref().unwrap_or(DEFAULT_HOST))?;
            let describe = Describe {
                mode: "sim",
                short: device.name.clone(),
                on: format!("{}, host {}", device.name, host.name),
                extra: json!({ "device": device.name, "host": host.name }),
            };
            let seed = args.seed;
            Ok((Target::Sim { device, host, seed }, describe))
        }
        ModeArg::Emu => {
            if args.device.is_some() || args.host.is_some() {
                bail!("--device and --host are for --mode sim; the emulator runs on --backend");
            }
            let backend = args
                .backend
                .as_ref()
                .map_or("the job file's filename=".to_string(), |b| b.to_string());
            let describe = Describe {
                mode: "emu",
                short: backend.clone(),
                on: format!("backend {backend}"),
                extra: json!({ "backend": backend }),
            };
            let config = EmuConfig {
                backend: args.backend.clone(),
                seed: args.seed,
                ..EmuConfig::default()
            };
            Ok((Target::Emu(config), describe))
        }
    }
}

pub fn run(args: &TuneArgs) -> Result<()> {
    let file = jobs::parse_file(&args.job_file)?;
    if file.jobs.is_empty() {
        bail!("{}: no jobs to run", args.job_file.display());
    }
    let (target, describe) = target(args)?;
    if !args.quiet {
        print_notes(&file);
    }
    let cfg = TuneConfig {
        runtime: Some(args.runtime),
        percentile: args.percentile,
        tolerance: args.tolerance,
        ..TuneConfig::new(target)
    };
    // A line per run started, on a terminal only (as the other verbs'
    // progress bars), so that an error stays the one line on stderr.
    let show = !args.quiet && std::io::stderr().is_terminal();
    let t = tune::tune(&file.jobs, &cfg, &|step| {
        if show {
            eprintln!("tune: {step}");
        }
    })
    .map_err(|e| match e {
        TuneError::Sim(e) => sim_error(&args.job_file, e),
        TuneError::Emu(e) => emu_error(&args.job_file, e),
        TuneError::NoGaps => anyhow!("{}: {e}", args.job_file.display()),
        TuneError::Config(e) => anyhow!(e),
    })?;
    let workload = args.job_file.display().to_string();
    print!("{}", render(&t, &workload, &describe, args));
    if let Some(dir) = &args.out {
        write_out(dir, &t, &workload, &describe, args)?;
    }
    Ok(())
}

/// `0.01` as `1%`, `0.005` as `0.5%`.
fn percent(fraction: f64) -> String {
    let s = format!("{:.6}", fraction * 100.0);
    format!("{}%", s.trim_end_matches('0').trim_end_matches('.'))
}

/// The recommendation on one line, then how it was read, then the sweep.
fn render(t: &Tuning, workload: &str, d: &Describe, args: &TuneArgs) -> String {
    let p = t.percentile;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "delta = {} (p{p} of completion gaps), thr = {} (IOPS within {} of the plateau from thr={} up)",
        policy::format_nanos(t.delta),
        t.thr,
        percent(t.tolerance),
        t.thr
    );
    let _ = writeln!(
        out,
        "  workload: {workload} on {} ({}, seed {}, {} per run)",
        d.on,
        d.mode,
        args.seed,
        policy::format_nanos(args.runtime)
    );
    let g = &t.gaps;
    let _ = writeln!(
        out,
        "  completion gaps under default (per CQ, {} gaps): p50={} p90={} p99={} max={}",
        g.count,
        fmt_time(g.value_at(0.5)),
        fmt_time(g.value_at(0.9)),
        fmt_time(g.value_at(0.99)),
        fmt_time(g.max())
    );
    let _ = writeln!(
        out,
        "  delta: p{p} is {}; delta is the next whole microsecond above it",
        fmt_time(t.gap_at_percentile)
    );
    let _ = writeln!(
        out,
        "\nthr sweep (adaptive, delta={}):",
        policy::format_nanos(t.delta)
    );
    let _ = writeln!(
        out,
        "  {:>7} {:>10} {:>10} {:>10} {:>11}",
        "thr", "IOPS", "irq/s", "compl/irq", "mean clat"
    );
    let row = |out: &mut String, label: String, p: &tune::Point| {
        let _ = writeln!(
            out,
            "  {label:>7} {:>10.0} {:>10.0} {:>10.2} {:>11}",
            p.iops,
            p.irq_per_sec,
            p.completions_per_irq,
            fmt_time(p.mean_clat_ns.round() as u64)
        );
    };
    row(&mut out, "default".into(), &t.baseline);
    for p in &t.sweep {
        let thr = p.thr.unwrap_or_default();
        let label = if thr == t.thr {
            format!("*{thr}")
        } else {
            thr.to_string()
        };
        row(&mut out, label, p);
    }
    out
}

/// The two figures and the numbers, each file whole or not at all.
fn write_out(dir: &Path, t: &Tuning, workload: &str, d: &Describe, args: &TuneArgs) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    let name = Path::new(workload)
        .file_stem()
        .map_or(workload.to_string(), |s| s.to_string_lossy().into_owned());
    let cdf = tune::plot::cdf_svg(
        t,
        &format!("completion gaps: {name}, {} ({})", d.short, d.mode),
    )
    .map_err(|e| anyhow!(e))?;
    let thr = tune::plot::thr_svg(
        t,
        &format!(
            "thr sweep: adaptive delta={}, {name} on {} ({})",
            policy::format_nanos(t.delta),
            d.on,
            d.mode
        ),
    )
    .map_err(|e| anyhow!(e))?;
    let mut v = json!({
        "workload": workload,
        "mode": d.mode,
    });
    for (k, x) in d.extra.as_object().into_iter().flatten() {
        v[k] = x.clone();
    }
    v["seed"] = json!(args.seed);
    v["runtime_ns"] = json!(args.runtime);
    for (k, x) in t.to_json().as_object().into_iter().flatten() {
        v[k] = x.clone();
    }
    let mut text = serde_json::to_string_pretty(&v).expect("a JSON value always serializes");
    text.push('\n');
    write_atomically(&dir.join("tune-cdf.svg"), cdf.as_bytes())?;
    write_atomically(&dir.join("tune-thr.svg"), thr.as_bytes())?;
    write_atomically(&dir.join("tune.json"), text.as_bytes())?;
    if !args.quiet {
        eprintln!(
            "tune: wrote {}, {} and {}",
            dir.join("tune-cdf.svg").display(),
            dir.join("tune-thr.svg").display(),
            dir.join("tune.json").display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_in_0_to_100() {
        assert_eq!(percentile("90"), Ok(90.0));
        assert_eq!(percentile("99.9"), Ok(99.9));
        assert_eq!(percentile("100"), Ok(100.0));
        for bad in ["0", "-5", "100.1", "abc", "90%", "NaN", ""] {
            let e = percentile(bad).unwrap_err();
            assert!(e.contains("(0, 100]"), "{bad}: {e}");
        }
    }

    #[test]
    fn tolerances_are_percentages() {
        assert_eq!(tolerance("1%"), Ok(0.01));
        assert_eq!(tolerance("0%"), Ok(0.0));
        assert_eq!(tolerance("0.5%"), Ok(0.005));
        for bad in ["1", "0.01", "100%", "-1%", "x%", "%", "NaN%"] {
            let e = tolerance(bad).unwrap_err();
            assert!(e.contains("such as 1%"), "{bad}: {e}");
        }
    }

    #[test]
    fn percents_print_short() {
        assert_eq!(percent(0.01), "1%");
        assert_eq!(percent(0.005), "0.5%");
        assert_eq!(percent(0.07), "7%");
        assert_eq!(percent(0.0), "0%");
    }
}
