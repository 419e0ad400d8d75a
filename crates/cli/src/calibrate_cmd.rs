//! `cinterrupts calibrate`: the simulator's host model against the paper's
//! costs, target by target, and the one fit of its free constants
//! (`sim::calibrate`).

use anyhow::Result;
use clap::Args;

use crate::args;
use sim::calibrate::{self, text};

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
          value_parser = calibrate::device::parse_hold_out)]
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
    /// With --device-from: reorder a trace whose times go backwards
    /// (further than its format allows) through a window of 65,536
    /// requests, instead of refusing it
    #[arg(long, requires = "device_from")]
    pub sort: bool,
}

/// `calibrate --device-from TRACE`: the fit, its errors, the profile.
fn run_device(a: &CalibrateArgs, trace: &std::path::Path) -> Result<()> {
    use anyhow::Context;
    let loss = crate::trace_input::partial(trace);
    let order = crate::trace_input::order(a.sort);
    let mut f =
        calibrate::device::fit_trace(trace, a.format, a.comm.as_deref(), a.hold_out, order)?;
    if let Some(loss) = &loss {
        // The profile says it too: it was fitted from a trace that lost
        // requests.
        f.profile = format!("# partial trace: {loss}\n{}", f.profile);
    }
    out!("{}", f.text());
    if let Some(loss) = &loss {
        out!("{}", crate::trace_input::partial_line(loss));
    }
    match &a.output {
        Some(p) => {
            report::file::write_atomically(p, f.profile.as_bytes())
                .with_context(|| format!("{}: cannot write", p.display()))?;
            outln!("profile: {}", p.display());
        }
        None => out!("\n{}", f.profile),
    }
    Ok(())
}

fn run_kvell(a: &CalibrateArgs, shipped: &calibrate::Setup) -> Result<()> {
    use calibrate::kvell;
    let at = a.worker_request_ns.unwrap_or(kvell::WORKER_REQUEST_NS);
    if !a.fit {
        let targets = kvell::targets(shipped, at, a.runtime, kvell::Which::All)?;
        out!("{}", text::kvell_targets(&targets, at));
        return Ok(());
    }
    let fit = kvell::fit(
        shipped,
        at,
        a.runtime,
        a.max_evals as usize,
        &mut |n, w, t| eprintln!("{}", text::kvell_evaluation(n, w, t)),
    )?;
    out!("{}", text::kvell_fitted(&fit, a.runtime));
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
    out!("{}", m.table());
    hostcal::write_profile(&m, &out)?;
    outln!("wrote {} (`sim --host {}`)", out.display(), out.display());
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
        out!(
            "{}",
            text::shipped(&calibrate::targets(&shipped, a.runtime)?)
        );
        return Ok(());
    }
    let fit = calibrate::fit(&shipped, a.runtime, a.max_evals as usize, &mut |n, h, o| {
        eprintln!("{}", text::evaluation(n, h, o))
    })?;
    out!("{}", text::fitted(&fit, &shipped, a.runtime));
    Ok(())
}
