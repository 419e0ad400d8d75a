//! `cinterrupts sim`: runs a fio job file on the simulator and prints fio-like
//! results (or fio-shaped JSON).

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};
use clap::Args;
use policy::PolicySpec;
use report::RunReport;
use sim::{with_device_defaults, DeviceProfile, HostProfile, SimConfig, SimError};

use crate::args::{self, OutputFormat, PolicyArgs, RunOutput};
use crate::jobs_cmd::print_notes;
use crate::output::emit;
use crate::progress::Progress;

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
    /// Block-layer scheduler between the jobs and the device, instead of
    /// the host profile's `block_scheduler` (default none): `none`, or
    /// FastResponse's Limited Depth, `ld[,tokens=N][,split=SIZE][,opportunistic]`
    /// (8 tokens bound the non-critical pieces in flight, non-critical
    /// requests split into 32k pieces, critical jobs bypass it)
    #[arg(long, value_name = "none|ld[,...]")]
    pub block_scheduler: Option<sim::BlockScheduler>,
    /// How a blocking job's thread learns of its completion, instead of
    /// the host profile's `completion` (default interrupt): `interrupt`,
    /// `poll` (spins on its queue, no interrupt, its CPU busy), `hybrid`
    /// (sleeps half its size bucket's mean latency, then spins: Linux's
    /// io_poll_delay=0) or `select-isr` (critical=1 jobs poll, the rest
    /// take interrupts). A job with fio's `hipri` (pvsync2, io_uring) polls
    /// whatever the mode: hybrid under `hybrid`, else classic
    #[arg(long, value_name = "interrupt|poll|hybrid|select-isr")]
    pub completion: Option<sim::Completion>,
    /// How an io_uring job's thread waits for its completions, instead of
    /// the host profile's `uring` (default min-complete): `min-complete`
    /// (CQEs posted by the interrupt, woken once min_complete are there),
    /// `task-work` (woken for every interrupt, Linux 6.x without
    /// DEFER_TASKRUN), `defer-taskrun` (completions run only when the
    /// thread enters the kernel), `min-wait=TIME[,nr=N][,timeout=TIME]`
    /// (Linux 6.12's io_uring_submit_and_wait_min_timeout), `iopoll` or
    /// `sqpoll`. A job's own hipri (IOPOLL) or sqthread_poll (SQPOLL) wins
    #[arg(long, value_name = "STRATEGY", value_parser = host::uring::parse)]
    pub uring: Option<host::uring::Strategy>,
    /// The CPU scheduler's wake-up preemption rule, instead of the host
    /// profile's `wakeup_rule` (default plain): `plain` (preempt beyond the
    /// profile's sched_wakeup_granularity), `vanilla` (Linux CFS, its next
    /// buddy, the granularity from the core count: 4 ms for 8 or more),
    /// `boost` (FastResponse's critical boost, FR Alg. 1: a critical job's
    /// wake-up preempts at once) or `boost-code` (the authors' code)
    #[arg(long, value_name = "plain|vanilla|boost|boost-code")]
    pub wakeup: Option<sim::Wakeup>,
    /// The ext4 journal mode for jobs with fsync=N or fdatasync=N, instead
    /// of the host profile's `journal` (default ordered): `ordered` (ext4
    /// data=ordered: the file's data D1, then the JBD2 thread writes other
    /// files' dirty data D2, the journal JD and the commit block JC) or
    /// `fjournal` (FastResponse's file-level journaling: a critical job
    /// writes D1 and its own f-transaction, no JBD2)
    #[arg(long, value_name = "ordered|fjournal")]
    pub journal: Option<sim::Journal>,
    /// Run the JBD2 journal thread as critical (FastResponse 4.4): its
    /// journal writes bypass the block layer's limit and its wake-ups are
    /// boosted, instead of the host profile's `jbd2_critical` (default off)
    #[arg(long)]
    pub jbd2_critical: bool,
    /// Poll the fsync path's I/Os (D1, D2, JD, JC, the f-transaction) of
    /// the threads the completion mode polls for (FastResponse 4.4's
    /// SelectISR), instead of the host profile's `fsync_io_polls` (default
    /// off: they complete by interrupt, as in Linux)
    #[arg(long)]
    pub fsync_io_polls: bool,
    #[command(flatten)]
    pub out: RunOutput,
}

/// A simulator error on one line; one about a job names the job file too, as
/// every other error about a file does.
pub fn sim_error(job_file: &Path, e: SimError) -> anyhow::Error {
    match e {
        SimError::Job { .. } | SimError::NothingMeasured { .. } => {
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

/// Everything `simulate` needs, checked before the run so a mistake costs
/// no simulation time.
pub fn config(
    policy: PolicySpec,
    device: &str,
    host: &str,
    seed: u64,
    runtime: Option<u64>,
) -> Result<SimConfig> {
    let device = DeviceProfile::load(device)?;
    let host = HostProfile::load(host)?;
    let policy = with_device_defaults(policy, &device);
    policy::build(&policy)?;
    Ok(SimConfig {
        device,
        host,
        policy,
        seed,
        runtime,
    })
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
    let mut config = config(
        args.policy.spec(),
        &args.device,
        &args.host,
        args.seed,
        args.runtime,
    )?;
    host_settings(args, &mut config);
    if !args.out.quiet {
        print_notes(&file);
    }
    let mut progress = Progress::new(args.out.quiet);
    let result = sim::simulate(&file.jobs, &config, &mut |now, end| {
        progress.update(now, end)
    });
    progress.finish();
    let report = result.map_err(|e| sim_error(job_file, e))?;
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
    let mut ios = Vec::new();
    for r in traces::open(trace, args.trace_format)? {
        let r = r?;
        if args
            .comm
            .as_ref()
            .is_some_and(|c| r.comm.as_ref() != Some(c))
        {
            continue;
        }
        if ios.len() == sim::replay::MAX_REQUESTS {
            bail!(
                "{}: more than {} requests, the most a replay holds",
                trace.display(),
                sim::replay::MAX_REQUESTS
            );
        }
        ios.push(sim::replay::TraceIo {
            issue_ns: r.issue_ns,
            complete_ns: r.complete_ns,
            bytes: u64::from(r.bytes),
            write: r.write,
            marks: crate::coalesce_trace::marks_of(&[], &r),
            pid: r.pid,
        });
    }
    let mut config = config(
        args.policy.spec(),
        &args.device,
        &args.host,
        args.seed,
        args.runtime,
    )?;
    host_settings(args, &mut config);
    let mut progress = Progress::new(args.out.quiet);
    let result = sim::replay::simulate_trace(ios, args.replay_loop, &config, &mut |now, end| {
        progress.update(now, end)
    });
    progress.finish();
    let (report, _, drift) = result.map_err(|e| anyhow!("{}: {e}", trace.display()))?;
    let out = match args.out.format {
        OutputFormat::Normal => render(&report, args.out.format) + &drift.render(),
        OutputFormat::Json => {
            let mut doc: serde_json::Value =
                serde_json::from_str(&report::json::document(&report))?;
            doc["replay"] = serde_json::to_value(&drift)?;
            serde_json::to_string_pretty(&doc)? + "\n"
        }
    };
    emit(&out, args.out.file.as_deref())
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
    let mut config = config(
        args.policy.spec(),
        &args.device,
        &args.host,
        args.seed,
        Some(args.runtime.unwrap_or(APP_RUNTIME)),
    )?;
    host_settings(args, &mut config);
    let mut progress = Progress::new(args.out.quiet);
    let result = sim::simulate_app(threads, &config, &mut |now, end| progress.update(now, end));
    progress.finish();
    let (report, _) = result.map_err(|e| anyhow!("{}: {e}", job_file.display()))?;
    emit(&render(&report, args.out.format), args.out.file.as_deref())
}

/// The host-side flags over the host profile's own settings.
fn host_settings(args: &SimArgs, config: &mut SimConfig) {
    if let Some(scheduler) = &args.block_scheduler {
        config.host.block_scheduler = scheduler.clone();
    }
    if let Some(uring) = args.uring {
        config.host.uring = uring;
    }
    if let Some(completion) = args.completion {
        config.host.completion = completion;
    }
    if let Some(rule) = args.wakeup {
        config.host.wakeup_rule = rule;
    }
    if let Some(journal) = args.journal {
        config.host.journal = journal;
    }
    if args.jbd2_critical {
        config.host.jbd2_critical = true;
    }
    if args.fsync_io_polls {
        config.host.fsync_io_polls = true;
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
        let e = SimError::Job {
            job: "x".into(),
            line: 12,
            reason: "too deep".into(),
        };
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
