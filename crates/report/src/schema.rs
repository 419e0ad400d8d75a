//! The `cinterrupts` object of every JSON report (`sim`, `run` and `exec`
//! with `--output-format json`): one type, so that one script reads the
//! interrupts, completions, delivery latency and marks of any of them
//! (issue 24 item 5: `exec` wrote `device.completions_reaped` where `run`
//! wrote `completions`).
//!
//! What every mode has is at the top, under the same keys; what only a
//! fio-job run has (`sim`, `run`: host, seed, per-core time, gaps, ...) is
//! under `run`, and what only `exec` has (the program, its processes,
//! what was routed, calls by family, staging) under `exec`. The two parts
//! are type parameters: `report` describes the run part
//! ([`RunPart`]), the `exec` crate its own; a reader that wants either
//! takes the defaults (`serde_json::Value`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Bumped whenever a key of the shared part is renamed, moved or changes
/// meaning. 1: the first shared schema (issue 24 item 5).
pub const SCHEMA_VERSION: u32 = 1;

/// The `cinterrupts` object.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cinterrupts<R = Value, E = Value> {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// `sim` (the simulator), `emu` (`run`: the emulator on real I/O) or
    /// `exec` (a real program routed through the emulator).
    pub mode: String,
    /// The strategy's name and each parameter in force (`"delta": "6us"`).
    pub policy: Map<String, Value>,
    /// The device profile or backend (`optane`, `null:10us`); under `exec
    /// --observe`, `observed` (no device).
    pub device: String,
    /// Which kernel's default marks (`table1`, `basis`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery_ns: Option<Delivery>,
    /// Requests completed by their mark: `run`, those completed in the
    /// window; `exec`, every direct request the program made (each
    /// completes); absent for the simulator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions_by_mark: Option<ByMark>,
    /// `run`, `exec`: what `perf_event_open` counted, totals and per I/O
    /// (`report::cpu::counters_json`); a counter the machine lacks is
    /// absent and `unsupported` says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<Value>,
    /// What is worth telling the user (costs measured, stand-ins, ...).
    pub notes: Vec<String>,
    /// What only a fio-job run (`sim`, `run`) has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<R>,
    /// What only `exec` has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<E>,
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
        let c: Cinterrupts<RunPart, Value> = Cinterrupts {
            schema_version: SCHEMA_VERSION,
            mode: "exec".into(),
            exec: Some(serde_json::json!({"program": "fio"})),
            ..Default::default()
        };
        let v = serde_json::to_value(&c).unwrap();
        assert!(v.get("run").is_none(), "{v}");
        assert_eq!(v["exec"]["program"], "fio");
        assert!(v.get("delivery_ns").is_none(), "{v}");
        let back: Cinterrupts = serde_json::from_value(v).unwrap();
        assert_eq!(back.mode, "exec");
        assert!(back.run.is_none());
    }
}
