//! What `cinterrupts exec` and its preload library (`crates/preload`)
//! share (issue 38 item 1): the configuration exec passes the library in
//! the environment (`config`), the marking rules, from the one marking engine
//! (`marks`, `glob`: the `marks` crate's), the counters each process keeps and the record it
//! writes at exit (`counts`, `record`), the marks' bits in a shared-region
//! command (`cmd`), and the scheduling and timer calls the program's
//! threads make, as the emulator's job threads do (`sys`).
//!
//! A foundation both link: the library, loaded into every program `exec`
//! runs, takes these without the emulator, the runner or their
//! dependencies (io-uring, plotters, toml, tempfile). `exec` re-exports
//! them under their old names.

pub mod cmd;
pub mod config;
pub mod counts;
pub mod marks;
/// The rules' globs, the marking engine's.
pub use ::marks::glob;
pub mod record;
pub mod sys;

pub use cmd::{marks_bits, marks_from_bits};
pub use config::{
    polls, Config, Critical, IoUring, Polling, RouteEnv, RwfMarks, Target, ENV_BOOST,
    ENV_COMPLETION, ENV_CRITICAL, ENV_DEVICE, ENV_IO_URING, ENV_MARKS, ENV_OUT, ENV_OUT_FD,
    ENV_RULES, ENV_RWF, IO_URING_REFUSED_ERRNO,
};
pub use counts::{ByMark, Calls, Counts, Family, Fr, Hybrid, Kind, Live};
pub use glob::matches;
pub use marks::{Mark, Rule};
pub use record::{Boosted, Record};
pub use sys::{Boost, HybridSleep, HybridTimer};
