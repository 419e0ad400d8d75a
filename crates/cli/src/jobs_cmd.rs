//! `cinterrupts jobs`: reads fio job files and shows what each job will do,
//! with the marks its requests carry (TOS Table 1).

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use jobs::JobFile;

#[derive(Args, Debug)]
pub struct JobsArgs {
    /// fio job files
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

pub fn parse_all(files: &[PathBuf]) -> Result<Vec<JobFile>> {
    let mut parsed = Vec::new();
    for f in files {
        parsed.push(jobs::parse_file(f)?);
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
    for file in parse_all(&args.files)? {
        print_notes(&file);
        for job in &file.jobs {
            println!("{}", job.describe());
        }
    }
    Ok(())
}
