//! Value parsers and the policy options every verb that runs a policy takes.

use clap::builder::{PossibleValuesParser, TypedValueParser, ValueParser};
use clap::error::ErrorKind;
use clap::{Arg, ArgAction, ArgMatches, Args, Command, CommandFactory, FromArgMatches, ValueEnum};
use policy::catalogue::{option_help, STRATEGIES};
use policy::feature09::CdVectors;
use policy::options::{Kind, OPTIONS};
use policy::{PolicySpec, Value};

/// The command line as the binary reads it: `C`'s, with every option that
/// takes a value taking one that starts with `-`. Otherwise `--delta -1us`
/// fails as "unexpected argument '-1'", losing the option's name; this way
/// the option's own parser refuses the value and the error names both.
pub fn command<C: CommandFactory>() -> Command {
    dashed_values(C::command())
}

fn dashed_values(cmd: Command) -> Command {
    cmd.mut_args(|a| {
        let takes_value = matches!(a.get_action(), ArgAction::Set | ArgAction::Append);
        if takes_value && !a.is_positional() {
            a.allow_hyphen_values(true)
        } else {
            a
        }
    })
    .mut_subcommands(dashed_values)
}

/// fio's job options on the command line (`jobs`, `sim`, `run`, `tune`).
/// The binary rewrites each `--NAME[=VALUE]` that is not one of the verb's
/// own options but names a job option (or `section`) to `--fio
/// NAME[=VALUE]` before clap reads it ([`fio_argv`]), so the help lists
/// one option for all of them.
#[derive(Args, Debug, Clone, Default)]
pub struct FioArgs {
    /// A fio job option, written as fio's command line writes it:
    /// --iodepth=16, --blocksize=4K, --numjobs=4, --time_based,
    /// --section=NAME (repeatable: only those job sections run). As in fio,
    /// they are every job's defaults: the job file's \[global\] and the job's
    /// own section override them. Where a name is also one of this
    /// command's options (--runtime, --barrier), the command's wins; write
    /// --fio NAME=VALUE for fio's
    #[arg(long = "fio", value_name = "NAME[=VALUE]", action = ArgAction::Append)]
    pub options: Vec<String>,
    /// Which kernel marks a request that carries no flag: table1 (TOS 4.1.1
    /// Table 1, the paper's design: blocking calls and fsync Urgent, the
    /// last request of each io_submit Barrier) or basis (the authors'
    /// microbenchmark kernel, cinterrupts-01-basis.patch: blocking calls
    /// Urgent, io_submit and fsync unmarked; fio's barrier=1 still marks
    /// the last iocb). The same as --default_marks=KERNEL: a job file's
    /// default_marks= wins. Default table1, the kernel the paper describes
    #[arg(
        long = "default-marks",
        value_name = "KERNEL",
        value_parser = PossibleValuesParser::new(["table1", "basis"])
    )]
    pub default_marks: Option<String>,
}

impl FioArgs {
    /// The options as the jobs crate takes them.
    pub fn command_line(&self) -> jobs::CommandLine {
        let mut cmd = jobs::CommandLine::default();
        if let Some(k) = &self.default_marks {
            cmd.options
                .push(("default_marks".to_string(), Some(k.clone())));
        }
        for o in &self.options {
            cmd.push_arg(o);
        }
        cmd
    }
}

/// `argv` with fio's job options rewritten for clap: after a verb that
/// takes [`FioArgs`] (an argument with id `options` and long `fio`), each
/// `--NAME[=VALUE]` (or `--NAME VALUE` for an option that needs a value, as
/// fio's getopt reads it) that is not one of the verb's own options and
/// names a job option or `section` becomes `--fio NAME[=VALUE]`. Anything
/// else, and everything after `--`, is left for clap to judge.
pub fn fio_argv(cmd: &Command, argv: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    use std::ffi::OsString;
    let Some(verb) = argv.get(1).and_then(|v| v.to_str()) else {
        return argv;
    };
    let Some(sub) = cmd.find_subcommand(verb) else {
        return argv;
    };
    if !sub.get_arguments().any(|a| a.get_long() == Some("fio")) {
        return argv;
    }
    // The verb's own long options, and whether each takes a value.
    let own = |name: &str| -> Option<bool> {
        if name == "help" || name == "version" {
            return Some(false);
        }
        sub.get_arguments()
            .find(|a| {
                a.get_long() == Some(name)
                    || a.get_all_aliases().is_some_and(|al| al.contains(&name))
            })
            .map(|a| matches!(a.get_action(), ArgAction::Set | ArgAction::Append))
    };
    let mut out: Vec<OsString> = argv[..2].to_vec();
    out.extend(jobs::cmdline::fio_argv(argv[2..].to_vec(), &own));
    out
}

/// `6us`, `100us`, `1ms`: a unit is required (except for 0).
pub fn duration(s: &str) -> Result<u64, String> {
    jobs::units::parse_duration(s, None)
}

/// A run length, more than 0: `500ms`, `10s`, or a bare number of seconds
/// as fio's own `--runtime=10` (fio's runtime is an `is_seconds` option;
/// job files read it the same way).
pub fn runtime(s: &str) -> Result<u64, String> {
    match jobs::units::parse_duration(s, Some(policy::SEC))? {
        0 => Err("must be more than 0".to_string()),
        ns => Ok(ns),
    }
}

/// `100k`, `1.5m`, `250000` per second.
pub fn rate(s: &str) -> Result<u64, String> {
    jobs::units::parse_rate(s)
}

pub fn on_off(s: &str) -> Result<bool, String> {
    match s {
        "on" | "1" | "true" | "yes" => Ok(true),
        "off" | "0" | "false" | "no" => Ok(false),
        _ => Err(format!("'{s}' is not on or off")),
    }
}

/// A Feature 08h value, hexadecimal with `0x` or decimal.
pub fn feature(s: &str) -> Result<u32, String> {
    let parsed = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16),
        None => s.parse(),
    };
    parsed.map_err(|_| format!("'{s}' is not a number (e.g. 0x011f)"))
}

/// How results are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Human-readable text (for a run, fio's normal layout)
    Normal,
    /// JSON (for a run, shaped like fio's)
    Json,
}

/// Which of an experiment's stored runs this task runs (`sweep run`,
/// `tune --store`): one shard, from the command line or a cluster's array
/// task, or all of them.
#[derive(Args, Debug, Clone, Default)]
pub struct ShardArgs {
    /// Run only shard K of N, 0-based (0/4 .. 3/4): the runs in a fixed
    /// order, run i in shard i mod N [default: from SLURM_ARRAY_TASK_ID
    /// and SLURM_ARRAY_TASK_COUNT, or JOB_COMPLETION_INDEX and --shards;
    /// else every run]
    #[arg(long, value_parser = store::Shard::parse, value_name = "K/N")]
    pub shard: Option<store::Shard>,
    /// The number of shards, where the environment names only the index
    /// (JOB_COMPLETION_INDEX; or SLURM_ARRAY_TASK_ID without
    /// SLURM_ARRAY_TASK_COUNT)
    #[arg(long, value_name = "N")]
    pub shards: Option<usize>,
}

impl ShardArgs {
    /// The shard given, else the one the environment names, else all.
    pub fn resolve(&self) -> anyhow::Result<store::Shard> {
        store::Shard::resolve(self.shard, self.shards, &|v| std::env::var(v).ok())
            .map_err(|e| anyhow::anyhow!(e))
    }
}

/// Where and how a run (`sim`, `run`) prints its results.
#[derive(Args, Debug, Clone)]
pub struct RunOutput {
    /// Results as fio's normal output or its JSON
    #[arg(
        long = "output-format",
        value_enum,
        default_value = "normal",
        value_name = "FORMAT"
    )]
    pub format: OutputFormat,
    /// Write the results to this file (whole or not at all)
    #[arg(long = "output", short = 'o', value_name = "FILE")]
    pub file: Option<std::path::PathBuf>,
    /// Nothing on stderr but errors: no notes about the job file, no
    /// progress bar
    #[arg(long, short)]
    pub quiet: bool,
}

/// Which interrupt strategy, and its parameters: `--policy` and one option
/// per row of `policy::options::OPTIONS`, each read by its kind, with its
/// help naming the strategies that take it (see `cinterrupts policies`).
#[derive(Debug, Clone)]
pub struct PolicyArgs {
    pub policy: String,
    /// The options given (its name is unused: see [`PolicyArgs::spec`]).
    given: PolicySpec,
}

impl PolicyArgs {
    pub fn spec(&self) -> PolicySpec {
        self.spec_named(&self.policy)
    }

    pub fn spec_named(&self, name: &str) -> PolicySpec {
        PolicySpec {
            name: name.to_string(),
            ..self.given.clone()
        }
    }

    /// True when any strategy parameter was given.
    pub fn has_parameters(&self) -> bool {
        self.spec_named("") != PolicySpec::named("")
    }
}

/// How the command line reads a value of each kind.
fn value_parser(kind: Kind) -> ValueParser {
    match kind {
        Kind::Time => ValueParser::new(|s: &str| duration(s).map(Value::Time)),
        Kind::Count => ValueParser::new(clap::value_parser!(u32).map(Value::Count)),
        Kind::Rate => ValueParser::new(|s: &str| rate(s).map(Value::Rate)),
        Kind::Switch => ValueParser::new(|s: &str| on_off(s).map(Value::Switch)),
        Kind::Factor => ValueParser::new(|s: &str| s.parse::<f64>().map(Value::Factor)),
        Kind::Feature => ValueParser::new(|s: &str| feature(s).map(Value::Feature)),
        Kind::Vectors => ValueParser::new(|s: &str| CdVectors::parse(s).map(Value::Vectors)),
        Kind::Word(words) => ValueParser::new(
            PossibleValuesParser::new(words.iter().map(|(w, _)| *w)).try_map(move |w| {
                let found = words.iter().find(|(word, _)| *word == w);
                found
                    .map(|(_, v)| *v)
                    .ok_or("not one of the possible values")
            }),
        ),
    }
}

impl Args for PolicyArgs {
    fn augment_args(cmd: Command) -> Command {
        let names: Vec<&str> = STRATEGIES.iter().map(|s| s.name).collect();
        let mut cmd = cmd.arg(
            Arg::new("policy")
                .long("policy")
                .value_name("POLICY")
                .default_value("cint")
                .help(format!(
                    "Strategy: {}; or one of the authors' system names (alpha-D-T, cint-D-T[-ooo], baseline-US-THR, nvme-emul-TIME-THR; see `cinterrupts policies`)",
                    names.join(", ")
                )),
        );
        for opt in OPTIONS {
            cmd = cmd.arg(
                Arg::new(opt.name())
                    .long(opt.name())
                    .value_name(opt.value_name())
                    .help(option_help(*opt))
                    .value_parser(value_parser(opt.kind())),
            );
        }
        cmd
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for PolicyArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut args = PolicyArgs {
            policy: String::new(),
            given: PolicySpec::default(),
        };
        args.update_from_arg_matches(m)?;
        Ok(args)
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        if let Some(name) = m.get_one::<String>("policy") {
            self.policy = name.clone();
        }
        for opt in OPTIONS {
            if let Some(v) = m.get_one::<Value>(opt.name()) {
                opt.give(&mut self.given, *v)
                    .map_err(|e| clap::Error::raw(ErrorKind::ValueValidation, e))?;
            }
        }
        self.expand_artifact_name()
    }
}

impl PolicyArgs {
    /// `--policy cint-6-32`: one of the authors' system names stands for a
    /// strategy and its options; options given on the command line win.
    fn expand_artifact_name(&mut self) -> Result<(), clap::Error> {
        if policy::catalogue::strategy(&self.policy).is_some()
            || !PolicySpec::is_artifact_name(&self.policy)
        {
            return Ok(());
        }
        let named = PolicySpec::from_artifact_name(&self.policy)
            .map_err(|e| clap::Error::raw(ErrorKind::ValueValidation, format!("{e}\n")))?;
        for opt in OPTIONS {
            if let (None, Some(v)) = (opt.given(&self.given), opt.given(&named)) {
                opt.give(&mut self.given, v)
                    .map_err(|e| clap::Error::raw(ErrorKind::ValueValidation, e))?;
            }
        }
        self.policy = named.name;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use policy::cint::BarrierMode;
    use policy::dim::DimMode;

    #[test]
    fn every_policy_option_is_read_into_the_spec() {
        let cmd = PolicyArgs::augment_args(Command::new("t"));
        let argv = [
            "t",
            "--policy",
            "x",
            "--delta",
            "6us",
            "--thr",
            "8",
            "--ooo",
            "off",
            "--barrier",
            "strict",
            "--max-irq-rate",
            "100k",
            "--aggr-time",
            "200us",
            "--nvme-feature",
            "0x011f",
            "--a",
            "0.5",
            "--delta-unit",
            "2us",
            "--dim-mode",
            "cqe",
        ];
        let args = PolicyArgs::from_arg_matches(&cmd.try_get_matches_from(argv).unwrap()).unwrap();
        let want = PolicySpec {
            name: "x".into(),
            delta: Some(6_000),
            thr: Some(8),
            ooo: Some(false),
            barrier: Some(BarrierMode::Strict),
            max_irq_rate: Some(100_000),
            aggr_time: Some(200_000),
            nvme_feature: Some(0x011f),
            a: Some(0.5),
            delta_unit: Some(2_000),
            dim_mode: Some(DimMode::Cqe),
            ..Default::default()
        };
        assert_eq!(args.spec(), want);
        assert!(args.has_parameters());
        let cmd = PolicyArgs::augment_args(Command::new("t"));
        let args = PolicyArgs::from_arg_matches(&cmd.try_get_matches_from(["t"]).unwrap()).unwrap();
        assert_eq!(args.spec(), PolicySpec::named("cint"));
        assert!(!args.has_parameters());
    }

    #[test]
    fn an_artifact_system_name_is_a_policy_and_given_options_win() {
        let parse = |argv: &[&str]| {
            let cmd = PolicyArgs::augment_args(Command::new("t"));
            cmd.try_get_matches_from(argv)
                .map_err(|e| e.to_string())
                .and_then(|m| PolicyArgs::from_arg_matches(&m).map_err(|e| e.to_string()))
        };
        let args = parse(&["t", "--policy", "cint-6-32-ooo", "--thr", "16"]).unwrap();
        let want = PolicySpec {
            thr: Some(16),
            ..PolicySpec::from_artifact_name("cint-6-32-ooo").unwrap()
        };
        assert_eq!(args.spec(), want);
        let err = parse(&["t", "--policy", "cint-6"]).unwrap_err();
        assert!(err.contains("policy 'cint-6': expected"), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
}
