//! Parameter validation through the public `build`: values a strategy cannot
//! honour are refused with the option named, the boundaries are accepted,
//! and defaults take effect.

use policy::{build, PolicySpec, SpecError, US};

fn refused(spec: &PolicySpec, option: &str) {
    match build(spec) {
        Err(e @ SpecError::BadValue { .. }) => {
            assert!(e.to_string().contains(&format!("--{option}")), "{e}")
        }
        Err(e) => panic!("{spec:?}: refused for another reason: {e}"),
        Ok(_) => panic!("{spec:?}: accepted"),
    }
}

#[test]
fn nvme_threshold_is_1_to_256() {
    for name in ["nvme", "nvme100"] {
        let with = |thr| PolicySpec {
            thr: Some(thr),
            ..PolicySpec::named(name)
        };
        assert!(build(&with(1)).is_ok(), "{name}");
        assert!(build(&with(256)).is_ok(), "{name}: NVMe's largest");
        refused(&with(257), "thr");
        refused(&with(0), "thr");
    }
}

#[test]
fn nvme_takes_the_feature_value_or_time_and_threshold_not_both() {
    let feature = || PolicySpec {
        nvme_feature: Some(0x011f),
        ..PolicySpec::named("nvme")
    };
    assert!(build(&feature()).is_ok());
    let with_thr = PolicySpec {
        thr: Some(8),
        ..feature()
    };
    refused(&with_thr, "nvme-feature");
    let with_time = PolicySpec {
        aggr_time: Some(200 * US),
        ..feature()
    };
    refused(&with_time, "nvme-feature");
}

#[test]
fn nvme_aggregation_time_defaults_to_100us() {
    let mut p = build(&PolicySpec::named("nvme")).unwrap();
    assert_eq!(
        p.completed(0, policy::Completion::ok(1, policy::Marks::NONE)),
        None
    );
    assert_eq!(p.deadline(), Some(100 * US));
    assert_eq!(p.delay_bound(), 100 * US);
}

#[test]
fn dynamic_a_must_be_a_positive_finite_number() {
    let with = |a| PolicySpec {
        a: Some(a),
        ..PolicySpec::named("dynamic")
    };
    assert!(build(&with(0.1)).is_ok());
    assert!(build(&with(f64::MIN_POSITIVE)).is_ok());
    for a in [0.0, -0.1, f64::INFINITY, f64::NAN] {
        refused(&with(a), "a");
    }
}

#[test]
fn dynamic_delta_unit_must_be_more_than_zero() {
    let with = |unit| PolicySpec {
        delta_unit: Some(unit),
        ..PolicySpec::named("dynamic")
    };
    assert!(build(&with(1)).is_ok());
    refused(&with(0), "delta-unit");
}

#[test]
fn storm_protection_needs_at_least_one_interrupt_a_second() {
    for name in ["cint", "dynamic"] {
        let with = |rate| PolicySpec {
            max_irq_rate: Some(rate),
            ..PolicySpec::named(name)
        };
        assert!(build(&with(1)).is_ok(), "{name}");
        refused(&with(0), "max-irq-rate");
    }
}
