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
    /// Only say, for each file, whether it parses or the one-line reason it
    /// is refused, then how many parse; exits 1 if any is refused
    #[arg(long)]
    pub check: bool,
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
    if args.check {
        return check(&args.files);
    }
    for file in parse_all(&args.files)? {
        print_notes(&file);
        for job in &file.jobs {
            println!("{}", job.describe());
        }
    }
    Ok(())
}

/// `jobs --check`: one line per file (`ok FILE: N jobs` or
/// `refused FILE:LINE: ...`, the parser's own one-line error), then the
/// count. Every file is read, whatever the others do.
fn check(files: &[PathBuf]) -> Result<()> {
    let mut out = BufWriter::new(std::io::stdout().lock());
    let mut ok = 0usize;
    for f in files {
        match jobs::parse_file(f) {
            Ok(file) => {
                ok += 1;
                let n = file.jobs.len();
                writeln!(
                    out,
                    "ok       {}: {n} job{}",
                    f.display(),
                    if n == 1 { "" } else { "s" }
                )?;
            }
            Err(e) => writeln!(out, "refused  {e}")?,
        }
    }
    writeln!(out, "{ok} of {} files parse", files.len())?;
    out.flush()?;
    if ok < files.len() {
        anyhow::bail!("{} of {} files refused", files.len() - ok, files.len());
    }
    Ok(())
}
