//! `cinterrupts exec` (issue 14): an unmodified, dynamically linked program
//! run with the preload library (`crates/preload`), which sees its direct
//! I/O from inside and gives each request the marks the authors' kernel
//! would (TOS 4.1.1 Table 1 or their basis kernel, the application's
//! RWF_URGENT/RWF_BARRIER, then the marking rules of `marks`: by
//! operation, thread name, file path and process title).
//!
//! This crate holds what both sides share (the configuration passed in the
//! environment, the counters, each process's record) and the runner: start
//! the program with the library, pass its output and exit status through,
//! and add up what its processes saw.
//!
//! First step: the library observes and every call reaches the kernel as
//! the program made it (RWF_URGENT/RWF_BARRIER taken out); routing the
//! requests through the emulator's device and driver comes next.

mod config;
mod counts;
pub mod fires;
mod glob;
pub mod marks;
mod record;
mod route;
mod run;
mod signals;
mod spawn;
pub mod stage;
pub mod summary;
mod watch;

pub use config::{
    polls, Config, Critical, IoUring, Mark, Polling, RouteEnv, RwfMarks, Target, ENV_BOOST,
    ENV_COMPLETION, ENV_CRITICAL, ENV_DEVICE, ENV_IO_URING, ENV_MARKS, ENV_OUT, ENV_OUT_FD,
    ENV_RULES, ENV_RWF, IO_URING_REFUSED_ERRNO,
};
pub use counts::{ByMark, Calls, Counts, Family, Fr, Hybrid, Kind, Live};
pub use glob::matches;
pub use marks::Rule;
pub use record::{Boosted, Record};
pub use route::{
    allowed_cpus, marks_bits, marks_from_bits, BlockNote, RouteOptions, Routed, Router,
};
pub use run::{find_preload, run, ExecError, Options, Outcome, Status, PRELOAD_NAME};
pub use signals::{name as signal_name, Escalated};
pub use stage::{StageError, StageOptions, StageReport};
pub use watch::NotRouted;
