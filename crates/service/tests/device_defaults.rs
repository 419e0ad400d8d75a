//! The device profile's tuned delta and thr (TOS 5.2) as defaults for the
//! strategies that take them, and only for those.

use policy::PolicySpec;
use service::{with_device_defaults, DeviceProfile};

fn device(name: &str) -> DeviceProfile {
    DeviceProfile::load(name).unwrap()
}

#[test]
fn p3700_gives_cint_and_adaptive_its_delta() {
    let p3700 = device("p3700");
    for name in ["cint", "adaptive"] {
        let spec = with_device_defaults(PolicySpec::named(name), &p3700);
        assert_eq!(spec.delta, Some(15_000), "{name}");
        assert_eq!(spec.thr, Some(p3700.default_thr), "{name}");
        policy::build(&spec).unwrap();
    }
}

#[test]
fn explicit_options_win_one_by_one() {
    let spec = PolicySpec {
        thr: Some(8),
        ..PolicySpec::named("cint")
    };
    let spec = with_device_defaults(spec, &device("p3700"));
    assert_eq!(spec.thr, Some(8));
    assert_eq!(spec.delta, Some(15_000));
    let spec = PolicySpec {
        delta: Some(2_000),
        ..PolicySpec::named("adaptive")
    };
    assert_eq!(
        with_device_defaults(spec, &device("p3700")).delta,
        Some(2_000)
    );
}

#[test]
fn strategies_that_refuse_an_option_do_not_get_it() {
    let p3700 = device("p3700");
    let dynamic = with_device_defaults(PolicySpec::named("dynamic"), &p3700);
    assert_eq!(dynamic.delta, None, "dynamic computes its own delta");
    assert_eq!(dynamic.thr, Some(p3700.default_thr));
    policy::build(&dynamic).unwrap();
    for name in ["default", "nvme", "nvme100", "nvme20", "nvme6", "dim"] {
        let spec = with_device_defaults(PolicySpec::named(name), &p3700);
        assert_eq!(spec, PolicySpec::named(name), "{name}");
        policy::build(&spec).unwrap();
    }
}
