//! `cinterrupts features`: argument wiring for [`crate::features`]
//! (issue 42 item 3).

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context};
use clap::Args;

use crate::features;

#[derive(Args, Debug)]
pub struct FeaturesArgs {
    /// The workspace whose tests are read for the "checked by" column
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,
    /// Rewrite the table between FILE's generated-features markers
    /// (`cinterrupts features --update README.md` from the workspace root)
    #[arg(long, value_name = "FILE", conflicts_with = "check")]
    pub update: Option<PathBuf>,
    /// Fail naming FILE's first table row that differs from the code's
    #[arg(long, value_name = "FILE")]
    pub check: Option<PathBuf>,
}

fn read(file: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(file).with_context(|| format!("features: {}", file.display()))
}

pub fn run(a: &FeaturesArgs, cmd: &clap::Command) -> anyhow::Result<()> {
    let f = features::generate(&a.root, cmd).map_err(|e| anyhow!("features: {e}"))?;
    // Said beside the result (stderr when stdout is the table), never
    // beside an error: one line then.
    let unchecked = format!(
        "features: {} of {} rows checked by no test{}{}",
        f.unchecked.len(),
        f.rows,
        if f.unchecked.is_empty() { "" } else { ": " },
        f.unchecked.join("; ")
    );
    if let Some(file) = &a.check {
        let text = read(file)?;
        let diff = features::first_difference(&text, &f.markdown)
            .map_err(|e| anyhow!("features: {}: {e}", file.display()))?;
        if let Some(m) = diff {
            bail!(
                "features: {}:{}: stale table (rewrite it: cinterrupts features --update {}): has '{}', the code gives '{}'",
                file.display(),
                m.line,
                file.display(),
                m.committed,
                m.generated
            );
        }
        outln!("{}: the features table is the code's", file.display());
        outln!("{unchecked}");
    } else if let Some(file) = &a.update {
        let text = read(file)?;
        let new = features::replace(&text, &f.markdown)
            .map_err(|e| anyhow!("features: {}: {e}", file.display()))?;
        if new != text {
            report::file::write_atomically(file, new.as_bytes())
                .with_context(|| format!("features: {}", file.display()))?;
        }
        outln!("{}: features table written", file.display());
        outln!("{unchecked}");
    } else {
        out!("{}", f.markdown);
        eprintln!("{unchecked}");
    }
    Ok(())
}
