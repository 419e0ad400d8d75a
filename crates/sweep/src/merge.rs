//! Folding stores into one table: a row per finished point, sorted by key,
//! whichever store (shard) it came from, so the merged stores of N shards
//! give the same table as one unsharded run's store. The fronts drawn from
//! it are [`crate::front`]'s.
//!
//! A merge that cannot be trusted is refused whole, every reason at once,
//! a line each (issue 42 item 5): every bad entry of every store (naming
//! the file and what is wrong: `store::Fault`); entries of more than one
//! spec (never one front: a 100 ms run beside a 200 ms one is another
//! experiment), unless [`Merge::spec`] names the one to take; entries of
//! more than one code version, unless [`Merge::mixed`] keeps them apart.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use ::store::entry::short;

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
    /// The code version that made the point (the store entry's).
    pub version: String,
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
            version: crate::version(),
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
            version: f.version.clone(),
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
    /// The program versions the points were run with: more than one only
    /// with [`Merge::mixed`], each row labelled.
    pub versions: BTreeSet<String>,
    /// Entries of other specs than [`Merge::spec`] left out, a line per
    /// store.
    pub left_out: Vec<String>,
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

    /// A note when the points were run by more than one version (kept
    /// apart: `--mixed`).
    pub fn versions_warning(&self) -> Option<String> {
        self.mixed().then(|| {
            format!(
                "the stores hold results of {} code versions ({}): kept apart (--mixed): a version column, a front per version",
                self.versions.len(),
                self.versions.iter().cloned().collect::<Vec<_>>().join(", ")
            )
        })
    }

    /// Whether rows of more than one version are in the table.
    fn mixed(&self) -> bool {
        self.versions.len() > 1
    }
}

/// What a merge takes.
#[derive(Clone, Debug, Default)]
pub struct Merge {
    /// Take only the entries of this spec (`Spec::identity`), leaving the
    /// others out; `None`: the stores must hold one spec's entries.
    pub spec: Option<String>,
    /// Keep entries of several code versions apart (a `version` column, a
    /// front per version: each row's host is labelled with its version)
    /// instead of refusing them.
    pub mixed: bool,
}

/// Why a merge was refused: every reason, a line each.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{}", .0.join("\n"))]
    Refused(Vec<String>),
}

/// The finished points of `stores`, one row per key: one spec's, one code
/// version's, none bad ([`merge_with`] with [`Merge::default`]).
pub fn merge(stores: &[Store]) -> Result<Table, MergeError> {
    merge_with(stores, &Merge::default())
}

/// The finished points of `stores`, one row per key, as `how` says; every
/// reason to refuse them at once.
pub fn merge_with(stores: &[Store], how: &Merge) -> Result<Table, MergeError> {
    let mut refused = Vec::new();
    let mut scans = Vec::new();
    for s in stores {
        let scan = s.scan::<Results>()?;
        for (path, fault) in &scan.bad {
            refused.push(format!("{}: {fault}", path.display()));
        }
        scans.push((s, scan));
    }
    let specs = |scan: &::store::Scan<Results>| -> Vec<String> {
        let finished = scan.finished.iter().map(|f| f.spec.clone());
        finished
            .chain(scan.failed.iter().map(|f| f.spec.clone()))
            .collect()
    };

    // The spec merged: the one named, else the one with the most entries
    // (ties: the smaller hash). Any other is never in its front.
    let mut by_spec: BTreeMap<String, usize> = BTreeMap::new();
    for (_, scan) in &scans {
        for spec in specs(scan) {
            *by_spec.entry(spec).or_default() += 1;
        }
    }
    let main: Option<String> = how.spec.clone().or_else(|| {
        by_spec
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
            .map(|(s, _)| s.clone())
    });
    let main = main.unwrap_or_default();
    let main_n = by_spec.get(&main).copied().unwrap_or(0);
    let mut table = Table::default();
    for (s, scan) in &scans {
        let mut others: BTreeSet<String> = BTreeSet::new();
        let mut n = 0;
        for spec in specs(scan).into_iter().filter(|x| *x != main) {
            n += 1;
            others.insert(short(&spec).to_string());
        }
        if n == 0 {
            continue;
        }
        let which = others.into_iter().collect::<Vec<_>>().join(", ");
        if how.spec.is_some() {
            table.left_out.push(format!(
                "{}: left out {n} entries of another spec ({which}) than {}",
                s.dir.display(),
                short(&main)
            ));
        } else {
            refused.push(format!(
                "{}: store holds {n} entries of another spec ({which}) than the {main_n} of spec {}: never merged into one front (merge each spec's stores apart, or take one with --spec SPEC)",
                s.dir.display(),
                short(&main)
            ));
        }
    }

    let mut by_key: BTreeMap<String, Row> = BTreeMap::new();
    let mut by_version: BTreeMap<String, usize> = BTreeMap::new();
    for (_, scan) in &scans {
        table.failed += scan.failed.iter().filter(|f| f.spec == main).count();
        for f in scan.finished.iter().filter(|f| f.spec == main) {
            *by_version.entry(f.version.clone()).or_default() += 1;
            if by_key.contains_key(&f.key) {
                table.duplicates += 1;
            } else {
                by_key.insert(f.key.clone(), Row::of(f));
            }
        }
    }
    table.versions = by_version.keys().cloned().collect();
    if by_version.len() > 1 && !how.mixed {
        let each: Vec<String> = by_version
            .iter()
            .map(|(v, n)| format!("{n} of {v}"))
            .collect();
        refused.push(format!(
            "the stores hold entries of {} code versions ({}): never merged into one front (--mixed keeps them apart, labelled by version)",
            by_version.len(),
            each.join(", ")
        ));
    }
    if !refused.is_empty() {
        return Err(MergeError::Refused(refused));
    }
    table.rows = by_key.into_values().collect();
    if table.mixed() {
        // A front per version: the fronts group by workload, device and
        // host, so the host names the code that ran it too.
        for r in &mut table.rows {
            r.host = format!("{}, code {}", r.host, r.version);
        }
    }
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
    /// The table as CSV, a header and a row per point (and a `version`
    /// column when the table mixes versions).
    pub fn csv(&self) -> String {
        let mixed = self.mixed();
        let mut out = if mixed {
            format!("{COLUMNS},version\n")
        } else {
            format!("{COLUMNS}\n")
        };
        for r in &self.rows {
            let line = csv_line(r);
            if mixed {
                out.push_str(line.trim_end_matches('\n'));
                out.push_str(&format!(",{}\n", field(&r.version)));
            } else {
                out.push_str(&line);
            }
        }
        out
    }

    /// The table as a JSON array of rows (each with its `version` when the
    /// table mixes versions).
    pub fn json(&self) -> String {
        let mixed = self.mixed();
        let rows: Vec<Value> = self
            .rows
            .iter()
            .map(|r| {
                let mut v = r.to_json();
                if mixed {
                    v["version"] = json!(r.version);
                }
                v
            })
            .collect();
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
