//! FastResponse's synchronous-write experiments (FR Figs 4b, 5b, 13, 14b,
//! 15b): they build, their systems reach the simulator's journal, BSJ-Opt's
//! fsyncs never wait for D2 or JBD2, and the fsync metrics read the report.

use policy::MS;
use report::{FsyncBreakdown, JobReport, LatencyStats, Mode, RunReport, SyncReport};
use repro::claims;
use repro::experiment::FR_HOST;
use repro::metric::Metric;
use repro::run::{run_all, Plan, Results};

const FSYNC: &[&str] = &["fr-fig4b", "fr-fig13", "fr-fig14b", "fr-fig15b"];

#[test]
fn the_fsync_experiments_build_and_have_claims() {
    let ids: Vec<String> = FSYNC.iter().map(|s| s.to_string()).collect();
    let picked = repro::select(&ids).unwrap();
    assert_eq!(picked.len(), FSYNC.len());
    for e in &picked {
        assert!(!e.runs.is_empty(), "{}", e.id);
        for r in &e.runs {
            let w = e.workload(r.workload).expect("the run's workload");
            assert!(w.text.contains("fsync=1"), "{} {}: fillsync", e.id, r.key);
            assert_eq!(r.host, FR_HOST, "{} {}", e.id, r.key);
            assert!(!r.emulated(), "{} {}", e.id, r.key);
            let want = if r.system == "bsj-opt" {
                sim::Journal::Fjournal
            } else {
                sim::Journal::Ordered
            };
            assert_eq!(r.host_settings.journal, Some(want), "{} {}", e.id, r.key);
        }
    }
    let all = repro::figures::all();
    let claims = claims::load(claims::SHIPPED, "claims.toml", &all).unwrap();
    for id in FSYNC {
        assert!(
            claims.iter().any(|c| c.experiment == *id),
            "{id} has no claim"
        );
    }
}

#[test]
fn the_write_path_systems_are_fr_4_4s() {
    let fs = |s: &str| repro::experiment::fastresponse_fsync(s).unwrap();
    // Vanilla: JBD2 as Linux has it.
    assert_eq!(fs("vanilla").jbd2_critical, Some(false));
    assert_eq!(fs("vanilla").journal, Some(sim::Journal::Ordered));
    // "we configure JBD2 as a critical process in B-Opt, BS-Opt, and
    // SelectISR" (FR 4.4).
    for s in ["selectisr", "b-opt", "bs-opt"] {
        assert_eq!(fs(s).jbd2_critical, Some(true), "{s}");
        assert_eq!(fs(s).journal, Some(sim::Journal::Ordered), "{s}");
        let read = repro::experiment::fastresponse(s).unwrap();
        assert_eq!(fs(s).block_scheduler, read.block_scheduler, "{s}");
        assert_eq!(fs(s).completion, read.completion, "{s}");
        assert_eq!(fs(s).wakeup, read.wakeup, "{s}");
        // FR 4.4: SelectISR polls the fsync's I/Os; the others take interrupts.
        assert_eq!(
            fs(s).fsync_io_polls,
            (s == "selectisr").then_some(true),
            "{s}"
        );
    }
    // BSJ-Opt: BS-Opt with fjournaling.
    let bsj = fs("bsj-opt");
    assert_eq!(bsj.journal, Some(sim::Journal::Fjournal));
    assert_eq!(bsj.wakeup, Some(sim::Wakeup::BoostCode));
    assert_eq!(
        bsj.describe(),
        "--block-scheduler ld,tokens=8,split=32k --wakeup boost-code --journal fjournal --jbd2-critical"
    );
    assert!(repro::experiment::fastresponse_fsync("nosuch").is_none());
    // The read path's systems are unchanged.
    assert_eq!(
        repro::experiment::fastresponse("bs-opt").unwrap().journal,
        None
    );
}

/// fr-fig15b's Vanilla and BSJ-Opt runs beside Bayes, shortened: BSJ-Opt's
/// fsyncs write no D2 and wake no JBD2 (two switches per fsync: the
/// caller's sleeps on its D1 and its f-transaction), Vanilla's do both.
#[test]
fn bsj_opt_fsyncs_wait_for_no_d2_and_no_jbd2() {
    let mut e = repro::select(&["fr-fig15b".into()]).unwrap();
    for x in &mut e {
        x.runs
            .retain(|r| r.key == "bsj-opt/bayes" || r.key == "vanilla/bayes");
        for r in &mut x.runs {
            r.min_runtime = None;
        }
    }
    assert_eq!(e[0].runs.len(), 2);
    let plan = Plan {
        sim_seeds: 1,
        sim_runtime: 300 * MS,
        ..Plan::quick(vec![Mode::Sim])
    };
    let results: Results = run_all(&e, &plan, &|_, _| Ok(())).unwrap();
    let stat = |key: &str, m: &str| {
        results
            .stat("fr-fig15b", key, Mode::Sim, &Metric::parse(m).unwrap())
            .unwrap()
            .mean
    };
    assert_eq!(stat("bsj-opt/bayes", "t_d2_us:ls-fillsync"), 0.0);
    assert_eq!(stat("bsj-opt/bayes", "switches_per_fsync:ls-fillsync"), 2.0);
    assert_eq!(stat("bsj-opt/bayes", "ios_per_fsync:ls-fillsync"), 3.0);
    let notes = &results.reports("fr-fig15b", "bsj-opt/bayes", Mode::Sim)[0].notes;
    assert!(
        notes
            .iter()
            .any(|n| n.contains("fjournal") && n.contains(" 0 context switch(es) of JBD2")),
        "{notes:?}"
    );
    // Vanilla: Bayes's buffered data goes out as D2, JBD2 wakes.
    assert!(stat("vanilla/bayes", "t_d2_us:ls-fillsync") > 0.0);
    assert!(stat("vanilla/bayes", "switches_per_fsync:ls-fillsync") >= 5.0);
    assert!(
        stat("bsj-opt/bayes", "put_us:ls-fillsync") < stat("vanilla/bayes", "put_us:ls-fillsync")
    );
}

#[test]
fn the_fsync_metrics_read_the_json_the_simulator_writes() {
    let lat = |mean: f64, p99: u64| LatencyStats {
        samples: 10,
        mean,
        max: p99,
        percentiles: vec![(99.0, p99), (99.9, p99)],
        ..LatencyStats::default()
    };
    let r = RunReport {
        duration_ns: 1_000_000_000,
        jobs: vec![JobReport {
            name: "ls-fillsync".into(),
            write: report::DirReport {
                io_ops: 10,
                io_bytes: 40960,
                clat: lat(2_000.0, 3_000),
                ..Default::default()
            },
            sync: Some(SyncReport {
                lat: lat(40_000.0, 90_000),
                breakdown: FsyncBreakdown {
                    journal: "ordered".into(),
                    fsyncs: 10,
                    d1_us: 7.5,
                    d2_us: 20.0,
                    jd_us: 13.0,
                    jc_us: 7.0,
                    sched_us: 9.0,
                    switches_per_fsync: 5.0,
                    ios_per_fsync: 4.0,
                },
            }),
            ..Default::default()
        }],
        ..Default::default()
    };
    let v = |s: &str| Metric::parse(s).unwrap().of(&r).unwrap();
    assert_eq!(v("sync_lat_us:ls-fillsync"), 40.0);
    assert_eq!(v("put_us:ls-fillsync"), 42.0);
    assert_eq!(v("sync_p99_us:ls-fillsync"), 90.0);
    assert_eq!(v("t_d2_us:ls-fillsync"), 20.0);
    assert_eq!(v("fsync_sched_us:ls-fillsync"), 9.0);
    // The same numbers where the JSON puts them: fio's jobs[].sync.lat_ns
    // and our cinterrupts.fsync[].
    let json = report::json::render(&r);
    let job = &json["jobs"][0];
    assert_eq!(job["sync"]["total_ios"], 10);
    assert_eq!(job["sync"]["lat_ns"]["mean"], 40_000.0);
    let f = &json["cinterrupts"]["run"]["fsync"][0];
    assert_eq!(f["jobname"], "ls-fillsync");
    for (key, want) in [
        ("d1_us", 7.5),
        ("d2_us", 20.0),
        ("jd_us", 13.0),
        ("jc_us", 7.0),
        ("sched_us", 9.0),
        ("switches_per_fsync", 5.0),
        ("ios_per_fsync", 4.0),
    ] {
        assert_eq!(f[key], want, "{key}");
    }
}
