//! Folding stores into one table: a row per finished point, sorted by key,
//! whichever store (shard) it came from, so the merged stores of N shards
//! give the same table as one unsharded run's store. The fronts drawn from
//! it are [`crate::front`]'s.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use crate::store::{Finished, Results, Store, StoreError};

/// One row of the merged table.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub key: String,
    /// The job file as the spec wrote it.
    pub workload: String,
    pub device: String,
    pub host: String,
    pub mode: String,
    pub seed: u64,
    pub runtime_ns: u64,
    /// The strategy and every parameter in force (`adaptive delta=6us
    /// thr=32`).
    pub policy: String,
    pub interrupts_per_sec: f64,
    pub iops: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub cpu: f64,
    /// Each job's figures (`store::JobResult`), for the per-job fronts
    /// (`crate::front`); not written to the table.
    pub jobs: Vec<crate::store::JobResult>,
}

impl Row {
    /// A row of `policy` with the figures tests set (every other field a
    /// plain value): `Row { p99_ns: 10, ..Row::sample("a") }`.
    #[cfg(test)]
    pub(crate) fn sample(policy: &str) -> Row {
        Row {
            key: policy.into(),
            workload: "w.fio".into(),
            device: "optane".into(),
            host: "h".into(),
            mode: "sim".into(),
            seed: 1,
            runtime_ns: 1,
            policy: policy.into(),
            interrupts_per_sec: 0.0,
            iops: 1.0,
            p50_ns: 0,
            p99_ns: 0,
            cpu: 0.5,
            jobs: Vec::new(),
        }
    }

    /// A finished point's row (`sweep search` reads its points one by one).
    pub(crate) fn of(f: &Finished) -> Row {
        let c = &f.config;
        let text = |v: &Value| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let mut policy = text(&c["policy"]["name"]);
        if let Some(params) = c["policy"]["params"].as_object() {
            for (k, v) in params {
                policy.push_str(&format!(" {k}={}", text(v)));
            }
        }
        Row {
            key: f.key.clone(),
            workload: text(&c["workload"]["path"]),
            device: text(&c["device"]["name"]),
            host: text(&c["host"]["name"]),
            mode: text(&c["mode"]),
            seed: c["seed"].as_u64().unwrap_or(0),
            runtime_ns: c["runtime_ns"].as_u64().unwrap_or(0),
            policy,
            interrupts_per_sec: f.results.interrupts_per_sec,
            iops: f.results.iops,
            p50_ns: f.results.p50_ns,
            p99_ns: f.results.p99_ns,
            cpu: f.results.cpu,
            jobs: f.results.jobs.clone(),
        }
    }

    pub(crate) fn to_json(&self) -> Value {
        json!({
            "key": self.key,
            "workload": self.workload,
            "device": self.device,
            "host": self.host,
            "mode": self.mode,
            "seed": self.seed,
            "runtime_ns": self.runtime_ns,
            "policy": self.policy,
            "interrupts_per_sec": self.interrupts_per_sec,
            "iops": self.iops,
            "p50_ns": self.p50_ns,
            "p99_ns": self.p99_ns,
            "cpu": self.cpu,
        })
    }
}

/// The merged table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    /// Sorted by key, one per key.
    pub rows: Vec<Row>,
    /// Points found in more than one store (kept once: the first store's).
    pub duplicates: usize,
    /// Failed points in the stores (not in the table).
    pub failed: usize,
    /// The program versions the points were run with: more than one means
    /// the table mixes results of different simulators.
    pub versions: BTreeSet<String>,
}

impl Table {
    /// What `sweep merge` says first: the points and where they came from.
    pub fn summary_line(&self, stores: usize) -> String {
        format!(
            "{} points from {stores} stores ({} found in more than one, {} failed and left out)",
            self.rows.len(),
            self.duplicates,
            self.failed
        )
    }

    /// A warning when the points were run by more than one version.
    pub fn versions_warning(&self) -> Option<String> {
        (self.versions.len() > 1).then(|| {
            format!(
                "the stores hold results of {} versions ({}): their points differ in key, not only in version",
                self.versions.len(),
                self.versions.iter().cloned().collect::<Vec<_>>().join(", ")
            )
        })
    }
}

/// The finished points of `stores`, one row per key.
pub fn merge(stores: &[Store]) -> Result<Table, StoreError> {
    let mut by_key: BTreeMap<String, Row> = BTreeMap::new();
    let mut table = Table::default();
    for s in stores {
        table.failed += s.failed_count();
        for f in s.finished::<Results>()? {
            table.versions.insert(f.version.clone());
            if by_key.contains_key(&f.key) {
                table.duplicates += 1;
            } else {
                by_key.insert(f.key.clone(), Row::of(&f));
            }
        }
    }
    table.rows = by_key.into_values().collect();
    Ok(table)
}

pub(crate) const COLUMNS: &str =
    "key,workload,device,host,mode,seed,runtime_ns,policy,interrupts_per_sec,iops,p50_ns,p99_ns,cpu";

/// A CSV field, quoted when it must be (RFC 4180).
pub(crate) fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub(crate) fn csv_line(r: &Row) -> String {
    format!(
        "{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
        r.key,
        field(&r.workload),
        field(&r.device),
        field(&r.host),
        field(&r.mode),
        r.seed,
        r.runtime_ns,
        field(&r.policy),
        r.interrupts_per_sec,
        r.iops,
        r.p50_ns,
        r.p99_ns,
        r.cpu
    )
}

impl Table {
    /// The table as CSV, a header and a row per point.
    pub fn csv(&self) -> String {
        let mut out = format!("{COLUMNS}\n");
        for r in &self.rows {
            out.push_str(&csv_line(r));
        }
        out
    }

    /// The table as a JSON array of rows.
    pub fn json(&self) -> String {
        let rows: Vec<Value> = self.rows.iter().map(Row::to_json).collect();
        let mut s = serde_json::to_string_pretty(&rows).unwrap_or_default();
        s.push('\n');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_are_quoted_when_they_must_be() {
        assert_eq!(field("a b"), "a b");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("a\"b"), "\"a\"\"b\"");
    }
}
