//! cint with Urgent-storm protection (TOS 4.3): what changes when the storm
//! throttles it, what does not before, and the delay it promises.

use policy::cint::{BarrierMode, Cint, CintConfig, OooCount};
use policy::{Completion, DeltaRule, Interrupt, Marks, Policy, US};

/// T at a 100K/s limit: throttled interrupts aim at 90% of it, 1 s / 90K.
const T_100K: u64 = 11_112;

fn cint(max_irq_rate: Option<u64>) -> Cint {
    Cint::new(
        "cint",
        CintConfig {
            delta: DeltaRule::Fixed(6 * US),
            thr: 32,
            ooo: true,
            barrier: BarrierMode::Relaxed,
            max_irq_rate,
            ooo_count: OooCount::Prose,
            urgent_interval_min: None,
        },
    )
}

fn urgent(id: u64) -> Completion {
    Completion::ok(id, Marks::URGENT)
}

#[test]
fn storm_protection_changes_nothing_before_a_storm() {
    let mut c = cint(Some(100_000));
    assert_eq!(c.completed(0, urgent(1)), Some(Interrupt::UrgentOnly));
    assert!(!c.throttled());
    // An unmarked completion waits delta, not the throttled delta' = T.
    assert_eq!(c.completed(100 * US, Completion::ok(2, Marks::NONE)), None);
    assert_eq!(c.deadline(), Some(106 * US));
    assert_eq!(c.deadline_reached(106 * US), Some(Interrupt::Full));
    // And thr is 32, however fast unmarked completions come.
    let t0 = 200 * US;
    for i in 1..32 {
        assert_eq!(
            c.completed(t0 + i * 100, Completion::ok(i, Marks::NONE)),
            None
        );
    }
    assert_eq!(
        c.completed(t0 + 32 * 100, Completion::ok(32, Marks::NONE)),
        Some(Interrupt::Full)
    );
    assert!(!c.throttled());
}

#[test]
fn a_storm_throttles_cint_and_then_urgent_completions_are_coalesced() {
    let mut c = cint(Some(100_000));
    assert_eq!(c.completed(0, urgent(1)), Some(Interrupt::UrgentOnly));
    // 5 us later another Urgent: 200K/s asked for, over the limit.
    assert_eq!(c.completed(5 * US, urgent(2)), None, "demoted, coalesced");
    assert!(c.throttled());
    // It waits delta' = max(delta, T), and thr' = ceil(T / 5 us) = 3
    // completions fire at once.
    assert_eq!(c.deadline(), Some(5 * US + T_100K));
    assert_eq!(c.completed(10 * US, urgent(3)), Some(Interrupt::Full));
}

#[test]
fn without_storm_protection_cint_is_never_throttled() {
    let mut c = cint(None);
    for i in 0..1_000 {
        assert!(c.completed(i * 100, urgent(i)).is_some(), "fires at once");
        assert!(!c.throttled());
    }
}

#[test]
fn cint_delay_bound_is_thr_minus_one_deltas() {
    // The first of a burst waits while 31 more each extend the timeout by
    // delta, and the 32nd fires: 31 x 6 us.
    assert_eq!(cint(None).delay_bound(), 31 * 6 * US);
}

#[test]
fn throttled_cint_delay_bound_is_255_retuned_deltas() {
    // Throttled, thr' can reach 256 (NVMe's largest threshold) and each of
    // the 255 later completions can extend the timeout by delta' = T.
    assert_eq!(cint(Some(100_000)).delay_bound(), 255 * T_100K);
}
