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
    if args.check {
        return check(&args.files);
    }
    for (file, path) in parse_all(&args.files, &args.fio.command_line(), args.runtime)?
        .into_iter()
        .zip(&args.files)
    {
        // Who waits for whom (stonewall, wait_for) is checked here as sim
        // and run check it: an unknown waitee is refused before anything
        // is shown.
        if let Err((i, why)) = jobs::serial_order(&file.jobs) {
            let j = &file.jobs[i];
            anyhow::bail!(
                "{}:{}: job '{}': {why}",
                path.display(),
                j.section_line,
                policy::quote::quoted(&j.name)
            );
        }
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
            Ok(file) if jobs::serial_order(&file.jobs).is_err() => {
                let (i, why) = jobs::serial_order(&file.jobs).unwrap_err();
                let j = &file.jobs[i];
                writeln!(
                    out,
                    "refused  {}:{}: job '{}': {why}",
                    f.display(),
                    j.section_line,
                    policy::quote::quoted(&j.name)
                )?;
            }
            Err(e) => match engine_refusal(f) {
                Some(why) => writeln!(out, "refused  {why}")?,
                None => writeln!(out, "refused  {e}")?,
            },
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
        }
    }
    writeln!(out, "{ok} of {} files parse", files.len())?;
    out.flush()?;
    if ok < files.len() {
        anyhow::bail!("{} of {} files refused", files.len() - ok, files.len());
    }
    Ok(())
}

/// The first `ioengine=` line of a refused file that names an engine not
/// modelled, as the refusal's reason: fio parses its known options (the
/// engine among them) before the engine's own ones (options.c
/// `fio_options_parse` loads the engine, then parses what was unknown), so
/// an engine's options, or the environment variables they name, are not the
/// reason a file on another engine cannot run here.
fn engine_refusal(path: &std::path::Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().enumerate().find_map(|(i, line)| {
        let (key, value) = line.split_once('=')?;
        if key.trim() != "ioengine" {
            return None;
        }
        let value = value.split([';', '#']).next()?.trim();
        if value.is_empty() || value.contains('$') || jobs::Engine::parse(value).is_some() {
            return None;
        }
        Some(format!(
            "{}:{}: option 'ioengine': ioengine '{}' is not supported ({})",
            path.display(),
            i + 1,
            policy::quote::quoted(value),
            jobs::Engine::NAMES
        ))
    })
}
