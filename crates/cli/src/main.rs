//! `cinterrupts`: the thin binary over the workbench's crates.

// First: its `out!` and `outln!` are every later module's printing.
#[macro_use]
mod stdout;
mod args;
mod bench_cmd;
mod calibrate_cmd;
mod capture_cmd;
mod coalesce;
mod exec_cmd;
mod features;
mod features_cmd;
mod fleet_cmd;
mod host_args;
mod jobs_cmd;
mod output;
mod reproduce_cmd;
mod run_cmd;
mod sim_cmd;
mod sweep_cmd;
mod trace_input;
mod trace_shape;
mod tune_cmd;
mod validate_cmd;

use std::process::ExitCode;

use clap::{FromArgMatches, Parser, Subcommand};

/// Calibrated interrupts for fast storage: when should a device interrupt the host?
#[derive(Parser, Debug)]
#[command(name = "cinterrupts", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Verb,
}

#[derive(Subcommand, Debug)]
enum Verb {
    /// Replay a completion stream (CSV) through a strategy and print its interrupts
    Coalesce(coalesce::CoalesceArgs),
    /// List the interrupt strategies, their parameters and defaults, and
    /// the host mechanisms
    Policies,
    /// Read fio job files and show each job and the marks its requests carry
    Jobs(jobs_cmd::JobsArgs),
    /// Run a fio job file on the simulator and print fio-like results
    Sim(sim_cmd::SimArgs),
    /// Run a fio job file on the emulator (real I/O) and print fio-like results
    Run(run_cmd::RunArgs),
    /// Time the workbench itself on a fixed workload
    Bench(bench_cmd::BenchArgs),
    /// Pick adaptive coalescing's delta and thr for a device and workload (TOS 5.2)
    Tune(tune_cmd::TuneArgs),
    /// Rerun the paper's experiments and write a report with its numbers beside ours
    Reproduce(reproduce_cmd::ReproduceArgs),
    /// Sweep strategies and parameters over workloads, devices and seeds:
    /// resumable, sharded for a cluster's array tasks, merged into fronts
    Sweep(sweep_cmd::SweepArgs),
    /// The simulator's host model against the paper's costs, target by target
    Calibrate(calibrate_cmd::CalibrateArgs),
    /// Run an unmodified program and see its direct I/O with the marks the
    /// authors' kernel would give it
    Exec(exec_cmd::ExecArgs),
    /// Record the kernel's block issue and completion events and the
    /// interrupts while a program runs (or for a time), as blkparse text
    Capture(capture_cmd::CaptureArgs),
    /// Check the simulator's predictions against real fio runs on this
    /// machine's own devices (root disk, zram, loop): fit the device from
    /// half the points, predict the other half
    Validate(validate_cmd::ValidateArgs),
    /// The features table from the code: every strategy, host mechanism
    /// (with its kernels), device profile key, trace format and verb, and
    /// the tests that check each
    Features(features_cmd::FeaturesArgs),
}

fn main() -> ExitCode {
    // What made every result this run writes (issue 42 item 1): the
    // build's code identity (build.rs) and the start's time, load and
    // command line, taken before any work.
    report::made_by::set_code(report::made_by::Code {
        version: env!("CARGO_PKG_VERSION").to_string(),
        commit: env!("CINTERRUPTS_COMMIT").to_string(),
        dirty: env!("CINTERRUPTS_DIRTY") == "true",
        source: env!("CINTERRUPTS_SOURCE").to_string(),
        cargo_lock: env!("CINTERRUPTS_CARGO_LOCK").to_string(),
        rustc: env!("CINTERRUPTS_RUSTC").to_string(),
    });
    report::made_by::begin();
    let cmd = args::command::<Cli>();
    let argv = args::fio_argv(&cmd, std::env::args_os().collect());
    let parsed = cmd
        .try_get_matches_from(argv)
        .and_then(|m| Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion)
                || matches!(
                    e.kind(),
                    ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                )
            {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            // One line: clap's first, without the usage block.
            let rendered = e.render().to_string();
            let mut lines = rendered.lines().map(str::trim).filter(|l| !l.is_empty());
            let mut line = lines
                .next()
                .unwrap_or("bad arguments")
                .trim_start_matches("error: ")
                .to_string();
            // "the following required arguments were not provided:" names
            // them on the next line.
            if line.ends_with(':') {
                if let Some(next) = lines.next() {
                    line = format!("{line} {next}");
                }
            }
            // A value not among an option's words: say which they are.
            if let Some(clap::error::ContextValue::Strings(valid)) =
                e.get(clap::error::ContextKind::ValidValue)
            {
                if !valid.is_empty() {
                    line = format!("{line} (possible values: {})", valid.join(", "));
                }
            }
            // `exec fio job`: the same line says where the program goes.
            let argv: Vec<_> = std::env::args_os().collect();
            if let Some(hint) = exec_cmd::missing_dashes(&e, &argv) {
                line = format!("{line}; {hint}");
            }
            eprintln!("cinterrupts: {line}");
            return ExitCode::from(2);
        }
    };
    let result = match &cli.command {
        Verb::Coalesce(a) => coalesce::run(a),
        Verb::Policies => {
            out!("{}", policy::catalogue::listing());
            out!("\n{}", host::mechanism::listing());
            out!("\n{}", host::uring::listing());
            Ok(())
        }
        Verb::Jobs(a) => jobs_cmd::run(a),
        Verb::Sim(a) => sim_cmd::run(a),
        Verb::Run(a) => run_cmd::run(a),
        Verb::Bench(a) => bench_cmd::run(a),
        Verb::Tune(a) => tune_cmd::run(a),
        Verb::Reproduce(a) => reproduce_cmd::run(a),
        Verb::Sweep(a) => sweep_cmd::run(a),
        Verb::Calibrate(a) => calibrate_cmd::run(a),
        Verb::Validate(a) => validate_cmd::run(a),
        Verb::Features(a) => features_cmd::run(a, &args::command::<Cli>()),
        Verb::Capture(a) => match capture_cmd::run(a) {
            Ok(code) => return ExitCode::from(code.clamp(0, 255) as u8),
            Err(e) => Err(e),
        },
        Verb::Exec(a) => match exec_cmd::run(a) {
            // The program's own exit code passes through.
            Ok(code) => return ExitCode::from(code.clamp(0, 255) as u8),
            Err(e) => Err(e),
        },
    };
    // A closed stdout ended the printing only (`stdout`): the verb's work
    // is done and it exits 0; another write error to stdout fails it.
    let result = match result {
        Err(e) if stdout::broken_pipe_in(&e) => Ok(()),
        Ok(()) => stdout::error().map_or(Ok(()), |e| Err(anyhow::anyhow!(e))),
        e => e,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A bad fio option on the command line is a usage error, as clap's.
        Err(e) if matches!(e.downcast_ref(), Some(jobs::JobError::CommandLine { .. })) => {
            eprintln!("cinterrupts: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            // anyhow's chain on one line: "context: cause".
            let chain: Vec<String> = e.chain().map(|c| c.to_string()).collect();
            eprintln!("cinterrupts: error: {}", chain.join(": "));
            ExitCode::FAILURE
        }
    }
}
