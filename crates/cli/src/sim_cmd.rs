//! `cinterrupts sim`: runs a fio job file on the simulator and prints fio-like
//! results (or fio-shaped JSON).

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};
use clap::Args;
use report::RunReport;
use sim::{SimConfig, SimError};

use crate::args::{self, OutputFormat, PolicyArgs, RunOutput};
use crate::jobs_cmd::print_notes;
use crate::output::emit;
use host::mechanism::KernelEra;
use point::command::SimRequest;
use report::progress::Progress;

#[derive(Args, Debug)]
pub struct SimArgs {
    /// fio job file, or an application file (`.toml`: YCSB on a KVell-like
    /// engine, RocksDB-like db_bench, its dump tool; examples/apps/)
    #[arg(required_unless_present = "trace", conflicts_with = "trace")]
    pub job_file: Option<PathBuf>,
    /// Replay a block trace instead of a job file (blkparse text, blktrace,
    /// fio iolog, biosnoop, MSR, Alibaba, Tencent, DiskSim): one simulated
    /// thread per trace process issuing its requests (size, direction;
    /// reads, sync writes and flushes Urgent, other writes unmarked, as
    /// `coalesce --trace`), then the replay's drift from the trace's timing
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// The trace's format, instead of detecting it
    #[arg(long, value_name = "NAME", requires = "trace", value_parser = crate::coalesce::trace_format)]
    pub trace_format: Option<traces::Format>,
    /// How the replay paces requests: `open` (each at its trace time: what
    /// this arrival stream costs on the modelled host and device) or
    /// `closed` (each process keeps as many in flight as it had when the
    /// request was recorded: what throughput and latency the application
    /// would get there)
    #[arg(
        long = "loop",
        value_name = "open|closed",
        default_value = "open",
        requires = "trace"
    )]
    pub replay_loop: sim::replay::Loop,
    /// Replay only the requests this command name issued (the trace's
    /// `comm`, as `calibrate --device-from --comm`): one program's I/O out
    /// of a capture that also saw other processes'
    #[arg(long, value_name = "NAME", requires = "trace")]
    pub comm: Option<String>,
    #[command(flatten)]
    pub fio: crate::args::FioArgs,
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Device profile: a shipped name or a .toml file. Without --delta or --thr,
    /// adaptive, cint and dynamic take the profile's tuned values (TOS 5.2):
    /// --device p3700 runs with delta 15us
    #[arg(long, default_value = "optane", value_name = "NAME|FILE")]
    pub device: String,
    /// Host profile: a shipped name or a .toml file
    #[arg(long, default_value = "xeon-e5-2660v4", value_name = "NAME|FILE")]
    pub host: String,
    /// Seed of every random draw; the same seed gives the same results
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seed: u64,
    /// Every job's runtime in virtual time (e.g. 10s, 500ms; a bare number
    /// is seconds), instead of the
    /// job file's runtime=, as fio's --runtime: it caps a size-bounded job
    /// (which ends earlier when its size is done) and loops a time_based one
    #[arg(long, value_parser = args::runtime, value_name = "TIME")]
    pub runtime: Option<u64>,
    /// The host mechanisms over the host profile's own (host::mechanism).
    #[command(flatten)]
    pub host_settings: crate::host_args::HostArgs<crate::host_args::Sim>,
    /// The cores' idle states over the host profile's (issue 37 item 2,
    /// host::cpuidle): off, skx, icx, spr (Linux intel_idle's tables),
    /// haltpoll (a KVM guest's) or poll
    #[arg(long, value_name = "TABLE", value_parser = host::cpuidle::Table::parse)]
    pub idle_states: Option<host::cpuidle::Table>,
    /// The cpuidle governor: menu, teo or haltpoll
    #[arg(long, value_name = "NAME", value_parser = host::cpuidle::GovernorKind::parse)]
    pub idle_governor: Option<host::cpuidle::GovernorKind>,
    /// A global CPU latency limit (/dev/cpu_dma_latency), as `10us`
    #[arg(long, value_name = "TIME", value_parser = crate::args::duration)]
    pub cpu_latency_limit: Option<u64>,
    #[command(flatten)]
    pub out: RunOutput,
    /// How a trace's requests are marked (marks::trace): table1 (reads,
    /// sync writes, flushes Urgent; the default), plug (Barrier on a
    /// plugged batch's last), class (latency-sensitive Urgent), process
    /// (blocking processes as table1, a batcher's bursts Barrier on their
    /// last) or none; the report then counts each mark
    #[arg(long, value_name = "RULE", requires = "trace")]
    pub marks_from: Option<marks::trace::MarksFrom>,
    /// Reorder a trace whose times go backwards (further than its format
    /// allows) through a window of 65,536 requests, instead of refusing it
    #[arg(long, requires = "trace")]
    pub sort: bool,
    /// The replay transforms (issue 41 item 6).
    #[command(flatten)]
    pub shape: crate::trace_shape::ShapeArgs,
    /// Volumes and queues (issue 41 item 4).
    #[command(flatten)]
    pub fleet: crate::fleet_cmd::FleetArgs,
}

/// A simulator error on one line; one about a job names the job file too, as
/// every other error about a file does.
pub fn sim_error(job_file: &Path, e: SimError) -> anyhow::Error {
    match e {
        SimError::Job(_) | SimError::NothingMeasured { .. } => {
            anyhow!("{}: {e}", job_file.display())
        }
        SimError::Config(_) | SimError::TooSlow { .. } => anyhow!(e),
    }
}

pub fn render(report: &RunReport, format: OutputFormat) -> String {
    match format {
        OutputFormat::Normal => report::text::render(report),
        OutputFormat::Json => report::json::document(report),
    }
}

/// An application file's virtual time when `--runtime` is not given: its
/// models need not end on their own (a KVell client's 20 M operations).
/// Ours: long enough for a p99 of a few thousand operations per second.
const APP_RUNTIME: u64 = policy::SEC;

/// Whether the file is an application file (issue 16) rather than a fio
/// job file: by its extension, as fio's job files have none of their own.
fn is_app_file(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "toml")
}

pub fn run(args: &SimArgs) -> Result<()> {
    if let Some(trace) = &args.trace {
        return run_trace(args, trace);
    }
    let job_file = args.job_file.as_deref().expect("clap requires a job file");
    if is_app_file(job_file) {
        return run_app(args, job_file);
    }
    let file = jobs::parse_file_with(job_file, &args.fio.command_line())?;
    if file.jobs.is_empty() {
        bail!("{}: no jobs to run", job_file.display());
    }
    let (config, mut era) = configured(args, args.runtime)?;
    point::command::check_jobs(&mut era, &file.jobs, job_file).map_err(anyhow::Error::msg)?;
    let kernel = era.kernel;
    if !args.out.quiet {
        print_notes(&file);
        say(&era.notes);
    }
    let mut progress = Progress::new(args.out.quiet);
    let result = sim::simulate(&file.jobs, &config, &mut |now, end| {
        progress.update(now, end)
    });
    progress.finish();
    let mut report = result.map_err(|e| sim_error(job_file, e))?;
    sim::era::name_the_kernel(&mut report, kernel);
    emit(&render(&report, args.out.format), args.out.file.as_deref())
}

/// A trace's replay (`sim --trace`, `sim::replay`): the report, then the
/// drift (text: after it; JSON: its `replay` object).
fn run_trace(args: &SimArgs, trace: &Path) -> Result<()> {
    if !args.fio.options.is_empty() || args.fio.default_marks.is_some() {
        bail!(
            "{}: --fio and --default-marks are fio's job options; a trace's requests are marked by TOS Table 1's logic",
            trace.display()
        );
    }
    let loss = crate::trace_input::partial(trace);
    if args.fleet.per_volume {
        let mut marker = sim::trace_marks::Marker::open(args.marks_from, trace, args.trace_format)
            .map_err(|e| anyhow!(e))?;
        let volumes = crate::fleet_cmd::Replay {
            trace,
            format: args.trace_format,
            order: crate::trace_input::order(args.sort),
            comm: args.comm.as_deref(),
            shape: &args.shape,
            fleet: &args.fleet,
            replay_loop: args.replay_loop,
            policy: &args.policy,
            out: &args.out,
        };
        let configure = |p| configured_for(args, p, args.runtime);
        return crate::fleet_cmd::per_volume(&volumes, &mut marker, &configure);
    }
    let (config, era) = configured(args, args.runtime)?;
    let kernel = era.kernel;
    let mut progress = Progress::new(args.out.quiet);
    let result = replay_trace(args, trace, &config, &era.notes, &mut |now, end| {
        progress.update(now, end)
    });
    progress.finish();
    let (mut report, _, drift, read) = result?;
    sim::era::name_the_kernel(&mut report, kernel);
    let shaped = crate::fleet_cmd::shaped(&args.shape, &args.fleet).then_some(read.outcome);
    let marker = read.marker.borrow();
    let out = match args.out.format {
        OutputFormat::Normal => {
            let partial = loss.as_deref().map(crate::trace_input::partial_line);
            let rule = args.fleet.queues_by.unwrap_or_default().rule();
            let shaped =
                shaped.map_or(String::new(), |o| o.render() + &format!("queues: {rule}\n"));
            render(&report, args.out.format)
                + &drift.render()
                + &shaped
                + &marker.line()
                + &partial.unwrap_or_default()
        }
        OutputFormat::Json => {
            let mut doc: serde_json::Value =
                serde_json::from_str(&report::json::document(&report))?;
            doc["replay"] = serde_json::to_value(&drift)?;
            if let Some(m) = marker.summary() {
                doc["marks"] = serde_json::to_value(m)?;
            }
            crate::trace_input::mark_json(&mut doc, loss.as_deref());
            if let Some(o) = shaped {
                doc["transforms"] = crate::trace_shape::json(&o);
                doc["queues"] = args.fleet.queues_by.unwrap_or_default().rule().into();
            }
            serde_json::to_string_pretty(&doc)? + "\n"
        }
    };
    emit(&out, args.out.file.as_deref())
}

/// What the last reading of a trace left: the marks it counted and the
/// transforms' counts (a replay made twice reads the trace twice; the
/// second reading's are the run's).
struct Read {
    marker: std::rc::Rc<std::cell::RefCell<sim::trace_marks::Marker>>,
    outcome: traces::transform::Outcome,
}

/// The trace read as a stream (`sim::replay::stream`, issue 41 item 3):
/// its time order checked or sorted (`--sort`), shaped by the transforms,
/// marked (`--marks-from`) and grouped into threads (`--queues-by`), then
/// replayed; read again if the run must be made twice. A row the reader
/// refuses is the error as the reader words it (file, line, field); any
/// other error names the trace.
fn replay_trace(
    args: &SimArgs,
    trace: &Path,
    config: &SimConfig,
    notes: &[String],
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(RunReport, sim::Audit, sim::replay::Drift, Read)> {
    let last: std::rc::Rc<std::cell::RefCell<Option<Read>>> = Default::default();
    let open = || -> std::result::Result<sim::replay::Stream, String> {
        let marker = std::rc::Rc::new(std::cell::RefCell::new(sim::trace_marks::Marker::open(
            args.marks_from,
            trace,
            args.trace_format,
        )?));
        let (requests, outcome) = crate::trace_shape::open(
            trace,
            args.trace_format,
            crate::trace_input::order(args.sort),
            &args.shape.shape(),
        )
        .map_err(|e| e.to_string())?;
        let s = sim::fleet::stream(
            requests,
            args.comm.clone(),
            args.fleet.queues_by.unwrap_or_default(),
            std::rc::Rc::clone(&marker),
        );
        *last.borrow_mut() = Some(Read { marker, outcome });
        Ok(Box::new(s))
    };
    let ios = open().map_err(|e| anyhow!(e))?;
    // The stream's own error, kept apart from the simulator's.
    let bad: std::rc::Rc<std::cell::RefCell<Option<String>>> = Default::default();
    let watch = |s: sim::replay::Stream| -> sim::replay::Stream {
        let bad = std::rc::Rc::clone(&bad);
        Box::new(s.inspect(move |r| {
            if let Err(e) = r {
                bad.borrow_mut().get_or_insert_with(|| e.clone());
            }
        }))
    };
    let mut again = || open().map(&watch);
    let mut said = false;
    let mut shown = |now: u64, end: u64| {
        if !said && !args.out.quiet {
            // After the first read: a bad first row is refused before them.
            say(notes);
            said = true;
        }
        progress(now, end)
    };
    let result = sim::replay::simulate_stream_with(
        watch(ios),
        Some(&mut again),
        args.replay_loop,
        config,
        &mut shown,
    );
    if let Some(e) = bad.borrow_mut().take() {
        bail!(e);
    }
    if !said && !args.out.quiet {
        say(notes);
    }
    let (report, audit, drift) = result.map_err(|e| anyhow!("{}: {e}", trace.display()))?;
    let read = last.borrow_mut().take().expect("the trace was read");
    Ok((report, audit, drift, read))
}

/// An application file's run: its instances' threads on their cores.
fn run_app(args: &SimArgs, job_file: &Path) -> Result<()> {
    if !args.fio.options.is_empty() || args.fio.default_marks.is_some() {
        bail!(
            "{}: --fio and --default-marks are fio's job options; an application file sets its engines' own keys (default_marks in a kvell instance)",
            job_file.display()
        );
    }
    let file = apps::file::AppFile::load(job_file)?;
    let threads = file.threads(args.seed)?;
    let mut again = || file.threads(args.seed).map_err(|e| e.to_string());
    let (config, era) = configured(args, Some(args.runtime.unwrap_or(APP_RUNTIME)))?;
    let kernel = era.kernel;
    if !args.out.quiet {
        say(&era.notes);
    }
    let mut progress = Progress::new(args.out.quiet);
    let result = sim::simulate_app_with(threads, &mut again, &config, &mut |now, end| {
        progress.update(now, end)
    });
    progress.finish();
    let (mut report, _) = result.map_err(|e| anyhow!("{}: {e}", job_file.display()))?;
    sim::era::name_the_kernel(&mut report, kernel);
    emit(&render(&report, args.out.format), args.out.file.as_deref())
}

/// The run's configuration from the command line, `runtime` for it, and
/// the kernel it models (`point::command`).
fn configured(args: &SimArgs, runtime: Option<u64>) -> Result<(SimConfig, KernelEra)> {
    configured_for(args, args.policy.spec(), runtime)
}

/// [`configured`] with another strategy (`--per-volume`'s each).
fn configured_for(
    args: &SimArgs,
    policy: policy::PolicySpec,
    runtime: Option<u64>,
) -> Result<(SimConfig, KernelEra)> {
    Ok(SimRequest {
        policy,
        device: &args.device,
        host: &args.host,
        seed: args.seed,
        runtime,
        host_settings: &args.host_settings.settings,
        kernel: args.host_settings.kernel,
        idle_states: args.idle_states,
        idle_governor: args.idle_governor,
        cpu_latency_limit: args.cpu_latency_limit,
    }
    .configure()?)
}

/// The kernel era's notes (patches run as ports, a profile taken to
/// another kernel), after every check that could refuse the run.
fn say(notes: &[String]) {
    for n in notes {
        eprintln!("note: {n}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_format_picks_the_renderer() {
        let r = RunReport {
            mode: Some(report::Mode::Sim),
            ..Default::default()
        };
        assert!(render(&r, OutputFormat::Json).ends_with("}\n"));
        assert!(render(&r, OutputFormat::Normal).starts_with("cinterrupts (sim): "));
    }

    #[test]
    fn job_errors_name_the_job_file() {
        let e = SimError::Job(jobs::Refused {
            job: "x".into(),
            line: 12,
            reason: "too deep".into(),
        });
        assert_eq!(
            sim_error(Path::new("examples/x.fio"), e).to_string(),
            "examples/x.fio: job 'x' (line 12): too deep"
        );
        let e = SimError::Config("no cores".into());
        assert_eq!(
            sim_error(Path::new("examples/x.fio"), e).to_string(),
            "no cores"
        );
    }
}
