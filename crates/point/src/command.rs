//! A simulator point as `cinterrupts sim` is given it: profiles by name or
//! file, the strategy, the host mechanisms and idle states over the host
//! profile's own, and the kernel it models (issue 39 item 4: the binary
//! parses, this crate configures). Everything is checked before the run,
//! so that a mistake costs no simulation time.

use host::cpuidle::{GovernorKind, Table};
use host::era::Kernel;
use host::mechanism::{KernelEra, Pinned};
use policy::{Nanos, PolicySpec};
use sim::{DeviceProfile, HostProfile, ProfileError, SimConfig};

use crate::HostSettings;

/// What the command line gave, as plain values.
#[derive(Clone, Debug)]
pub struct SimRequest<'a> {
    pub policy: PolicySpec,
    /// A shipped device profile's name or a `.toml` file.
    pub device: &'a str,
    /// A shipped host profile's name or a `.toml` file.
    pub host: &'a str,
    pub seed: u64,
    pub runtime: Option<Nanos>,
    /// The host mechanisms over the host profile's own.
    pub host_settings: &'a HostSettings,
    /// `--kernel`: the release the run models, over the profile's pinned one.
    pub kernel: Option<Kernel>,
    pub idle_states: Option<Table>,
    pub idle_governor: Option<GovernorKind>,
    pub cpu_latency_limit: Option<Nanos>,
}

/// Why the configuration was refused: the profile's, the strategy's or
/// the kernel era's error, each as it says it (and its causes).
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(transparent)]
    Profile(#[from] ProfileError),
    #[error(transparent)]
    Policy(#[from] policy::SpecError),
    /// A mechanism the kernel never had (`HostSettings::kernel_era`).
    #[error("{0}")]
    Era(String),
}

impl SimRequest<'_> {
    /// The run's configuration, with the host-side settings over the host
    /// profile's own, and the kernel it models (`--kernel`, else the
    /// profile's): a mechanism that kernel never had is refused before the
    /// run (issue 37 item 1). A device-tuned strategy takes the device's
    /// delta and thr where it gives none (TOS 5.2).
    pub fn configure(&self) -> Result<(SimConfig, KernelEra), ConfigError> {
        let device = DeviceProfile::load(self.device)?;
        let mut host = HostProfile::load(self.host)?;
        let policy = service::with_device_defaults(self.policy.clone(), &device);
        policy::build(&policy)?;
        let era = self
            .host_settings
            .kernel_era(
                self.kernel,
                Some(Pinned {
                    name: &host.name,
                    kernel: host.kernel,
                    explicit: &host.explicit,
                }),
            )
            .map_err(ConfigError::Era)?;
        host.apply(self.host_settings);
        if let Some(t) = self.idle_states {
            host.idle_states = t;
        }
        if let Some(g) = self.idle_governor {
            host.idle_governor = g;
        }
        if let Some(l) = self.cpu_latency_limit {
            host.cpu_latency_limit = Some(l);
        }
        let config = SimConfig {
            device,
            host,
            policy,
            seed: self.seed,
            runtime: self.runtime,
        };
        Ok((config, era))
    }
}

/// fio jobs against the kernel the run models: a synchronous `hipri`
/// job's polling (`sim::era::sync_hipri_polls`) that kernel never had is
/// refused under `--kernel` (`era.strict`), else run as asked with a note;
/// the line names `job_file`.
pub fn check_jobs(
    era: &mut KernelEra,
    jobs: &[jobs::Job],
    job_file: &std::path::Path,
) -> Result<(), String> {
    let Some(k) = era.kernel else {
        return Ok(());
    };
    if let Err(e) = sim::era::sync_hipri_polls(jobs, k) {
        let e = format!("{}: {e}", job_file.display());
        if era.strict {
            return Err(e);
        }
        era.notes
            .push(format!("{e}: run as asked (--kernel {k} refuses it)"));
    }
    Ok(())
}
