//! `cinterrupts jobs`: reads fio job files and shows what each job will do,
//! with the marks its requests carry (TOS Table 1).

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use jobs::{IoKind, Job, JobFile};

use policy::time::readable as fmt_time;

#[derive(Args, Debug)]
pub struct JobsArgs {
    /// fio job files
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

fn marks_pattern(job: &Job, kind: IoKind) -> String {
    let batch = if job.ioengine.is_async() {
        job.iodepth_batch_submit.max(1) as usize
    } else {
        1
    };
    let marks: Vec<String> = (0..batch)
        .map(|i| job.marks(kind, i, batch).to_string())
        .collect();
    if batch <= 8 {
        marks.join(" ")
    } else {
        format!(
            "{} ... {} (batch of {batch})",
            marks[..3].join(" "),
            marks[batch - 1]
        )
    }
}

fn describe(job: &Job) -> String {
    let mut s = job.name.clone();
    if job.numjobs > 1 {
        let _ = write!(s, "#{}", job.clone_index);
    }
    let _ = write!(
        s,
        ": ioengine={} rw={} bs={}/{} iodepth={} batch_submit={} batch_complete={}..{}",
        job.ioengine,
        job.rw,
        job.bs_read,
        job.bs_write,
        job.iodepth,
        job.iodepth_batch_submit,
        job.iodepth_batch_complete_min,
        job.iodepth_batch_complete_max
    );
    if let Some(cpus) = job.cpus() {
        let _ = write!(s, " cpus={cpus:?}");
    }
    if let Some(rt) = job.runtime {
        let _ = write!(s, " runtime={}", fmt_time(rt));
    }
    if job.rw.reads() {
        let _ = write!(s, "\n    read marks:  {}", marks_pattern(job, IoKind::Read));
    }
    if job.rw.writes() {
        let _ = write!(
            s,
            "\n    write marks: {}",
            marks_pattern(job, IoKind::Write)
        );
    }
    if job.fsync > 0 || job.fdatasync > 0 {
        let _ = write!(s, "\n    fsync marks: {}", job.marks(IoKind::Fsync, 0, 1));
    }
    s
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
            println!("{}", describe(job));
        }
    }
    Ok(())
}
