//! The crate's one error type. Every message is a single line that starts
//! with `FILE:LINE:` and names the option (or section) at fault, like fio's.

use thiserror::Error;

/// Everything that can go wrong reading a job file.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum JobError {
    /// The file could not be read.
    #[error("{file}: cannot read job file: {reason}")]
    Read { file: String, reason: String },

    /// A line that is neither a section header, a comment nor `option[=value]`.
    #[error("{file}:{line}: {message}")]
    Syntax {
        file: String,
        line: usize,
        message: String,
    },

    /// `option=value` before the first `[section]`.
    #[error("{file}:{line}: option '{option}' appears before any [section]")]
    OptionBeforeSection {
        file: String,
        line: usize,
        option: String,
    },

    /// `[]` or `[   ]`.
    #[error("{file}:{line}: empty section name")]
    EmptySection { file: String, line: usize },

    /// An option neither fio nor we know.
    #[error("{file}:{line}: unknown option '{option}'")]
    UnknownOption {
        file: String,
        line: usize,
        option: String,
    },

    /// A real fio option (or value) that would change what is measured but is
    /// not modelled here.
    #[error("{file}:{line}: option '{option}' is not supported: {why}")]
    Unsupported {
        file: String,
        line: usize,
        option: String,
        why: String,
    },

    /// An option that needs a value was given none (`bs` or `bs=`).
    #[error("{file}:{line}: option '{option}' needs a value")]
    MissingValue {
        file: String,
        line: usize,
        option: String,
    },

    /// A value that does not parse, or is out of range.
    #[error("{file}:{line}: option '{option}': {message}")]
    InvalidValue {
        file: String,
        line: usize,
        option: String,
        message: String,
    },

    /// `${VAR}` with VAR not defined in the environment.
    #[error("{file}:{line}: option '{option}': undefined variable '${{{var}}}'")]
    UndefinedVariable {
        file: String,
        line: usize,
        option: String,
        var: String,
    },

    /// More jobs than fio allows in one run; `line` is the `[section]` whose
    /// clones pass the bound.
    #[error("{file}:{line}: job '{job}': {message}")]
    TooManyJobs {
        file: String,
        line: usize,
        job: String,
        message: String,
    },

    /// Only `[global]` sections, comments, or nothing (fio: "No job(s)
    /// defined").
    #[error("{file}: no jobs to run: no job section in the file (fio: \"No job(s) defined\")")]
    NoJobs { file: String },

    /// A job whose merged options are inconsistent; `line` is the job's
    /// `[section]` line.
    #[error("{file}:{line}: job '{job}': option '{option}': {message}")]
    InvalidJob {
        file: String,
        line: usize,
        job: String,
        option: String,
        message: String,
    },

    /// A job option or `--section` given on the command line that is not
    /// valid; `given` is the option as written (`--iodepth=x`).
    #[error("{given}: {message}")]
    CommandLine { given: String, message: String },
}

impl JobError {
    /// The 1-based line the error refers to (0 for errors about the whole file).
    pub fn line(&self) -> usize {
        match self {
            JobError::Read { .. } | JobError::NoJobs { .. } | JobError::CommandLine { .. } => 0,
            JobError::Syntax { line, .. }
            | JobError::OptionBeforeSection { line, .. }
            | JobError::EmptySection { line, .. }
            | JobError::UnknownOption { line, .. }
            | JobError::Unsupported { line, .. }
            | JobError::MissingValue { line, .. }
            | JobError::InvalidValue { line, .. }
            | JobError::UndefinedVariable { line, .. }
            | JobError::TooManyJobs { line, .. }
            | JobError::InvalidJob { line, .. } => *line,
        }
    }
}

/// How an error quotes the file: one bounded, printable line, shared with
/// every other front door (`policy::quote`).
pub(crate) use policy::quote::{escape_controls, quoted};

/// `message` with each occurrence of the raw `value` replaced by its
/// [`quoted`] form, then any control character left escaped: the setters'
/// messages quote the value as written.
pub(crate) fn with_quoted_value(message: &str, value: &str) -> String {
    let shown = quoted(value);
    let message = if !value.is_empty() && shown != value {
        message.replace(value, &shown)
    } else {
        message.to_string()
    };
    escape_controls(&message)
}

/// A job a front end (the simulator, the emulator) cannot run as written,
/// found after the file was read: one line naming the job and its
/// section's line. Said here once; `sim::SimError::Job` and
/// `emu::EmuError::Job` each carry one.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("job '{job}' (line {line}): {reason}")]
pub struct Refused {
    pub job: String,
    pub line: usize,
    pub reason: String,
}

impl Refused {
    /// `job` refused for `reason`.
    pub fn new(job: &crate::Job, reason: impl Into<String>) -> Refused {
        Refused {
            job: job.name.clone(),
            line: job.section_line,
            reason: reason.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use policy::quote::MAX_QUOTED_CHARS;

    #[test]
    fn a_refused_job_names_itself_and_its_line() {
        let text = "[global]\nsize=1m\n\n[aio]\nrw=read\n";
        let file = crate::parse_str(text, "t.fio", &|_| None).unwrap();
        let r = Refused::new(&file.jobs[0], "too deep");
        assert_eq!((r.job.as_str(), r.line), ("aio", 4));
        assert_eq!(r.to_string(), "job 'aio' (line 4): too deep");
    }

    #[test]
    fn a_setters_message_quotes_the_value_as_written() {
        // policy::quote's own tests cover cutting and escaping.
        let long = "A".repeat(1000);
        let q = quoted(&long);
        assert!(q.starts_with(&"A".repeat(MAX_QUOTED_CHARS)));
        assert_eq!(
            with_quoted_value(&format!("invalid size '{long}'"), &long),
            format!("invalid size '{q}'")
        );
        assert_eq!(with_quoted_value("bad '\t'", "x"), "bad '\\t'");
    }
}
