//! `sim::calibrate`: the host model against the paper's costs. The QD1
//! latencies are held by construction (the device profiles are Table 2's
//! latency minus the host's QD1 path), so they must come out; the shipped
//! host is the fit's, so a fit started from it must not find much better.

use sim::calibrate::{self, Setup};

#[test]
fn the_targets_run_and_the_qd1_latencies_match_table_2() {
    let t = calibrate::targets(&Setup::shipped().unwrap(), 50 * policy::MS).unwrap();
    assert_eq!(t.len(), 8);
    for x in &t {
        assert!(x.model.is_finite() && x.model > 0.0, "{x:?}");
        assert!(!x.source.is_empty());
    }
    let held: Vec<_> = t.iter().filter(|x| !x.fitted).collect();
    assert_eq!(held.len(), 2);
    for x in held {
        assert!((x.ratio() - 1.0).abs() < 0.05, "{x:?}");
    }
}

#[test]
fn the_device_means_are_table_2_minus_the_hosts_qd1_path() {
    let s = Setup::shipped().unwrap();
    let host = calibrate::qd1_host_ns(&s.host);
    // TOS Table 2: 10 us (Optane) and 80 us (P3700) end to end at QD1.
    assert_eq!(s.optane.read.mean + host, 10_000);
    assert_eq!(s.p3700.read.mean + host, 80_000);
}

#[test]
fn a_new_host_moves_the_device_means_and_holds_the_qd1_latency() {
    let s = Setup::shipped().unwrap();
    let mut host = s.host.clone();
    host.irq_entry += 2_000;
    let moved = s.with_host(host);
    let t = calibrate::targets(&moved, 50 * policy::MS).unwrap();
    let qd1 = t
        .iter()
        .find(|x| x.what.contains("Optane") && !x.fitted)
        .unwrap();
    assert!((qd1.ratio() - 1.0).abs() < 0.05, "{qd1:?}");
    // And the interrupt's own cost shows in Fig 4's target.
    let fig4 = t.iter().find(|x| x.source.contains("Fig 4")).unwrap();
    assert!(fig4.model > 2_000.0, "{fig4:?}");
}

#[test]
fn a_short_fit_from_the_shipped_host_does_not_get_worse() {
    let s = Setup::shipped().unwrap();
    let fit = calibrate::fit(&s, 30 * policy::MS, 12, &mut |_, _, _| {}).unwrap();
    let (before, after) = (
        calibrate::objective(&fit.before),
        calibrate::objective(&fit.after),
    );
    assert!(after <= before + 1e-9, "{before} -> {after}");
    assert_eq!(fit.constants.len(), calibrate::FREE.len());
    assert!(fit.evaluations <= 12 + calibrate::FREE.len() + 1);
}
