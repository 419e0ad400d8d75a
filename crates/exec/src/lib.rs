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

pub mod ending;
pub mod fires;
mod record;
mod route;
pub mod rules;
mod run;
mod signals;
mod spawn;
pub mod stage;
pub mod summary;
pub mod text;
mod tree;
mod watch;

// What the preload library shares with exec is `wire`'s (issue 38 item
// 1): re-exported under the names exec gave it, and its modules are
// exec's `config`, `counts` and `marks` as before.
pub use record::{Boosted, NotRoutedOf, Record};
pub use route::{allowed_cpus, BlockNote, RouteOptions, Routed, Router};
pub use run::{
    find_preload, run, running_kernel_rwf, ExecError, Harness, Options, Outcome, Status,
    PRELOAD_NAME,
};
pub use signals::{name as signal_name, reraise, Escalated};
pub use stage::{StageError, StageOptions, StageReport};
pub use watch::NotRouted;
pub use wire::marks;
use wire::{config, counts};
pub use wire::{
    marks_bits, marks_from_bits, matches, polls, ByMark, Calls, Config, Counts, Critical, Family,
    Fr, Hybrid, IoUring, Kind, Live, Mark, Polling, RouteEnv, Rule, RwfMarks, Target, ENV_BOOST,
    ENV_COMPLETION, ENV_CRITICAL, ENV_DEVICE, ENV_IO_URING, ENV_MARKS, ENV_OUT, ENV_OUT_FD,
    ENV_RULES, ENV_RWF, IO_URING_REFUSED_ERRNO,
};
