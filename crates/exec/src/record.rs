//! What each process of the program writes when it exits.

use serde::{Deserialize, Serialize};

use crate::counts::Counts;

/// One process's record (`$CINTERRUPTS_EXEC_OUT/PID.json`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub pid: u32,
    pub ppid: u32,
    /// The program it ran (`/proc/self/exe`).
    pub exe: String,
    /// Its title at exit (`/proc/self/cmdline`, NULs as spaces), which the
    /// `title=` rules match: PostgreSQL's "postgres: checkpointer" tells
    /// its processes apart where `exe` cannot.
    #[serde(default)]
    pub title: String,
    pub counts: Counts,
    /// The threads given `--critical-boost` at their first critical
    /// request.
    #[serde(default)]
    pub boosted: Vec<Boosted>,
}

/// A thread boosted (or that could not be).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Boosted {
    pub tid: u32,
    /// Its name then (`comm`).
    pub name: String,
    /// `slice` or `fifo`.
    pub how: String,
    /// Why the kernel refused, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
