//! Names users read: the modes as `describe` reports them (the spelling the
//! CLI accepts) and the interrupt kinds as `cinterrupts coalesce` writes them.

use policy::cint::BarrierMode;
use policy::dim::DimMode;
use policy::{describe, Interrupt, PolicySpec};

#[test]
fn describe_names_the_barrier_mode_as_the_cli_spells_it() {
    for (mode, name) in [
        (BarrierMode::Relaxed, "barrier=relaxed"),
        (BarrierMode::Strict, "barrier=strict"),
    ] {
        let spec = PolicySpec {
            barrier: Some(mode),
            ..PolicySpec::named("cint")
        };
        let text = describe(&spec);
        assert!(text.split(' ').any(|w| w == name), "{text}");
    }
}

#[test]
fn describe_names_the_dim_mode_as_the_cli_spells_it() {
    for (mode, name) in [
        (DimMode::Eqe, "dim-mode=eqe"),
        (DimMode::Cqe, "dim-mode=cqe"),
    ] {
        let spec = PolicySpec {
            dim_mode: Some(mode),
            ..PolicySpec::named("dim")
        };
        let text = describe(&spec);
        assert!(text.split(' ').any(|w| w == name), "{text}");
    }
}

#[test]
fn interrupt_kinds_are_spelled_as_coalesce_writes_them() {
    assert_eq!(Interrupt::Full.as_str(), "full");
    assert_eq!(Interrupt::UrgentOnly.as_str(), "urgent");
}
