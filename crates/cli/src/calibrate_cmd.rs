//! `cinterrupts calibrate`: the simulator's host model against the paper's
//! costs, target by target (`sim::calibrate`).

use anyhow::Result;
use clap::Args;

use crate::args;

#[derive(Args, Debug)]
pub struct CalibrateArgs {
    /// Virtual time each run simulates
    #[arg(long, value_parser = args::runtime, default_value = "200ms", value_name = "TIME")]
    pub runtime: u64,
}

pub fn run(a: &CalibrateArgs) -> Result<()> {
    let targets = sim::calibrate::targets(a.runtime)?;
    println!(
        "{:<62} {:>9} {:>9} {:>7}  source",
        "target (shipped profiles xeon-e5-2660v4, optane, p3700)", "paper", "model", "ratio"
    );
    for t in &targets {
        println!(
            "{:<62} {:>9} {:>9} {:>6.2}x  {}",
            t.what,
            format!("{} {}", t.paper, t.unit),
            format!("{:.1} {}", t.model, t.unit),
            t.ratio(),
            t.source
        );
    }
    println!(
        "\nThe host model's constants are the profile's, each with its source \
         (profiles/hosts/xeon-e5-2660v4.toml); none is fitted to these targets yet."
    );
    Ok(())
}
