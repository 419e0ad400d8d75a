//! What each process of the program writes when it exits, and each
//! image before an `execve` (what of it
//! was not routed, as the report names it, is exec's: `exec::record`).

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
    /// Its name (`comm`) and user at its exit.
    #[serde(default)]
    pub comm: String,
    #[serde(default)]
    pub uid: u32,
    /// Why it could not map the shared region, when routing was on and it
    /// could not: none of its I/O was routed (issue 24 item 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmapped: Option<String>,
    /// The library saw an io_uring ring set up through glibc's `syscall()`
    /// or open at the exit (named in the report when the seccomp filter
    /// did not see it: a filter not installed).
    #[serde(default)]
    pub io_uring: bool,
    /// `io_uring_setup` calls the library failed with ENOSYS itself under
    /// `--io-uring refuse` (glibc's `syscall()`), without calling the
    /// kernel (so the seccomp filter never saw them).
    #[serde(default)]
    pub io_uring_refused: u64,
    /// io_uring features the routed rings could not provide, refused with
    /// EINVAL as a kernel without them refuses them (issue 25 item 1), and
    /// how many times each: "IORING_SETUP_SQE128", "io_uring_register
    /// opcode 33", ...
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub io_uring_features_refused: Vec<(String, u64)>,
    /// Why inline io_uring calls are not routed in this process (the trap
    /// could not be installed), if they are not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_uring_untrapped: Option<String>,
    /// Files on a disk it mapped shared and writable (`mmap`): their
    /// write-back is the kernel's, neither seen nor routed (issue 38).
    #[serde(default)]
    pub mmap_write_back: u64,
    /// The program this image ran (`execve`) with an environment whose
    /// `LD_PRELOAD` no longer named the library: none of that program's
    /// I/O was seen (issue 38).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ran_unseen: Option<String>,
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
