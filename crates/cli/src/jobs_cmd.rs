//! `cinterrupts jobs`: reads fio job files and shows what each job will do,
//! with the marks its requests carry (TOS Table 1).

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

/// Prints accepted-but-ignored options and fio-style adjustments.
pub fn print_notes(file: &JobFile) {
    for i in &file.ignored {
        eprintln!("note: {i}");
    }
    for n in &file.notes {
        eprintln!("note: {n}");
    }
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
