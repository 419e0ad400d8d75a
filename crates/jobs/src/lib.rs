//! fio job files in, workload descriptions out.
//!
//! This crate reads fio's INI job files (`[global]` plus job sections) into
//! typed [`Job`]s with fio's defaults, and says which calibrated-interrupt
//! marks each request carries ([`Job::marks`]: the kernel defaults of TOS
//! Table 1, the authors' patched-fio `barrier` option, and our per-job
//! `cint_flags` override). [`Issuer`] is fio's I/O loop for one job thread
//! as a pure state machine (what to issue, when to reap, sleep or stop); the
//! simulator and the emulator apply its decisions.
//!
//! It is **for** turning the job files the paper's authors ran (fio 3.12,
//! psync / pvsync2 / libaio jobs, O_DIRECT random 4 KiB I/O) into a workload
//! description, with one-line `FILE:LINE: option 'x': ...` errors.
//!
//! fio's job options given on its command line (`--iodepth=16
//! --section=psync`) come in as a [`CommandLine`] to [`parse_file_with`] or
//! [`parse_str_with`], in fio's precedence: they are every job's defaults,
//! and the file's `[global]` and each job's own section override them.
//!
//! [`parse_file`] is the one front door for every command that reads a job
//! file: it reads only regular files and FIFOs, at most
//! [`MAX_JOB_FILE_BYTES`] with fio's `include`s, and defines at most
//! [`MAX_JOBS`] jobs. [`parse_str`] is the same parser on text, without side
//! effects.
//!
//! It is **not** fio: it runs no I/O, reads no clock, and models only the
//! options that change the interrupts and latency being measured. Options
//! that do not (logging, reporting, buffer contents) are accepted and
//! recorded in [`JobFile::ignored`]; options that would but are not modelled
//! (`zonemode`, `exitall`, ...) are errors saying why.
//!
//! ```
//! let text = "[global]\ndirect=1\nbs=4k\n[reader]\nrw=randread\nioengine=libaio\niodepth=4\niodepth_batch_submit=4\n";
//! let file = jobs::parse_str(text, "x.fio", &|_| None).unwrap();
//! let job = &file.jobs[0];
//! assert_eq!(job.iodepth_batch_submit, 4);
//! assert_eq!(job.marks(jobs::IoKind::Read, 3, 4), policy::Marks::BARRIER);
//! assert_eq!(job.marks(jobs::IoKind::Read, 0, 4), policy::Marks::NONE);
//! ```

pub mod check;
pub mod cmdline;
mod describe;
mod error;
mod ini;
mod issue;
mod job;
mod marking;
mod offsets;
mod options;
mod parse;
mod plan;
mod sizes;
mod skew;
mod source;
pub mod units;
pub mod ycsb;

pub use cmdline::CommandLine;
pub use error::{JobError, Refused};
pub use issue::{Batch, Decision, Io, Issued, Issuer, Reap, Waiter};
pub use job::{
    BlockSizes, BsSplit, CintFlags, CpusAllowedPolicy, Distribution, Engine, Job, RateProcess,
    RwMode, Uring, Verify,
};
pub use marking::default_marks_of;
pub use marks::{Call, DefaultMarks, IoKind, JobMarks, RwfFlags, Sqe, Submission};
pub use offsets::Offsets;
pub use options::{known_options, lookup, Disposition, OptionSpec, MAX_BLOCK_SIZE, MAX_JOBS};
pub use parse::{
    parse_file, parse_file_with, parse_files_with, parse_str, parse_str_with, Ignored, JobFile,
    Note, COMMAND_LINE,
};
pub use plan::{serial_order, Bounds, IoLoop};
pub use policy::Marks;
pub use source::{MAX_INCLUDE_DEPTH, MAX_JOB_FILE_BYTES};
