//! From lexed sections to jobs: fio's inheritance of `[global]` options,
//! option application, validation of each merged job, `numjobs` expansion.

use std::fmt;
use std::path::Path;

use crate::error::JobError;
use crate::ini::{self, Entry};
use crate::job::Job;
use crate::options::{lookup, Draft, Kind, MAX_JOBS};
use crate::units::parse_bool;

/// A parsed job file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobFile {
    /// One entry per clone, in file order (`numjobs=4` gives four).
    pub jobs: Vec<Job>,
    /// Each occurrence of an accepted-but-ignored option.
    pub ignored: Vec<Ignored>,
    /// Adjustments made the way fio makes them (e.g. iodepth capped at 1
    /// for a synchronous engine).
    pub notes: Vec<Note>,
}

/// An option that was accepted and ignored because it does not change what
/// is measured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ignored {
    pub file: String,
    pub line: usize,
    pub option: String,
}

impl fmt::Display for Ignored {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: option '{}' ignored (does not change what is measured)",
            self.file, self.line, self.option
        )
    }
}

/// Something changed on the user's behalf, as fio would.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

/// Reads and parses a job file; `${VAR}` comes from the process environment.
pub fn parse_file(path: &Path) -> Result<JobFile, JobError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| JobError::Read {
        file: file.clone(),
        reason: e.to_string(),
    })?;
    parse_str(&text, &file, &|var| std::env::var(var).ok())
}

/// Parses job-file text. `origin` names it in messages; `env` resolves
/// `${VAR}`.
pub fn parse_str(
    text: &str,
    origin: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<JobFile, JobError> {
    let sections = ini::lex(text, origin, env)?;
    let mut out = JobFile::default();
    // fio: a job starts from the global options accumulated so far.
    let mut global = Draft::default();
    for section in &sections {
        if section.is_global() {
            for e in &section.entries {
                apply(&mut global, e, origin, &mut out.ignored)?;
            }
            continue;
        }
        let mut draft = global.clone();
        draft.job.name = section.name.clone();
        draft.job.section_line = section.line;
        for e in &section.entries {
            apply(&mut draft, e, origin, &mut out.ignored)?;
        }
        let job = finish(draft, origin, &mut out.notes)?;
        if out.jobs.len() + job.numjobs as usize > MAX_JOBS as usize {
            return Err(JobError::InvalidJob {
                file: origin.to_string(),
                line: job.section_line,
                job: job.name,
                option: "numjobs".to_string(),
                message: format!("more than {MAX_JOBS} jobs in the file"),
            });
        }
        for i in 0..job.numjobs as usize {
            out.jobs.push(Job {
                clone_index: i,
                ..job.clone()
            });
        }
    }
    Ok(out)
}

/// Applies one `option[=value]` to a draft.
fn apply(d: &mut Draft, e: &Entry, file: &str, ignored: &mut Vec<Ignored>) -> Result<(), JobError> {
    let spec = lookup(&e.key).ok_or_else(|| JobError::UnknownOption {
        file: file.to_string(),
        line: e.line,
        option: e.key.clone(),
    })?;
    let missing = || JobError::MissingValue {
        file: file.to_string(),
        line: e.line,
        option: e.key.clone(),
    };
    let invalid = |message: String| JobError::InvalidValue {
        file: file.to_string(),
        line: e.line,
        option: e.key.clone(),
        message,
    };
    let value = e.value.as_deref();
    match spec.kind {
        Kind::Bool(set) => match value {
            None => set(d, true),
            Some("") => return Err(missing()),
            Some(v) => set(d, parse_bool(v).map_err(invalid)?),
        },
        Kind::Value(set) => match value {
            None | Some("") => return Err(missing()),
            Some(v) => set(d, v).map_err(invalid)?,
        },
        Kind::Ignored | Kind::IgnoredChecked(_) => {
            if let (Kind::IgnoredChecked(check), Some(v)) = (spec.kind, value) {
                check(v).map_err(invalid)?;
            }
            ignored.push(Ignored {
                file: file.to_string(),
                line: e.line,
                option: e.key.clone(),
            });
        }
        Kind::Unsupported(why) => {
            return Err(JobError::Unsupported {
                file: file.to_string(),
                line: e.line,
                option: e.key.clone(),
                why: why.to_string(),
            })
        }
    }
    Ok(())
}

/// Resolves defaults that depend on other options and validates the merged
/// job. Errors name the job's section line.
fn finish(d: Draft, file: &str, notes: &mut Vec<Note>) -> Result<Job, JobError> {
    let Draft {
        mut job,
        complete_max,
    } = d;
    let err = |job: &Job, option: &str, message: String| JobError::InvalidJob {
        file: file.to_string(),
        line: job.section_line,
        job: job.name.clone(),
        option: option.to_string(),
        message,
    };
    let mut note = |job: &Job, message: String| {
        notes.push(Note {
            file: file.to_string(),
            line: job.section_line,
            message: format!("job '{}': {message}", job.name),
        })
    };

    if job.iodepth == 0 {
        return Err(err(&job, "iodepth", "must be at least 1".to_string()));
    }
    let mut complete_max = complete_max;
    // fio: "both iodepth >= 1 and synchronous I/O engine are selected, queue
    // depth will be capped at 1". The batch options follow the depth.
    if job.ioengine.is_sync() && job.iodepth > 1 {
        note(
            &job,
            format!(
                "ioengine {} is synchronous: iodepth {} capped at 1",
                job.ioengine, job.iodepth
            ),
        );
        job.iodepth = 1;
        job.iodepth_batch_submit = job.iodepth_batch_submit.min(1);
        job.iodepth_batch_complete_min = job.iodepth_batch_complete_min.min(1);
        complete_max = complete_max.map(|m| m.min(1));
        job.iodepth_low = None;
    }
    // fio HOWTO: "If it is set to 0 the iodepth value will be used."
    if job.iodepth_batch_submit == 0 {
        job.iodepth_batch_submit = job.iodepth;
    }
    if job.iodepth_batch_submit > job.iodepth {
        return Err(err(
            &job,
            "iodepth_batch_submit",
            format!(
                "{} exceeds iodepth {}",
                job.iodepth_batch_submit, job.iodepth
            ),
        ));
    }
    if job.iodepth_batch_complete_min > job.iodepth {
        return Err(err(
            &job,
            "iodepth_batch_complete_min",
            format!(
                "{} exceeds iodepth {}",
                job.iodepth_batch_complete_min, job.iodepth
            ),
        ));
    }
    // fio: the maximum defaults to the minimum, and is raised to it if lower.
    job.iodepth_batch_complete_max = match complete_max {
        Some(m) if m > job.iodepth => {
            return Err(err(
                &job,
                "iodepth_batch_complete_max",
                format!("{m} exceeds iodepth {}", job.iodepth),
            ))
        }
        Some(m) => m.max(job.iodepth_batch_complete_min),
        None => job.iodepth_batch_complete_min,
    }
    .max(1);
    // fio: iodepth_low above iodepth (or 0) means iodepth.
    job.iodepth_low = job.iodepth_low.filter(|&low| low < job.iodepth);
    if job.time_based && job.runtime.is_none() {
        return Err(err(
            &job,
            "time_based",
            "needs a runtime above 0".to_string(),
        ));
    }
    if job.barrier && !job.ioengine.is_async() {
        return Err(err(
            &job,
            "barrier",
            format!("needs ioengine libaio or io_uring, not {}", job.ioengine),
        ));
    }
    if job.nowait && !job.ioengine.takes_rwf_flags() {
        return Err(err(
            &job,
            "nowait",
            format!(
                "needs ioengine pvsync2, libaio or io_uring, not {}",
                job.ioengine
            ),
        ));
    }
    Ok(job)
}
