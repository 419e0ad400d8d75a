//! `cinterrupts jobs`: reads fio job files and shows what each job will do,
//! with the marks its requests carry (TOS Table 1).

use std::io::BufWriter;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use jobs::JobFile;

use crate::args::{self, FioArgs};

#[derive(Args, Debug)]
pub struct JobsArgs {
    /// fio job files
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Only say, for each file, whether it parses or the one-line reason it
    /// is refused, then how many parse; exits 1 if any is refused
    #[arg(long)]
    pub check: bool,
    /// Every job's runtime (e.g. 10s, 500ms; a bare number is seconds),
    /// instead of the job file's runtime=, as `sim` and `run` take it
    #[arg(long, value_parser = args::runtime, value_name = "TIME")]
    pub runtime: Option<u64>,
    #[command(flatten)]
    pub fio: FioArgs,
}

/// Prints the file's notes (`JobFile::write_notes`) on stderr, buffered;
/// a closed stderr loses the notes, not the run.
pub fn print_notes(file: &JobFile) {
    let _ = file.write_notes(&mut BufWriter::new(std::io::stderr().lock()));
}

pub fn run(args: &JobsArgs) -> Result<()> {
    if args.check {
        return check(&args.files);
    }
    for (file, path) in jobs::parse_files_with(&args.files, &args.fio.command_line(), args.runtime)?
        .into_iter()
        .zip(&args.files)
    {
        // Who waits for whom (stonewall, wait_for) is checked here as sim
        // and run check it: an unknown waitee is refused before anything
        // is shown.
        if let Err((i, why)) = jobs::serial_order(&file.jobs) {
            anyhow::bail!(jobs::check::unordered(path, &file.jobs[i], &why));
        }
        print_notes(&file);
        for job in &file.jobs {
            outln!("{}", job.describe());
        }
    }
    Ok(())
}

fn check(files: &[PathBuf]) -> Result<()> {
    let c = jobs::check::check_files(files);
    out!("{}", c.text());
    if c.ok < files.len() {
        anyhow::bail!("{} of {} files refused", files.len() - c.ok, files.len());
    }
    Ok(())
}
