//! The simulator's one error type, in a module of its own so that every
//! part of the simulator can return it without depending on the run that
//! builds the world (issue 26 item 3: no module cycle through `run`).

/// A workload the simulator cannot run, or a policy it cannot build. One line,
/// naming the job and its section's line.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SimError {
    #[error(transparent)]
    Job(#[from] jobs::Refused),
    #[error("{0}")]
    Config(String),
    /// Nothing completed in the measured window: a run too short (or a
    /// device too slow) to measure anything has no figures to report.
    #[error("no I/O completed in the measured {window}{}: give a longer runtime, or check the device profile's service times", in_flight_at_end(*.in_flight))]
    NothingMeasured { window: String, in_flight: u64 },
    /// The run fell [`crate::limits::BEHIND_REAL_TIME`] behind real time:
    /// a workload and profiles too costly to simulate (the bound).
    #[error("stopped: the simulation fell 10 s behind real time at {at} of virtual time (the profiles' costs are too small, or the workload too large, to simulate in real time); shorten the runtime")]
    TooSlow { at: String },
}

fn in_flight_at_end(n: u64) -> String {
    match n {
        0 => String::new(),
        n => format!(" ({n} request(s) still in flight at its end)"),
    }
}
