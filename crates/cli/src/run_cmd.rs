//! `cinterrupts run`: runs a fio job file on the emulator (real I/O, real
//! interrupt costs) and prints the same results as `cinterrupts sim`.

use std::path::PathBuf;

use anyhow::{anyhow, bail, Result};
use clap::Args;
use emu::backend::BackendSpec;
use emu::Delivery;
use emu::{EmuConfig, EmuError};
use sim::DeviceProfile;

use crate::args::{self, PolicyArgs, RunOutput};
use crate::jobs_cmd::print_notes;
use crate::output::emit;
use crate::sim_cmd::render;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// fio job file
    pub job_file: PathBuf,
    #[command(flatten)]
    pub fio: crate::args::FioArgs,
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Where commands run: file:PATH (io_uring, O_DIRECT; laid out when
    /// missing or short) or null:LATENCY[,depth=N]; fault injection with
    /// ,error_every=N (and ,corrupt_every=N on a file). Default: the job
    /// file's filename=
    #[arg(long, value_parser = BackendSpec::parse, value_name = "SPEC")]
    pub backend: Option<BackendSpec>,
    /// Instead of --backend, a modelled device: a shipped profile (optane,
    /// p3700, optane-900p) or a .toml file, as `sim --device` takes. Nothing
    /// is transferred; each command takes a service time drawn from the
    /// profile's distribution, on its units, under its IOPS (and bandwidth)
    /// ceiling
    #[arg(long, value_parser = device_profile, value_name = "NAME|FILE.toml", conflicts_with = "backend")]
    pub device: Option<Box<DeviceProfile>>,
    /// Let the run use a block device the job file names, and write to a
    /// block device (its data is lost). Without it, a job file naming a
    /// device runs on the null backend (said on stderr), and --backend
    /// file:DEVICE may only read
    #[arg(long)]
    pub allow_device_write: bool,
    /// Every job's runtime (e.g. 10s, 500ms; a bare number is seconds),
    /// instead of the job file's runtime=, as fio's --runtime: it caps a
    /// size-bounded job (which ends earlier when its size is done) and loops
    /// a time_based one
    #[arg(long, value_parser = args::runtime, value_name = "TIME")]
    pub runtime: Option<u64>,
    /// The device thread's CPU (default: the highest one no job names)
    #[arg(long, value_name = "CPU")]
    pub device_cpu: Option<usize>,
    /// Commands in flight per queue pair; submitters wait beyond it
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..=8192), value_name = "N")]
    pub queue_depth: u32,
    /// How an interrupt reaches the target core: poll (an idle poller and the
    /// running thread take it, ~1 us) or wake (the device wakes a SCHED_FIFO
    /// handler thread: a cross-core wake-up, ~34 us on this VM)
    #[arg(long, value_enum, default_value = "poll", value_name = "HOW")]
    pub delivery: DeliveryArg,
    /// What a fire does while the previous interrupt is not yet taken: ipi
    /// (the authors' emulator: one IPI per fire, never merged, the device
    /// waits for the call slot while the device goes on), ipi-stall (the
    /// whole device waits too) or apic (merges into the pending one)
    #[arg(long, default_value = "ipi", value_parser = ["ipi", "ipi-stall", "apic"], value_name = "HOW")]
    pub irq_delivery: String,
    /// FastResponse's critical boost (FR 3.5) through this kernel, for the
    /// threads of critical=1 jobs: none (default), slice (EEVDF's custom
    /// slice, sched_setattr with sched_runtime 100us: a fair task that
    /// preempts at wake-up) or fifo (SCHED_FIFO priority 1)
    #[arg(long, value_enum, default_value = "none", value_name = "HOW")]
    pub critical_boost: BoostArg,
    /// Seed of the offsets, the read/write mix and a --device's service
    /// times
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seed: u64,
    /// The host mechanisms the emulator's driver applies (host::mechanism).
    #[command(flatten)]
    pub host_settings: crate::host_args::HostArgs<crate::host_args::Run>,
    #[command(flatten)]
    pub out: RunOutput,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum DeliveryArg {
    Poll,
    Wake,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum BoostArg {
    None,
    Slice,
    Fifo,
}

impl From<BoostArg> for emu::Boost {
    fn from(b: BoostArg) -> emu::Boost {
        match b {
            BoostArg::None => emu::Boost::None,
            BoostArg::Slice => emu::Boost::Slice,
            BoostArg::Fifo => emu::Boost::Fifo,
        }
    }
}

impl From<DeliveryArg> for Delivery {
    fn from(d: DeliveryArg) -> Delivery {
        match d {
            DeliveryArg::Poll => Delivery::Poll,
            DeliveryArg::Wake => Delivery::Wake,
        }
    }
}

/// Boxed: a profile is large, and `Verb`'s variants should stay alike in
/// size (clippy's large_enum_variant).
pub fn device_profile(s: &str) -> Result<Box<DeviceProfile>, String> {
    DeviceProfile::load(s)
        .map(Box::new)
        .map_err(|e| e.to_string())
}

/// One line: a job's error as `FILE:LINE: job 'x': ...`, as the job
/// file's own errors are.
pub fn emu_error(job_file: &std::path::Path, e: EmuError) -> anyhow::Error {
    match e {
        EmuError::Job(jobs::Refused { job, line, reason }) => {
            anyhow!("{}:{line}: job '{job}': {reason}", job_file.display())
        }
        other => anyhow!(other),
    }
}

/// Says on stderr (one line) that the job file's device is replaced by the
/// null backend, before the run starts.
pub fn say_stand_in(job_file: &std::path::Path, jobs: &[jobs::Job], config: &EmuConfig) {
    if let Ok(emu::Target {
        stand_in: Some(s), ..
    }) = emu::choose_target(jobs, config)
    {
        eprintln!("{}:{}: {}", job_file.display(), s.line, s.text);
    }
}

/// Where the emulator says what it does on the user's behalf.
pub fn say(line: &str) {
    eprintln!("cinterrupts: {line}");
}

pub fn run(args: &RunArgs) -> Result<()> {
    let file = jobs::parse_file_with(&args.job_file, &args.fio.command_line())?;
    if file.jobs.is_empty() {
        bail!("{}: no jobs to run", args.job_file.display());
    }
    let spec = args.policy.spec();
    policy::build(&spec)?;
    // `--kernel`: the mechanisms given must have coexisted there (no host
    // profile here: the emulator runs on this machine's kernel).
    let kernel_notes = args
        .host_settings
        .era(None)
        .map_err(anyhow::Error::msg)?
        .notes;
    if !args.out.quiet {
        print_notes(&file);
        for n in kernel_notes {
            eprintln!("note: {n}");
        }
    }
    let backend = match &args.device {
        Some(p) => Some(BackendSpec::device((**p).clone(), args.seed)),
        None => args.backend.clone(),
    };
    let mut config = EmuConfig {
        backend,
        policy: spec,
        runtime: args.runtime,
        device_cpu: args.device_cpu,
        queue_depth: args.queue_depth,
        seed: args.seed,
        delivery: args.delivery.into(),
        irq_delivery: emu::IrqDelivery::parse(&args.irq_delivery).unwrap_or_default(),
        allow_device_write: args.allow_device_write,
        boost: args.critical_boost.into(),
        say: (!args.out.quiet).then_some(say as fn(&str)),
        ..EmuConfig::default()
    };
    config.apply_host(&args.host_settings.settings);
    if !args.out.quiet {
        say_stand_in(&args.job_file, &file.jobs, &config);
    }
    let report = emu::run(&file.jobs, &config).map_err(|e| emu_error(&args.job_file, e))?;
    emit(&render(&report, args.out.format), args.out.file.as_deref())?;
    // As fio: the results are printed, and a failed job fails the command.
    let failed = report.failures();
    if !failed.is_empty() {
        bail!("{}: {}", args.job_file.display(), failed.join("; "));
    }
    // Numbers that measure nothing are not a result (issue 12: IOPS=0 and
    // exit 0).
    if report.completed_ios() == 0 {
        bail!(
            "{}: no I/O completed in the measured window ({}msec): these numbers measure nothing",
            args.job_file.display(),
            report.duration_ns / 1_000_000
        );
    }
    Ok(())
}
