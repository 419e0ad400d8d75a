//! The `cinterrupts` object of every JSON report (`sim`, `run` and `exec`
//! with `--output-format json`): one type, so that one script reads the
//! interrupts, completions, delivery latency and marks of any of them
//! (issue 24 item 5: `exec` wrote `device.completions_reaped` where `run`
//! wrote `completions`).
//!
//! What every mode has is at the top, under the same keys; what only a
//! fio-job run has (`sim`, `run`: host, seed, per-core time, gaps, ...) is
//! under `run`, and what only `exec` has (the program, its processes,
//! what was routed, calls by family, staging) under `exec`. Which of the
//! two a report has is its [`Kind`], a typed union tagged by `mode`
//! (issue 39 item 3: read as types, never by string key): `report`
//! describes the run part ([`RunPart`]), the `exec` crate its own (a type
//! parameter; a reader without that crate takes `serde_json::Value`). A
//! whole report file is a [`Document`].

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Bumped whenever a key of the shared part is renamed, moved or changes
/// meaning. 1: the first shared schema (issue 24 item 5).
pub const SCHEMA_VERSION: u32 = 1;

/// The `cinterrupts` object: what every kind of run reports under the
/// same keys, and the kind with what only it has ([`Kind`]).
///
/// On disk the kind is the `mode` key (second, after `schema_version`)
/// and its part the `run` or `exec` key (last), as the reports have
/// always had them: [`Serialize`] writes those keys in that order, and
/// reading back takes `mode` as the tag, so a report reads back as the
/// kind it is, or not at all.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cinterrupts<E = Value> {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The strategy's name and each parameter in force (`"delta": "6us"`).
    pub policy: Map<String, Value>,
    /// The device profile or backend (`optane`, `null:10us`); under `exec
    /// --observe`, `observed` (no device).
    pub device: String,
    /// Which kernel's default marks (`table1`, `basis`).
    pub default_marks: Option<String>,
    /// The measured window (`run`, `sim`: after ramp_time; `exec`: the
    /// program's start to its end), ns.
    pub duration_ns: u64,
    /// Interrupts the host took (the handler ran), and of them those that
    /// delivered only Urgent completions out of order (TOS 4.1.1).
    pub interrupts: u64,
    pub urgent_only_interrupts: u64,
    pub interrupts_per_sec: f64,
    /// Completions the interrupts (and pollers) delivered.
    pub completions: u64,
    /// `completions / interrupts` (0 without interrupts).
    pub completions_per_interrupt: f64,
    /// Device raise to handler start, measured (`run`, `exec`); absent
    /// for the simulator or without interrupts (a report has no nulls).
    pub delivery_ns: Option<Delivery>,
    /// Requests completed by their mark: `run`, those completed in the
    /// window; `exec`, every direct request the program made (each
    /// completes); absent for the simulator.
    pub completions_by_mark: Option<ByMark>,
    /// `run`, `exec`: what `perf_event_open` counted, totals and per I/O
    /// (`report::cpu::counters_json`); a counter the machine lacks is
    /// absent and `unsupported` says so.
    pub counters: Option<Value>,
    /// The field's metrics (issue 40 item 4: ops/s per CPU, cycles per
    /// I/O, p50/p99/p99.9, interrupts/s, wake-ups per I/O, a replay's
    /// oracle floor; `report::field`): `sim` and `run`; absent for `exec`.
    pub field: Option<crate::Field>,
    /// What is worth telling the user (costs measured, stand-ins, ...).
    pub notes: Vec<String>,
    /// What made the run: code, machine, load, seeds, command line
    /// (issue 42 item 1; `report::made_by`). Absent only in a report
    /// written before it.
    pub made_by: Option<crate::MadeBy>,
    /// Which kind of run, and what only it has.
    pub kind: Kind<E>,
}

/// The kinds of run a report is of (the typed union of the reports,
/// issue 39 item 3), each with what only it has. `exec`'s part is the
/// `exec` crate's type (`exec::summary::ExecPart`), a parameter here
/// because `report` sits below `exec`; a reader without that crate takes
/// the default (`serde_json::Value`).
#[derive(Clone, Debug, PartialEq)]
pub enum Kind<E = Value> {
    /// `sim`: the simulator (virtual time).
    Sim(RunPart),
    /// `emu`: `run`, the emulator on real I/O.
    Emu(RunPart),
    /// `exec`: a real program routed through the emulator.
    Exec(E),
}

impl<E> Default for Kind<E> {
    fn default() -> Self {
        Kind::Sim(RunPart::default())
    }
}

impl<E> Kind<E> {
    /// The `mode` key's value.
    pub fn mode(&self) -> &'static str {
        match self {
            Kind::Sim(_) => "sim",
            Kind::Emu(_) => "emu",
            Kind::Exec(_) => "exec",
        }
    }

    /// What a fio-job run (`sim`, `run`) has; `None` for `exec`.
    pub fn run(&self) -> Option<&RunPart> {
        match self {
            Kind::Sim(r) | Kind::Emu(r) => Some(r),
            Kind::Exec(_) => None,
        }
    }

    /// What only `exec` has; `None` for a fio-job run.
    pub fn exec(&self) -> Option<&E> {
        match self {
            Kind::Exec(e) => Some(e),
            Kind::Sim(_) | Kind::Emu(_) => None,
        }
    }
}

impl<E: Serialize> Serialize for Cinterrupts<E> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        // The keys in the order the reports have always had them (the
        // shared part, then the kind's part last); an absent option is no
        // key at all.
        let mut m = s.serialize_struct("Cinterrupts", 20)?;
        m.serialize_field("schema_version", &self.schema_version)?;
        m.serialize_field("mode", self.kind.mode())?;
        m.serialize_field("policy", &self.policy)?;
        m.serialize_field("device", &self.device)?;
        if let Some(d) = &self.default_marks {
            m.serialize_field("default_marks", d)?;
        }
        m.serialize_field("duration_ns", &self.duration_ns)?;
        m.serialize_field("interrupts", &self.interrupts)?;
        m.serialize_field("urgent_only_interrupts", &self.urgent_only_interrupts)?;
        m.serialize_field("interrupts_per_sec", &self.interrupts_per_sec)?;
        m.serialize_field("completions", &self.completions)?;
        m.serialize_field("completions_per_interrupt", &self.completions_per_interrupt)?;
        if let Some(d) = &self.delivery_ns {
            m.serialize_field("delivery_ns", d)?;
        }
        if let Some(b) = &self.completions_by_mark {
            m.serialize_field("completions_by_mark", b)?;
        }
        if let Some(c) = &self.counters {
            m.serialize_field("counters", c)?;
        }
        if let Some(f) = &self.field {
            m.serialize_field("field", f)?;
        }
        m.serialize_field("notes", &self.notes)?;
        if let Some(b) = &self.made_by {
            m.serialize_field("made_by", b)?;
        }
        match &self.kind {
            Kind::Sim(r) | Kind::Emu(r) => m.serialize_field("run", r)?,
            Kind::Exec(e) => m.serialize_field("exec", e)?,
        }
        m.end()
    }
}

/// The `cinterrupts` object as it is on disk, read before its `mode`
/// makes it a [`Kind`].
#[derive(Deserialize)]
struct OnDisk<E> {
    schema_version: u32,
    mode: String,
    policy: Map<String, Value>,
    device: String,
    #[serde(default)]
    default_marks: Option<String>,
    duration_ns: u64,
    interrupts: u64,
    urgent_only_interrupts: u64,
    interrupts_per_sec: f64,
    completions: u64,
    completions_per_interrupt: f64,
    #[serde(default)]
    delivery_ns: Option<Delivery>,
    #[serde(default)]
    completions_by_mark: Option<ByMark>,
    #[serde(default)]
    counters: Option<Value>,
    #[serde(default)]
    field: Option<crate::Field>,
    notes: Vec<String>,
    #[serde(default)]
    made_by: Option<crate::MadeBy>,
    #[serde(default)]
    run: Option<RunPart>,
    #[serde(default = "Option::default")]
    exec: Option<E>,
}

impl<'de, E: Deserialize<'de>> Deserialize<'de> for Cinterrupts<E> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let o = OnDisk::<E>::deserialize(d)?;
        let kind = match (o.mode.as_str(), o.run, o.exec) {
            ("sim", Some(r), None) => Kind::Sim(r),
            ("emu", Some(r), None) => Kind::Emu(r),
            ("exec", None, Some(e)) => Kind::Exec(e),
            (mode @ ("sim" | "emu"), _, _) => {
                return Err(D::Error::custom(format!(
                    "mode {mode:?} needs a `run` object and no `exec`"
                )))
            }
            ("exec", _, _) => {
                return Err(D::Error::custom(
                    "mode \"exec\" needs an `exec` object and no `run`",
                ))
            }
            (other, _, _) => {
                return Err(D::Error::custom(format!(
                    "mode {other:?} is not a report's (sim, emu or exec)"
                )))
            }
        };
        Ok(Cinterrupts {
            schema_version: o.schema_version,
            policy: o.policy,
            device: o.device,
            default_marks: o.default_marks,
            duration_ns: o.duration_ns,
            interrupts: o.interrupts,
            urgent_only_interrupts: o.urgent_only_interrupts,
            interrupts_per_sec: o.interrupts_per_sec,
            completions: o.completions,
            completions_per_interrupt: o.completions_per_interrupt,
            delivery_ns: o.delivery_ns,
            completions_by_mark: o.completions_by_mark,
            counters: o.counters,
            field: o.field,
            notes: o.notes,
            made_by: o.made_by,
            kind,
        })
    }
}

/// A JSON report as `sim`, `run` and `exec` write it (`--output-format
/// json`): fio's `jobs` (`sim`, `run`; absent for `exec`), then the
/// `cinterrupts` object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Document<E = Value> {
    /// fio's per-job objects in fio's keys and units (`report::json`),
    /// for the scripts written for fio that read them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs: Option<Vec<Value>>,
    pub cinterrupts: Cinterrupts<E>,
}

impl<E: Serialize> Document<E> {
    /// The document as `--output-format json` prints it: pretty, ending a
    /// line.
    pub fn to_text(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a report always serializes");
        s.push('\n');
        s
    }
}

/// Requests by mark: policy's type (`policy::ByMark`), re-exported so
/// that `report::ByMark` stays the reports' one set of keys (issue 38: the
/// preload library counts with it without linking `report`).
pub use policy::ByMark;

/// A measured latency's summary, ns (`N` samples).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Delivery {
    #[serde(rename = "N")]
    pub samples: u64,
    pub mean: f64,
    pub p50: u64,
    pub p99: u64,
    pub p99_9: u64,
    pub max: u64,
}

impl Delivery {
    /// The summary of an HDR histogram; `None` when it is empty.
    pub fn of(h: &hdrhistogram::Histogram<u64>) -> Option<Delivery> {
        (!h.is_empty()).then(|| Delivery {
            samples: h.len(),
            mean: crate::human::finite(h.mean()),
            p50: h.value_at_quantile(0.5),
            p99: h.value_at_quantile(0.99),
            p99_9: h.value_at_quantile(0.999),
            max: h.max(),
        })
    }
}

/// What only a fio-job run (`sim`, `run`) has: the host, the seed, the
/// interrupt lines, per-core time and the rest, each in the shape the
/// fio-job reports have always given (`crates/report/README.md`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunPart {
    pub host: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Emulator only: interrupts raised, merged, and the call-slot waits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub irq_line: Option<Value>,
    pub context_switches: u64,
    /// FastResponse's fsync breakdown per job that fsyncs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fsync: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_gaps: Option<Value>,
    pub cpu_util: Value,
    /// Simulator only: the cores' busy time per I/O by cause, ns and
    /// cycles (`report::cpu::parts_json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_per_io: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_path: Option<Value>,
    /// Application runs only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apps: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<Value>,
    /// Emulator, `run --uring` only: the io_uring jobs' wake-ups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_uring: Option<Value>,
}

/// The `policy` object: the strategy's name, then each parameter in force.
pub fn policy_object(p: &crate::PolicyInfo) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("name".into(), Value::from(p.name.clone()));
    for (k, v) in &p.params {
        m.insert(k.to_string(), Value::from(v.to_string()));
    }
    m
}

/// Completions per interrupt, and per second, as every mode computes them
/// (0 rather than a division by zero).
pub fn per_interrupt(completions: u64, interrupts: u64) -> f64 {
    if interrupts == 0 {
        0.0
    } else {
        completions as f64 / interrupts as f64
    }
}

pub fn per_sec(n: u64, duration_ns: u64) -> f64 {
    if duration_ns == 0 {
        0.0
    } else {
        n as f64 * 1e9 / duration_ns as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parts_are_absent_when_none_and_read_back() {
        let c: Cinterrupts = Cinterrupts {
            schema_version: SCHEMA_VERSION,
            kind: Kind::Exec(serde_json::json!({"program": "fio"})),
            ..Default::default()
        };
        let v = serde_json::to_value(&c).unwrap();
        assert!(v.get("run").is_none(), "{v}");
        assert_eq!(v["exec"]["program"], "fio");
        assert!(v.get("delivery_ns").is_none(), "{v}");
        let back: Cinterrupts = serde_json::from_value(v).unwrap();
        assert_eq!(back, c);
        assert!(back.kind.run().is_none());
    }
}
