//! Properties: no input makes the parser panic; units round-trip.

use jobs::units::{parse_duration, parse_rate, parse_size};
use jobs::{known_options, parse_str};
use proptest::prelude::*;

fn option_line() -> impl Strategy<Value = String> {
    let names: Vec<&'static str> = known_options()
        .iter()
        .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()))
        .collect();
    let values = prop_oneof![
        Just(String::new()),
        "[0-9]{1,6}[kKmMgGtTsu]?[bs]?".prop_map(|s| s),
        Just("libaio".to_string()),
        Just("psync".to_string()),
        Just("randread".to_string()),
        Just("${X}".to_string()),
        "\\PC{0,12}",
    ];
    (
        proptest::sample::select(names),
        proptest::option::of(values),
    )
        .prop_map(|(n, v)| match v {
            Some(v) => format!("{n}={v}"),
            None => n.to_string(),
        })
}

fn job_file() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        3 => option_line(),
        1 => Just("[global]".to_string()),
        1 => "\\[[a-z]{0,4}\\]",
        1 => "[;#] ?\\PC{0,10}",
        1 => "\\PC{0,20}",
    ];
    proptest::collection::vec(line, 0..20).prop_map(|ls| ls.join("\n"))
}

const SIZE_UNITS: [(&str, u64); 9] = [
    ("", 1),
    ("k", 1 << 10),
    ("K", 1 << 10),
    ("kb", 1 << 10),
    ("KiB", 1 << 10),
    ("m", 1 << 20),
    ("M", 1 << 20),
    ("g", 1 << 30),
    ("t", 1 << 40),
];

const TIME_UNITS: [(&str, u64); 7] = [
    ("ns", 1),
    ("us", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
    ("usec", 1_000),
];

proptest! {
    #[test]
    fn parse_str_never_panics_on_any_text(text in "\\PC{0,200}") {
        let _ = parse_str(&text, "p.fio", &|_| None);
    }

    #[test]
    fn parse_str_never_panics_on_job_like_text(text in job_file()) {
        let env = |k: &str| (k == "X").then(|| "4k".to_string());
        match parse_str(&text, "p.fio", &env) {
            Ok(f) => {
                for j in &f.jobs {
                    prop_assert!(j.iodepth >= 1);
                    prop_assert!(j.iodepth_batch_submit >= 1 && j.iodepth_batch_submit <= j.iodepth);
                    prop_assert!(j.iodepth_batch_complete_max >= j.iodepth_batch_complete_min);
                    prop_assert!(j.bs_read > 0 && j.bs_write > 0);
                    prop_assert!(j.rwmixread <= 100);
                    prop_assert!(!j.time_based || j.runtime.is_some());
                    prop_assert!(!j.ioengine.is_sync() || j.iodepth == 1);
                }
            }
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(!msg.contains('\n'), "multi-line error: {}", msg);
                prop_assert!(msg.starts_with("p.fio:"), "{}", msg);
            }
        }
    }

    #[test]
    fn sizes_round_trip(n in 0u64..1_000_000, unit in 0usize..SIZE_UNITS.len()) {
        let (suffix, mult) = SIZE_UNITS[unit];
        prop_assert_eq!(parse_size(&format!("{n}{suffix}")), Ok(n * mult));
    }

    #[test]
    fn sizes_overflow_is_an_error_not_a_wrap(n in (1u64 << 25)..u64::MAX) {
        let s = format!("{n}t");
        prop_assert!(parse_size(&s).is_err(), "{} accepted", s);
    }

    #[test]
    fn durations_round_trip(n in 0u64..100_000, unit in 0usize..TIME_UNITS.len()) {
        let (suffix, ns) = TIME_UNITS[unit];
        prop_assert_eq!(parse_duration(&format!("{n}{suffix}"), None), Ok(n * ns));
    }

    #[test]
    fn bare_durations_use_the_default_unit(n in 0u64..1_000_000, unit in 1u64..1_000_000) {
        prop_assert_eq!(parse_duration(&n.to_string(), Some(unit)), Ok(n * unit));
    }

    #[test]
    fn decimal_durations_round_to_the_nearest_ns(whole in 0u64..1000, milli in 0u64..1000) {
        // w.mmm us = w*1000 + mmm ns exactly
        let s = format!("{whole}.{milli:03}us");
        prop_assert_eq!(parse_duration(&s, None), Ok(whole * 1000 + milli));
    }

    #[test]
    fn rates_round_trip(n in 0u64..1_000_000) {
        prop_assert_eq!(parse_rate(&format!("{n}k")), Ok(n * 1000));
        prop_assert_eq!(parse_rate(&n.to_string()), Ok(n));
    }

    #[test]
    fn unit_parsers_never_panic(s in "\\PC{0,30}") {
        let _ = parse_size(&s);
        let _ = parse_duration(&s, None);
        let _ = parse_duration(&s, Some(1_000_000_000));
        let _ = parse_rate(&s);
        let _ = jobs::units::parse_cpu_list(&s);
    }
}
