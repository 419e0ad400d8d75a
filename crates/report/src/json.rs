//! fio-shaped JSON (`--output-format json`).
//!
//! `jobs[]` carries the keys fio's JSON has and scripts read (`jobname`,
//! `read.iops`, `read.clat_ns.percentile["99.000000"]`, `usr_cpu`, ...), with
//! fio's units: ms for runtimes, KiB/s for `bw`, ns for latencies, percent for
//! CPU. What fio has no place for (interrupts, the policy, per-core time) is
//! in a top-level `cinterrupts` object.
//!
//! Keys keep the order they are written in (serde_json's `preserve_order`),
//! the same as fio's, and every number is finite, so a report always gives
//! the same bytes.

use policy::MS;
use serde_json::{json, Map, Value};

use crate::human::{finite, percent};
use crate::schema::{policy_object, Cinterrupts, Document, Kind, RunPart, SCHEMA_VERSION};
use crate::{DirReport, Gaps, IoPath, JobReport, LatencyStats, PathParts, RunReport};

/// The report as a JSON value shaped like fio's, plus a top-level
/// `cinterrupts` object.
pub fn render(report: &RunReport) -> Value {
    serde_json::to_value(typed(report)).expect("a report always serializes")
}

/// The report as the typed document (`schema::Document`) the JSON is.
pub fn typed(report: &RunReport) -> Document {
    Document {
        jobs: Some(report.jobs.iter().map(|j| job(report, j)).collect()),
        cinterrupts: cinterrupts(report),
    }
}

/// The whole document as `--output-format json` prints it: pretty, ending a
/// line.
pub fn document(report: &RunReport) -> String {
    typed(report).to_text()
}

fn job(report: &RunReport, job: &JobReport) -> Value {
    let mut obj = Map::new();
    obj.insert("jobname".into(), json!(job.name));
    obj.insert("groupid".into(), json!(0));
    obj.insert("error".into(), json!(job_error(job)));
    let own = job.read.run_ns.or(job.write.run_ns);
    obj.insert(
        "job_runtime".into(),
        json!(millis(own.unwrap_or(report.duration_ns))),
    );
    obj.insert(
        "usr_cpu".into(),
        json!(percent(report.share_of_window(job.usr_ns))),
    );
    obj.insert(
        "sys_cpu".into(),
        json!(percent(report.share_of_window(job.sys_ns))),
    );
    obj.insert("ctx".into(), json!(job.ctx));
    if let Some(v) = job.ctx_voluntary {
        obj.insert("ctx_voluntary".into(), json!(v));
    }
    if let Some(v) = job.ctx_involuntary {
        obj.insert("ctx_involuntary".into(), json!(v));
    }
    if let Some(v) = &job.verify {
        obj.insert(
            "verify".into(),
            json!({
                "blocks": v.blocks,
                "mismatches": v.mismatches,
                "first_mismatch": v.first_mismatch,
            }),
        );
    }
    obj.insert("read".into(), direction(report, &job.read));
    obj.insert("write".into(), direction(report, &job.write));
    if let Some(sync) = &job.sync {
        // fio's shape for fsync latencies (checked on Debian's fio 3.33:
        // `fio --rw=write --ioengine=sync --fsync=1 --output-format=json`
        // gives `"sync": {"total_ios", "lat_ns": {min, max, mean, stddev,
        // N, percentile}}` after read, write and trim). fio prints it for
        // every job; we only for jobs that fsync.
        obj.insert(
            "sync".into(),
            json!({
                "total_ios": sync.lat.samples,
                "lat_ns": clat(&sync.lat),
            }),
        );
    }
    Value::Object(obj)
}

/// fio's `error`: the errno the job failed with, 0 if none: EILSEQ for a
/// verify mismatch (as fio sets it), else EIO when I/Os failed.
fn job_error(job: &JobReport) -> i32 {
    const EIO: i32 = 5;
    const EILSEQ: i32 = 84;
    if job.verify.as_ref().is_some_and(|v| v.mismatches > 0) {
        EILSEQ
    } else if job.read.errors + job.write.errors > 0 {
        EIO
    } else {
        0
    }
}

/// fio's per-direction object. As in fio, a direction without I/O still
/// appears, all zeros, with a `runtime` of 0.
fn direction(report: &RunReport, dir: &DirReport) -> Value {
    let bw_bytes = report.bw_bytes(dir);
    let runtime = if dir.io_ops > 0 {
        millis(report.run_ns(dir))
    } else {
        0
    };
    json!({
        "io_bytes": dir.io_bytes,
        "io_kbytes": dir.io_bytes / 1024,
        "bw_bytes": bw_bytes,
        "bw": bw_bytes / 1024,
        "iops": finite(report.iops(dir)),
        "runtime": runtime,
        "total_ios": dir.io_ops,
        "io_ops": dir.io_ops,
        "short_ios": 0,
        "drop_ios": 0,
        "errors": dir.errors,
        "clat_ns": clat(&dir.clat),
    })
}

/// fio's `clat_ns`; `percentile` only when there are values, as fio omits it
/// for a direction without samples.
fn clat(stats: &LatencyStats) -> Value {
    let mut obj = Map::new();
    obj.insert("min".into(), json!(stats.min));
    obj.insert("max".into(), json!(stats.max));
    obj.insert("mean".into(), json!(finite(stats.mean)));
    obj.insert("stddev".into(), json!(finite(stats.stddev)));
    obj.insert("N".into(), json!(stats.samples));
    if !stats.percentiles.is_empty() {
        let percentiles: Map<String, Value> = stats
            .percentiles
            .iter()
            .map(|&(p, v)| (percentile_key(p), json!(v)))
            .collect();
        obj.insert("percentile".into(), Value::Object(percentiles));
    }
    Value::Object(obj)
}

/// fio's spelling of a percentile key: six decimals, `"99.900000"`.
pub fn percentile_key(p: f64) -> String {
    format!("{p:.6}")
}

/// The typed `cinterrupts` object of a fio-job run: [`Kind::Emu`] for
/// the emulator's, else [`Kind::Sim`] (a report without a mode is
/// `RunReport::default()`'s, the simulator's shape).
pub fn cinterrupts<E>(report: &RunReport) -> Cinterrupts<E> {
    let run = run_part(report);
    Cinterrupts {
        schema_version: SCHEMA_VERSION,
        policy: policy_object(&report.policy),
        device: report.device.clone(),
        default_marks: report.default_marks.clone(),
        duration_ns: report.duration_ns,
        interrupts: report.interrupts,
        urgent_only_interrupts: report.urgent_only_interrupts,
        interrupts_per_sec: finite(report.interrupts_per_sec()),
        completions: report.completions,
        completions_per_interrupt: finite(report.completions_per_interrupt()),
        delivery_ns: report.delivery,
        completions_by_mark: report.completions_by_mark,
        counters: report.counters.as_ref().map(crate::cpu::counters_json),
        field: Some(crate::Field::of(report)),
        notes: report.notes.clone(),
        made_by: Some(
            report
                .made_by
                .clone()
                .unwrap_or_else(|| crate::made_by::current(report.seed.as_slice())),
        ),
        kind: match report.mode {
            Some(crate::Mode::Emu) => Kind::Emu(run),
            Some(crate::Mode::Sim) | None => Kind::Sim(run),
        },
    }
}

/// `x` per I/O, 0 without I/O.
fn per_io(x: u64, ios: u64) -> f64 {
    if ios == 0 {
        0.0
    } else {
        x as f64 / ios as f64
    }
}

fn run_part(report: &RunReport) -> RunPart {
    let irq_line = report.irq_line.as_ref().map(|l| {
        json!({
            "delivery": l.delivery,
            "raised": l.raised,
            "delivered": report.interrupts,
            "merged": l.merged,
            "slot_waits": l.slot_waits,
            "slot_wait_ns": l.slot_wait_ns,
        })
    });
    let fsyncs: Vec<Value> = report
        .jobs
        .iter()
        .filter_map(|j| j.sync.as_ref().map(|s| (j, &s.breakdown)))
        .map(|(j, b)| {
            json!({
                "jobname": j.name,
                "journal": b.journal,
                "fsyncs": b.fsyncs,
                "d1_us": finite(b.d1_us),
                "d2_us": finite(b.d2_us),
                "jd_us": finite(b.jd_us),
                "jc_us": finite(b.jc_us),
                "sched_us": finite(b.sched_us),
                "switches_per_fsync": finite(b.switches_per_fsync),
                "ios_per_fsync": finite(b.ios_per_fsync),
            })
        })
        .collect();
    let cores: Vec<Value> = report
        .cores
        .iter()
        .map(|c| {
            json!({
                "core": c.core,
                "user": finite(c.user),
                "kernel": finite(c.kernel),
                "irq": finite(c.irq),
                "idle": finite(c.idle),
            })
        })
        .collect();
    let io_uring = report.uring.as_ref().map(|u| {
        json!({
            "strategy": u.strategy,
            "ios": u.ios,
            "wakeups": u.wakeups,
            "wakeups_per_io": finite(per_io(u.wakeups, u.ios)),
            "timeouts": u.timeouts,
        })
    });
    RunPart {
        io_uring,
        host: report.host.clone(),
        seed: report.seed,
        irq_line,
        context_switches: report.context_switches,
        // FastResponse's fsync breakdown (FR Fig. 5b, 15b), per job that
        // fsyncs.
        fsync: (!fsyncs.is_empty()).then(|| json!(fsyncs)),
        completion_gaps: report.completion_gaps.as_ref().map(gaps),
        cpu_util: json!(cores),
        cpu_per_io: report
            .cpu_parts
            .as_ref()
            .map(|p| crate::cpu::parts_json(p, report.completed_ios())),
        io_path: report.io_path.as_ref().map(|p| io_path(report, p)),
        // An application run's own figures (sim::simulate_app); absent
        // from a job file's run.
        apps: report
            .apps
            .as_ref()
            .map(|a| json!(a.ops.iter().map(op).collect::<Vec<_>>())),
        cores: report
            .apps
            .as_ref()
            .map(|a| json!(a.cores.iter().map(core).collect::<Vec<_>>())),
    }
}

/// One instance's operations of one kind: counts, rates over the window,
/// latency in us (mean, p50, p99, p99.9, max) and its CDF as [percentile,
/// us] pairs.
fn op(o: &crate::OpReport) -> Value {
    let us = |ns: u64| ns as f64 / 1e3;
    let cdf: Vec<Value> = o.cdf.iter().map(|&(p, ns)| json!([p, us(ns)])).collect();
    json!({
        "instance": o.instance,
        "name": o.name,
        "kind": o.kind,
        "background": o.background,
        "ops": o.ops,
        "items": o.items,
        "ops_per_sec": finite(o.ops_per_sec),
        "items_per_sec": finite(o.items_per_sec),
        "lat_us": {
            "mean": finite(o.lat.mean) / 1e3,
            "p50": us(o.lat.percentile(50.0)),
            "p99": us(o.lat.percentile(99.0)),
            "p99_9": us(o.lat.percentile(99.9)),
            "max": us(o.lat.max),
        },
        "cdf": cdf,
    })
}

/// One core's window in fractions, its device interrupts and switches.
fn core(c: &crate::CoreReport) -> Value {
    json!({
        "core": c.core,
        "user": finite(c.user),
        "kernel": finite(c.kernel),
        "irq": finite(c.irq),
        "idle": finite(c.idle),
        "interrupts": c.interrupts,
        "context_switches": c.context_switches,
    })
}

/// FastResponse's read-path breakdown per job (mean T_Dev and T_Sched, ns)
/// and the device's queue depth over the window.
fn io_path(report: &RunReport, p: &IoPath) -> Value {
    let jobs: Vec<Value> = report
        .jobs
        .iter()
        .zip(&p.jobs)
        .map(|(j, b)| {
            json!({
                "jobname": j.name,
                "requests": b.requests,
                "t_dev_mean_ns": finite(b.t_dev_mean_ns),
                "t_sched_mean_ns": finite(b.t_sched_mean_ns),
                "parts": b.parts.as_ref().map(parts),
                "tail": b.tail.as_ref().map(parts),
            })
        })
        .collect();
    json!({
        "jobs": jobs,
        "device_queue_depth": {
            "mean": finite(p.device_queue.mean),
            "p99": p.device_queue.p99,
            "max": p.device_queue.max,
        },
    })
}

/// A request path's stages (means, ns).
fn parts(p: &PathParts) -> Value {
    json!({
        "requests": p.requests,
        "clat_ns": finite(p.clat),
        "submit_ns": finite(p.submit),
        "queue_ns": finite(p.queue),
        "service_ns": finite(p.service),
        "deliver_ns": finite(p.deliver),
        "after_ns": finite(p.after),
        "depth_at_arrival": finite(p.depth_at_arrival),
        "depth_at_done": finite(p.depth_at_done),
    })
}

/// The completion inter-arrival times in ns, keyed as fio keys `clat_ns`:
/// how many, and the 50th, 90th and 99th percentiles.
fn gaps(g: &Gaps) -> Value {
    let percentiles: Map<String, Value> = crate::gaps::SHOWN
        .iter()
        .map(|&p| (percentile_key(p), json!(g.value_at(p / 100.0))))
        .collect();
    json!({
        "N": g.count,
        "min": g.min(),
        "max": g.max(),
        "percentile": percentiles,
    })
}

fn millis(ns: u64) -> u64 {
    ns / MS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_keys_have_six_decimals() {
        assert_eq!(percentile_key(1.0), "1.000000");
        assert_eq!(percentile_key(99.9), "99.900000");
        assert_eq!(percentile_key(99.99), "99.990000");
    }
}
