//! fio-like human output.
//!
//! Each job is laid out as fio 3.x lays it out (the header, `read:`/`write:`
//! with IOPS and bandwidth, `clat` and the 17 percentiles four to a line in
//! a unit chosen as fio chooses it, `cpu`), so a reader who knows fio's output
//! finds everything where they expect it. A summary of the run's interrupts
//! and CPU follows.

use std::fmt::Write as _;

use policy::{MS, US};

use crate::human::{count, cpu_list, digits, finite, num2str, percent};
use crate::{DirReport, JobReport, LatencyStats, RunReport};

/// The report as fio's normal output would show it, plus the run's interrupt
/// and CPU summary.
pub fn render(report: &RunReport) -> String {
    let mut out = String::new();
    for job in &report.jobs {
        write_job(&mut out, report, job);
        out.push('\n');
    }
    write_summary(&mut out, report);
    out
}

fn write_job(out: &mut String, report: &RunReport, job: &JobReport) {
    let _ = write!(
        out,
        "{}: (groupid=0, jobs=1): engine={}",
        job.name, job.engine
    );
    // fio prints the clones of a section under the same name; say which.
    if report
        .jobs
        .iter()
        .any(|other| other.name == job.name && other.clone_index != job.clone_index)
    {
        let _ = write!(out, ", clone={}", job.clone_index);
    }
    if !job.cpus.is_empty() {
        let _ = write!(out, ", cpus={}", cpu_list(&job.cpus));
    }
    out.push('\n');
    for (name, dir) in [("read", &job.read), ("write", &job.write)] {
        if dir.io_ops > 0 || dir.errors > 0 {
            write_dir(out, report, name, dir);
        }
    }
    if let Some(sync) = job.sync.as_ref().filter(|s| s.lat.samples > 0) {
        // fio's stat.c (show_thread_status_normal): the sync latencies of
        // fsync, fdatasync and sync_file_range under this heading.
        out.push_str("  fsync/fdatasync/sync_file_range:\n");
        write_lat(out, "sync", &sync.lat);
        let b = &sync.breakdown;
        let _ = writeln!(
            out,
            "    per fsync (usec, journal={}): D1={:.2}, D2={:.2}, JD={:.2}, JC={:.2}, T_Sched={:.2}; {:.2} switches, {:.2} I/Os",
            b.journal, b.d1_us, b.d2_us, b.jd_us, b.jc_us, b.sched_us, b.switches_per_fsync, b.ios_per_fsync
        );
    }
    let _ = write!(
        out,
        "  cpu          : usr={:.2}%, sys={:.2}%, ctx={}",
        percent(report.share_of_window(job.usr_ns)),
        percent(report.share_of_window(job.sys_ns)),
        job.ctx
    );
    if let Some(v) = job.ctx_voluntary {
        let _ = write!(out, ", ctx_voluntary={v}");
    }
    if let Some(v) = job.ctx_involuntary {
        let _ = write!(out, ", ctx_involuntary={v}");
    }
    out.push('\n');
    if let Some(v) = &job.verify {
        let _ = write!(
            out,
            "  verify       : crc32c, {} blocks read back, {} mismatches",
            v.blocks, v.mismatches
        );
        if let Some(first) = &v.first_mismatch {
            let _ = write!(out, " (first: {first})");
        }
        out.push('\n');
    }
}

fn write_dir(out: &mut String, report: &RunReport, name: &str, dir: &DirReport) {
    let bw = report.bw_bytes(dir);
    let _ = write!(
        out,
        "  {name}: IOPS={}, BW={} ({})({}/{}msec)",
        count(report.iops(dir)),
        num2str(bw, 4, true, "B/s"),
        num2str(bw, 4, false, "B/s"),
        num2str(dir.io_bytes, 4, true, "B"),
        report.run_ns(dir) / MS
    );
    if dir.errors > 0 {
        let _ = write!(out, ", errors={}", dir.errors);
    }
    out.push('\n');
    if dir.clat.samples > 0 {
        write_clat(out, &dir.clat);
    }
}

/// The unit of one direction's latencies: fio's rule for its percentile block
/// (usec once the values pass 100us and none is below 2us; msec past 100ms
/// and none below 2ms), used for the `clat` line too so the two lines agree.
/// fio picks the `clat` line's unit by a rule of its own, which can differ.
fn unit(clat: &LatencyStats) -> (&'static str, u64) {
    if clat.min > 2_000_000 && clat.max > 99_999_999 {
        ("msec", MS)
    } else if clat.min > 2_000 && clat.max > 99_999 {
        ("usec", US)
    } else {
        ("nsec", 1)
    }
}

fn write_clat(out: &mut String, clat: &LatencyStats) {
    write_lat(out, "clat", clat);
}

/// A latency line and its percentiles, as fio prints `clat` and `sync`.
fn write_lat(out: &mut String, label: &str, clat: &LatencyStats) {
    let (unit, divisor) = unit(clat);
    let _ = writeln!(
        out,
        "    {label} ({unit}): min={}, max={}, avg={:5.2}, stdev={:5.2}",
        num2str(in_unit(clat.min, divisor), 6, false, ""),
        num2str(in_unit(clat.max, divisor), 6, false, ""),
        finite(clat.mean) / divisor as f64,
        finite(clat.stddev) / divisor as f64,
    );
    if clat.percentiles.is_empty() {
        return;
    }
    // fio's show_clat_percentiles: a column as wide as the largest value (at
    // least 5), four to a line.
    let max = clat.percentiles.iter().map(|&(_, v)| v).max().unwrap_or(0);
    let width = digits(in_unit(max, divisor)).max(5);
    let _ = write!(out, "    {label} percentiles ({unit}):\n     |");
    for (i, &(p, v)) in clat.percentiles.iter().enumerate() {
        let last = i + 1 == clat.percentiles.len();
        let _ = write!(
            out,
            " {p:5.2}th=[{:>width$}]{}",
            in_unit(v, divisor),
            if last { '\n' } else { ',' }
        );
        if !last && i % 4 == 3 {
            out.push_str("\n     |");
        }
    }
}

/// `ns` in the unit `divisor` gives, to the nearest. (fio truncates min and
/// max but rounds percentiles up, so its p99.9 can read above its max.)
fn in_unit(ns: u64, divisor: u64) -> u64 {
    ns / divisor + u64::from(ns % divisor >= divisor.div_ceil(2) && divisor > 1)
}

fn write_summary(out: &mut String, report: &RunReport) {
    out.push_str("cinterrupts");
    if let Some(mode) = report.mode {
        let _ = write!(out, " ({})", mode.as_str());
    }
    let _ = write!(out, ": policy={}", report.policy.name);
    for (k, v) in &report.policy.params {
        let _ = write!(out, " {k}={v}");
    }
    let _ = write!(out, ", device={}, host={}", report.device, report.host);
    if let Some(seed) = report.seed {
        let _ = write!(out, ", seed={seed}");
    }
    if let Some(marks) = &report.default_marks {
        let _ = write!(out, ", default_marks={marks}");
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "  io: IOPS={} (all jobs) in {}msec",
        count(report.total_iops()),
        report.duration_ns / MS
    );
    let _ = writeln!(
        out,
        "  interrupts: {} ({}/s), urgent-only {}; completions per interrupt {:.2}",
        report.interrupts,
        count(report.interrupts_per_sec()),
        report.urgent_only_interrupts,
        report.completions_per_interrupt()
    );
    if let Some(l) = &report.irq_line {
        let _ = writeln!(
            out,
            "  interrupt line ({}): raised {}, delivered {}, merged {}; the device waited for the call slot {} times, {:.1} ms ({:.1}% of the window)",
            l.delivery,
            l.raised,
            report.interrupts,
            l.merged,
            l.slot_waits,
            l.slot_wait_ns as f64 / 1e6,
            percent(report.share_of_window(l.slot_wait_ns))
        );
    }
    if let Some(g) = &report.completion_gaps {
        out.push_str("  completion gaps (per CQ):");
        for p in crate::gaps::SHOWN {
            let _ = write!(out, " p{p}={}", gap(g.value_at(p / 100.0)));
        }
        let _ = writeln!(out, " over {}", g.count);
    }
    let _ = writeln!(out, "  context switches: {}", report.context_switches);
    for c in &report.cores {
        let _ = writeln!(
            out,
            "  cpu {}: user={:.1}% kernel={:.1}% irq={:.1}% idle={:.1}%",
            c.core,
            percent(c.user),
            percent(c.kernel),
            percent(c.irq),
            percent(c.idle)
        );
    }
    if let Some(p) = &report.cpu_parts {
        crate::cpu::write_parts(out, p, report.completed_ios());
    }
    if let Some(c) = &report.counters {
        crate::cpu::write_counters(out, c);
    }
    if let Some(a) = &report.apps {
        write_apps(out, report, a);
    }
    // The field's metrics (issue 40 item 4): one line on every run, the
    // oracle floor's beside a trace's replay.
    crate::field::write(out, &crate::Field::of(report));
    for note in &report.notes {
        let _ = writeln!(out, "  note: {note}");
    }
}

/// An application run's operations (a line per instance and kind, the
/// background ones marked) and each core's interrupts and switches.
fn write_apps(out: &mut String, report: &RunReport, apps: &crate::AppsReport) {
    let _ = writeln!(
        out,
        "  operations in {}msec (latency in usec):",
        report.duration_ns / MS
    );
    if apps.ops.is_empty() {
        out.push_str("    none finished in the window\n");
    }
    let us = |ns: u64| ns as f64 / 1e3;
    for o in &apps.ops {
        let _ = write!(
            out,
            "    {} {}{}: ops={} ({}/s)",
            o.name,
            o.kind,
            if o.background { " (background)" } else { "" },
            o.ops,
            count(o.ops_per_sec)
        );
        if o.items != o.ops {
            let _ = write!(out, ", items={} ({}/s)", o.items, count(o.items_per_sec));
        }
        let _ = writeln!(
            out,
            "; mean={:.2}, p50={:.2}, p99={:.2}, p99.9={:.2}, max={:.2}",
            finite(o.lat.mean) / 1e3,
            us(o.lat.percentile(50.0)),
            us(o.lat.percentile(99.0)),
            us(o.lat.percentile(99.9)),
            us(o.lat.max)
        );
    }
    for c in &apps.cores {
        let _ = writeln!(
            out,
            "  cpu {}: interrupts={}, context switches={}",
            c.core, c.interrupts, c.context_switches
        );
    }
}

/// A gap in ns as a person reads it: `812ns`, `6.26us`, `1.25ms`.
fn gap(ns: u64) -> String {
    if ns < 1_000 {
        format!("{ns}ns")
    } else if ns < 1_000_000 {
        format!("{:.2}us", ns as f64 / 1e3)
    } else {
        format!("{:.2}ms", ns as f64 / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_round_to_nearest() {
        assert_eq!(in_unit(149_900, 1_000), 150);
        assert_eq!(in_unit(149_499, 1_000), 149);
        assert_eq!(in_unit(149_500, 1_000), 150);
        assert_eq!(in_unit(7, 1), 7);
        assert_eq!(in_unit(u64::MAX, 1_000_000), u64::MAX / 1_000_000 + 1);
    }
}
