//! A spec expanded into points: the cartesian product of workloads,
//! devices, modes, seeds and every strategy's grid, each point a fully
//! resolved configuration with a key.
//!
//! The key is the hash of the configuration's canonical text and the
//! program's version ([`VERSION`]): the same point run by another shard,
//! another machine or a later run of the same build finds its result under
//! the same name; a new version starts a new set of results, since the
//! simulator may have changed.

use policy::PolicySpec;
use serde_json::{json, Value};
use store::resolved as part;

use crate::spec::{Mode, Spec};

/// What the key folds in besides the configuration: the package version.
/// (Not the git commit: a build script for it would rebuild on every
/// commit; bump the version when the simulator's results change.)
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// One point of the sweep.
#[derive(Clone, Debug)]
pub struct Point {
    /// 16 hex digits: [`key_of`] the configuration.
    pub key: String,
    /// The resolved configuration (see [`Point::config`]'s fields).
    pub config: Value,
    /// Indices into the spec's `workloads`, `devices` and `hosts`.
    pub workload: usize,
    pub device: usize,
    pub host: usize,
    pub mode: Mode,
    pub seed: u64,
    /// The strategy with the device's tuned delta and thr filled in where
    /// the grid leaves them (as `sim` runs it).
    pub policy: PolicySpec,
}

/// The key of a resolved configuration under this version.
pub fn key_of(config: &Value) -> String {
    ::store::key(config, VERSION)
}

/// Every point of `spec`, sorted by key (the order shards partition).
pub fn expand(spec: &Spec) -> Vec<Point> {
    let mut out = Vec::new();
    // An emulator point's host is the machine it runs on (read once).
    let machine = spec
        .modes
        .contains(&Mode::Emu)
        .then(sim::bench::machine)
        .unwrap_or_default();
    for wi in 0..spec.workloads.len() {
        for di in 0..spec.devices.len() {
            for hi in 0..spec.hosts.len() {
                for &mode in &spec.modes {
                    if mode == Mode::Emu && hi > 0 {
                        // The host profiles are the simulator's.
                        continue;
                    }
                    for &seed in &spec.seeds {
                        for s in &spec.strategies {
                            for variant in s.variants() {
                                let at = Coordinates {
                                    workload: wi,
                                    device: di,
                                    host: hi,
                                    mode,
                                    seed,
                                };
                                out.push(point_at(spec, &at, variant, &machine));
                            }
                        }
                    }
                }
            }
        }
    }
    out.sort_by(|a, b| a.key.cmp(&b.key));
    out
}

/// Where in the spec's lists a point is.
#[derive(Clone, Copy, Debug)]
pub struct Coordinates {
    pub workload: usize,
    pub device: usize,
    pub host: usize,
    pub mode: Mode,
    pub seed: u64,
}

/// The point at `at` running `variant` (one of a strategy's grid
/// variants), as [`expand`] makes it: `sweep search` builds its points one
/// at a time with it rather than expanding the whole product. `machine`
/// is an emulator point's host (`sim::bench::machine`; unused for
/// simulator points).
pub fn point_at(spec: &Spec, at: &Coordinates, variant: PolicySpec, machine: &str) -> Point {
    let policy = service::with_device_defaults(variant, &spec.devices[at.device]);
    let config = resolved(spec, at, &policy, machine);
    Point {
        key: key_of(&config),
        config,
        workload: at.workload,
        device: at.device,
        host: at.host,
        mode: at.mode,
        seed: at.seed,
        policy,
    }
}

/// The configuration a point runs: every parameter in force (the
/// strategy's defaults filled in: `policy::Settings`), the profiles by name
/// and by a fingerprint of what was loaded (an edited profile is a new
/// point), the job file by its path in the spec and its bytes' hash.
fn resolved(spec: &Spec, at: &Coordinates, policy: &PolicySpec, machine: &str) -> Value {
    let (mode, seed) = (at.mode, at.seed);
    let w = &spec.workloads[at.workload];
    let d = &spec.devices[at.device];
    let h = &spec.hosts[at.host];
    let mut workload = json!({ "path": w.shown, "fingerprint": w.fingerprint });
    match &w.kind {
        // A job file's point keeps the key it had before other kinds.
        crate::spec::WorkloadKind::Jobs(_) => {}
        crate::spec::WorkloadKind::App(_) => workload["kind"] = json!("app"),
        crate::spec::WorkloadKind::Trace { replay, .. } => {
            workload["kind"] = json!("trace");
            workload["replay"] = json!(replay.name());
        }
    }
    let mut config = json!({
        "workload": workload,
        "device": part::profile(&d.name, d),
        "host": match mode {
            Mode::Sim => part::profile(&h.name, h),
            // A measurement is this machine's: its CPU, CPUs and kernel
            // (a cluster's nodes of one kind share results).
            Mode::Emu => json!({ "name": machine }),
        },
        "mode": mode.as_str(),
        "seed": seed,
        "runtime_ns": spec.runtime,
        "policy": part::policy(policy),
    });
    // An emulator point on a backend of the spec's is another measurement
    // than one on the device's model (a job file's and a model's keys are
    // as before).
    if let (Mode::Emu, Some((backend, _))) = (mode, &spec.emu_backend) {
        config["backend"] = json!(backend);
    }
    config
}
