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
    pub counts: Counts,
}
