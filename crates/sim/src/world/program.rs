//! The thread kinds: what drives a simulated thread when it is on its CPU
//! with nothing left to finish (issue 39 item 5). Each kind is a type
//! behind [`Program`], stateless: a thread's own state (its issuer, its
//! application driver, its I/O loop's books) stays in
//! [`crate::world::Thread`], which names its program.
//!
//! - [`JobLoop`]: a fio job's thread, fio's loop as [`jobs::Issuer`]
//!   decides it (issue, reap, sleep, finish; a `cpuio` burner's cycles;
//!   an fsync every `fsync` writes through [`crate::world::journal`]),
//!   charged in [`crate::world::thread`].
//! - [`Jbd2`]: the journal's kernel thread in runs where a job fsyncs; it
//!   starts blocked in the fsync path and runs the path's steps
//!   ([`crate::step::Step::Journal`]); should it ever plan, it plans as
//!   the job it was cloned from (its issuer).
//! - [`AppModel`]: a thread driven by an application model
//!   ([`apps::AppThread`]: the application runs and trace replays,
//!   [`crate::replay`]), charged in [`crate::world::app`]; the waiting
//!   call hands it the tags of the I/Os it took.
//!
//! - [`crate::world::central::Central`]: UnICom's central poller, a
//!   kernel thread of its own under `completion = central`.
//!
//! Adding a kind: a type implementing [`Program`], and the thread set up
//! with it where the run assembles its threads (`crate::run`).

use std::fmt::Debug;

use crate::world::World;

/// What a thread of this kind does next.
pub(crate) trait Program: Debug + Sync {
    /// The thread is on its CPU (`core`) with nothing left to finish:
    /// decide and start its next step.
    fn plan(&self, w: &mut World, tid: u32, core: u32);

    /// Whether the call that takes completions tells the program which of
    /// its I/Os it returned (their tags).
    fn takes_tags(&self) -> bool {
        false
    }
}

/// A fio job's thread: fio's loop.
#[derive(Debug)]
pub(crate) struct JobLoop;

impl Program for JobLoop {
    fn plan(&self, w: &mut World, tid: u32, core: u32) {
        w.job_plan(tid, core);
    }
}

/// JBD2, the journal's kernel thread.
#[derive(Debug)]
pub(crate) struct Jbd2;

impl Program for Jbd2 {
    fn plan(&self, w: &mut World, tid: u32, core: u32) {
        w.job_plan(tid, core);
    }
}

/// A thread an application model drives.
#[derive(Debug)]
pub(crate) struct AppModel;

impl Program for AppModel {
    fn plan(&self, w: &mut World, tid: u32, core: u32) {
        w.app_plan(tid, core);
    }

    fn takes_tags(&self) -> bool {
        true
    }
}
