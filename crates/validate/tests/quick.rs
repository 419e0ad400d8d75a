//! `validate --quick` run for real (issue 37 item 5): the table's
//! structure, errors computed from what was measured and predicted, and
//! the emulator's runs beside (item 6), the machine left as found (no zram or loop device of ours, tracefs
//! mounted or not as before, no scratch directory). Needs root, fio and
//! losetup (scripts/setup installs them); it fails naming what is missing.

use validate::table::{self, METRICS};

#[test]
fn quick_validation_measures_predicts_and_leaves_the_machine_as_found() {
    let before = validate::machine_state();
    let out = tempfile::tempdir().unwrap();
    let v = validate::run(
        &validate::Options {
            quick: true,
            // The default: this machine measured at the start.
            host: None,
            out: out.path().to_path_buf(),
            emu: true,
        },
        "validate --quick (test)",
        &mut |l| eprintln!("{l}"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let after = validate::machine_state();
    assert_eq!(before, after, "validate left the machine changed");

    let design = validate::design::quick();
    assert_eq!(v.rows.len(), design.len());
    assert_eq!(v.devices.len(), 3, "one fitted device per target");
    for (r, p) in v.rows.iter().zip(&design) {
        assert_eq!(&r.point, p);
        let m = &r.measured.metrics;
        // What fio reported hangs together: its I/Os over each job's own
        // run time give its IOPS, latencies ordered.
        let rate = r.measured.ios as f64 * f64::from(p.numjobs) / (r.measured.job_runtime_ms / 1e3);
        assert!(
            m.iops > 0.5 * rate && m.iops < 2.0 * rate,
            "{}: {} IOPS, {rate} by count",
            r.name,
            m.iops
        );
        assert!(
            m.mean > 0.0 && m.p50 > 0.0 && m.p50 <= m.p99 && m.p99 <= m.p999,
            "{}: {m:?}",
            r.name
        );
        assert!(m.cpu_per_io > 0.0 && m.irq_per_io.is_finite() && m.irq_per_io >= 0.0);
        // The disk raises interrupts for its completions; zram has no
        // interrupt line at all.
        match p.target {
            validate::design::Target::Disk => {
                assert!(!r.measured.vectors.is_empty());
                assert!(
                    m.irq_per_io > 0.1,
                    "{}: {} interrupts per I/O",
                    r.name,
                    m.irq_per_io
                );
            }
            validate::design::Target::Zram => {
                assert!(r.measured.vectors.is_empty());
                assert_eq!(m.irq_per_io, 0.0);
            }
            validate::design::Target::Loop => {}
        }
        assert_eq!(r.errors.len(), METRICS.len());
        match &r.predicted {
            None => {
                assert!(!p.held_out, "{}: held out but not predicted", r.name);
                assert!(r.errors.iter().all(Option::is_none));
                assert!(r.emulated.is_none() && r.emu_errors.iter().all(Option::is_none));
            }
            Some(pm) => {
                assert!(p.held_out, "{}: fitted but predicted", r.name);
                assert!(pm.iops > 0.0 && pm.mean > 0.0 && pm.cpu_per_io > 0.0);
                // The emulator ran it too (item 6), on the same device.
                let em = r.emulated.as_ref().expect("held out: emulated");
                assert!(em.iops > 0.0 && em.mean > 0.0);
                for (model, errors) in [(pm, &r.errors), (em, &r.emu_errors)] {
                    for (k, e) in METRICS.iter().zip(errors) {
                        let (mv, pv) = (table::value(m, k.key), table::value(model, k.key));
                        match e {
                            None => assert_eq!(mv, 0.0, "{}: {} has no error", r.name, k.key),
                            Some(e) => {
                                assert!(e.is_finite());
                                assert!((e - (pv - mv) / mv).abs() < 1e-9, "{}: {}", r.name, k.key);
                            }
                        }
                    }
                }
            }
        }
    }
    // The summary: every metric, over the held-out points that have an
    // error, its median no more than its worst.
    assert_eq!(v.summary.len(), METRICS.len());
    assert_eq!(v.emu_summary.len(), METRICS.len());
    for (i, s) in v.summary.iter().enumerate() {
        let n = v.rows.iter().filter(|r| r.errors[i].is_some()).count();
        assert_eq!(s.points, n, "{}", s.metric.key);
        if n > 0 {
            let (m, w) = (s.median_abs.unwrap(), s.worst_abs.unwrap());
            assert!(m.is_finite() && m <= w);
        }
    }
    // IOPS, latency and CPU are never 0 measured: all three held out count.
    assert_eq!(v.summary[0].points, 3);

    validate::write::all(&v, out.path()).unwrap();
    let md = std::fs::read_to_string(out.path().join("validation.md")).unwrap();
    for r in v.rows.iter().filter(|r| r.point.held_out) {
        assert!(
            md.contains(&format!("| {} |", r.name)),
            "{} not in the table",
            r.name
        );
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("validation.json")).unwrap())
            .unwrap();
    assert_eq!(json["rows"].as_array().unwrap().len(), v.rows.len());
    // The host was measured here: its profile is in the output directory,
    // loads in the simulator, and the report names it and shows its table.
    let host_file = out.path().join(validate::HOST_FILE);
    sim::HostProfile::load(&host_file.display().to_string())
        .unwrap_or_else(|e| panic!("{}: {e}", host_file.display()));
    assert!(
        v.host.contains(&host_file.display().to_string()),
        "{}",
        v.host
    );
    assert!(v.host_table.is_some());
    assert!(md.contains("## The host, measured at the start"));
    let html = std::fs::read_to_string(out.path().join("validation.html")).unwrap();
    assert_eq!(html.matches("<svg").count(), METRICS.len());
}
