//! `cinterrupts coalesce`: its options wired to `sim::coalesce` (a
//! completion stream replayed through a strategy, or a block trace through
//! every strategy beside the oracle floor). An `--output` file is whole or
//! nothing.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;

use crate::args::PolicyArgs;

#[derive(Args, Debug)]
pub struct CoalesceArgs {
    /// Completion stream, CSV with header time_ns,id,flags,event (`-` or none: stdin)
    pub input: Option<PathBuf>,
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Print a summary (interrupts, completions per interrupt, delays) instead of the CSV
    #[arg(long)]
    pub summary: bool,
    /// Write the interrupt CSV to this file (whole or not at all)
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// A block trace instead of a completion stream: blkparse text (and
    /// `cinterrupts capture`'s), blktrace's binary files, fio iolog v2/v3,
    /// biosnoop, MSR Cambridge/SNIA, Alibaba, Tencent CBS or DiskSim;
    /// every strategy (or --policy's) beside the oracle floor
    #[arg(long, value_name = "FILE", conflicts_with_all = ["input", "output", "summary"])]
    pub trace: Option<PathBuf>,
    /// The trace's format, when its first bytes do not say
    /// (blkparse|blktrace|fio-v2|fio-v3|biosnoop|msr|alibaba|tencent|disksim)
    #[arg(long, value_name = "NAME", requires = "trace", value_parser = trace_format)]
    pub format: Option<traces::Format>,
    /// How a trace's requests are marked, the first rule that matches
    /// winning, in the marking rules' one syntax (as exec --mark):
    /// `[OPS] [comm=GLOB] [volume=GLOB] => urgent|barrier|none|default`,
    /// OPS read, write, flush (default: reads, sync writes and flushes
    /// Urgent, TOS Table 1's logic; other writes unmarked)
    #[arg(long = "mark", value_name = "RULE", requires = "trace", value_parser = sim::coalesce::parse_mark_rule)]
    pub marks: Vec<marks::Rule>,
    /// The delay budget of an unmarked or Barrier completion (Urgent: none),
    /// for the oracle floor and the "budget" column
    #[arg(long, value_name = "TIME", default_value = "50us", requires = "trace", value_parser = crate::args::duration)]
    pub budget: u64,
    /// A request's service time where the trace has no completion
    #[arg(long, value_name = "TIME", default_value = "10us", requires = "trace", value_parser = crate::args::duration)]
    pub service: u64,
    /// Also write the figures (delay CDF, interrupts per second over time)
    /// and an HTML page into this directory
    #[arg(long, value_name = "DIR", requires = "trace")]
    pub report: Option<PathBuf>,
    /// Instead of replaying, derive a device-side plan from the trace and
    /// print the `nvme set-feature` commands that would apply it:
    /// `feature09` (per vector, Coalescing Disable or Feature 08h
    /// aggregation; blkparse or blktrace, which record each request's CPU)
    #[arg(long, value_name = "PLAN", requires = "trace", conflicts_with_all = ["report"], value_parser = ["feature09"])]
    pub plan: Option<String>,
    /// The controller the plan's commands name
    #[arg(
        long,
        value_name = "DEV",
        default_value = "/dev/nvme0",
        requires = "plan"
    )]
    pub controller: String,
    /// The rule that marks what no --mark rule does (marks::trace):
    /// table1 (the default: reads, sync writes, flushes Urgent), plug
    /// (a plugged batch's last Barrier, the rest none; unbatched as
    /// table1), class (Thesios' latency-sensitive Urgent), process
    /// (blocking processes as table1; a batcher's bursts Barrier on their
    /// last) or none; the table then counts each mark
    #[arg(long, value_name = "RULE", requires = "trace", conflicts_with = "plan")]
    pub marks_from: Option<marks::trace::MarksFrom>,
    /// Reorder a trace whose times go backwards (further than its format
    /// allows) through a window of 65,536 requests, instead of refusing it
    #[arg(long, requires = "trace")]
    pub sort: bool,
    /// The replay transforms (issue 41 item 6).
    #[command(flatten)]
    pub shape: crate::trace_shape::ShapeArgs,
}

pub fn trace_format(s: &str) -> Result<traces::Format, String> {
    traces::Format::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = traces::Format::ALL.iter().map(|f| f.name()).collect();
        format!("'{s}' is not one of {}", names.join(", "))
    })
}

pub fn run(args: &CoalesceArgs) -> Result<()> {
    if let (Some(trace), Some(_)) = (&args.trace, &args.plan) {
        if !args.shape.shape().is_empty() {
            bail!("option --plan: it reads the trace as recorded, without --merge, --volume, --window, --skip, --sample or --time-scale");
        }
        return plan(args, trace);
    }
    if let Some(trace) = &args.trace {
        let loss = crate::trace_input::partial(trace);
        let policies = if args.policy.policy == "all" {
            if args.policy.has_parameters() {
                bail!("--policy all compares every strategy on its defaults; it takes no strategy options");
            }
            sim::coalesce::every_strategy()
        } else {
            vec![args.policy.spec()]
        };
        let table = sim::coalesce::run(&sim::coalesce::Job {
            trace,
            format: args.format,
            rules: args.marks.clone(),
            budget: args.budget,
            service: args.service,
            policies,
            report: args.report.clone(),
            marks_from: args.marks_from,
            order: crate::trace_input::order(args.sort),
            shape: args.shape.shape(),
        })
        .map_err(|e| anyhow::anyhow!("{e}"))?;
        out!("{table}");
        if let Some(dir) = &args.report {
            outln!("report: {}", dir.join("index.html").display());
        }
        if let Some(loss) = &loss {
            if let Some(dir) = &args.report {
                crate::trace_input::mark_page(&dir.join("index.html"), loss)?;
            }
            out!("{}", crate::trace_input::partial_line(loss));
        }
        return Ok(());
    }
    if args.policy.policy == "all" {
        if args.policy.has_parameters() || args.output.is_some() {
            bail!("--policy all compares every strategy on its defaults; it takes no strategy options and no --output");
        }
        return compare_all(args);
    }
    let outcome = sim::coalesce::replay_path(
        args.input.as_deref(),
        &args.policy.spec(),
        args.output.as_deref(),
        !args.summary,
    )
    .map_err(anyhow::Error::msg)?;
    if args.summary {
        out!("{}", outcome.summary());
    }
    Ok(())
}

/// `--plan feature09`: the plan from the trace. Of the strategy options it
/// reads the 08h ones, `--aggr-time` and `--thr` (entries per interrupt).
fn plan(args: &CoalesceArgs, trace: &std::path::Path) -> Result<()> {
    let spec = args.policy.spec_named("feature09");
    let others = policy::PolicySpec {
        aggr_time: None,
        thr: None,
        ..spec.clone()
    };
    if others != policy::PolicySpec::named("feature09") || args.policy.policy != "cint" {
        bail!("option --plan: it takes of the strategy options only --aggr-time and --thr, and no --policy (the plan is its own strategy)");
    }
    let loss = crate::trace_input::partial(trace);
    let text = sim::coalesce::plan::run(&sim::coalesce::plan::PlanJob {
        trace,
        format: args.format,
        rules: args.marks.clone(),
        controller: args.controller.clone(),
        time: spec.aggr_time,
        thr: spec.thr,
    })
    .map_err(anyhow::Error::msg)?;
    out!("{text}");
    if let Some(loss) = &loss {
        out!("{}", crate::trace_input::partial_line(loss));
    }
    Ok(())
}

/// Every strategy on its defaults over the one stream, read once.
fn compare_all(args: &CoalesceArgs) -> Result<()> {
    let table = sim::coalesce::compare_path(args.input.as_deref()).map_err(anyhow::Error::msg)?;
    out!("{table}");
    Ok(())
}
