//! The entry point: a workload, profiles and a policy in; a report out.

use jobs::Job;
use policy::{catalogue::PolicySpec, Nanos};
use report::RunReport;

use crate::{DeviceProfile, HostProfile};

/// What one simulation runs on.
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub device: DeviceProfile,
    pub host: HostProfile,
    pub policy: PolicySpec,
    /// Seeds every random draw; the same seed gives the same report.
    pub seed: u64,
    /// Overrides every job's `runtime` (and makes the jobs time-based).
    pub runtime: Option<Nanos>,
}

/// A workload the simulator cannot run, or a policy it cannot build. One line,
/// naming the job and its section's line.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SimError {
    #[error("job '{job}' (line {line}): {reason}")]
    Job {
        job: String,
        line: usize,
        reason: String,
    },
    #[error("{0}")]
    Config(String),
}

/// Runs `jobs` to completion in virtual time. `progress(now, end)` is called
/// now and then with the virtual time reached and the time the run will end.
pub fn simulate(
    jobs: &[Job],
    config: &SimConfig,
    progress: &mut dyn FnMut(Nanos, Nanos),
) -> Result<RunReport, SimError> {
    let _ = (jobs, config, progress);
    Err(SimError::Config("the engine is not written yet".into()))
}
