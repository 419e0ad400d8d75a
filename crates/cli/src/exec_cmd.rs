//! `cinterrupts exec -- PROGRAM [ARGS...]`: an unmodified program under the
//! preload library (`exec`); its output and exit status pass through, ours
//! goes to stderr or `-o FILE`.

use std::ffi::OsString;
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, ValueEnum};

use exec::rules::{RulesFile, Sources, OBSERVE_IO_URING};
use exec::{Critical, Rule, Target};

#[derive(Args, Debug)]
pub struct ExecArgs {
    #[command(flatten)]
    pub policy: crate::args::PolicyArgs,
    /// The host mechanisms routing applies (host::mechanism).
    #[command(flatten)]
    pub host_settings: crate::host_args::HostArgs<crate::host_args::Exec>,
    /// A modelled device's timing (optane, p3700, optane-900p or a .toml
    /// profile): the program's data moves through the page cache and each
    /// command takes the profile's service time. Without it the program's own O_DIRECT
    /// call is the device and its command completes at once
    #[arg(long, value_parser = crate::run_cmd::device_profile, value_name = "NAME|FILE.toml")]
    pub device: Option<Box<sim::DeviceProfile>>,
    /// The device thread's CPU (default: the highest allowed one); the
    /// program runs on the others
    #[arg(long, value_name = "CPU")]
    pub device_cpu: Option<usize>,
    /// Seed of a --device's service times
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Observe only: count and mark the program's direct I/O, every call
    /// to the kernel as made (no device, no interrupts); io_uring rings
    /// are the kernel's, neither counted nor marked (`--io-uring pass`),
    /// as the report says
    #[arg(long, conflicts_with_all = ["device", "device_cpu"])]
    pub observe: bool,
    /// Which kernel marks requests that carry no flag: TOS Table 1, or the
    /// authors' microbenchmark kernel
    #[arg(long, value_name = "KERNEL", default_value = "table1",
          value_parser = |s: &str| s.parse::<jobs::DefaultMarks>())]
    pub default_marks: jobs::DefaultMarks,
    /// What RWF 0x20 and 0x40 of the program's preadv2/pwritev2/iocbs
    /// mean: `authors`, the authors' RWF_URGENT and RWF_BARRIER (marks,
    /// taken out before the kernel sees the call), or `kernel`, the running
    /// kernel's own (RWF_NOAPPEND since Linux 6.9, RWF_ATOMIC since 6.11;
    /// passed on, no mark). Default: `authors` before Linux 6.9, `kernel`
    /// from it
    #[arg(long, value_name = "MEANING", value_parser = |s: &str| exec::RwfMarks::parse(s).ok_or(format!("expected one of {}", exec::RwfMarks::NAMES)))]
    pub rwf_marks: Option<exec::RwfMarks>,
    /// A marking rule, `[OPS] [thread=GLOB] [file=GLOB] [title=GLOB] =>
    /// MARK`: OPS read, write, flush (comma-joined; none = all), thread =
    /// the thread's name, file = the descriptor's path (an unlinked file's
    /// too), title = the process's title (/proc/self/cmdline, e.g.
    /// "postgres: checkpointer"), MARK urgent, barrier, none or default (the
    /// kernel's). E.g. 'write file=*.ibd => none'. Repeatable; every
    /// condition must hold; the first matching rule of all (--mark, then
    /// --rules, --mark-thread, --mark-file, --marks-for) wins; the
    /// program's own RWF_URGENT/RWF_BARRIER win over rules
    #[arg(long, value_name = "RULE", value_parser = |s: &str| Rule::parse(s))]
    pub mark: Vec<Rule>,
    /// A file of marking rules, one a line as --mark's ('#' comments);
    /// repeatable
    #[arg(long, value_name = "FILE", value_parser = RulesFile::load)]
    pub rules: Vec<RulesFile>,
    /// Built-in rules for a database, in the part of the authors' app-cint
    /// patch (log writes and reads Urgent; page cleaner, checkpointer,
    /// background writer, flush and compaction unmarked): mariadb,
    /// postgres or rocksdb (crates/exec/presets/NAME.rules; see them with
    /// --print-rules). After every other rule
    #[arg(long, value_name = "DB", value_parser = RulesFile::preset)]
    pub marks_for: Vec<RulesFile>,
    /// Print the marking rules in the order they apply (a rules file, the
    /// presets with their sources) and exit
    #[arg(long)]
    pub print_rules: bool,
    /// Same as --mark 'thread=GLOB => MARK' (kept; --mark says more)
    #[arg(long, value_name = "GLOB=MARK", value_parser = |s: &str| Rule::legacy(true, s))]
    pub mark_thread: Vec<Rule>,
    /// Same as --mark 'file=GLOB => MARK' (kept; --mark says more)
    #[arg(long, value_name = "GLOB=MARK", value_parser = |s: &str| Rule::legacy(false, s))]
    pub mark_file: Vec<Rule>,
    /// FastResponse's critical tag (FR 3.1-3.2) for the requests of
    /// threads whose name matches GLOB (a process's main thread has the
    /// program's name); repeatable, any match makes a request critical.
    /// Critical requests bypass --block-scheduler ld, poll under
    /// --completion select-isr, and their threads get --critical-boost
    #[arg(long, value_name = "GLOB", value_parser = |s: &str| Critical::parse(Target::Thread, s))]
    pub critical_thread: Vec<Critical>,
    /// The critical tag for the requests on files whose path matches GLOB;
    /// repeatable
    #[arg(long, value_name = "GLOB", value_parser = |s: &str| Critical::parse(Target::File, s))]
    pub critical_file: Vec<Critical>,
    /// FastResponse's critical boost (FR 3.5) through this kernel, as `run
    /// --critical-boost`: each thread at its first critical request gets
    /// none (default), slice (EEVDF's custom slice, sched_setattr with
    /// sched_runtime 100us) or fifo (SCHED_FIFO priority 1)
    #[arg(long, value_enum, default_value = "none", value_name = "HOW")]
    pub critical_boost: crate::run_cmd::BoostArg,
    /// Stage DIR for the run (root only): a new zram device with ext4,
    /// DIR's contents copied onto it (cp -a) and bound over DIR, so the
    /// program's paths stay the same and its O_DIRECT I/O is served at
    /// memory speed with a disk's alignment rules; copied back over DIR
    /// (rsync --delete) and removed after the program
    #[arg(long, value_name = "DIR")]
    pub stage: Option<PathBuf>,
    /// The staging device's size (default: twice DIR's data plus 256 MiB)
    #[arg(long, value_name = "SIZE", requires = "stage", value_parser = jobs::units::parse_size)]
    pub stage_size: Option<u64>,
    /// After SIGINT or SIGTERM is passed on to the program, how long it
    /// may take to end before it is killed (SIGKILL to it and every
    /// process descended from it). Default: never by the clock; exec
    /// waits for the program's own shutdown however long it takes. A
    /// second SIGINT or SIGTERM kills at once (SIGHUP, a reload for many
    /// servers, never does). The report is still written, partial
    #[arg(long, value_name = "DURATION", value_parser = crate::args::runtime)]
    pub kill_after: Option<u64>,
    /// The program's io_uring: route (its rings' storage requests go
    /// through the device, the kernel moving the data through a shadow
    /// ring; what cannot be provided is refused at setup with EINVAL and
    /// named), pass (its rings are the kernel's, neither routed nor
    /// counted, named in the report) or refuse (every io_uring_setup fails
    /// with ENOSYS, as on a kernel built without io_uring, so a program
    /// that can falls back to calls exec routes; each refusal named)
    #[arg(long, value_enum, default_value_t = IoUringArg::Route, value_name = "route|pass|refuse")]
    pub io_uring: IoUringArg,
    /// Our report's format (the program's own output is untouched)
    #[arg(long, value_enum, default_value_t = Format::Normal)]
    pub output_format: Format,
    /// Write our report to FILE (whole or not at all) instead of stderr
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// No report on stderr (with -o, the file is still written)
    #[arg(long)]
    pub quiet: bool,
    /// The program and its arguments, after `--`
    #[arg(
        required_unless_present = "print_rules",
        last = true,
        value_name = "PROGRAM"
    )]
    pub program: Vec<OsString>,
}

impl ExecArgs {
    /// Where the marking rules come from, in the order they apply.
    fn rule_sources(&self) -> Sources<'_> {
        Sources {
            mark: &self.mark,
            rules: &self.rules,
            mark_thread: &self.mark_thread,
            mark_file: &self.mark_file,
            marks_for: &self.marks_for,
        }
    }
}

/// `--io-uring`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum IoUringArg {
    Route,
    Pass,
    Refuse,
}

impl From<IoUringArg> for exec::IoUring {
    fn from(a: IoUringArg) -> exec::IoUring {
        match a {
            IoUringArg::Route => exec::IoUring::Route,
            IoUringArg::Pass => exec::IoUring::Pass,
            IoUringArg::Refuse => exec::IoUring::Refuse,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Normal,
    Json,
}

/// The hint for `cinterrupts exec fio job`: the program after `--` (clap
/// takes `fio` for an unexpected argument of ours). `None` for any other
/// error, or when the command line has its `--`.
pub fn missing_dashes(e: &clap::Error, argv: &[OsString]) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument || argv.iter().any(|a| a == "--") {
        return None;
    }
    let verb = argv.iter().position(|a| a == "exec")?;
    let Some(ContextValue::String(bad)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    if bad.starts_with('-') {
        return None;
    }
    let at = verb + 1 + argv[verb + 1..].iter().position(|a| a == bad.as_str())?;
    let words = |s: &[OsString]| -> Vec<String> {
        s.iter().map(|a| a.to_string_lossy().into_owned()).collect()
    };
    let mut line = vec!["exec".to_string()];
    line.extend(words(&argv[verb + 1..at]));
    line.push("--".into());
    line.extend(words(&argv[at..]));
    Some(format!(
        "the program comes after `--`: cinterrupts {}",
        line.join(" ")
    ))
}

/// Runs the program; the exit code is the program's (128 + signal).
pub fn run(a: &ExecArgs) -> Result<i32> {
    if a.print_rules {
        out!("{}", a.rule_sources().listing());
        return Ok(0);
    }
    // Every bad option value is a usage error, exit 2 as clap's (README),
    // one line naming the option: `--policy bogus` exited 1 (issue 38).
    let usage = |what: &str, e: &dyn std::fmt::Display| {
        match what {
            // The message names its option already.
            "" => eprintln!("cinterrupts: exec: {e}"),
            _ => eprintln!("cinterrupts: exec: {what}: {e}"),
        }
        Ok(2)
    };
    let rules = a.rule_sources().all();
    if let Err(e) = exec::marks::check(&rules) {
        return usage("marking rules", &e);
    }
    let mut critical = a.critical_thread.clone();
    critical.extend(a.critical_file.iter().cloned());
    let spec = a.policy.spec();
    if let Err(e) = policy::build(&spec) {
        return usage("--policy", &e);
    }
    // `--kernel`: the mechanisms given must have coexisted there.
    let kernel_notes = match a.host_settings.era(None) {
        Ok(era) => era.notes,
        Err(e) => return usage("", &e),
    };
    for n in kernel_notes {
        eprintln!("note: {n}");
    }
    if let Some(e) = exec::RouteOptions::unapplied(&a.host_settings.settings) {
        return usage("--completion", &e);
    }
    let route = if a.observe {
        None
    } else {
        let device = a
            .device
            .as_ref()
            .map(|p| emu::backend::BackendSpec::device((**p).clone(), a.seed));
        let mut r = match exec::RouteOptions::placed(spec, device, a.device_cpu) {
            Ok(r) => r,
            Err(e) => return usage("", &e),
        };
        r.apply_host(&a.host_settings.settings);
        Some(r)
    };
    let opts = exec::Options {
        preload: exec::find_preload()?,
        default_marks: a.default_marks,
        rwf_marks: a.rwf_marks.unwrap_or_else(exec::running_kernel_rwf),
        rules,
        critical,
        boost: a.critical_boost.into(),
        route,
        stage: a.stage.as_ref().map(|dir| exec::StageOptions {
            dir: dir.clone(),
            size: a.stage_size,
        }),
        kill_after: a.kill_after.map(std::time::Duration::from_nanos),
        io_uring: exec::rules::observed_io_uring(a.observe, a.io_uring.into()),
        harness: exec::Harness::default(),
    };
    let (program, args) = a.program.split_first().expect("clap requires PROGRAM");
    // The report's destination is checked before the program runs: found
    // unwritable only after, it hid the program's exit status.
    if let Some(path) = &a.output {
        exec::ending::check_destination(path).map_err(anyhow::Error::msg)?;
    }
    let mut out = match exec::run(&opts, program, args) {
        Ok(out) => out,
        Err(e) => {
            eprintln!("cinterrupts: exec: {e}");
            return Ok(e.exit_code());
        }
    };
    let name = program.to_string_lossy();
    if a.observe && a.io_uring == IoUringArg::Route {
        out.limits.push(OBSERVE_IO_URING.into());
    }
    let presets: Vec<String> = a.marks_for.iter().map(|f| f.name.clone()).collect();
    let to = exec::ending::Destination {
        json: a.output_format == Format::Json,
        file: a.output.as_deref(),
        quiet: a.quiet,
        presets: &presets,
    };
    Ok(exec::ending::finish(&name, &opts, &out, &to))
}
