//! The report generator on small runs: every file written, every figure
//! well-formed SVG, every claim of the experiments run given a verdict.

use std::path::Path;

use policy::MS;
use report::Mode;
use repro::claims::{self, Verdict};
use repro::run::Plan;

fn small(only: &[&str], out: &Path) -> repro::write::Tally {
    run_for(only, out, 50 * MS, 2)
}

fn run_for(only: &[&str], out: &Path, sim_runtime: u64, sim_seeds: u32) -> repro::write::Tally {
    let opts = repro::Options {
        only: only.iter().map(|s| s.to_string()).collect(),
        plan: Plan {
            modes: vec![Mode::Sim],
            sim_runtime,
            sim_seeds,
            emu_runtime: 100 * MS,
            emu_reps: 1,
        },
        out: out.to_path_buf(),
        command: "test".into(),
    };
    repro::reproduce(&opts, &|_, _| {}).unwrap()
}

fn svg_ok(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let doc =
        roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(
        doc.root_element().tag_name().name(),
        "svg",
        "{}",
        path.display()
    );
}

#[test]
fn a_small_report_has_every_file_figure_and_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let tally = small(&["fig10", "fig12"], out);
    for f in [
        "report.md",
        "report.html",
        "summary.json",
        "figures/fig10-sim.svg",
        "figures/fig12-sim.svg",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    assert!(
        !out.join("figures/fig8-sim.svg").exists(),
        "fig8 was not asked for"
    );
    for e in std::fs::read_dir(out.join("figures")).unwrap() {
        svg_ok(&e.unwrap().path());
    }
    // The HTML page is well-formed too, with the figures inline.
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let page = roxmltree::Document::parse_with_options(
        &html,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        page.descendants().filter(|n| n.has_tag_name("svg")).count(),
        2
    );
    // Every run kept, once per seed: fig10 3 runs, fig12 9 runs.
    let runs = |e: &str| {
        std::fs::read_dir(out.join("runs/sim").join(e))
            .unwrap()
            .count()
    };
    assert_eq!(runs("fig10"), 3 * 2);
    assert_eq!(runs("fig12"), 9 * 2);
    let one: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("runs/sim/fig10/cint.seed1.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        one["cinterrupts"]["policy"]["ooo"], "off",
        "cint runs without OOO"
    );
    // Every claim of the experiments run has a verdict; the rest are "not run".
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let claims = summary["claims"].as_array().unwrap();
    let shipped = claims::load(claims::SHIPPED, "claims.toml", &repro::figures::all()).unwrap();
    let expected = shipped
        .iter()
        .filter(|c| c.experiment == "fig10" || c.experiment == "fig12")
        .count();
    assert!(expected >= 10);
    assert_eq!(
        claims.len(),
        expected,
        "one verdict per claim of the experiments run"
    );
    for c in claims {
        let v = c["verdict"].as_str().unwrap();
        assert!(
            [
                "holds",
                "holds qualitatively",
                "right direction, far off",
                "does not hold"
            ]
            .contains(&v),
            "{c}"
        );
        // A figure, or a word for an infinite or undefined one: never null.
        assert!(c["ours"].is_number() || c["ours"].is_string(), "{c}");
        for k in ["basis", "kind", "band"] {
            assert!(c[k].is_string(), "{k}: {c}");
        }
    }
    let all = tally.counts(None);
    assert_eq!(all[..4].iter().sum::<usize>(), expected);
    assert_eq!(all[4], 0, "none not run");
    // The counts per basis add up to the claims.
    let by_basis = &summary["counts"]["by_basis"];
    let total: u64 = ["independent", "fitted", "by construction"]
        .iter()
        .map(|b| {
            by_basis[b]
                .as_object()
                .unwrap()
                .values()
                .map(|n| n.as_u64().unwrap())
                .sum::<u64>()
        })
        .sum();
    assert_eq!(total as usize, expected);
    assert!(summary["headline"]
        .as_str()
        .unwrap()
        .contains("independent claims hold"));
    // The Markdown names every claim and links every figure.
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    for c in shipped.iter().filter(|c| c.experiment == "fig10") {
        assert!(md.contains(&c.claim), "{} missing from report.md", c.claim);
    }
    assert!(md.contains("](figures/fig10-sim.svg)"));
    // Every figure's conclusion (issue 36 item 4): the selected
    // experiments' orderings, each with a verdict, and the headline.
    let conclusions = summary["conclusions"].as_array().unwrap();
    for id in ["fig10", "fig12"] {
        assert!(conclusions.iter().any(|c| c["experiment"] == id), "{id}");
    }
    assert!(conclusions
        .iter()
        .all(|c| c["experiment"] == "fig10" || c["experiment"] == "fig12"));
    for c in conclusions {
        let v = c["verdict"].as_str().unwrap();
        assert!(v == "agree" || v == "disagree", "both ran: {c}");
    }
    let line = summary["conclusions_headline"].as_str().unwrap();
    assert!(
        line.contains(" of 2 figures' conclusions reproduced (sim;"),
        "{line}"
    );
    assert!(md.contains("## Conclusions") && md.contains(line));
}

#[test]
fn throttled_runs_are_capped_at_the_run_they_name() {
    let dir = tempfile::tempdir().unwrap();
    // 200 ms, the quick run's length: in 50 ms the free runs still carry
    // the start-up burst of filling 256 slots (default's free async job
    // 211K IOPS in 50 ms, 140K in 200 ms), which a rate cap cannot follow.
    run_for(&["fig15"], dir.path(), 200 * MS, 1);
    let iops = |key: &str| {
        let v: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(format!("runs/sim/fig15/{key}.seed1.json")))
                .unwrap(),
        )
        .unwrap();
        v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["jobname"] == "raw=random-read-libaio")
            .map(|j| j["read"]["iops"].as_f64().unwrap())
            .unwrap()
    };
    let cap = iops("default_async_free");
    // Adaptive's async job runs well above default's when free (2.2x
    // measured), so the cap binds on it.
    let free = iops("adaptive_async_free");
    let throttled = iops("adaptive_async_throttled");
    assert!(
        free > 1.2 * cap,
        "adaptive's async job runs faster than default's: {free} vs {cap}"
    );
    assert!(
        throttled <= cap * 1.02,
        "throttled {throttled} above the cap {cap}"
    );
    assert!(
        throttled >= cap * 0.9,
        "throttled {throttled} far below the cap {cap}"
    );
}

#[test]
fn the_shipped_claims_name_real_experiments_runs_and_metrics() {
    let all = repro::figures::all();
    let shipped = claims::load(claims::SHIPPED, "claims.toml", &all).unwrap();
    assert!(shipped.len() >= 40);
    // Our own experiments (named as ours) teach without the paper's claims.
    for e in all.iter().filter(|e| !e.provenance.source.is_ours()) {
        assert!(
            shipped.iter().any(|c| c.experiment == e.id),
            "{} has no claim to check",
            e.id
        );
    }
    // Unique run keys in every experiment, so a claim names one run.
    for e in &all {
        let mut keys: Vec<&str> = e.runs.iter().map(|r| r.key.as_str()).collect();
        keys.sort_unstable();
        let n = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), n, "{}: duplicate run keys", e.id);
    }
}

const ONE: &str = r#"
[[claim]]
experiment = "fig10"
claim = "default fires more"
source = "s"
metric = "irq_rate"
run = "default"
baseline = "cint"
compare = "ratio"
paper = "2.74x"
kind = "ratio"
number = 2.74
basis = "independent"
"#;

#[test]
fn bad_claims_are_refused_in_one_line_naming_the_claim() {
    let all = repro::figures::all();
    assert!(claims::load(ONE, "c.toml", &all).is_ok());
    for (from, to, want) in [
        ("run = \"default\"", "run = \"nosuch\"", "no run 'nosuch'"),
        (
            "metric = \"irq_rate\"",
            "metric = \"speed\"",
            "unknown metric 'speed'",
        ),
        ("kind = \"ratio\"", "kind = \"dozens\"", "kind 'dozens'"),
        ("number = 2.74", "number = 1", "use 'equal'"),
        ("number = 2.74", "number = [3, 2]", "needs number = N"),
        (
            "kind = \"ratio\"\nnumber = 2.74",
            "kind = \"range\"\nnumber = [3, 2]",
            "LO < HI",
        ),
        (
            "kind = \"ratio\"",
            "kind = \"added\"",
            "does not fit compare 'ratio'",
        ),
        (
            "basis = \"independent\"",
            "basis = \"fitted\"",
            "'fitted' with fit",
        ),
        (
            "basis = \"independent\"",
            "basis = \"hoped\"",
            "basis 'hoped'",
        ),
        (
            "basis = \"independent\"",
            "basis = \"independent\"\nholds_if = \"1.0..5.0\"",
            "give tolerance_reason",
        ),
        (
            "basis = \"independent\"",
            "basis = \"independent\"\nholds_if = \"about 2\"\ntolerance_reason = \"r\"",
            "holds_if 'about 2'",
        ),
        (
            "basis = \"independent\"",
            "basis = \"independent\"\nholds_if = \"5..4\"\ntolerance_reason = \"r\"",
            "an empty range",
        ),
        (
            "experiment = \"fig10\"",
            "experiment = \"fig99\"",
            "no experiment 'fig99'",
        ),
        ("compare = \"ratio\"", "compare = \"value\"", "a value none"),
        (
            "compare = \"ratio\"",
            "compare = \"times\"",
            "compare 'times'",
        ),
    ] {
        let text = ONE.replace(from, to);
        let err = claims::load(&text, "c.toml", &all).unwrap_err();
        assert!(err.contains(want), "{err}");
        assert!(err.starts_with("c.toml"), "{err}");
        assert!(!err.contains('\n'), "{err}");
    }
    let err = claims::load("[[claim]]\nexperiment = 3\n", "c.toml", &all).unwrap_err();
    assert!(err.starts_with("c.toml:2"), "{err}");
}

const TREND: &str = r#"
[[claim]]
experiment = "fig22"
claim = "the penalty shrinks"
source = "s"
metric = "op_lat_us:rocks/read"
run = "adaptive/*"
baseline = "cint/*"
compare = "ratio"
groups = ["readrandom-4", "readrandom-8"]
over = "trend"
paper = "smaller"
kind = "less"
basis = "independent"
"#;

#[test]
fn a_trend_is_the_last_groups_ratio_over_the_firsts_and_needs_its_groups() {
    let all = repro::figures::all();
    let claim = &claims::load(TREND, "c.toml", &all).unwrap()[0];
    assert!(
        claim.formula().contains("(readrandom-4, readrandom-8)"),
        "{}",
        claim.formula()
    );
    let mut results = repro::run::Results::default();
    let add = |results: &mut repro::run::Results, key: &str, mean_us: f64| {
        let mut report = report::RunReport {
            duration_ns: 1_000_000_000,
            ..Default::default()
        };
        report.apps = Some(report::AppsReport {
            ops: vec![report::OpReport {
                instance: 0,
                name: "rocks".into(),
                kind: "read".into(),
                ops: 1,
                lat: report::LatencyStats {
                    samples: 1,
                    mean: mean_us * 1e3,
                    ..Default::default()
                },
                ..Default::default()
            }],
            ..Default::default()
        });
        results.add(repro::run::Outcome {
            experiment: "fig22",
            key: key.into(),
            mode: Mode::Sim,
            seed: 1,
            report,
        })
    };
    // A penalty of 1.5x at 4 threads, 1.2x at 8: 0.8.
    add(&mut results, "cint/readrandom-4", 20.0);
    add(&mut results, "adaptive/readrandom-4", 30.0);
    assert_eq!(claim.check(&results, Mode::Sim).verdict, Verdict::NotRun);
    add(&mut results, "cint/readrandom-8", 40.0);
    add(&mut results, "adaptive/readrandom-8", 48.0);
    let k = claim.check(&results, Mode::Sim);
    assert!((k.ours.unwrap() - 0.8).abs() < 1e-9, "{:?}", k.ours);
    assert_eq!(k.verdict, Verdict::Holds);
    for (from, to, want) in [
        (
            "groups = [\"readrandom-4\", \"readrandom-8\"]\n",
            "",
            "needs groups",
        ),
        (
            "\"readrandom-8\"]",
            "\"readrandom-16\"]",
            "no group 'readrandom-16'",
        ),
        ("\"readrandom-4\", ", "", "two at least"),
        ("over = \"trend\"", "over = \"slope\"", "over 'slope'"),
    ] {
        let err = claims::load(&TREND.replace(from, to), "c.toml", &all).unwrap_err();
        assert!(err.contains(want), "{err}");
        assert!(!err.contains('\n'), "{err}");
    }
}

#[test]
fn a_verdict_follows_the_tolerance_then_the_direction() {
    let all = repro::figures::all();
    let claim = &claims::load(ONE, "c.toml", &all).unwrap()[0];
    let mut results = repro::run::Results::default();
    let add = |results: &mut repro::run::Results, key: &str, irqs: u64| {
        results.add(repro::run::Outcome {
            experiment: "fig10",
            key: key.into(),
            mode: Mode::Sim,
            seed: 1,
            report: report::RunReport {
                duration_ns: 1_000_000_000,
                interrupts: irqs,
                ..Default::default()
            },
        })
    };
    assert_eq!(claim.check(&results, Mode::Sim).verdict, Verdict::NotRun);
    add(&mut results, "cint", 100);
    add(&mut results, "default", 274);
    let k = claim.check(&results, Mode::Sim);
    assert_eq!(k.verdict, Verdict::Holds);
    assert!((k.ours.unwrap() - 2.74).abs() < 1e-9);
    assert_eq!(claim.check(&results, Mode::Emu).verdict, Verdict::NotRun);
    let mut r2 = repro::run::Results::default();
    add(&mut r2, "cint", 100);
    // +80% against +174%: the direction, within 3x of the effect.
    add(&mut r2, "default", 180);
    assert_eq!(claim.check(&r2, Mode::Sim).verdict, Verdict::Qualitatively);
    // +20% is beyond 3x of it (issue 36 item 2: the band is on the effect).
    let mut r2b = repro::run::Results::default();
    add(&mut r2b, "cint", 100);
    add(&mut r2b, "default", 120);
    assert_eq!(claim.check(&r2b, Mode::Sim).verdict, Verdict::FarOff);
    let mut r3 = repro::run::Results::default();
    add(&mut r3, "cint", 100);
    add(&mut r3, "default", 90);
    assert_eq!(claim.check(&r3, Mode::Sim).verdict, Verdict::DoesNotHold);
    // No effect is no effect, not "qualitatively" 2.74x.
    let mut r4 = repro::run::Results::default();
    add(&mut r4, "cint", 100);
    add(&mut r4, "default", 101);
    assert_eq!(claim.check(&r4, Mode::Sim).verdict, Verdict::DoesNotHold);
    // 31.6x against 2.74x: the direction, but beyond 3x of the number.
    let mut r5 = repro::run::Results::default();
    add(&mut r5, "cint", 100);
    add(&mut r5, "default", 3160);
    assert_eq!(claim.check(&r5, Mode::Sim).verdict, Verdict::FarOff);
    // From nothing: infinite, which never holds (nor counts as a
    // direction), and is a word in JSON.
    let mut r6 = repro::run::Results::default();
    add(&mut r6, "cint", 0);
    add(&mut r6, "default", 10);
    let k = claim.check(&r6, Mode::Sim);
    assert_eq!(k.verdict, Verdict::DoesNotHold);
    assert!(k.ours_json().is_string());
    let mut r7 = repro::run::Results::default();
    add(&mut r7, "cint", 0);
    add(&mut r7, "default", 0);
    let k = claim.check(&r7, Mode::Sim);
    assert_eq!(k.verdict, Verdict::DoesNotHold);
    assert_eq!(k.ours_json(), "undefined (0 / 0)");
}

#[test]
fn the_spread_across_seeds_widens_the_clearance_and_identical_runs_stay_misses() {
    let all = repro::figures::all();
    let claim = &claims::load(ONE, "c.toml", &all).unwrap()[0];
    let add = |results: &mut repro::run::Results, key: &str, seed: u64, irqs: u64| {
        results.add(repro::run::Outcome {
            experiment: "fig10",
            key: key.into(),
            mode: Mode::Sim,
            seed,
            report: report::RunReport {
                duration_ns: 1_000_000_000,
                interrupts: irqs,
                ..Default::default()
            },
        })
    };
    // Mean 1.9 (inside 1.83..4.11), but the seeds say 1.0 and 2.8: the
    // clearance is 2 sd = 1.8, so the band starts at 2.8.
    let mut r = repro::run::Results::default();
    add(&mut r, "cint", 1, 100);
    add(&mut r, "cint", 2, 100);
    add(&mut r, "default", 1, 100);
    add(&mut r, "default", 2, 280);
    let k = claim.check(&r, Mode::Sim);
    assert!((k.spread - 0.9).abs() < 1e-9, "{}", k.spread);
    assert!((k.band.lo - 2.8).abs() < 1e-9, "{}", k.band);
    assert_ne!(k.verdict, Verdict::Holds);
    assert_eq!(k.basis, claims::Basis::Independent);
    assert!(!k.identical);
    // The same value in every seed: the model lacks the mechanism. The
    // claim stays independent, a miss (issue 36 item 1), flagged.
    let mut same = repro::run::Results::default();
    for seed in 1..=2 {
        add(&mut same, "cint", seed, 100 + seed);
        add(&mut same, "default", seed, 100 + seed);
    }
    let k = claim.check(&same, Mode::Sim);
    assert_eq!(k.basis, claims::Basis::Independent);
    assert!(k.identical);
    assert_eq!(k.verdict, Verdict::DoesNotHold);
    assert!(repro::write::identical_miss(claim, &k));
    let mut tally = repro::write::Tally::default();
    tally.add_checked(claim, &k);
    assert_eq!(tally.identical_misses, 1);
    assert!(
        tally.headline().contains("1 of the independent misses"),
        "{}",
        tally.headline()
    );
}

#[test]
fn only_names_known_experiments() {
    let err = repro::select(&["fig99".into()]).unwrap_err().to_string();
    assert!(err.contains("fig99") && err.contains("fig10"), "{err}");
    let picked = repro::select(&["fig12".into(), "fig8".into()]).unwrap();
    let ids: Vec<&str> = picked.iter().map(|e| e.id).collect();
    assert_eq!(ids, ["fig8", "fig12"], "in the paper's order");
}

#[test]
fn the_io_uring_experiment_runs_in_quick_mode_with_its_figure_and_claims() {
    // Issue 25 item 5: registered, every run simulated, every panel drawn
    // from every run, every claim given a verdict.
    let e = repro::select(&["ours-uring".to_string()])
        .unwrap()
        .remove(0);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let tally = small(&["ours-uring"], out);
    svg_ok(&out.join("figures/ours-uring-sim.svg"));
    let runs = std::fs::read_dir(out.join("runs/sim/ours-uring"))
        .unwrap()
        .count();
    assert_eq!(runs, e.runs.len() * 2);
    let shipped = claims::load(claims::SHIPPED, "claims.toml", &repro::figures::all()).unwrap();
    let ours = shipped
        .iter()
        .filter(|c| c.experiment == "ours-uring")
        .count();
    assert!(ours > 0);
    let all = tally.counts(None);
    assert_eq!(all[..4].iter().sum::<usize>(), ours);
    assert_eq!(all[4], 0, "none not run");
    // Every panel has a figure for every run (wake-ups from the
    // simulator's io_uring note included).
    let results = repro::run::run_all(
        std::slice::from_ref(&e),
        &Plan {
            modes: vec![Mode::Sim],
            sim_runtime: 50 * MS,
            sim_seeds: 1,
            emu_runtime: 100 * MS,
            emu_reps: 1,
        },
        &|_, _| Ok(()),
    )
    .unwrap();
    for p in &e.panels {
        for r in &e.runs {
            assert!(
                results.stat(e.id, &r.key, Mode::Sim, &p.metric).is_some(),
                "{} has no {}",
                r.key,
                p.metric
            );
        }
    }
    // The emulator applies io_uring's min-complete, min-wait and iopoll
    // (`run --uring`), not task-work nor DEFER_TASKRUN.
    for r in &e.runs {
        let emulated = !matches!(
            r.host_settings.uring,
            Some(host::uring::Strategy::TaskWork | host::uring::Strategy::DeferTaskrun)
        );
        assert_eq!(r.emulated(), emulated, "{}", r.key);
    }
}
