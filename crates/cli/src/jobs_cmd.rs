//! `cinterrupts jobs`: reads fio job files and shows what each job will do,
//! with the marks its requests carry (TOS Table 1).

use std::io::{BufWriter, Write};
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
    /// Every job's runtime (e.g. 10s, 500ms; a bare number is seconds),
    /// instead of the job file's runtime=, as `sim` and `run` take it
    #[arg(long, value_parser = args::runtime, value_name = "TIME")]
    pub runtime: Option<u64>,
    #[command(flatten)]
    pub fio: FioArgs,
}

/// Parses each file with the command line's fio options; `runtime`
/// replaces every job's `runtime=`.
pub fn parse_all(
    files: &[PathBuf],
    cmd: &jobs::CommandLine,
    runtime: Option<u64>,
) -> Result<Vec<JobFile>> {
    let mut parsed = Vec::new();
    for f in files {
        let mut file = jobs::parse_file_with(f, cmd)?;
        if runtime.is_some() {
            for j in &mut file.jobs {
                j.runtime = runtime;
            }
        }
        parsed.push(file);
    }
    Ok(parsed)
}

/// Prints accepted-but-ignored options and fio-style adjustments, buffered:
/// a hostile file can hold a quarter of a million ignored options, and one
/// unbuffered write each took seconds.
pub fn print_notes(file: &JobFile) {
    let mut err = BufWriter::new(std::io::stderr().lock());
    // A closed stderr loses the notes, not the run.
    for i in &file.ignored {
        let _ = writeln!(err, "note: {i}");
    }
    for n in &file.notes {
        let _ = writeln!(err, "note: {n}");
    }
    let _ = err.flush();
}

pub fn run(args: &JobsArgs) -> Result<()> {
    for file in parse_all(&args.files, &args.fio.command_line(), args.runtime)? {
        print_notes(&file);
        for job in &file.jobs {
            println!("{}", job.describe());
        }
    }
    Ok(())
}
