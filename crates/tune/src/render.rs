//! A tuning as `cinterrupts tune` shows it: the recommendation on one line,
//! how it was read, the sweep as a table; and the files `--out` writes (two
//! figures and every number as JSON); and how its percentile and tolerance
//! are written on the command line.

use std::fmt::Write as _;

use policy::time::readable;
use policy::{format_nanos, Nanos};
use serde_json::json;

use sweep::front::Setting;

use crate::recommend::{self, standing_text, Axes};
use crate::{plot, Point, Tuning};

/// What the tuning ran: the workload and where, for the header, the titles
/// and the JSON.
pub struct Setup {
    /// The job file as given.
    pub workload: String,
    /// `sim` or `emu`.
    pub mode: &'static str,
    /// The device or backend, for figure titles.
    pub short: String,
    /// The device and host, or the backend, for the header.
    pub on: String,
    /// The same as JSON fields (`device`, `host` or `backend`).
    pub extra: serde_json::Value,
    pub seed: u64,
    pub runtime: policy::Nanos,
}

impl Setup {
    /// A run of `workload` on the simulator's `device` and `host`.
    pub fn sim(workload: String, device: &str, host: &str, seed: u64, runtime: Nanos) -> Setup {
        Setup {
            workload,
            mode: "sim",
            short: device.to_string(),
            on: format!("{device}, host {host}"),
            extra: json!({ "device": device, "host": host }),
            seed,
            runtime,
        }
    }

    /// A run of `workload` on the emulator's `backend`.
    pub fn emu(workload: String, backend: &str, seed: u64, runtime: Nanos) -> Setup {
        Setup {
            workload,
            mode: "emu",
            short: backend.to_string(),
            on: format!("backend {backend}"),
            extra: json!({ "backend": backend }),
            seed,
            runtime,
        }
    }
}

/// `0.01` as `1%`, `0.005` as `0.5%`.
pub fn percent(fraction: f64) -> String {
    let s = format!("{:.6}", fraction * 100.0);
    format!("{}%", s.trim_end_matches('0').trim_end_matches('.'))
}

/// A percentile in (0, 100]: `90`, `99.9`.
pub fn parse_percentile(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 100.0 => Ok(p),
        _ => Err(format!(
            "'{s}' is not a percentile in (0, 100] (e.g. 90, 99)"
        )),
    }
}

/// A tolerance written as a percentage in [0, 100): `1%`, `0.5%`; as a
/// fraction.
pub fn parse_tolerance(s: &str) -> Result<f64, String> {
    let bad = || format!("'{s}' is not a percentage in [0, 100) such as 1% or 0.5%");
    let number = s.strip_suffix('%').ok_or_else(bad)?;
    match number.trim().parse::<f64>() {
        Ok(p) if (0.0..100.0).contains(&p) => Ok(p / 100.0),
        _ => Err(bad()),
    }
}

/// A setting's figures on one line: `44640 irq/s, p99 1.20ms, 360080
/// IOPS, CPU 0.98 (2.71us per I/O)`.
fn figures(s: &Setting) -> String {
    let per_io = s.cpu_per_io_ns();
    format!(
        "{:.0} irq/s, p99 {}, {:.0} IOPS, CPU {:.2} ({} per I/O)",
        s.interrupts_per_sec,
        readable(s.p99_ns.round() as u64),
        s.iops,
        s.cpu,
        if per_io.is_finite() {
            readable(per_io.round() as u64)
        } else {
            "-".into()
        }
    )
}

/// The recommendation and TOS 5.2's pick beside it (how far off the front
/// it lies), how the pick was read, then every candidate as a table.
pub fn text(t: &Tuning, s: &Setup) -> String {
    let p = t.percentile;
    let mut out = String::new();
    let axes = t.objective.front();
    let on = axes.of(&t.front).len();
    match &t.recommended {
        Some(r) => {
            let _ = writeln!(
                out,
                "recommended: {} (objective {}, budget {})",
                r.policy,
                t.objective.name(),
                t.budget.text()
            );
            let _ = writeln!(
                out,
                "  {}; on the front of {} ({on} of {} candidates on it)",
                figures(r),
                axes.name(),
                t.candidates.len()
            );
        }
        None => {
            let _ = writeln!(
                out,
                "recommended: none (objective {}, budget {}): {}",
                t.objective.name(),
                t.budget.text(),
                t.none_meets().unwrap_or_default()
            );
        }
    }
    let pick = t.tos_pick();
    let _ = writeln!(
        out,
        "TOS 5.2's pick: {} (delta = p{p} of completion gaps, thr = IOPS within {} of the plateau from thr={} up)",
        pick.policy,
        percent(t.tolerance),
        t.thr
    );
    let _ = writeln!(out, "  {}", figures(pick));
    for a in [Axes::Interrupts, Axes::Cpu] {
        let _ = writeln!(out, "  {}", standing_text(&t.tos_standing(a), a));
    }
    let _ = writeln!(
        out,
        "  workload: {} on {} ({}, seed {}, {} per run)",
        s.workload,
        s.on,
        s.mode,
        s.seed,
        format_nanos(s.runtime)
    );
    let g = &t.gaps;
    let _ = writeln!(
        out,
        "  completion gaps under default (per CQ, {} gaps): p50={} p90={} p99={} max={}",
        g.count,
        readable(g.value_at(0.5)),
        readable(g.value_at(0.9)),
        readable(g.value_at(0.99)),
        readable(g.max())
    );
    let _ = writeln!(
        out,
        "  delta: p{p} is {}; delta is the next whole microsecond above it",
        readable(t.gap_at_percentile)
    );
    let _ = writeln!(
        out,
        "\ncandidates: adaptive, {} settings (* TOS 5.2's pick, > recommended; front: i = on the front of interrupts/s against p99, c = of CPU per I/O against p99):",
        t.candidates.len()
    );
    let _ = writeln!(
        out,
        "  {:>2} {:>7} {:>5} {:>10} {:>10} {:>9} {:>10} {:>10} {:>10} {:>5}",
        "", "delta", "thr", "IOPS", "irq/s", "compl/irq", "mean clat", "p99", "CPU/io", "front"
    );
    let recommended = t.recommended.as_ref().map(|r| r.policy.as_str());
    let row = |out: &mut String, marks: &str, delta: String, thr: String, p: &Point| {
        let policy = recommend::policy_of(p);
        let front: String = [('i', &t.front.front), ('c', &t.front.cpu_front)]
            .iter()
            .filter(|(_, f)| f.iter().any(|x| x.policy == policy))
            .map(|(c, _)| *c)
            .collect();
        // As sweep::front::Setting::cpu_per_io_ns: busy share over IOPS.
        let per_io = p.cpu * 1e9 / p.iops;
        let _ = writeln!(
            out,
            "  {marks:>2} {delta:>7} {thr:>5} {:>10.0} {:>10.0} {:>9.2} {:>10} {:>10} {:>10} {front:>5}",
            p.iops,
            p.irq_per_sec,
            p.completions_per_irq,
            readable(p.mean_clat_ns.round() as u64),
            readable(p.p99_ns),
            if per_io.is_finite() {
                readable(per_io.round() as u64)
            } else {
                "-".into()
            }
        );
    };
    row(&mut out, "", "default".into(), String::new(), &t.baseline);
    for c in &t.candidates {
        let policy = recommend::policy_of(c);
        let mut marks = String::new();
        if policy == pick.policy {
            marks.push('*');
        }
        if Some(policy.as_str()) == recommended {
            marks.push('>');
        }
        row(
            &mut out,
            &marks,
            c.delta.map(format_nanos).unwrap_or_default(),
            c.thr.map(|x| x.to_string()).unwrap_or_default(),
            c,
        );
    }
    out
}

/// The files `--out` writes, by name: `tune-cdf.svg`, `tune-thr.svg`,
/// `tune.json`.
pub fn files(t: &Tuning, s: &Setup) -> Result<[(&'static str, String); 3], String> {
    let name = std::path::Path::new(&s.workload)
        .file_stem()
        .map_or(s.workload.clone(), |n| n.to_string_lossy().into_owned());
    let cdf = plot::cdf_svg(
        t,
        &format!("completion gaps: {name}, {} ({})", s.short, s.mode),
    )?;
    let thr = plot::thr_svg(
        t,
        &format!(
            "thr sweep: adaptive delta={}, {name} on {} ({})",
            format_nanos(t.delta),
            s.on,
            s.mode
        ),
    )?;
    let mut v = json!({
        "workload": s.workload,
        "mode": s.mode,
    });
    for (k, x) in s.extra.as_object().into_iter().flatten() {
        v[k] = x.clone();
    }
    v["seed"] = json!(s.seed);
    v["runtime_ns"] = json!(s.runtime);
    for (k, x) in t.to_json().as_object().into_iter().flatten() {
        v[k] = x.clone();
    }
    // What made the tuning (issue 42 item 1).
    v["made_by"] = json!(report::made_by::current(&[s.seed]));
    let mut text = serde_json::to_string_pretty(&v).expect("a JSON value always serializes");
    text.push('\n');
    Ok([
        ("tune-cdf.svg", cdf),
        ("tune-thr.svg", thr),
        ("tune.json", text),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percents_print_short() {
        assert_eq!(percent(0.01), "1%");
        assert_eq!(percent(0.005), "0.5%");
        assert_eq!(percent(0.07), "7%");
        assert_eq!(percent(0.0), "0%");
    }

    #[test]
    fn percentiles_are_in_0_to_100() {
        assert_eq!(parse_percentile("90"), Ok(90.0));
        assert_eq!(parse_percentile("99.9"), Ok(99.9));
        assert_eq!(parse_percentile("100"), Ok(100.0));
        for bad in ["0", "-5", "100.1", "abc", "90%", "NaN", ""] {
            let e = parse_percentile(bad).unwrap_err();
            assert!(e.contains("(0, 100]"), "{bad}: {e}");
        }
    }

    #[test]
    fn tolerances_are_percentages() {
        assert_eq!(parse_tolerance("1%"), Ok(0.01));
        assert_eq!(parse_tolerance("0%"), Ok(0.0));
        assert_eq!(parse_tolerance("0.5%"), Ok(0.005));
        for bad in ["1", "0.01", "100%", "-1%", "x%", "%", "NaN%"] {
            let e = parse_tolerance(bad).unwrap_err();
            assert!(e.contains("such as 1%"), "{bad}: {e}");
        }
    }
}
