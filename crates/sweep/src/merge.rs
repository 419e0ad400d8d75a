//! Folding stores into one table, and each workload's Pareto front of
//! interrupts per second against p99 latency.
//!
//! The table has a row per finished point, sorted by key, whichever store
//! (shard) it came from: the merged stores of N shards give the same table
//! as one unsharded run's store. A front is drawn per workload and device
//! (a strategy's trade-off is a device's: TOS 5.2 tunes per device), over
//! every strategy, setting and seed.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::store::{Finished, Store, StoreError};

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
}

impl Row {
    fn of(f: &Finished) -> Row {
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
        }
    }

    fn to_json(&self) -> Value {
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
}

/// The finished points of `stores`, one row per key.
pub fn merge(stores: &[Store]) -> Result<Table, StoreError> {
    let mut by_key: BTreeMap<String, Row> = BTreeMap::new();
    let mut table = Table::default();
    for s in stores {
        table.failed += s.failed_count();
        for f in s.finished()? {
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

const COLUMNS: &str =
    "key,workload,device,host,mode,seed,runtime_ns,policy,interrupts_per_sec,iops,p50_ns,p99_ns,cpu";

/// A CSV field, quoted when it must be (RFC 4180).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn csv_line(r: &Row) -> String {
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

    /// Every (workload, device) group's front: its rows on the Pareto
    /// front of interrupts/s against p99, by increasing interrupts/s.
    pub fn fronts(&self) -> Vec<Front> {
        let mut groups: BTreeMap<(String, String), Vec<&Row>> = BTreeMap::new();
        for r in &self.rows {
            groups
                .entry((r.workload.clone(), r.device.clone()))
                .or_default()
                .push(r);
        }
        groups
            .into_iter()
            .map(|((workload, device), rows)| {
                let xy: Vec<(f64, f64)> = rows
                    .iter()
                    .map(|r| (r.interrupts_per_sec, r.p99_ns as f64))
                    .collect();
                let mut on: Vec<Row> = pareto(&xy).into_iter().map(|i| rows[i].clone()).collect();
                on.sort_by(|a, b| {
                    a.interrupts_per_sec
                        .total_cmp(&b.interrupts_per_sec)
                        .then(a.p99_ns.cmp(&b.p99_ns))
                        .then(a.key.cmp(&b.key))
                });
                Front {
                    workload,
                    device,
                    points: rows.len(),
                    rows: on,
                }
            })
            .collect()
    }
}

/// One workload's front on one device.
#[derive(Clone, Debug, PartialEq)]
pub struct Front {
    pub workload: String,
    pub device: String,
    /// The group's points, on the front or not.
    pub points: usize,
    pub rows: Vec<Row>,
}

/// The fronts as text: a block per group, a line per point on it.
pub fn fronts_text(fronts: &[Front]) -> String {
    let mut out = String::new();
    for f in fronts {
        out.push_str(&format!(
            "{} on {}: {} of {} points on the front (interrupts/s against p99)\n",
            f.workload,
            f.device,
            f.rows.len(),
            f.points
        ));
        for r in &f.rows {
            out.push_str(&format!(
                "  {:>12.0} irq/s  p99 {:>10}  {:>10.0} IOPS  seed {}  {}  [{}]\n",
                r.interrupts_per_sec,
                policy::format_nanos(r.p99_ns),
                r.iops,
                r.seed,
                r.policy,
                r.key
            ));
        }
    }
    out
}

/// The fronts as CSV: the table's columns after the group's.
pub fn fronts_csv(fronts: &[Front]) -> String {
    let mut out = format!("front_workload,front_device,{COLUMNS}\n");
    for f in fronts {
        for r in &f.rows {
            out.push_str(&format!(
                "{},{},{}",
                field(&f.workload),
                field(&f.device),
                csv_line(r)
            ));
        }
    }
    out
}

/// The fronts as JSON.
pub fn fronts_json(fronts: &[Front]) -> String {
    let v: Vec<Value> = fronts
        .iter()
        .map(|f| {
            json!({
                "workload": f.workload,
                "device": f.device,
                "points": f.points,
                "front": f.rows.iter().map(Row::to_json).collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}

/// The indices of `points` (x, y; lower is better on both) on the Pareto
/// front: no other point is at most as bad on both and strictly better on
/// one. Equal points are both on it (neither is strictly better). NaN
/// coordinates never dominate and are never on the front.
pub fn pareto(points: &[(f64, f64)]) -> Vec<usize> {
    let dominates =
        |q: (f64, f64), p: (f64, f64)| q.0 <= p.0 && q.1 <= p.1 && (q.0 < p.0 || q.1 < p.1);
    (0..points.len())
        .filter(|&i| {
            let p = points[i];
            !p.0.is_nan() && !p.1.is_nan() && !points.iter().any(|&q| dominates(q, p))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_front_is_the_points_nothing_beats() {
        // (interrupts/s, p99): a beats d on both; b and c trade off;
        // e ties b on x and is worse on y; f equals c.
        let pts = [
            (100.0, 10.0), // a
            (50.0, 30.0),  // b
            (200.0, 5.0),  // c
            (150.0, 20.0), // d: a is better on both
            (50.0, 31.0),  // e: b is as good on x, better on y
            (200.0, 5.0),  // f: the same as c
        ];
        assert_eq!(pareto(&pts), vec![0, 1, 2, 5]);
        assert_eq!(pareto(&[]), Vec::<usize>::new());
        assert_eq!(pareto(&[(1.0, 1.0)]), vec![0]);
        assert_eq!(pareto(&[(f64::NAN, 1.0), (2.0, 2.0)]), vec![1]);
        // A line of trade-offs is all front; one point better on both
        // takes it all.
        let line = [(1.0, 4.0), (2.0, 3.0), (3.0, 2.0), (4.0, 1.0)];
        assert_eq!(pareto(&line).len(), 4);
        let mut beaten = line.to_vec();
        beaten.push((0.5, 0.5));
        assert_eq!(pareto(&beaten), vec![4]);
    }

    #[test]
    fn csv_fields_are_quoted_when_they_must_be() {
        assert_eq!(field("a b"), "a b");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("a\"b"), "\"a\"\"b\"");
    }
}
