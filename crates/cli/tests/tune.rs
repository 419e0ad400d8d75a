//! `tune` end to end on the simulator: one-line errors for bad options, the
//! recommendation on a device whose answer is known, and the files `--out`
//! writes.

mod common;

use common::*;

fn example(name: &str) -> String {
    format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// One unit with a constant 5.5 us service time: kept busy, it posts a
/// completion every 5.5 us, so delta is 6 us at any percentile.
fn constant_device() -> String {
    sim::DeviceProfile::constant_service_toml("5500ns", 1, 10_000_000)
}

#[test]
fn bad_percentiles_and_tolerances_give_one_line() {
    let job = example("tune-libaio.fio");
    for bad in ["0", "101", "ninety", "90%"] {
        assert_one_line_error(
            &run(&["tune", &job, "--percentile", bad]),
            "is not a percentile in (0, 100]",
        );
    }
    for bad in ["1", "0.01", "100%", "-1%", "lots%"] {
        assert_one_line_error(
            &run(&["tune", &job, "--tolerance", bad]),
            "is not a percentage in [0, 100) such as 1%",
        );
    }
    // A bare number is seconds, as fio's --runtime; a wrong unit is refused.
    assert_one_line_error(
        &run(&["tune", &job, "--runtime", "200 parsecs"]),
        "invalid duration",
    );
    assert_one_line_error(
        &run(&["tune", &job, "--mode", "hardware"]),
        "invalid value 'hardware' for '--mode",
    );
}

#[test]
fn bad_objectives_and_budgets_give_one_line() {
    let job = example("tune-libaio.fio");
    let o = run(&["tune", &job, "--objective", "fastest"]);
    assert_one_line_error(
        &o,
        "invalid value 'fastest' for '--objective <OBJECTIVE>' (possible values: p99, interrupts, cpu, balanced)",
    );
    assert_eq!(o.status.code(), Some(2), "a wrong command line");
    for (option, bad, want) in [
        ("--p99-budget", "50", "needs a unit"),
        ("--p99-budget", "fast", "invalid duration"),
        ("--irq-budget", "lots", "invalid rate"),
        ("--irq-budget", "-5", "invalid"),
        (
            "--delta-percentiles",
            "50,200",
            "'200' is not a percentile in (0, 100]",
        ),
        ("--delta-percentiles", "50,,90", "is not a percentile"),
    ] {
        let o = run(&["tune", &job, option, bad]);
        assert_one_line_error(&o, want);
        assert_eq!(o.status.code(), Some(2), "{option} {bad}");
    }
}

/// tune's own workload on each device with a budget: a p99 budget below
/// every candidate's p99 (1us: the device alone takes longer, and the
/// workload queues 256 deep) leaves nothing, said in one line on stderr
/// after the report, exit 1; fio's spelling of the same time does the same.
#[test]
fn a_budget_nobody_meets_is_one_line_and_exit_1() {
    let job = example("tune-libaio.fio");
    for budget in ["1us", "1000ns"] {
        let o = run(&["tune", &job, "--runtime", "10ms", "--p99-budget", budget]);
        assert_one_line_error(
            &o,
            "no setting on the front of interrupts/s against p99 meets the budget (p99 <= 1us) among ",
        );
        assert!(stderr(&o).contains("the lowest p99 is "), "{}", stderr(&o));
        assert_eq!(o.status.code(), Some(1));
        let out = stdout(&o);
        assert!(
            out.starts_with("recommended: none (objective balanced, budget p99 <= 1us)"),
            "{out}"
        );
        assert!(out.contains("\nTOS 5.2's pick: "), "{out}");
    }
    let o = run(&[
        "tune",
        &job,
        "--device",
        "p3700",
        "--runtime",
        "10ms",
        "--objective",
        "p99",
        "--irq-budget",
        "1",
    ]);
    assert_one_line_error(&o, "(interrupts/s <= 1) among ");
    assert_eq!(o.status.code(), Some(1));
}

/// Each objective on tune's own workload on the Optane: the recommendation
/// printed is a candidate's row, marked, and none of the candidates' rows
/// printed beats it on both axes of its front (read back from the table,
/// as a reader would check it).
#[test]
fn every_objective_recommends_a_row_no_other_row_beats() {
    let job = example("tune-libaio.fio");
    for objective in ["p99", "interrupts", "cpu", "balanced"] {
        let dir = tempfile::tempdir().unwrap();
        let o = run(&[
            "tune",
            &job,
            "--runtime",
            "10ms",
            "--objective",
            objective,
            "--out",
            dir.path().to_str().unwrap(),
            "-q",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("tune.json")).unwrap())
                .unwrap();
        assert_eq!(v["objective"], objective);
        let r = &v["recommended"];
        let x = |c: &serde_json::Value| {
            if objective == "cpu" {
                c["cpu"].as_f64().unwrap() * 1e9 / c["iops"].as_f64().unwrap()
            } else {
                c["interrupts_per_sec"].as_f64().unwrap()
            }
        };
        let y = |c: &serde_json::Value| c["p99_ns"].as_f64().unwrap();
        let candidates = v["candidates"].as_array().unwrap();
        let mine = candidates
            .iter()
            .find(|c| c["delta_ns"] == r["delta_ns"] && c["thr"] == r["thr"])
            .expect("the recommendation is a candidate");
        let (px, py) = (x(mine), y(mine));
        for c in candidates {
            let (qx, qy) = (x(c), y(c));
            assert!(
                !(qx <= px && qy <= py && (qx < px || qy < py)),
                "{objective}: {c} beats the recommendation {r}"
            );
        }
        let out = stdout(&o);
        let marked: Vec<&str> = out
            .lines()
            .filter(|l| l.trim_start().starts_with('>') || l.trim_start().starts_with("*>"))
            .collect();
        assert_eq!(marked.len(), 1, "{out}");
    }
}

#[test]
fn options_of_the_other_mode_are_refused() {
    let job = example("tune-libaio.fio");
    assert_one_line_error(
        &run(&["tune", &job, "--backend", "null:10us"]),
        "--backend is for --mode emu",
    );
    assert_one_line_error(
        &run(&["tune", &job, "--mode", "emu", "--device", "p3700"]),
        "--device and --host are for --mode sim",
    );
    assert_one_line_error(
        &run(&["tune", &job, "--device", "nosuch"]),
        "unknown device profile 'nosuch'",
    );
}

#[test]
fn bad_job_files_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(dir.path(), "bad.fio", "[job]\nrw=randread\nbs=4q\n");
    assert_one_line_error(&run(&["tune", &bad]), "bad.fio:3");
    let one = write(
        dir.path(),
        "one.fio",
        "[one]\nioengine=psync\nrw=randread\nbs=4k\nsize=1m\nnumber_ios=1\n",
    );
    assert_one_line_error(&run(&["tune", &one]), "one.fio: no completion gaps");
}

#[test]
fn a_constant_device_gets_the_next_microsecond_above_its_gap() {
    let dir = tempfile::tempdir().unwrap();
    let device = write(dir.path(), "const.toml", &constant_device());
    let o = run(&[
        "tune",
        &example("tune-libaio.fio"),
        "--device",
        &device,
        "--runtime",
        "20ms",
        "--percentile",
        "99",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "", "quiet");
    let out = stdout(&o);
    let mut lines = out.lines();
    // The recommendation first, then TOS 5.2's pick beside it.
    let first = lines.next().unwrap();
    assert!(
        first.starts_with("recommended: adaptive delta=6us thr="),
        "{out}"
    );
    assert!(
        first.ends_with("(objective balanced, budget none)"),
        "{out}"
    );
    let tos = out
        .lines()
        .find(|l| l.starts_with("TOS 5.2's pick: "))
        .unwrap();
    assert!(
        tos.starts_with("TOS 5.2's pick: adaptive delta=6us thr=")
            && tos.contains("(delta = p99 of completion gaps, thr = IOPS within 2%"),
        "{out}"
    );
    assert!(
        out.contains("  on the front of interrupts/s against p99")
            || out.contains("  off the front of interrupts/s against p99: "),
        "{out}"
    );
    assert!(out.contains("p99 is 5.50us"), "{out}");
    // Every gap is 5.5 us: every percentile gives 6 us, one delta, so the
    // candidates are the baseline's row and the 14 thr points, TOS 5.2's
    // starred once.
    let rows: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("candidates: adaptive, 14 settings"))
        .skip(2)
        .collect();
    assert_eq!(rows.len(), 15, "{out}");
    assert!(rows[0].trim_start().starts_with("default "), "{out}");
    assert_eq!(
        rows.iter()
            .filter(|l| l.trim_start().starts_with('*'))
            .count(),
        1,
        "{out}"
    );
    for thr in ["1", "32", "255"] {
        assert!(
            rows.iter().any(|l| l
                .trim_start()
                .trim_start_matches(['*', '>'])
                .trim_start()
                .starts_with(&format!("6us {:>5}", thr))),
            "thr {thr} missing: {out}"
        );
    }
}

/// Balanced, parseable SVG, with the text the figure promises.
fn check_svg(path: &std::path::Path, want: &[&str]) {
    let svg = std::fs::read_to_string(path).unwrap();
    assert!(svg.trim_start().starts_with("<svg"), "{}", path.display());
    assert!(svg.trim_end().ends_with("</svg>"), "{}", path.display());
    let doc = roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{e}"));
    let texts: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .map(str::trim)
        .collect();
    for w in want {
        assert!(texts.contains(w), "{w} not in {texts:?}");
    }
}

#[test]
fn out_writes_two_figures_and_every_number() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("figs");
    let o = run(&[
        "tune",
        &example("tune-libaio.fio"),
        "--runtime",
        "20ms",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Not a terminal: no progress lines, only what was written.
    assert!(stderr(&o).starts_with("tune: wrote "), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("tune.json")).unwrap()).unwrap();
    assert_made_by(&v["made_by"], &["tune"]);
    let delta = v["delta"].as_str().unwrap().to_string();
    let thr = v["thr"].as_u64().unwrap();
    // What was printed is what was written: TOS 5.2's pick, and the
    // recommendation.
    assert!(
        stdout(&o).contains(&format!(
            "\nTOS 5.2's pick: adaptive delta={delta} thr={thr} (delta = p90 of completion gaps"
        )),
        "{}",
        stdout(&o)
    );
    let r = &v["recommended"];
    assert!(
        stdout(&o).starts_with(&format!(
            "recommended: adaptive delta={} thr={} (objective balanced",
            r["delta"].as_str().unwrap(),
            r["thr"]
        )),
        "{}",
        stdout(&o)
    );
    assert_eq!(v["objective"], "balanced");
    assert!(v["candidates"].as_array().unwrap().len() >= 28);
    assert_eq!(v["mode"], "sim");
    assert_eq!(v["device"], "optane");
    assert_eq!(v["percentile"].as_f64(), Some(90.0));
    assert_eq!(v["tolerance"].as_f64(), Some(0.02));
    assert_eq!(v["sweep"].as_array().unwrap().len(), 14);
    assert_eq!(v["sweep"][0]["thr"], 1);
    let cdf = v["completion_gaps"]["cdf"].as_array().unwrap();
    assert!(cdf.len() > 10);
    assert_eq!(cdf.last().unwrap()[1].as_f64(), Some(1.0));
    check_svg(
        &out.join("tune-cdf.svg"),
        &[&format!("delta = {delta}"), "p90"],
    );
    check_svg(
        &out.join("tune-thr.svg"),
        &["(a) throughput", "(b) interrupts", &format!("thr = {thr}")],
    );
    // Nothing half-written left beside them.
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
}

#[test]
fn without_out_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let o = bin()
        .current_dir(dir.path())
        .args([
            "tune",
            &example("tune-libaio.fio"),
            "--runtime",
            "10ms",
            "-q",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
