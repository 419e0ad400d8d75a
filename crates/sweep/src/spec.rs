//! The sweep's TOML spec: what varies and over which values.
//!
//! ```toml
//! workloads = ["../examples/mixed-16.fio"]   # fio job files, or application files (.toml), relative to this file
//! # traces = ["../shared/data/traces/tpcc-small.trace"]  # block traces replayed (sim --trace)
//! # replay = "open"                         # how traces are paced: open or closed [default: open]
//! # marks_from = "plug"                     # how traces are marked: table1, plug, class, process, none [default: table1] (marks::trace)
//! devices = ["optane", "p3700"]              # device profiles (names or .toml files)
//! host = "xeon-e5-2660v4"                    # host profile [default: xeon-e5-2660v4]
//! # hosts = ["xeon-e5-2660v4", "xeon-e5-2630v3"]  # or several (not both)
//! modes = ["sim", "emu"]                     # [default: ["sim"]]; emu: job files only
//! # emu_backend = "file:/mnt/nvme/sweep.dat"  # emulator points on real I/O (run --backend) [default: the device's model]
//! seeds = [1, 2, 3]                          # [default: [1]]
//! runtime = "200ms"                          # every point's length
//! strategies = [
//!   "default",
//!   { name = "adaptive", grid = { delta = ["2us", "6us"], thr = [16, 32] } },
//! ]
//! ```
//!
//! Loading checks everything a point needs before any point runs: the job
//! files parse, the profiles load, every strategy builds with every value
//! of its grid. A mistake is one line naming the file, the line and the
//! key (toml's spans, as `sim`'s profiles report theirs).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use jobs::Job;
use policy::options::{Kind, Value, OPTIONS};
use policy::quote::line_of;
use policy::{Nanos, PolicySpec};
use serde::Deserialize;
use sim::{DeviceProfile, HostProfile};
use toml::Spanned;

/// The host profile when the spec names none: the one `tune` and `sim`
/// default to (the authors' testbed, TOS 5.1).
pub const DEFAULT_HOST: &str = "xeon-e5-2660v4";

/// The most a spec file may be: a sweep's spec is a page, not data.
const MAX_SPEC_BYTES: u64 = 1 << 20;

/// The most points a spec may hold (issue 42 item 5): 10^9. Points are
/// enumerated one at a time ([`crate::point::Points`]), so the bound is
/// no longer memory but the store: each point is a file, and 10^9 files
/// take 10^9 inodes, which ext4 gives a 16 TB file system at mke2fs's
/// default of one inode per 16 KiB (`inode_ratio = 16384`,
/// /etc/mke2fs.conf, e2fsprogs). A larger space is for `sweep search`,
/// which runs a few of its points, not for a grid.
pub const MAX_POINTS: u64 = 1_000_000_000;

/// The longest a point may run, in virtual time: 1 h. Assumed (no paper
/// sets one): the papers' runs are seconds (TOS 5: fio runs of 10 s to
/// 60 s), and at `bench sim`'s 8M completions per wall second (issue 41
/// item 7) an hour of a 1M-IOPS workload is already ~8 wall minutes per
/// point; `runtime = "100000h"` is a typo, not a sweep.
pub const MAX_RUNTIME: Nanos = 3_600 * policy::SEC;

/// A spec of at most this many variant-device pairs has every variant
/// built on every device when it is read; a larger one has each axis
/// value built with the other axes at their first value (the sum of the
/// axes, not their product), so reading a 10^6-point spec stays under a
/// second. Assumed: 10^5 builds take ~0.1 s here.
const FULL_CHECK: u64 = 100_000;

/// The most of a job file hashed: the job parser refuses files past 1 MiB
/// (`jobs`' source bound) before this is read.
const MAX_WORKLOAD_BYTES: u64 = 1 << 20;

/// Why a spec cannot be used. One line each.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SpecError {
    /// The file could not be read at all.
    #[error("{file}: {reason}")]
    Read { file: String, reason: String },
    /// A key's value is wrong, or toml could not read the text there.
    #[error("{file}:{line}: key '{key}': {reason}")]
    Bad {
        file: String,
        line: usize,
        key: String,
        reason: String,
    },
}

/// Where the points run: `sim`, the simulator on the host profiles
/// (points in parallel), or `emu`, the emulator on this machine (`cinterrupts
/// run --device`): the device profile's model behind the emulated
/// controller, this machine's cores, scheduler and interrupts. Its device
/// thread spins on a CPU of its own, so emulator points run one at a time,
/// one task a node (`sweep slurm`'s `--exclusive`), and the host profiles
/// do not apply: the machine is the host. The one runner's front end name
/// (`point::Mode`, the reports' own).
pub use ::point::Mode;

/// One workload of the spec, loaded: a fio job file, an application file
/// or a block trace.
#[derive(Clone, Debug)]
pub struct Workload {
    /// As the spec writes it (relative to the spec): what tables show and
    /// the key hashes, so the same spec on another machine (another
    /// checkout path) gives the same keys.
    pub shown: String,
    /// Where it was read from.
    pub path: PathBuf,
    /// The hash of what was read (a job or application file's bytes, a
    /// trace's requests): an edited file is a new point.
    pub fingerprint: String,
    pub kind: WorkloadKind,
}

/// What a workload runs, as `cinterrupts sim` runs each.
#[derive(Clone, Debug)]
pub enum WorkloadKind {
    /// A fio job file's jobs (`sim FILE.fio`).
    Jobs(Vec<Job>),
    /// An application file's instances (`sim FILE.toml`, `apps::file`).
    App(Box<apps::file::AppFile>),
    /// A block trace's requests, marked by TOS Table 1 and paced as
    /// `replay` says (`sim --trace FILE --loop`, `sim::replay`).
    Trace {
        ios: Vec<sim::replay::TraceIo>,
        replay: sim::replay::Loop,
    },
}

/// One strategy of the spec and its grid: every combination of the axes'
/// values is a variant.
#[derive(Clone, Debug)]
pub struct Strategy {
    pub name: String,
    /// Option name (as `policy::options` spells it) and its values, in the
    /// option order of `OPTIONS` (so the spec's own key order does not
    /// change the expansion).
    pub axes: Vec<(&'static str, Vec<Value>)>,
}

impl Strategy {
    /// Every combination of the axes (one empty spec for no axes), in
    /// [`Strategy::variant`]'s order.
    pub fn variants(&self) -> Vec<PolicySpec> {
        let n = self.variant_count().unwrap_or(0);
        (0..n).map(|i| self.variant(i)).collect()
    }

    /// How many variants: the product of the axes' lengths (`None` past
    /// u64).
    pub fn variant_count(&self) -> Option<u64> {
        self.axes
            .iter()
            .try_fold(1u64, |n, (_, v)| n.checked_mul(v.len() as u64))
    }

    /// A variant per value of each axis, the other axes at their first
    /// value: every value used once (the sum of the axes' lengths).
    pub fn each_value(&self) -> Vec<PolicySpec> {
        let mut out = vec![self.variant(0)];
        let mut stride = 1u64;
        for (_, values) in self.axes.iter().rev() {
            for d in 1..values.len() as u64 {
                out.push(self.variant(d * stride));
            }
            stride = stride.saturating_mul(values.len() as u64);
        }
        out
    }

    /// Variant `i` (below [`Strategy::variant_count`]) computed from its
    /// digits, the first axis the slowest: one variant without the others.
    pub fn variant(&self, i: u64) -> PolicySpec {
        let mut spec = PolicySpec::named(&self.name);
        let mut rest = i;
        let mut digits = vec![0usize; self.axes.len()];
        for (d, (_, values)) in digits.iter_mut().zip(&self.axes).rev() {
            let radix = values.len() as u64;
            *d = (rest % radix) as usize;
            rest /= radix;
        }
        for ((option, values), d) in self.axes.iter().zip(digits) {
            let opt = OPTIONS
                .iter()
                .find(|o| o.name() == *option)
                .expect("axes hold only names found in OPTIONS");
            // Checked when the spec was read.
            let _ = opt.give(&mut spec, values[d]);
        }
        spec
    }
}

/// A spec read and checked: everything the points need, loaded once.
#[derive(Clone, Debug)]
pub struct Spec {
    /// The spec file, as given.
    pub file: PathBuf,
    pub workloads: Vec<Workload>,
    pub devices: Vec<DeviceProfile>,
    /// Host profiles: `host`, or each of `hosts`.
    pub hosts: Vec<HostProfile>,
    pub modes: Vec<Mode>,
    /// Where emulator points do their I/O (`run --backend`'s syntax: a
    /// file or a block device, or `null:`), as the spec writes it; `None`:
    /// the device profile's model.
    pub emu_backend: Option<(String, emu::backend::BackendSpec)>,
    pub seeds: Vec<u64>,
    /// Every point's run length (`SimConfig::runtime`).
    pub runtime: Nanos,
    pub strategies: Vec<Strategy>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    #[serde(default = "no_list")]
    workloads: Spanned<Vec<Spanned<String>>>,
    traces: Option<Spanned<Vec<Spanned<String>>>>,
    replay: Option<Spanned<String>>,
    marks_from: Option<Spanned<String>>,
    devices: Spanned<Vec<Spanned<String>>>,
    host: Option<Spanned<String>>,
    hosts: Option<Spanned<Vec<Spanned<String>>>>,
    modes: Option<Spanned<Vec<Spanned<String>>>>,
    emu_backend: Option<Spanned<String>>,
    seeds: Option<Spanned<Vec<Spanned<u64>>>>,
    runtime: Spanned<toml::Value>,
    strategies: Spanned<Vec<Spanned<toml::Value>>>,
}

impl Spec {
    /// The spec's identity, which every entry it makes carries
    /// (`store::Finished::spec`): SHA-256 of the canonical text of what it
    /// resolves to (each workload by its path as written and the hash of
    /// what was read, each profile by name and fingerprint, the modes,
    /// backend, seeds, runtime, and each strategy's grid in option order).
    /// Comments, spacing and key order in the file do not change it; an
    /// edited job file or another runtime does.
    pub fn identity(&self) -> String {
        let workloads: Vec<serde_json::Value> = self
            .workloads
            .iter()
            .map(|w| {
                let kind = match &w.kind {
                    WorkloadKind::Jobs(_) => serde_json::json!("jobs"),
                    WorkloadKind::App(_) => serde_json::json!("app"),
                    WorkloadKind::Trace { replay, .. } => {
                        serde_json::json!(["trace", replay.name()])
                    }
                };
                serde_json::json!({ "path": w.shown, "fingerprint": w.fingerprint, "kind": kind })
            })
            .collect();
        let strategies: Vec<serde_json::Value> = self
            .strategies
            .iter()
            .map(|s| {
                let grid: Vec<serde_json::Value> = s
                    .axes
                    .iter()
                    .map(|(o, v)| {
                        let values: Vec<String> = v.iter().map(|x| x.to_string()).collect();
                        serde_json::json!([o, values])
                    })
                    .collect();
                serde_json::json!({ "name": s.name, "grid": grid })
            })
            .collect();
        let resolved = serde_json::json!({
            "workloads": workloads,
            "devices": self.devices.iter().map(|d| ::store::resolved::profile(&d.name, d)).collect::<Vec<_>>(),
            "hosts": self.hosts.iter().map(|h| ::store::resolved::profile(&h.name, h)).collect::<Vec<_>>(),
            "modes": self.modes.iter().map(|m| m.as_str()).collect::<Vec<_>>(),
            "emu_backend": self.emu_backend.as_ref().map(|(b, _)| b.clone()),
            "seeds": self.seeds,
            "runtime_ns": self.runtime,
            "strategies": strategies,
        });
        ::store::entry::checksum(&resolved)
    }

    /// Reads and checks the spec at `path`.
    pub fn load(path: &Path) -> Result<Spec, SpecError> {
        let shown = path.display().to_string();
        let read = |reason: String| SpecError::Read {
            file: shown.clone(),
            reason,
        };
        let meta = std::fs::metadata(path).map_err(|e| read(e.to_string()))?;
        if !meta.is_file() {
            return Err(read("not a file".into()));
        }
        if meta.len() > MAX_SPEC_BYTES {
            return Err(read(format!(
                "larger than {} KiB, the most a spec may be",
                MAX_SPEC_BYTES >> 10
            )));
        }
        let text = std::fs::read_to_string(path).map_err(|e| read(e.to_string()))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        Spec::parse(&text, &shown, dir, path)
    }

    /// Reads and checks a spec's `text`; `origin` names it in errors,
    /// `dir` is where its relative paths start.
    pub fn parse(text: &str, origin: &str, dir: &Path, file: &Path) -> Result<Spec, SpecError> {
        let raw: Raw = toml::from_str(text).map_err(|e| toml_error(&e, text, origin))?;
        let bad = |span: std::ops::Range<usize>, key: &str, reason: String| SpecError::Bad {
            file: origin.to_string(),
            line: line_of(text, span.start),
            key: key.to_string(),
            reason: policy::quote::one_line(&reason),
        };
        let nonempty = |span: &std::ops::Range<usize>, len: usize, key: &str| {
            if len == 0 {
                Err(bad(span.clone(), key, "must list at least one".into()))
            } else {
                Ok(())
            }
        };

        let traces = raw.traces.as_ref().map_or(&[][..], |t| t.get_ref());
        nonempty(
            &raw.workloads.span(),
            raw.workloads.get_ref().len() + traces.len(),
            "workloads",
        )?;
        let mut workloads = Vec::new();
        for w in raw.workloads.get_ref() {
            let path = dir.join(w.get_ref());
            let at = |e: String| bad(w.span(), "workloads", e);
            // The parsers bound what they read (and refuse what is not a
            // file); the bytes hashed are then at most their bound.
            let bytes = |path: &Path| {
                read_bounded(path).map_err(|e| at(format!("{}: {e}", path.display())))
            };
            let kind = if path.extension().is_some_and(|e| e == "toml") {
                // An application file, as `sim` tells one (issue 16).
                let app = apps::file::AppFile::load(&path).map_err(|e| at(e.to_string()))?;
                WorkloadKind::App(Box::new(app))
            } else {
                let parsed = jobs::parse_file(&path).map_err(|e| at(e.to_string()))?;
                if parsed.jobs.is_empty() {
                    return Err(at(format!("{}: no jobs to run", path.display())));
                }
                WorkloadKind::Jobs(parsed.jobs)
            };
            workloads.push(Workload {
                shown: w.get_ref().clone(),
                fingerprint: ::store::canon::hex(&bytes(&path)?),
                path,
                kind,
            });
        }
        let replay = match &raw.replay {
            None => sim::replay::Loop::Open,
            Some(r) => r
                .get_ref()
                .parse()
                .map_err(|e: String| bad(r.span(), "replay", e))?,
        };
        let marks_from = match &raw.marks_from {
            None => None,
            Some(m) => Some(
                m.get_ref()
                    .parse::<sim::trace_marks::MarksFrom>()
                    .map_err(|e| bad(m.span(), "marks_from", e))?,
            ),
        };
        for t in traces {
            let path = dir.join(t.get_ref());
            let ios = sim::trace_marks::Marker::open(marks_from, &path, None)
                .and_then(|mut marker| sim::replay::load_marked(&path, &mut marker))
                .map_err(|e| bad(t.span(), "traces", e))?;
            if ios.is_empty() {
                return Err(bad(
                    t.span(),
                    "traces",
                    format!("{}: no requests to replay", path.display()),
                ));
            }
            workloads.push(Workload {
                shown: t.get_ref().clone(),
                path,
                fingerprint: ::store::canon::fingerprint(&ios),
                kind: WorkloadKind::Trace { ios, replay },
            });
        }
        unique(&raw.workloads, "workloads", &bad)?;
        if let Some(t) = &raw.traces {
            unique(t, "traces", &bad)?;
        }

        nonempty(&raw.devices.span(), raw.devices.get_ref().len(), "devices")?;
        let mut devices = Vec::new();
        for d in raw.devices.get_ref() {
            let name = profile_path(d.get_ref(), dir);
            devices.push(
                DeviceProfile::load(&name).map_err(|e| bad(d.span(), "devices", e.to_string()))?,
            );
        }
        unique(&raw.devices, "devices", &bad)?;

        // `host = "..."` for one, `hosts = [...]` to vary it.
        let hosts =
            match (&raw.host, &raw.hosts) {
                (Some(_), Some(h)) => {
                    return Err(bad(
                        h.span(),
                        "hosts",
                        "give host or hosts, not both".into(),
                    ))
                }
                (Some(h), None) => vec![HostProfile::load(&profile_path(h.get_ref(), dir))
                    .map_err(|e| bad(h.span(), "host", e.to_string()))?],
                (None, Some(list)) => {
                    nonempty(&list.span(), list.get_ref().len(), "hosts")?;
                    unique(list, "hosts", &bad)?;
                    let mut out = Vec::new();
                    for h in list.get_ref() {
                        out.push(
                            HostProfile::load(&profile_path(h.get_ref(), dir))
                                .map_err(|e| bad(h.span(), "hosts", e.to_string()))?,
                        );
                    }
                    out
                }
                (None, None) => vec![HostProfile::load(DEFAULT_HOST)
                    .map_err(|e| bad(0..0, "host", e.to_string()))?],
            };

        let modes = match &raw.modes {
            None => vec![Mode::Sim],
            Some(m) => {
                nonempty(&m.span(), m.get_ref().len(), "modes")?;
                let mut out = Vec::new();
                for x in m.get_ref() {
                    match x.get_ref().as_str() {
                        "sim" => out.push(Mode::Sim),
                        "emu" => {
                            // The emulator runs fio job files (`run`);
                            // an application model or a trace replay
                            // is the simulator's.
                            if let Some(w) = workloads
                                .iter()
                                .find(|w| !matches!(w.kind, WorkloadKind::Jobs(_)))
                            {
                                return Err(bad(
                                        x.span(),
                                        "modes",
                                        format!(
                                            "emu runs fio job files only; '{}' is an application file or a trace",
                                            w.shown
                                        ),
                                    ));
                            }
                            out.push(Mode::Emu)
                        }
                        other => {
                            return Err(bad(
                                x.span(),
                                "modes",
                                format!("'{other}' is not a mode (sim, emu)"),
                            ))
                        }
                    }
                }
                unique(m, "modes", &bad)?;
                out
            }
        };

        let seeds = match &raw.seeds {
            None => vec![1],
            Some(s) => {
                nonempty(&s.span(), s.get_ref().len(), "seeds")?;
                unique(s, "seeds", &bad)?;
                s.get_ref().iter().map(|x| *x.get_ref()).collect()
            }
        };

        let emu_backend = match &raw.emu_backend {
            None => None,
            Some(b) if !modes.contains(&Mode::Emu) => {
                return Err(bad(
                    b.span(),
                    "emu_backend",
                    "is where emulator points do their I/O: add \"emu\" to modes".into(),
                ))
            }
            Some(b) => {
                let spec = emu::backend::BackendSpec::parse(b.get_ref())
                    .map_err(|e| bad(b.span(), "emu_backend", e))?;
                Some((b.get_ref().clone(), spec))
            }
        };

        // A string with a unit, or a bare number of seconds as fio's
        // `runtime=` (and `--runtime` on our command line).
        let runtime_text = match raw.runtime.get_ref() {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(i) => i.to_string(),
            other => {
                return Err(bad(
                    raw.runtime.span(),
                    "runtime",
                    format!("{other} is not a time (\"200ms\", or seconds)"),
                ))
            }
        };
        let runtime = match jobs::units::parse_duration(&runtime_text, Some(policy::SEC)) {
            Ok(0) => {
                return Err(bad(
                    raw.runtime.span(),
                    "runtime",
                    "must be more than 0".into(),
                ))
            }
            Ok(ns) if ns > MAX_RUNTIME => {
                return Err(bad(
                    raw.runtime.span(),
                    "runtime",
                    format!(
                        "{} is more than {}, the longest a point may run",
                        policy::format_nanos(ns),
                        policy::format_nanos(MAX_RUNTIME)
                    ),
                ))
            }
            Ok(ns) => ns,
            Err(e) => return Err(bad(raw.runtime.span(), "runtime", e)),
        };

        nonempty(
            &raw.strategies.span(),
            raw.strategies.get_ref().len(),
            "strategies",
        )?;
        let mut strategies = Vec::new();
        for (i, s) in raw.strategies.get_ref().iter().enumerate() {
            let key = format!("strategies[{i}]");
            let strategy = strategy(s.get_ref())
                .map_err(|(sub, reason)| bad(s.span(), &format!("{key}{sub}"), reason))?;
            strategies.push(strategy);
        }

        // Refuse a product too large before anything counts its points
        // one by one (a few grid lines can multiply into billions).
        let mut variants: Option<u64> = Some(0);
        for s in &strategies {
            variants = variants.and_then(|n| n.checked_add(s.variant_count()?));
        }
        let places = places(&modes, hosts.len()).len();
        let points = [workloads.len(), devices.len(), places, seeds.len()]
            .iter()
            .try_fold(variants.unwrap_or(u64::MAX), |n, &k| {
                n.checked_mul(k as u64)
            });
        if !matches!(points, Some(n) if n <= MAX_POINTS) {
            let n = points.map_or("more than 2^64".to_string(), |n| n.to_string());
            return Err(bad(
                raw.strategies.span(),
                "strategies",
                format!("{n} points: more than {MAX_POINTS}, the most a spec may hold (split it, or `sweep search` it)"),
            ));
        }

        // Every variant must build on every device, so no point fails for
        // a reason the spec could have been told (of a large spec, every
        // value of every axis: FULL_CHECK).
        let full = variants
            .unwrap_or(u64::MAX)
            .saturating_mul(devices.len() as u64)
            <= FULL_CHECK;
        for (i, (strategy, s)) in strategies.iter().zip(raw.strategies.get_ref()).enumerate() {
            let checked: Vec<PolicySpec> = if full {
                strategy.variants()
            } else {
                strategy.each_value()
            };
            for variant in checked {
                for d in &devices {
                    let resolved = service::with_device_defaults(variant.clone(), d);
                    policy::catalogue::build(&resolved)
                        .map_err(|e| bad(s.span(), &format!("strategies[{i}]"), e.to_string()))?;
                }
            }
        }

        Ok(Spec {
            file: file.to_path_buf(),
            workloads,
            devices,
            hosts,
            modes,
            emu_backend,
            seeds,
            runtime,
            strategies,
        })
    }
}

/// Where points run: every host for each simulator mode, the machine
/// alone for the emulator (the host profiles are the simulator's).
pub fn places(modes: &[Mode], hosts: usize) -> Vec<(Mode, usize)> {
    let mut out = Vec::new();
    for &mode in modes {
        match mode {
            Mode::Sim => out.extend((0..hosts).map(|h| (mode, h))),
            Mode::Emu => out.push((mode, 0)),
        }
    }
    out
}

/// A file's bytes, at most [`MAX_WORKLOAD_BYTES`] and one more.
fn read_bounded(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_WORKLOAD_BYTES + 1)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// A profile's name as `DeviceProfile::load` takes it: a shipped name
/// as is, a `.toml` file relative to the spec.
fn profile_path(name: &str, dir: &Path) -> String {
    if name.ends_with(".toml") {
        dir.join(name).display().to_string()
    } else {
        name.to_string()
    }
}

/// Refuses a value listed twice: it would make the same points twice.
fn unique<T: Ord + std::fmt::Debug>(
    list: &Spanned<Vec<Spanned<T>>>,
    key: &str,
    bad: &dyn Fn(std::ops::Range<usize>, &str, String) -> SpecError,
) -> Result<(), SpecError> {
    let mut seen = BTreeSet::new();
    for x in list.get_ref() {
        if !seen.insert(x.get_ref()) {
            return Err(bad(
                x.span(),
                key,
                format!("{:?} is listed twice", x.get_ref()),
            ));
        }
    }
    Ok(())
}

/// An absent `workloads` (a spec of traces only): an empty list.
fn no_list() -> Spanned<Vec<Spanned<String>>> {
    Spanned::new(0..0, Vec::new())
}

/// One entry of `strategies`: a name, or `{ name, grid }`. `Err` carries
/// the sub-key (`.grid.delta`) and why.
fn strategy(v: &toml::Value) -> Result<Strategy, (String, String)> {
    let (name, grid) = match v {
        toml::Value::String(name) => (name.clone(), None),
        toml::Value::Table(t) => {
            for k in t.keys() {
                if k != "name" && k != "grid" {
                    return Err((format!(".{k}"), "unknown key (name, grid)".into()));
                }
            }
            let name = match t.get("name") {
                Some(toml::Value::String(n)) => n.clone(),
                Some(_) => return Err((".name".into(), "must be a string".into())),
                None => return Err((".name".into(), "missing".into())),
            };
            let grid = match t.get("grid") {
                None => None,
                Some(toml::Value::Table(g)) => Some(g.clone()),
                Some(_) => {
                    return Err((
                        ".grid".into(),
                        "must be a table of option = [values]".into(),
                    ))
                }
            };
            (name, grid)
        }
        _ => {
            return Err((
                String::new(),
                "a strategy's name or { name = \"...\", grid = { ... } }".into(),
            ))
        }
    };
    let Some(s) = policy::catalogue::strategy(&name) else {
        let names: Vec<&str> = policy::catalogue::STRATEGIES
            .iter()
            .map(|s| s.name)
            .collect();
        return Err((
            String::new(),
            format!("unknown strategy '{name}' ({})", names.join(", ")),
        ));
    };
    let mut axes = Vec::new();
    let grid = grid.unwrap_or_default();
    for k in grid.keys() {
        if !OPTIONS.iter().any(|o| o.name() == k) {
            return Err((format!(".grid.{k}"), "not a strategy option".into()));
        }
        if !s.takes(k) {
            return Err((
                format!(".grid.{k}"),
                format!(
                    "{name} does not take {k} (it takes: {})",
                    s.params
                        .iter()
                        .map(|p| p.option())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
    for opt in OPTIONS {
        let Some(values) = grid.get(opt.name()) else {
            continue;
        };
        let sub = format!(".grid.{}", opt.name());
        let toml::Value::Array(values) = values else {
            return Err((sub, "must be a list of values".into()));
        };
        if values.is_empty() {
            return Err((sub, "must list at least one value".into()));
        }
        let mut parsed = Vec::new();
        for v in values {
            let value = value(opt.kind(), v).map_err(|e| (sub.clone(), e))?;
            if parsed.contains(&value) {
                return Err((sub, format!("{value} is listed twice")));
            }
            parsed.push(value);
        }
        axes.push((opt.name(), parsed));
    }
    Ok(Strategy { name, axes })
}

/// A grid value read by its option's kind, as the command line reads it
/// (`cinterrupts sim --delta 6us`); TOML numbers and booleans are taken as
/// their text.
fn value(kind: Kind, v: &toml::Value) -> Result<Value, String> {
    let text = match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Boolean(b) => if *b { "on" } else { "off" }.to_string(),
        _ => return Err(format!("{v} is not a value")),
    };
    match kind {
        Kind::Time => jobs::units::parse_duration(&text, None).map(Value::Time),
        Kind::Count => text
            .parse()
            .map(Value::Count)
            .map_err(|_| format!("'{text}' is not a whole number")),
        Kind::Rate => jobs::units::parse_rate(&text).map(Value::Rate),
        Kind::Switch => match text.as_str() {
            "on" | "1" | "true" | "yes" => Ok(Value::Switch(true)),
            "off" | "0" | "false" | "no" => Ok(Value::Switch(false)),
            _ => Err(format!("'{text}' is not on or off")),
        },
        Kind::Factor => text
            .parse()
            .map(Value::Factor)
            .map_err(|_| format!("'{text}' is not a number")),
        Kind::Feature => {
            let parsed = match text.strip_prefix("0x") {
                Some(hex) => u32::from_str_radix(hex, 16),
                None => text.parse(),
            };
            parsed
                .map(Value::Feature)
                .map_err(|_| format!("'{text}' is not a number (e.g. 0x011f)"))
        }
        Kind::Vectors => policy::feature09::CdVectors::parse(&text).map(Value::Vectors),
        Kind::Word(words) => words
            .iter()
            .find(|(w, _)| *w == text)
            .map(|(_, v)| *v)
            .ok_or_else(|| {
                let all: Vec<&str> = words.iter().map(|(w, _)| *w).collect();
                format!("'{text}' is not one of {}", all.join(", "))
            }),
    }
}

/// toml's error as one line: its message, its line, and the key assigned
/// on that line (or the one toml names, for an unknown field).
fn toml_error(e: &toml::de::Error, text: &str, origin: &str) -> SpecError {
    let message = policy::quote::joined_lines(e.message());
    let line = e.span().map_or(1, |s| line_of(text, s.start));
    let named = message
        .split('`')
        .nth(1)
        .filter(|_| message.starts_with("unknown field") || message.starts_with("missing field"));
    let on_line = text
        .lines()
        .nth(line - 1)
        .and_then(|l| l.split_once('='))
        .map(|(k, _)| k.trim())
        .filter(|k| {
            !k.is_empty()
                && k.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-.\"".contains(c))
        });
    SpecError::Bad {
        file: origin.to_string(),
        line,
        key: named.or(on_line).unwrap_or("(document)").to_string(),
        reason: policy::quote::one_line(&message),
    }
}
