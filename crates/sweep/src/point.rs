//! A spec's points: the cartesian product of workloads, devices, modes,
//! seeds and every strategy's grid, each point a fully resolved
//! configuration with a key. [`Points`] makes point i from its coordinates
//! (issue 42 item 5: a shard of a million points starts without the
//! million); [`expand`] lists a small spec's points, sorted by key.
//!
//! The key is the hash of the configuration's canonical text and the
//! code version ([`version`]: the commit too): the same point run by another shard,
//! another machine or a later run of the same build finds its result under
//! the same name; a new version starts a new set of results, since the
//! simulator may have changed.

use policy::PolicySpec;
use serde_json::{json, Value};
use store::resolved as part;

use crate::spec::{Mode, Spec};
use ::store::Shard;

/// The package version. Keys fold in [`version`], which holds it and the
/// commit.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The code version every key folds in besides the configuration (issue
/// 42 item 1): the package version and the git commit, and the sources'
/// hash for a dirty tree (`report::made_by::Code::id`, set by the binary's
/// build script), so a store never mixes two builds' results under one
/// key.
pub fn version() -> String {
    report::made_by::code().id()
}

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

/// The key of a resolved configuration under this code [`version`].
pub fn key_of(config: &Value) -> String {
    ::store::key(config, &version())
}

/// A spec's points as an indexable product (issue 42 item 5): point i is
/// computed from its coordinates (workload, device, place, seed, variant,
/// the last varying fastest), never from a list, so a shard of a million
/// points starts without building the other points. The parts every point
/// shares (a profile's fingerprint, the machine's name) are made once.
pub struct Points<'a> {
    spec: &'a Spec,
    machine: String,
    /// Where a point runs: (mode, host index). Every host for the
    /// simulator; the emulator's host is the machine, one place.
    places: Vec<(Mode, usize)>,
    /// Each strategy's first variant's index among all variants.
    starts: Vec<u64>,
    variants: u64,
    len: u64,
    devices: Vec<Value>,
    hosts: Vec<Value>,
    /// The code [`version`] the keys fold in, read once.
    version: String,
}

impl<'a> Points<'a> {
    /// The points of `spec`. `None` when their number does not fit in a
    /// u64 (`Spec::load` refuses past [`crate::spec::MAX_POINTS`] first).
    pub fn new(spec: &'a Spec) -> Option<Points<'a>> {
        // An emulator point's host is the machine it runs on (read once).
        let machine = spec
            .modes
            .contains(&Mode::Emu)
            .then(sim::bench::machine)
            .unwrap_or_default();
        let places = crate::spec::places(&spec.modes, spec.hosts.len());
        let mut starts = Vec::with_capacity(spec.strategies.len());
        let mut variants: u64 = 0;
        for s in &spec.strategies {
            starts.push(variants);
            variants = variants.checked_add(s.variant_count()?)?;
        }
        let len = [
            spec.workloads.len(),
            spec.devices.len(),
            places.len(),
            spec.seeds.len(),
        ]
        .iter()
        .try_fold(variants, |n, &k| n.checked_mul(k as u64))?;
        Some(Points {
            devices: spec
                .devices
                .iter()
                .map(|d| part::profile(&d.name, d))
                .collect(),
            hosts: spec
                .hosts
                .iter()
                .map(|h| part::profile(&h.name, h))
                .collect(),
            spec,
            machine,
            places,
            starts,
            variants,
            len,
            version: version(),
        })
    }

    /// How many points.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many parts the enumerator holds (places, strategies, device
    /// and host profiles' spellings): the spec's lists, never its points.
    pub fn held(&self) -> usize {
        self.places.len() + self.starts.len() + self.devices.len() + self.hosts.len()
    }

    /// Point `i` (0-based, below [`Points::len`]), built alone.
    pub fn get(&self, i: u64) -> Option<Point> {
        if i >= self.len {
            return None;
        }
        let spec = self.spec;
        let mut rest = i;
        let mut digit = |radix: u64| {
            let d = rest % radix;
            rest /= radix;
            d
        };
        let v = digit(self.variants);
        let seed = spec.seeds[digit(spec.seeds.len() as u64) as usize];
        let (mode, host) = self.places[digit(self.places.len() as u64) as usize];
        let device = digit(spec.devices.len() as u64) as usize;
        let workload = digit(spec.workloads.len() as u64) as usize;
        // The strategy whose variants hold v: the last starting at or
        // before it.
        let s = self.starts.partition_point(|&start| start <= v) - 1;
        let variant = spec.strategies[s].variant(v - self.starts[s]);
        let policy = service::with_device_defaults(variant, &spec.devices[device]);
        let at = Coordinates {
            workload,
            device,
            host,
            mode,
            seed,
        };
        let config = self.resolved(&at, &policy);
        Some(Point {
            key: ::store::key(&config, &self.version),
            config,
            workload,
            device,
            host,
            mode,
            seed,
            policy,
        })
    }

    /// Shard `shard`'s points, one at a time: the points at positions
    /// `shard.index`, `shard.index + count`, ... of [`Points::order`].
    pub fn shard(&self, shard: Shard) -> impl Iterator<Item = Point> + '_ {
        let order = self.order();
        (shard.index as u64..self.len)
            .step_by(shard.count)
            .filter_map(move |j| self.get(order.at(j)))
    }

    /// The order shards deal points in: a fixed permutation of the
    /// indices that scatters neighbours ([`Scatter`]), so that each shard
    /// takes a mix of the strategies and workloads (their indices are
    /// blocks), as the keys' order did before (issue 28's shards).
    pub fn order(&self) -> Scatter {
        Scatter::new(self.len)
    }

    fn resolved(&self, at: &Coordinates, policy: &PolicySpec) -> Value {
        resolved(
            self.spec,
            at,
            policy,
            &self.devices[at.device],
            match at.mode {
                Mode::Sim => self.hosts[at.host].clone(),
                // A measurement is this machine's: its CPU, CPUs and
                // kernel (a cluster's nodes of one kind share results).
                Mode::Emu => json!({ "name": self.machine }),
            },
        )
    }
}

/// A permutation of `0..len`: position j holds index `(j * step) mod
/// len`, with `step` coprime to `len` (so it is one-to-one) near `len`
/// over the golden ratio (so neighbouring positions land far apart:
/// Knuth, TAOCP vol. 3, 6.4, Fibonacci hashing). Computed, not stored:
/// O(1) memory whatever `len`.
#[derive(Clone, Copy, Debug)]
pub struct Scatter {
    len: u64,
    step: u64,
}

impl Scatter {
    pub fn new(len: u64) -> Scatter {
        // len / phi, then the next number coprime to len (at most a few
        // steps: coprimes are dense).
        let mut step = ((len as f64) / 1.618_033_988_749_895) as u64;
        step = step.max(1);
        while len > 1 && gcd(step, len) != 1 {
            step += 1;
        }
        Scatter { len, step }
    }

    /// The index at position `j` (below the length).
    pub fn at(&self, j: u64) -> u64 {
        if self.len <= 1 {
            return j;
        }
        ((u128::from(j) * u128::from(self.step)) % u128::from(self.len)) as u64
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Every point of `spec`, sorted by key (a small spec's whole list, for
/// tables and tests; running goes through [`Points`], one at a time).
pub fn expand(spec: &Spec) -> Vec<Point> {
    let Some(points) = Points::new(spec) else {
        return Vec::new();
    };
    let mut out: Vec<Point> = (0..points.len()).filter_map(|i| points.get(i)).collect();
    out.sort_by(|a, b| a.key.cmp(&b.key));
    out
}

/// Where in the spec's lists a point is.
pub struct Coordinates {
    pub workload: usize,
    pub device: usize,
    pub host: usize,
    pub mode: Mode,
    pub seed: u64,
}

/// The point at `at` with strategy variant `variant` (`sweep search`
/// picks points by their coordinates, not by their index): the same
/// configuration and key as [`Points::get`] gives it. `machine` is the
/// emulator's host (`sim::bench::machine`; empty for the simulator).
pub fn point_at(spec: &Spec, at: &Coordinates, variant: PolicySpec, machine: &str) -> Point {
    let policy = service::with_device_defaults(variant, &spec.devices[at.device]);
    let d = &spec.devices[at.device];
    let host = match at.mode {
        Mode::Sim => {
            let h = &spec.hosts[at.host];
            part::profile(&h.name, h)
        }
        Mode::Emu => json!({ "name": machine }),
    };
    let config = resolved(spec, at, &policy, &part::profile(&d.name, d), host);
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
fn resolved(
    spec: &Spec,
    at: &Coordinates,
    policy: &PolicySpec,
    device: &Value,
    host: Value,
) -> Value {
    let (mode, seed) = (at.mode, at.seed);
    let w = &spec.workloads[at.workload];
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
        "device": device,
        "host": host,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scatter_is_a_permutation_and_splits_neighbours() {
        for len in [0u64, 1, 2, 3, 8, 12, 200, 1000, 1001, 4096] {
            let s = Scatter::new(len);
            let mut seen = vec![false; len as usize];
            for j in 0..len {
                let i = s.at(j) as usize;
                assert!(!seen[i], "{len}: {i} twice");
                seen[i] = true;
            }
            if len >= 8 {
                // Neighbouring positions are far apart (not a block).
                assert!(s.at(1).abs_diff(s.at(0)) > len / 4, "{len}");
            }
        }
    }
}
