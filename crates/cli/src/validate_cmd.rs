//! `cinterrupts validate`: argument wiring for the `validate` crate
//! (issue 37 item 5).

use std::path::PathBuf;

use clap::Args;

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// A handful of points (one fitted and one held out per target), short
    /// runs: seconds
    #[arg(long)]
    pub quick: bool,
    /// Where validation.md, validation.json and validation.html go
    #[arg(long, value_name = "DIR", default_value = "validation")]
    pub out: PathBuf,
    /// The host profile the predictions use: a shipped name or a file
    /// (`calibrate --host` writes one). Default: this machine measured at
    /// the start (calibrate --host's benchmarks), written to DIR/host.toml
    #[arg(long, value_name = "NAME|FILE")]
    pub host: Option<String>,
    /// Also run each held-out point on the emulator (`cinterrupts run`)
    /// with the fitted device, beside the simulator's prediction
    #[arg(long)]
    pub emu: bool,
    /// Nothing real: predict again the held-out points of a stored
    /// validation.json (its measurements and fitted devices) with today's
    /// model and --host (default vm-native), to judge a model change on
    /// the same data
    #[arg(long, value_name = "FILE", conflicts_with_all = ["quick", "emu"])]
    pub again: Option<PathBuf>,
}

pub fn run(a: &ValidateArgs) -> anyhow::Result<()> {
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    if let Some(file) = &a.again {
        let name = a.host.clone().unwrap_or_else(|| "vm-native".into());
        let host = sim::HostProfile::load(&name)
            .map_err(|e| anyhow::anyhow!("validate: --host {name}: {e}"))?;
        let v = validate::again::again(file, &host, &name, &command)?;
        return write(&v, a);
    }
    let v = validate::run(
        &validate::Options {
            quick: a.quick,
            host: a.host.clone(),
            out: a.out.clone(),
            emu: a.emu,
        },
        &command,
        &mut |line| eprintln!("validate: {line}"),
    )?;
    write(&v, a)
}

/// The validation's files, and its summary on stdout.
fn write(v: &validate::Validation, a: &ValidateArgs) -> anyhow::Result<()> {
    validate::write::all(v, &a.out)?;
    out!("{}", validate::write::summary_text(v));
    outln!(
        "wrote {}/validation.md, validation.json, validation.html",
        a.out.display()
    );
    Ok(())
}
