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
}

impl JobError {
    /// The 1-based line the error refers to (0 for errors about the whole file).
    pub fn line(&self) -> usize {
        match self {
            JobError::Read { .. } => 0,
            JobError::Syntax { line, .. }
            | JobError::OptionBeforeSection { line, .. }
            | JobError::EmptySection { line, .. }
            | JobError::UnknownOption { line, .. }
            | JobError::Unsupported { line, .. }
            | JobError::MissingValue { line, .. }
            | JobError::InvalidValue { line, .. }
            | JobError::UndefinedVariable { line, .. }
            | JobError::InvalidJob { line, .. } => *line,
        }
    }
}
