//! A userspace emulator of an NVMe controller with calibrated interrupts,
//! on real I/O (the paper's emulator, TOS 4.2.1, without a patched kernel).
//!
//! A **device thread** on its own CPU plays the controller: per-core
//! submission and completion rings in shared memory with phase bits and
//! doorbells ([`ring`]), Urgent and Barrier in the command identifier
//! ([`policy::cid`]), commands executed on a [`backend`] (io_uring with
//! O_DIRECT on a file, or a timed null device), completions posted to the CQ
//! and fed to the policy, and an interrupt raised on the target core's line
//! ([`irq`]) only when the policy fires. On each target core an **interrupt
//! handler** thread at SCHED_FIFO reaps the CQ ([`handler`]) and wakes the
//! **job threads** ([`worker`]: fio's loop for psync, pvsync2, libaio,
//! io_uring) whose requests completed. Completions stay invisible to the job
//! threads until an interrupt delivers them.
//!
//! It is **for** seeing the strategies of the `policy` crate on real I/O and
//! with this machine's real interrupt cost. It is **not** a kernel driver:
//! the job threads submit by writing the SQ from user space, so a system
//! call's cost is not part of the path, and an "interrupt" is a wake-up of a
//! thread, whose cost on this VM (tens of microseconds) the report measures.

pub mod backend;
pub mod buffers;
pub mod device;
pub mod direct;
pub mod handler;
pub mod irq;
pub mod mailbox;
mod place;
pub mod queue;
mod report;
pub mod ring;
mod run;
pub mod sys;
pub mod verify;
pub mod worker;

pub use run::{run, run_audited, Audit, EmuConfig};

/// Why a run could not start or finish. One line each.
#[derive(Debug, thiserror::Error)]
pub enum EmuError {
    /// A job the emulator cannot run as written.
    #[error("job '{job}' (line {line}): {reason}")]
    Job {
        job: String,
        line: usize,
        reason: String,
    },
    #[error("{0}")]
    Config(String),
    #[error("{0}")]
    Backend(String),
    #[error("the emulator stalled: {0}")]
    Stalled(String),
}
