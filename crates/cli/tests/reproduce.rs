//! `cinterrupts reproduce` end to end: a small report, and one-line errors.

mod common;

use common::*;

#[test]
fn a_quick_report_of_two_experiments() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let o = run(&[
        "reproduce",
        "--quick",
        "--only",
        "fig17,fig20",
        "--sim-runtime",
        "30ms",
        "--seeds",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let line = stdout(&o);
    assert!(
        line.contains("independent claims hold")
            && line.contains("figures' conclusions reproduced")
            && line.contains("report.html"),
        "{line}"
    );
    for f in [
        "report.md",
        "report.html",
        "summary.json",
        "figures/fig17-sim.svg",
        "figures/fig20-sim.svg",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["sim_runtime_ns"], 30_000_000);
    assert_eq!(summary["sim_seeds"], 1);
    // What made it (issue 42 item 1): this checkout's commit, the seeds,
    // the command line; the report says it too.
    let made_by = &summary["made_by"];
    assert_made_by(made_by, &["reproduce", "--quick"]);
    assert_eq!(made_by["seeds"], serde_json::json!([1]), "{made_by}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let commit = made_by["code"]["commit"].as_str().unwrap();
    assert!(md.contains("## Made by") && md.contains(commit), "{md}");
    // What was printed is what was written.
    let headline = summary["headline"].as_str().unwrap();
    assert!(line.starts_with(headline), "{line}");
    assert_eq!(summary["counts"]["all"]["not run"], 0);
    // fig17's 150K/s is a calibration target: counted apart.
    assert!(
        summary["counts"]["by_basis"]["fitted"]
            .as_object()
            .unwrap()
            .values()
            .any(|n| n.as_u64().unwrap() > 0),
        "{summary}"
    );
    // The storm run and its cap, as the fio-shaped JSON of each run.
    let capped: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("runs/sim/fig17/cint+cap.seed1.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(capped["cinterrupts"]["policy"]["max-irq-rate"], "100000");
}

#[test]
fn bad_requests_fail_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let out = out.to_str().unwrap();
    let o = run(&["reproduce", "--only", "fig99", "--out", out]);
    assert_one_line_error(&o, "no experiment 'fig99'");
    assert!(
        !dir.path().join("r").exists(),
        "nothing written for a bad request"
    );
    assert_one_line_error(
        &run(&["reproduce", "--sim-runtime", "5 parsecs", "--out", out]),
        "--sim-runtime",
    );
    assert_one_line_error(
        &run(&["reproduce", "--seeds", "0", "--out", out]),
        "--seeds",
    );
    assert_one_line_error(
        &run(&["reproduce", "--mode", "gpu", "--out", out]),
        "--mode",
    );
    assert_one_line_error(&run(&["reproduce", "--quick"]), "--out");
    // A report directory that cannot be made.
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let under = file.join("report");
    let o = run(&[
        "reproduce",
        "--quick",
        "--only",
        "fig17",
        "--out",
        under.to_str().unwrap(),
    ]);
    assert_one_line_error(&o, "a-file");
}
