//! FastResponse's experiments (issue 15): they build, their host settings
//! reach the simulator, and the new metrics read the report.

use policy::MS;
use report::{IoPath, JobPath, JobReport, Mode, QueueDepth, RunReport};
use repro::claims;
use repro::experiment::FR_HOST;
use repro::metric::Metric;
use repro::run::{run_all, Plan, Results};

const FR: &[&str] = &[
    "fr-fig4",
    "fr-fig6",
    "fr-fig12",
    "fr-fig14",
    "fr-fig15",
    "fr-fig16",
    "fr-fig18",
    "fr-fig19",
    "fr-fig19b",
    "tos-fig5",
    "ours-fr-cint",
];

#[test]
fn fastresponse_experiments_build_and_their_claims_name_their_runs() {
    let ids: Vec<String> = FR.iter().map(|s| s.to_string()).collect();
    let picked = repro::select(&ids).unwrap();
    assert_eq!(picked.len(), FR.len());
    for e in &picked {
        assert!(!e.runs.is_empty(), "{}", e.id);
        for r in &e.runs {
            assert!(e.workload(r.workload).is_some(), "{} {}", e.id, r.key);
            if e.id.starts_with("fr-") {
                assert_eq!(r.host, FR_HOST, "{} {}", e.id, r.key);
                assert!(
                    !r.emulated(),
                    "{} {}: FR's runs are the simulator's",
                    e.id,
                    r.key
                );
            }
        }
    }
    let all = repro::figures::all();
    let claims = claims::load(claims::SHIPPED, "claims.toml", &all).unwrap();
    let fr = claims
        .iter()
        .filter(|c| c.experiment.starts_with("fr-"))
        .count();
    assert!(fr >= 10, "at least 10 FastResponse claims, got {fr}");
}

#[test]
fn fastresponse_systems_are_the_simulators_host_settings() {
    let b = repro::experiment::fastresponse("b-opt").unwrap();
    assert_eq!(b.block_scheduler, Some("ld".parse().unwrap()));
    assert_eq!(b.wakeup, Some(sim::Wakeup::Vanilla));
    let s = repro::experiment::fastresponse("selectisr").unwrap();
    assert_eq!(s.completion, Some(host::poll::Mode::SelectIsr));
    assert_eq!(s.block_scheduler, None);
    let bs = repro::experiment::fastresponse("bs-opt").unwrap();
    // The authors' patch (CGCL-codes/FastResponse e78438aa7), not the prose.
    assert_eq!(bs.wakeup, Some(sim::Wakeup::BoostCode));
    assert_eq!(
        bs.describe(),
        "--block-scheduler ld,tokens=8,split=32k --wakeup boost-code"
    );
    assert!(repro::experiment::fastresponse("bsj-opt").is_none());
}

/// fr-fig16's runs: under B-Opt the device holds at most LD's 8 tokens of
/// TeraSort's pieces plus readrandom's one critical get; under Vanilla
/// nothing bounds it but the workload (a whole spill).
#[test]
fn b_opt_bounds_the_device_queue_by_its_tokens_plus_critical_requests() {
    let e = repro::select(&["fr-fig16".into()]).unwrap();
    let plan = Plan {
        sim_seeds: 1,
        sim_runtime: 200 * MS,
        ..Plan::quick(vec![Mode::Sim])
    };
    let results: Results = run_all(&e, &plan, &|_, _| Ok(())).unwrap();
    let stat = |key: &str, m: &str| {
        results
            .stat("fr-fig16", key, Mode::Sim, &Metric::parse(m).unwrap())
            .unwrap()
            .mean
    };
    let b_max = stat("b-opt/terasort", "qd_max");
    assert!(b_max <= 8.0 + 1.0, "b-opt max queue depth {b_max}");
    assert!(b_max >= 2.0, "TeraSort's pieces reach the device: {b_max}");
    // The request path was measured for the critical job.
    assert!(stat("b-opt/terasort", "t_dev_us:ls-readrandom") > 5.0);
    // Vanilla bounds nothing: a spill's 640 writes (to-terasort-spill,
    // iodepth 640) are all at the device at once.
    let v_max = stat("vanilla/terasort", "qd_max");
    assert!(v_max > 600.0, "vanilla max queue depth {v_max}");
    assert!(stat("vanilla/terasort", "qd_mean") > stat("b-opt/terasort", "qd_mean"));
}

#[test]
fn the_new_metrics_read_the_report() {
    let job = |name: &str, ops: u64| JobReport {
        name: name.into(),
        read: report::DirReport {
            io_ops: ops,
            io_bytes: ops * 4096,
            ..Default::default()
        },
        ..Default::default()
    };
    let r = RunReport {
        duration_ns: 1_000_000_000,
        jobs: vec![job("ls", 100), job("ls", 300), job("to", 10)],
        io_path: Some(IoPath {
            jobs: vec![
                JobPath {
                    requests: 100,
                    t_dev_mean_ns: 10_000.0,
                    t_sched_mean_ns: 2_000.0,
                    ..Default::default()
                },
                JobPath {
                    requests: 300,
                    t_dev_mean_ns: 20_000.0,
                    t_sched_mean_ns: 0.0,
                    ..Default::default()
                },
                JobPath::default(),
            ],
            device_queue: QueueDepth {
                mean: 1.5,
                p99: 9,
                max: 12,
            },
        }),
        ..Default::default()
    };
    let v = |s: &str| Metric::parse(s).unwrap().of(&r);
    // Weighted by requests: (100 * 10 + 300 * 20) / 400 us.
    assert_eq!(v("t_dev_us:ls"), Some(17.5));
    assert_eq!(v("t_sched_us:ls"), Some(0.5));
    assert_eq!(v("t_dev_us:to"), None, "no requests measured");
    assert_eq!(v("qd_mean"), Some(1.5));
    assert_eq!(v("qd_p99"), Some(9.0));
    assert_eq!(v("qd_max"), Some(12.0));
    assert_eq!(v("total_mbs"), Some(410.0 * 4096.0 / 1e6));
    let none = RunReport::default();
    assert_eq!(Metric::QdMax.of(&none), None);
    // The JSON carries them under cinterrupts.io_path.
    let json = report::json::render(&r);
    let p = &json["cinterrupts"]["run"]["io_path"];
    assert_eq!(p["device_queue_depth"]["max"], 12);
    assert_eq!(p["jobs"][1]["t_dev_mean_ns"], 20_000.0);
    assert_eq!(p["jobs"][0]["jobname"], "ls");
}
