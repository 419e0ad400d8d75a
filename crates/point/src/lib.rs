//! One point of an experiment, run on a front end (issue 39 item 2): a
//! front end (the simulator or the emulator), a device, a host, the
//! settings (the interrupt strategy, the host mechanisms, the cores' idle
//! states), a seed and a runtime, and a workload; out comes the run's
//! report.
//!
//! `tune` (TOS 5.2's runs), `sweep` (a spec's points) and `reproduce` (the
//! papers' runs) each decide *which* points to run, in what order and
//! where to keep them; this crate is the one place that says *how* a point
//! runs: how its host profile takes the run's host settings and idle
//! states, how the device's tuned delta and thr become the strategy's
//! defaults (`service::with_device_defaults`), how the emulator takes the
//! device's model behind its controller and the host mechanisms it
//! applies (`emu::EmuConfig::apply_host`).
//!
//! What it is not: a scheduler (the callers run simulator points in
//! parallel and emulator points one at a time, since each spins a device
//! thread on a CPU), nor a store (the callers key their results).

pub mod command;

use emu::backend::BackendSpec;
use emu::{EmuConfig, EmuError};
use jobs::Job;
use policy::{Nanos, PolicySpec};
use report::RunReport;
use sim::{DeviceProfile, HostProfile, IdleSettings, SimConfig, SimError};

/// The front end's name, as the reports write it (`sim`, `emu`): the one
/// enum for "where a run ran", which a sweep's `modes` and `reproduce`'s
/// `--mode` name too.
pub use report::Mode;

/// The host mechanisms a point sets over its host (`host::mechanism`, the
/// table every front end reads).
pub use host::mechanism::Settings as HostSettings;

/// Where a point runs, with what that front end needs.
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Front {
    /// The simulator, on these profiles.
    Sim {
        device: DeviceProfile,
        host: HostProfile,
    },
    /// The emulator on this machine (the machine is the host). `base`
    /// holds what a point does not set (its backend, delivery, queue
    /// depth, device CPU, ...); the point's policy, seed, runtime (when it
    /// has one) and host settings replace its own. With `device`, the
    /// device's model is behind the emulated controller (`run --device`),
    /// its draws seeded by the point's seed, and its tuned delta and thr
    /// are the strategy's defaults, as in the simulator.
    Emu {
        device: Option<DeviceProfile>,
        base: EmuConfig,
    },
}

impl Front {
    /// The emulator with `device`'s model behind its controller and
    /// everything else the emulator's defaults (`reproduce`, `sweep`).
    pub fn emu_on(device: DeviceProfile) -> Front {
        Front::Emu {
            device: Some(device),
            base: EmuConfig::default(),
        }
    }

    pub fn mode(&self) -> Mode {
        match self {
            Front::Sim { .. } => Mode::Sim,
            Front::Emu { .. } => Mode::Emu,
        }
    }
}

/// What a point applies over its front end's own: the interrupt strategy
/// and the host side.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Settings {
    /// The strategy; a device-tuned one (adaptive, cint, dynamic) takes the
    /// device's delta and thr where it gives none.
    pub policy: PolicySpec,
    /// The host mechanisms over the host profile's (the simulator) or the
    /// emulator's defaults (the rows `run` applies).
    pub host: HostSettings,
    /// The cores' idle states over the host profile's: the simulator's
    /// only (the emulator's cores are the machine's).
    pub idle: Option<IdleSettings>,
}

impl Settings {
    /// `policy`, with the host as it is.
    pub fn policy(policy: PolicySpec) -> Settings {
        Settings {
            policy,
            ..Settings::default()
        }
    }
}

/// One point: a front end, its settings, a seed and a runtime.
#[derive(Clone, Debug)]
pub struct Point {
    pub front: Front,
    pub settings: Settings,
    pub seed: u64,
    /// Every job's runtime (the jobs become time-based); `None`: the
    /// workload's own (on the emulator, its base configuration's).
    pub runtime: Option<Nanos>,
}

/// What a point runs.
#[derive(Clone, Copy)]
pub enum Workload<'a> {
    /// fio jobs: every front end.
    Jobs(&'a [Job]),
    /// An application file's threads, made from the point's seed: the
    /// simulator's only.
    App(&'a apps::file::AppFile),
    /// A block trace replayed: the simulator's only.
    Trace {
        ios: &'a [sim::replay::TraceIo],
        replay: sim::replay::Loop,
    },
}

/// Why a point did not run. One line each: the front end's own error as
/// it says it.
#[derive(Debug, thiserror::Error)]
pub enum PointError {
    #[error("{0}")]
    Sim(#[from] SimError),
    #[error("{0}")]
    Emu(#[from] EmuError),
    /// An application file whose threads could not be made.
    #[error("{0}")]
    App(String),
    /// An application model or a trace asked of the emulator.
    #[error("emu runs fio job files only")]
    EmuJobsOnly,
}

impl Point {
    /// The simulator's configuration of this point: the host profile with
    /// the point's host settings and idle states over its own. `None` on
    /// the emulator.
    pub fn sim_config(&self) -> Option<SimConfig> {
        let Front::Sim { device, host } = &self.front else {
            return None;
        };
        let mut host = host.clone();
        host.apply(&self.settings.host);
        if let Some(idle) = &self.settings.idle {
            host.apply_idle(idle);
        }
        Some(SimConfig {
            device: device.clone(),
            host,
            policy: self.settings.policy.clone(),
            seed: self.seed,
            runtime: self.runtime,
        })
    }

    /// The emulator's configuration of this point. `None` on the
    /// simulator.
    pub fn emu_config(&self) -> Option<EmuConfig> {
        let Front::Emu { device, base } = &self.front else {
            return None;
        };
        let mut config = EmuConfig {
            policy: self.settings.policy.clone(),
            runtime: self.runtime.or(base.runtime),
            seed: self.seed,
            ..base.clone()
        };
        if let Some(d) = device {
            // The profile's own device, as the simulator's (issue 26 item
            // 1: no stand-in); the emulator has no profile of its own, so
            // the device's tuned delta and thr come from the same place
            // as the simulator's.
            config.backend = Some(BackendSpec::device(d.clone(), self.seed));
            config.policy = service::with_device_defaults(config.policy, d);
        }
        config.apply_host(&self.settings.host);
        Some(config)
    }

    /// Runs `workload` at this point.
    pub fn run(&self, workload: Workload) -> Result<RunReport, PointError> {
        if let Some(config) = self.sim_config() {
            return simulate(workload, &config, self.seed);
        }
        let config = self
            .emu_config()
            .expect("a point is on the simulator or the emulator");
        let Workload::Jobs(jobs) = workload else {
            return Err(PointError::EmuJobsOnly);
        };
        Ok(emu::run(jobs, &config)?)
    }
}

/// `workload` in the simulator under `config`; an application's threads
/// made from `seed`.
fn simulate(workload: Workload, config: &SimConfig, seed: u64) -> Result<RunReport, PointError> {
    let quiet = &mut |_, _| {};
    Ok(match workload {
        Workload::Jobs(jobs) => sim::simulate(jobs, config, quiet)?,
        Workload::App(app) => {
            let threads = app
                .threads(seed)
                .map_err(|e| PointError::App(e.to_string()))?;
            let mut again = || app.threads(seed).map_err(|e| e.to_string());
            sim::simulate_app_with(threads, &mut again, config, quiet)?.0
        }
        Workload::Trace { ios, replay } => {
            sim::replay::simulate_trace(ios.to_vec(), replay, config, quiet)?.0
        }
    })
}
