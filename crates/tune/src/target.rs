//! Where a tuning runs, from `cinterrupts tune`'s options: the simulator
//! on a device and host profile, or the emulator on a backend; and the
//! [`Setup`] its report names them by.

use std::path::Path;

use emu::backend::BackendSpec;
use emu::EmuConfig;
use policy::Nanos;
use sim::{DeviceProfile, HostProfile};

use crate::render::Setup;
use crate::{Target, TuneError};

/// The device profile when none is given: TOS 5.2 tunes on the Optane.
pub const DEFAULT_DEVICE: &str = "optane";
/// The host profile when none is given: the paper's testbed (TOS 5).
pub const DEFAULT_HOST: &str = "xeon-e5-2660v4";

/// The options that say where a tuning runs.
#[derive(Clone, Copy, Debug)]
pub struct Where<'a> {
    pub job_file: &'a Path,
    /// The emulator on real I/O, else the simulator.
    pub emu: bool,
    /// Simulator only: a shipped name or a .toml file.
    pub device: Option<&'a str>,
    pub host: Option<&'a str>,
    /// Emulator only: where commands run [default: the job file's
    /// filename=].
    pub backend: Option<&'a BackendSpec>,
    pub seed: u64,
    pub runtime: Nanos,
    /// The emulator's notes, when not quiet.
    pub say: Option<fn(&str)>,
}

/// The target and what it is, for the header, titles and JSON; an option
/// of the other mode is refused, naming both.
pub fn target(w: &Where) -> Result<(Target, Setup), TuneError> {
    let workload = w.job_file.display().to_string();
    if !w.emu {
        if w.backend.is_some() {
            return Err(TuneError::Config(
                "--backend is for --mode emu; the simulator runs on --device and --host".into(),
            ));
        }
        let profile = |e: sim::ProfileError| TuneError::Config(e.to_string());
        let device = DeviceProfile::load(w.device.unwrap_or(DEFAULT_DEVICE)).map_err(profile)?;
        let host = HostProfile::load(w.host.unwrap_or(DEFAULT_HOST)).map_err(profile)?;
        let setup = Setup::sim(workload, &device.name, &host.name, w.seed, w.runtime);
        let seed = w.seed;
        return Ok((Target::Sim { device, host, seed }, setup));
    }
    if w.device.is_some() || w.host.is_some() {
        return Err(TuneError::Config(
            "--device and --host are for --mode sim; the emulator runs on --backend".into(),
        ));
    }
    let backend = w
        .backend
        .map_or("the job file's filename=".to_string(), |b| b.to_string());
    let setup = Setup::emu(workload, &backend, w.seed, w.runtime);
    let config = EmuConfig {
        backend: w.backend.cloned(),
        seed: w.seed,
        say: w.say,
        ..EmuConfig::default()
    };
    Ok((Target::Emu(config), setup))
}
