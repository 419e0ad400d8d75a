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
    let first = out.lines().next().unwrap();
    assert!(
        first.starts_with("delta = 6us (p99 of completion gaps), thr = "),
        "{out}"
    );
    assert!(first.ends_with(" up)"), "{out}");
    assert!(out.contains("p99 is 5.50us"), "{out}");
    // The table: the baseline and the 14 sweep points, the choice starred.
    assert!(out.contains("  default "), "{out}");
    assert_eq!(out.lines().filter(|l| l.contains('*')).count(), 1, "{out}");
    for thr in ["1", "32", "255"] {
        assert!(
            out.lines().any(|l| l
                .trim_start()
                .trim_start_matches('*')
                .starts_with(&format!("{thr} "))),
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
    let delta = v["delta"].as_str().unwrap().to_string();
    let thr = v["thr"].as_u64().unwrap();
    // What was printed is what was written.
    assert!(
        stdout(&o).starts_with(&format!(
            "delta = {delta} (p90 of completion gaps), thr = {thr} "
        )),
        "{}",
        stdout(&o)
    );
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
