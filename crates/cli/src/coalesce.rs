//! `cinterrupts coalesce`: replays a recorded completion stream through a
//! strategy and prints the interrupts it would raise.

use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt::Write as _;
use std::io::Read;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use hdrhistogram::Histogram;
use policy::replay::{Delivery, Replay};
use policy::{build, describe, Command, Completion, Nanos, PolicySpec};

use crate::args::PolicyArgs;
use crate::output::{fmt_time, write_atomically};
use crate::stream::{self, Event, Row, StreamError};

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
}

/// What one strategy did on the stream.
pub struct Outcome {
    pub description: String,
    pub csv: String,
    pub full: u64,
    pub urgent_only: u64,
    pub completions: u64,
    pub errors: u64,
    pub delays: Histogram<u64>,
    pub max_delay: Nanos,
    pub input_end: Nanos,
    pub last_delivery: Nanos,
}

impl Outcome {
    pub fn interrupts(&self) -> u64 {
        self.full + self.urgent_only
    }

    pub fn per_interrupt(&self) -> f64 {
        if self.interrupts() == 0 {
            0.0
        } else {
            self.completions as f64 / self.interrupts() as f64
        }
    }
}

/// Replays `rows` through the strategy `spec` names. Semantic errors in the
/// stream (an id completed again before it was delivered, submitted again
/// while outstanding) name the row's line.
pub fn replay(rows: &[Row], spec: &PolicySpec, origin: &str, want_csv: bool) -> Result<Outcome> {
    let mut replay = Replay::new(build(spec)?);
    let mut out = Outcome {
        description: describe(spec),
        csv: String::new(),
        full: 0,
        urgent_only: 0,
        completions: 0,
        errors: 0,
        // 1 ns to an hour at 3 significant figures; longer delays are clamped.
        delays: Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds"),
        max_delay: 0,
        input_end: rows.last().map_or(0, |r| r.time),
        last_delivery: 0,
    };
    if want_csv {
        out.csv.push_str("time_ns,kind,ids\n");
    }
    let undelivered: RefCell<HashSet<u64>> = RefCell::new(HashSet::new());
    let mut outstanding: HashSet<u64> = HashSet::new();
    let mut sink = |d: &Delivery| {
        match d.kind {
            policy::Interrupt::Full => out.full += 1,
            policy::Interrupt::UrgentOnly => out.urgent_only += 1,
        }
        out.last_delivery = d.time;
        if want_csv {
            let _ = write!(out.csv, "{},{},", d.time, d.kind.as_str());
        }
        for (i, r) in d.reaped.iter().enumerate() {
            undelivered.borrow_mut().remove(&r.id);
            let delay = d.time - r.posted_at;
            out.delays.saturating_record(delay);
            out.max_delay = out.max_delay.max(delay);
            if want_csv {
                let sep = if i == 0 { "" } else { " " };
                let _ = write!(out.csv, "{sep}{}", r.id);
            }
        }
        if want_csv {
            out.csv.push('\n');
        }
    };
    for row in rows {
        let bad = |message: String| StreamError {
            origin: origin.to_string(),
            line: row.line,
            message,
        };
        match row.event {
            Event::Submit => {
                if !outstanding.insert(row.id) {
                    bail!(bad(format!(
                        "id {} submitted again while still outstanding",
                        row.id
                    )));
                }
                let cmd = Command {
                    id: row.id,
                    marks: row.marks,
                };
                replay.submit(row.time, cmd, &mut sink)?;
            }
            Event::Complete | Event::Error => {
                // Deliver what is due first, so a reused id is judged on
                // what the host has really received by now.
                replay.advance(row.time, &mut sink)?;
                if !undelivered.borrow_mut().insert(row.id) {
                    bail!(bad(format!(
                        "id {} completed again before it was delivered",
                        row.id
                    )));
                }
                outstanding.remove(&row.id);
                let error = row.event == Event::Error;
                let cqe = Completion {
                    id: row.id,
                    marks: row.marks,
                    error,
                };
                replay.complete(row.time, cqe, &mut sink)?;
            }
        }
    }
    replay.finish(&mut sink);
    out.completions = rows.iter().filter(|r| r.event != Event::Submit).count() as u64;
    out.errors = rows.iter().filter(|r| r.event == Event::Error).count() as u64;
    Ok(out)
}

fn read_input(input: Option<&PathBuf>) -> Result<(String, String)> {
    match input {
        Some(p) if p.as_os_str() != "-" => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("{}: cannot read", p.display()))?;
            Ok((text, p.display().to_string()))
        }
        _ => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("<stdin>: cannot read")?;
            Ok((text, "<stdin>".to_string()))
        }
    }
}

pub fn run(args: &CoalesceArgs) -> Result<()> {
    let (text, origin) = read_input(args.input.as_ref())?;
    let rows = stream::parse(&text, &origin)?;
    if args.policy.policy == "all" {
        if args.policy.has_parameters() || args.output.is_some() {
            bail!("--policy all compares every strategy on its defaults; it takes no strategy options and no --output");
        }
        let mut outcomes = Vec::new();
        for s in policy::catalogue::STRATEGIES {
            outcomes.push(replay(&rows, &PolicySpec::named(s.name), &origin, false)?);
        }
        print!("{}", comparison_table(&outcomes));
        return Ok(());
    }
    let want_csv = !args.summary || args.output.is_some();
    let outcome = replay(&rows, &args.policy.spec(), &origin, want_csv)?;
    match &args.output {
        Some(path) => write_atomically(path, outcome.csv.as_bytes())?,
        None if !args.summary => print!("{}", outcome.csv),
        None => {}
    }
    if args.summary {
        print!("{}", summary(&outcome));
    }
    Ok(())
}

fn delay_stats(o: &Outcome) -> (String, String, String) {
    if o.delays.is_empty() {
        return ("-".into(), "-".into(), "-".into());
    }
    (
        fmt_time(o.delays.mean().round() as u64),
        // A bucket's upper edge can pass the exact maximum; never show p99 > max.
        fmt_time(o.delays.value_at_quantile(0.99).min(o.max_delay)),
        fmt_time(o.max_delay),
    )
}

pub fn summary(o: &Outcome) -> String {
    let (mean, p99, max) = delay_stats(o);
    let mut s = String::new();
    let _ = writeln!(s, "policy:       {}", o.description);
    let _ = writeln!(s, "completions:  {} ({} in error)", o.completions, o.errors);
    let _ = writeln!(
        s,
        "interrupts:   {} ({} full, {} urgent-only)",
        o.interrupts(),
        o.full,
        o.urgent_only
    );
    let _ = writeln!(s, "per interrupt: {:.2} completions", o.per_interrupt());
    let _ = writeln!(
        s,
        "delay (completion to delivery): mean {mean}, p99 {p99}, max {max}"
    );
    let _ = writeln!(
        s,
        "input ended at {}; pending completions were delivered by {}",
        fmt_time(o.input_end),
        fmt_time(o.last_delivery.max(o.input_end))
    );
    s
}

pub fn comparison_table(outcomes: &[Outcome]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<10} {:>10} {:>10} {:>8} {:>9} {:>10} {:>10} {:>10}",
        "policy", "interrupts", "full", "urgent", "per-irq", "mean", "p99", "max"
    );
    for o in outcomes {
        let (mean, p99, max) = delay_stats(o);
        let name = o.description.split(' ').next().unwrap_or("");
        let _ = writeln!(
            s,
            "{:<10} {:>10} {:>10} {:>8} {:>9.2} {:>10} {:>10} {:>10}",
            name,
            o.interrupts(),
            o.full,
            o.urgent_only,
            o.per_interrupt(),
            mean,
            p99,
            max
        );
    }
    if let Some(o) = outcomes.first() {
        let _ = writeln!(
            s,
            "{} completions ({} in error); delays from completion to delivery; defaults of each strategy (see `cinterrupts policies`)",
            o.completions, o.errors
        );
    }
    s
}
