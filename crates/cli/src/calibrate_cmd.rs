//! `cinterrupts calibrate`: the simulator's host model against the paper's
//! costs, target by target, and the one fit of its free constants
//! (`sim::calibrate`).

use anyhow::Result;
use clap::Args;

use crate::args;
use sim::calibrate::{self, Target};

#[derive(Args, Debug)]
pub struct CalibrateArgs {
    /// Virtual time each run simulates
    #[arg(long, value_parser = args::runtime, default_value = "200ms", value_name = "TIME")]
    pub runtime: u64,
    /// Fit the host's free constants against every target together
    /// (Nelder-Mead from the shipped values) and print the fit
    #[arg(long)]
    pub fit: bool,
    /// The fit's budget: evaluations of every target
    #[arg(long, default_value_t = 300, value_name = "N",
          value_parser = clap::value_parser!(u64).range(10..=100_000))]
    pub max_evals: u64,
    /// Calibrate an application model's free constant instead of the host:
    /// `kvell` (its worker CPU per request, against TOS Table 5 and Fig 23)
    #[arg(long, value_parser = ["kvell"], value_name = "APP")]
    pub app: Option<String>,
    /// With --app kvell: the worker CPU per request to evaluate (or, with
    /// --fit, to start from); default the shipped value
    #[arg(long, value_name = "NS", requires = "app",
          value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub worker_request_ns: Option<u64>,
    /// Fit a device profile from a block trace instead (issue 27 item 6):
    /// service time by direction and size, parallelism, IOPS, delta; the
    /// fit's error at p50..p99.99 on a held-out part
    #[arg(long, value_name = "TRACE", conflicts_with_all = ["fit", "app"])]
    pub device_from: Option<std::path::PathBuf>,
    /// The trace's format, when its first bytes do not say
    #[arg(long, value_name = "NAME", requires = "device_from",
          value_parser = |s: &str| traces::Format::from_name(s).ok_or_else(|| format!("'{s}' is not a trace format")))]
    pub format: Option<traces::Format>,
    /// The fraction of the trace (its end) held out to measure the fit
    #[arg(long, value_name = "FRACTION", default_value_t = 0.3, requires = "device_from",
          value_parser = hold_out)]
    pub hold_out: f64,
    /// Only the requests this command name issued (the trace's `comm`:
    /// a capture of one program on a shared disk holds others' I/O too)
    #[arg(long, value_name = "NAME", requires = "device_from")]
    pub comm: Option<String>,
    /// Write the profile here: the fitted device (`--device-from`, a file
    /// `sim --device` takes) or the measured host (`--host`, a file `sim
    /// --host` takes; default measured-host.toml)
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
    /// Measure this machine's host costs instead (issue 37 item 4,
    /// crates/hostcal): system call, switches, wake-ups, timers, the root
    /// disk's interrupts and QD1 path, io_uring, copies; writes a host
    /// profile whose every constant names its benchmark (needs root for
    /// the interrupt tracepoints)
    #[arg(long, conflicts_with_all = ["fit", "app", "device_from", "worker_request_ns"])]
    pub host: bool,
    /// With --host: a few seconds' run (3 rounds, a tenth of the
    /// iterations), for tests
    #[arg(long, requires = "host")]
    pub quick: bool,
}

fn hold_out(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("'{s}' is not a fraction"))?;
    if (0.0..=0.9).contains(&v) {
        Ok(v)
    } else {
        Err(format!("'{s}': between 0 and 0.9"))
    }
}

/// `calibrate --device-from TRACE`: the fit, its errors, the profile.
fn run_device(a: &CalibrateArgs, trace: &std::path::Path) -> Result<()> {
    use anyhow::Context;
    let mut samples = Vec::new();
    let mut skipped = 0u64;
    for r in traces::open(trace, a.format)? {
        let r = r?;
        if a.comm.as_ref().is_some_and(|c| r.comm.as_ref() != Some(c)) {
            skipped += 1;
            continue;
        }
        match r.complete_ns {
            Some(done) if !r.flush && !r.discard && r.bytes > 0 => {
                samples.push(service::fit::Sample {
                    write: r.write,
                    bytes: u64::from(r.bytes),
                    issue: r.issue_ns,
                    complete: done,
                })
            }
            _ => skipped += 1,
        }
    }
    if samples.len() < 10 {
        anyhow::bail!(
            "{}: {} requests with an issue and a completion time; a fit needs at least 10",
            trace.display(),
            samples.len()
        );
    }
    let f = service::fit::fit(&samples, a.hold_out, 1);
    println!(
        "{}: {} requests fitted and held out ({} skipped: another command's, without a completion time, flushes, discards)",
        trace.display(),
        samples.len(),
        skipped
    );
    println!(
        "parallelism {} (most in flight); busiest 100 ms: {} read, {} write IOPS; delta {} (TOS 5.2: p90 completion gap)",
        f.parallelism,
        f.max_read_iops,
        f.max_write_iops,
        policy::time::readable(f.delta)
    );
    for (name, d) in [("read", &f.read), ("write", &f.write)] {
        let Some(d) = d else { continue };
        let t = &d.time;
        println!(
            "{name}: {:?} mean {} sd {} floor {} per KiB {} ({} fitted, {} held out)",
            t.distribution,
            policy::time::readable(t.mean),
            policy::time::readable(t.stddev),
            policy::time::readable(t.floor),
            policy::time::readable(t.per_kib),
            d.fitted,
            d.held_out
        );
        for (q, seen, model, err) in &d.errors {
            println!(
                "  p{:<7} held out {:>10}  fitted model {:>10}  error {:+.1}%",
                q * 100.0,
                policy::time::readable(*seen),
                policy::time::readable(*model),
                err * 100.0
            );
        }
    }
    let name = trace
        .file_stem()
        .map_or("fitted".to_string(), |s| s.to_string_lossy().into_owned());
    let text = f
        .profile(&name, &trace.display().to_string())
        .context("no direction to fit")?;
    // The profile is one the simulator reads: checked before it is kept.
    sim::DeviceProfile::parse(&text, "the fitted profile")?;
    match &a.output {
        Some(p) => {
            report::file::write_atomically(p, text.as_bytes())
                .with_context(|| format!("{}: cannot write", p.display()))?;
            println!("profile: {}", p.display());
        }
        None => print!("\n{text}"),
    }
    Ok(())
}

fn table(title: &str, targets: &[Target]) {
    println!(
        "{:<62} {:>11} {:>11} {:>7}  source",
        title, "paper", "model", "ratio"
    );
    for t in targets {
        println!(
            "{:<62} {:>11} {:>11} {:>6.2}x  {}{}",
            t.what,
            format!("{} {}", t.paper, t.unit),
            format!("{:.1} {}", t.model, t.unit),
            t.ratio(),
            t.source,
            if t.fitted { "" } else { " [not fitted]" }
        );
    }
    println!(
        "objective (sum of squared log ratios, fitted targets): {:.4}",
        calibrate::objective(targets)
    );
}

/// Each target's residual, ln(model / paper), fitted targets first.
fn residuals(targets: &[Target]) {
    println!("residuals ln(model/paper):");
    for t in targets {
        println!(
            "  {:>+7.3}  {}{}",
            t.ratio().max(1e-9).ln(),
            t.what,
            if t.fitted { "" } else { " [validation]" }
        );
    }
}

fn run_kvell(a: &CalibrateArgs, shipped: &calibrate::Setup) -> Result<()> {
    use calibrate::kvell;
    let shipped_value = kvell::WORKER_REQUEST_NS;
    let at = a.worker_request_ns.unwrap_or(shipped_value);
    let fmt = policy::time::format_nanos;
    if !a.fit {
        let targets = kvell::targets(shipped, at, a.runtime, kvell::Which::All)?;
        table(
            &format!(
                "target (kvell worker_request_ns {}, xeon-e5-2660v4, optane)",
                fmt(at)
            ),
            &targets,
        );
        residuals(&targets);
        println!(
            "\nworker_request_ns is the fit's (`cinterrupts calibrate --app kvell --fit`; \
             shipped {}, apps::kvell::WORKER_REQUEST_NS).",
            fmt(shipped_value)
        );
        return Ok(());
    }
    let fit = kvell::fit(
        shipped,
        at,
        a.runtime,
        a.max_evals as usize,
        &mut |n, w, t| {
            eprintln!(
                "evaluation {n}: worker_request_ns {}: objective {:.4} ({})",
                fmt(w),
                calibrate::objective(t),
                t.iter()
                    .map(|t| format!("{:.2}", t.model))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        },
    )?;
    table(
        &format!("before: worker_request_ns {}", fmt(fit.from)),
        &fit.before,
    );
    println!();
    table(
        &format!("after: worker_request_ns {}", fmt(fit.fitted)),
        &fit.after,
    );
    residuals(&fit.after);
    println!(
        "\nfitted in {} evaluations (runs of {} each, seed 1): worker_request_ns {} -> {} \
         (search bounds {} .. {})",
        fit.evaluations,
        fmt(a.runtime),
        fmt(fit.from),
        fmt(fit.fitted),
        fmt(kvell::LO),
        fmt(kvell::HI),
    );
    let c = kvell::WorkerCosts::scaled(fit.fitted);
    println!(
        "  split per request: index lookup {}, dequeue (scan item) {}, iocb {}, callback {}",
        fmt(c.index_lookup),
        fmt(c.dequeue),
        fmt(c.iocb),
        fmt(c.callback)
    );
    Ok(())
}

/// `calibrate --host`: the measurement, its table, the profile.
fn run_host(a: &CalibrateArgs) -> Result<()> {
    let out = a
        .output
        .clone()
        .unwrap_or_else(|| "measured-host.toml".into());
    // Before measuring: a bad -o costs nothing and writes nothing.
    hostcal::check_output(&out)?;
    let o = if a.quick {
        hostcal::Options::quick()
    } else {
        hostcal::Options::default()
    };
    let m = hostcal::measure(&o)?;
    print!("{}", m.table());
    hostcal::write_profile(&m, &out)?;
    println!("wrote {} (`sim --host {}`)", out.display(), out.display());
    Ok(())
}

pub fn run(a: &CalibrateArgs) -> Result<()> {
    if a.host {
        return run_host(a);
    }
    if a.output.is_some() && a.device_from.is_none() {
        anyhow::bail!("-o: only with --device-from or --host");
    }
    if let Some(trace) = &a.device_from {
        return run_device(a, trace);
    }
    let shipped = calibrate::Setup::shipped()?;
    if a.app.is_some() {
        return run_kvell(a, &shipped);
    }
    if !a.fit {
        table(
            "target (shipped profiles xeon-e5-2660v4, optane, p3700)",
            &calibrate::targets(&shipped, a.runtime)?,
        );
        println!(
            "\nThe free constants ({}) are the fit's (`cinterrupts calibrate --fit`); \
             profiles/hosts/xeon-e5-2660v4.toml gives every constant's source.",
            calibrate::FREE
                .iter()
                .map(|f| f.key)
                .collect::<Vec<_>>()
                .join(", ")
        );
        return Ok(());
    }
    let fit = calibrate::fit(&shipped, a.runtime, a.max_evals as usize, &mut |n, h, o| {
        eprintln!(
            "evaluation {n}: objective {o:.4} ({})",
            calibrate::FREE
                .iter()
                .map(|f| format!("{} {}", f.key, policy::time::format_nanos(f.get(h))))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })?;
    table("before: the shipped profiles", &fit.before);
    println!();
    table("after: the fitted host", &fit.after);
    println!(
        "\nfitted in {} evaluations (runs of {} each):",
        fit.evaluations,
        policy::time::format_nanos(a.runtime)
    );
    for ((key, from, to), free) in fit.constants.iter().zip(calibrate::FREE) {
        println!(
            "  {key:<20} {:>9} -> {:>9}   {}",
            policy::time::format_nanos(*from),
            policy::time::format_nanos(*to),
            free.why
        );
    }
    let qd1 = calibrate::qd1_host_ns(&fit.setup.host);
    println!(
        "  QD1 host path {} (was {}): device read means optane {}, p3700 {} (Table 2 held)",
        policy::time::format_nanos(qd1),
        policy::time::format_nanos(calibrate::qd1_host_ns(&shipped.host)),
        policy::time::format_nanos(fit.setup.optane.read.mean),
        policy::time::format_nanos(fit.setup.p3700.read.mean),
    );
    Ok(())
}
