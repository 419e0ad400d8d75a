//! `cinterrupts coalesce --trace` (issue 27 items 3, 4 and 7): every
//! format's example file, the shared DiskSim traces and a capture go
//! through every strategy beside the oracle floor; no strategy that met
//! the budget has fewer interrupts than the floor; the report's figures
//! are written; bad input is one line.

mod common;

use std::path::{Path, PathBuf};

use common::{bin, require, stderr, stdout, turn};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The table's strategy rows: (name, interrupts, met the budget).
fn rows(out: &str) -> (u64, Vec<(String, u64, bool)>) {
    let floor: u64 = out
        .lines()
        .find_map(|l| l.strip_prefix("oracle floor: "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no oracle floor: {out}"));
    let table: Vec<(String, u64, bool)> = out
        .lines()
        .skip_while(|l| !l.starts_with("strategy"))
        .skip(1)
        .take_while(|l| !l.starts_with("report:"))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (
                f[0].to_string(),
                f[1].parse().unwrap(),
                *f.last().unwrap() == "met",
            )
        })
        .collect();
    (floor, table)
}

fn coalesce(trace: &Path, extra: &[&str]) -> String {
    let o = bin()
        .args(["coalesce", "--policy", "all", "--trace"])
        .arg(trace)
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}: {}", trace.display(), stderr(&o));
    stdout(&o)
}

/// The floor holds every strategy that met the budget, and the catalogue
/// is all there.
fn check(out: &str, what: &str) {
    let (floor, table) = rows(out);
    assert_eq!(
        table.len(),
        policy::catalogue::STRATEGIES.len(),
        "{what}: {out}"
    );
    for (name, irqs, met) in &table {
        if *met {
            assert!(
                *irqs >= floor,
                "{what}: {name} met the budget with {irqs} < floor {floor}"
            );
        }
    }
    // default interrupts per completion: it always meets the budget.
    assert!(
        table.iter().any(|(n, _, met)| n == "default" && *met),
        "{what}: {out}"
    );
}

#[test]
fn every_formats_example_goes_through_every_strategy_and_the_oracle() {
    let dir = repo().join("examples/traces");
    let mut seen = 0;
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let p = e.path();
        if p.to_string_lossy().ends_with(".blktrace.1") || p.is_dir() {
            continue; // the same trace as .blktrace.0 (per-CPU files); disksim/ below
        }
        let out = coalesce(&p, &[]);
        check(&out, &p.display().to_string());
        seen += 1;
    }
    assert_eq!(seen, traces::Format::ALL.len(), "one example per format");
}

#[test]
fn the_shared_disksim_traces_and_a_tight_budget() {
    for name in ["wsrch-small.trace", "tpcc-small.trace"] {
        let p = repo().join("examples/traces/disksim").join(name);
        for budget in ["10us", "100us"] {
            let out = coalesce(&p, &["--budget", budget]);
            check(&out, &format!("{name} at {budget}"));
        }
    }
}

#[test]
fn a_capture_goes_through_with_rules_and_a_report() {
    require("fio", "fio");
    let _one = turn();
    let dir = tempfile::Builder::new()
        .prefix("cinterrupts-ctrace.")
        .tempdir_in("/var/tmp")
        .unwrap();
    let data = dir.path().join("data");
    let lay = std::process::Command::new("fio")
        .args(["--name=l", "--size=8m", "--create_only=1"])
        .arg(format!("--filename={}", data.display()))
        .output()
        .unwrap();
    assert!(lay.status.success());
    let cap = dir.path().join("cap.txt");
    let o = bin()
        .args(["capture", "-o"])
        .arg(&cap)
        .args([
            "--",
            "fio",
            "--name=c",
            "--direct=1",
            "--rw=randread",
            "--bs=4k",
        ])
        .args(["--size=8m", "--number_ios=300", "--output-format=terse"])
        .arg(format!("--filename={}", data.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let report = dir.path().join("report");
    let out = bin()
        .args(["coalesce", "--policy", "all", "--trace"])
        .arg(&cap)
        .args(["--mark", "comm=fio => none", "--budget", "30us", "--report"])
        .arg(&report)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    check(&text, "capture");
    // The rule unmarked fio's reads: not all Urgent any more.
    let first = text.lines().next().unwrap();
    let n: u64 = first.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(n >= 300, "{first}");
    for f in ["index.html", "delay-cdf.svg", "irq-rate.svg"] {
        let body = std::fs::read_to_string(report.join(f)).unwrap();
        assert!(body.len() > 200, "{f}");
    }
    assert!(std::fs::read_to_string(report.join("delay-cdf.svg"))
        .unwrap()
        .contains("<svg"));
}

#[test]
fn bad_trace_input_is_one_line() {
    let _one = turn();
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.blkparse");
    std::fs::write(
        &bad,
        "  8,0    0        1     0.000000000  1234  D   R 100 + x [fio]\n",
    )
    .unwrap();
    for (args, code, want) in [
        (
            vec!["--trace", bad.to_str().unwrap(), "--format", "blkparse"],
            1,
            "bad.blkparse:1",
        ),
        (
            vec!["--trace", bad.to_str().unwrap(), "--format", "nope"],
            2,
            "'nope' is not one of",
        ),
        (
            vec!["--trace", bad.to_str().unwrap(), "--mark", "read => soon"],
            2,
            "invalid mark 'soon'",
        ),
        // The old `WHAT=MARK` spelling (issue 39: one rule syntax).
        (
            vec!["--trace", bad.to_str().unwrap(), "--mark", "read=none"],
            2,
            "--mark",
        ),
        (
            vec![
                "--trace",
                bad.to_str().unwrap(),
                "--mark",
                "file=*.ibd => none",
            ],
            2,
            "a block trace has no 'file='",
        ),
        (
            vec!["--trace", "/nonexistent.trace"],
            1,
            "/nonexistent.trace",
        ),
    ] {
        let o = bin().arg("coalesce").args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}
