//! `cinterrupts coalesce`: replays a recorded completion stream through a
//! strategy and prints the interrupts it would raise (`policy::stream`).

use std::io::Read;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use policy::stream::{self, comparison_table};
use policy::PolicySpec;

use crate::args::PolicyArgs;
use crate::output::write_file;

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

/// The stream's text and its name for errors.
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
            let spec = PolicySpec::named(s.name);
            outcomes.push(stream::replay(&rows, &spec, &origin, false)?);
        }
        print!("{}", comparison_table(&outcomes));
        return Ok(());
    }
    let want_csv = !args.summary || args.output.is_some();
    let outcome = stream::replay(&rows, &args.policy.spec(), &origin, want_csv)?;
    match &args.output {
        Some(path) => write_file(path, outcome.csv.as_bytes())?,
        None if !args.summary => print!("{}", outcome.csv),
        None => {}
    }
    if args.summary {
        print!("{}", outcome.summary());
    }
    Ok(())
}
