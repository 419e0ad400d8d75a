//! Time inside the project: `u64` nanoseconds, and the two ways it is shown
//! at the edges: exactly as the CLI takes it (`6us`), or rounded as a
//! person reads it (`6.26us`).

use crate::decimal::{leading_number, scale};
use crate::quote::quoted;

/// Nanoseconds. All times inside the project are this.
pub type Nanos = u64;

/// Nanoseconds per nanosecond, for [`parse_duration`]'s `default_unit`.
pub const NS: Nanos = 1;
pub const US: Nanos = 1_000;
pub const MS: Nanos = 1_000_000;
pub const SEC: Nanos = 1_000_000_000;

/// Formats nanoseconds the way the CLI accepts them (`6us`, `100us`, `1ms`).
pub fn format_nanos(ns: Nanos) -> String {
    if ns == 0 {
        "0".to_string()
    } else if ns % SEC == 0 {
        format!("{}s", ns / SEC)
    } else if ns % MS == 0 {
        format!("{}ms", ns / MS)
    } else if ns % US == 0 {
        format!("{}us", ns / US)
    } else {
        format!("{ns}ns")
    }
}

/// Nanoseconds at a scale a person reads: `812ns`, `6.00us`, `1.250ms`,
/// `2.000s`.
pub fn readable(ns: Nanos) -> String {
    if ns < US {
        format!("{ns}ns")
    } else if ns < MS {
        format!("{:.2}us", ns as f64 / US as f64)
    } else if ns < SEC {
        format!("{:.3}ms", ns as f64 / MS as f64)
    } else {
        format!("{:.3}s", ns as f64 / SEC as f64)
    }
}

/// The longest time a latency histogram holds: an hour, far beyond any
/// completion delay, gap or latency a run can see (a coalescing timeout is
/// at most 25.5 ms, NVMe Feature 08h), so nothing real is clamped.
pub const HISTOGRAM_MAX: Nanos = 3_600 * SEC;

/// The one histogram every part of the project keeps times in: 1 ns to
/// [`HISTOGRAM_MAX`] at 3 significant digits (exact below 2,048 ns, within
/// 0.1% above), in constant memory however long the run. Job latencies,
/// interrupt delivery, completion gaps and `coalesce`'s delays alike.
pub fn histogram() -> hdrhistogram::Histogram<u64> {
    hdrhistogram::Histogram::new_with_bounds(1, HISTOGRAM_MAX, 3).expect("valid bounds")
}

/// A duration in nanoseconds: `500ns`, `6us`, `1ms`, `10s`, `2m` (minutes),
/// `1h`, `1d`, `1.5us` (rounded to the nearest ns). Units are
/// case-insensitive and fio's long forms (`usec`, `msec`, `sec`, `min`) are
/// accepted. A bare number is in `default_unit` nanoseconds (fio's per-option
/// default: seconds for `runtime`, microseconds for `thinktime`); with `None`
/// it is an error, except `0`.
pub fn parse_duration(s: &str, default_unit: Option<u64>) -> Result<u64, String> {
    let t = s.trim();
    // Errors quote the value cut and escaped (a 1 MB number stays one line).
    let q = quoted(t);
    let invalid = || format!("invalid duration '{q}'");
    if t.is_empty() {
        return Err("invalid duration '' (empty)".to_string());
    }
    if t.starts_with('-') {
        return Err(format!("invalid duration '{q}' (negative)"));
    }
    let n = leading_number(t).ok_or_else(invalid)?;
    let unit: u64 = match n.rest.to_ascii_lowercase().as_str() {
        "" => {
            let zero = n.int == 0 && n.frac.bytes().all(|b| b == b'0');
            match default_unit {
                Some(u) => u,
                None if zero => 1,
                None => {
                    return Err(format!(
                        "invalid duration '{q}': needs a unit (ns, us, ms, s)"
                    ))
                }
            }
        }
        "ns" | "nsec" => NS,
        "us" | "usec" => US,
        "ms" | "msec" => MS,
        "s" | "sec" => SEC,
        "m" | "min" => 60 * SEC,
        "h" | "hour" => 3600 * SEC,
        "d" | "day" => 86_400 * SEC,
        _ => return Err(invalid()),
    };
    scale(&n, unit, false).map_err(|_| format!("duration '{q}' is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    // The duration parser's tests (moved with it from `jobs::units`,
    // issue 26 item 1).
    #[test]
    fn durations_in_ns() {
        assert_eq!(parse_duration("6us", None), Ok(6_000));
        assert_eq!(parse_duration("100us", None), Ok(100_000));
        assert_eq!(parse_duration("1ms", None), Ok(1_000_000));
        assert_eq!(parse_duration("10s", None), Ok(10 * SEC));
        assert_eq!(parse_duration("2m", None), Ok(120 * SEC));
        assert_eq!(parse_duration("1h", None), Ok(3600 * SEC));
        assert_eq!(parse_duration("500ns", None), Ok(500));
        assert_eq!(parse_duration("1.5us", None), Ok(1_500));
        assert_eq!(parse_duration("1.0005us", None), Ok(1_001));
        assert_eq!(parse_duration("0.4ns", None), Ok(0));
        assert_eq!(parse_duration("10USEC", None), Ok(10_000));
    }

    #[test]
    fn bare_numbers_use_the_default_unit() {
        assert_eq!(parse_duration("60", Some(SEC)), Ok(60 * SEC));
        assert_eq!(parse_duration("10", Some(US)), Ok(10_000));
        assert_eq!(parse_duration("0", None), Ok(0));
        let e = parse_duration("100", None).unwrap_err();
        assert!(e.contains("needs a unit (ns, us, ms, s)"), "{e}");
    }

    #[test]
    fn bad_durations_are_rejected() {
        for s in ["", "-1s", "abc", "1x", "s", "1 s s", "1.2.3s"] {
            assert!(parse_duration(s, Some(SEC)).is_err(), "{s:?} accepted");
        }
        assert!(parse_duration("999999999999d", None)
            .unwrap_err()
            .contains("too large"));
    }

    #[test]
    fn a_zero_duration_needs_no_unit_however_it_is_written() {
        assert_eq!(parse_duration("0", None), Ok(0));
        assert_eq!(parse_duration("0.00", None), Ok(0));
        assert!(parse_duration("0.01", None)
            .unwrap_err()
            .contains("needs a unit"));
    }

    #[test]
    fn days_are_86400_seconds() {
        assert_eq!(parse_duration("1d", None), Ok(86_400 * SEC));
        assert_eq!(parse_duration("2day", None), Ok(2 * 86_400 * SEC));
    }

    #[test]
    fn format_picks_the_largest_exact_unit() {
        assert_eq!(format_nanos(0), "0");
        assert_eq!(format_nanos(6_000), "6us");
        assert_eq!(format_nanos(100_000), "100us");
        assert_eq!(format_nanos(1_000_000), "1ms");
        assert_eq!(format_nanos(1_500), "1500ns");
        assert_eq!(format_nanos(2 * SEC), "2s");
    }

    #[test]
    fn times_pick_a_readable_unit() {
        assert_eq!(readable(812), "812ns");
        assert_eq!(readable(6_000), "6.00us");
        // Each unit starts at exactly one of it.
        assert_eq!(readable(999), "999ns");
        assert_eq!(readable(1_000), "1.00us");
        assert_eq!(readable(1_000_000), "1.000ms");
        assert_eq!(readable(1_000_000_000), "1.000s");
        assert_eq!(readable(1_250_000), "1.250ms");
        assert_eq!(readable(2_000_000_000), "2.000s");
    }

    #[test]
    fn the_histogram_holds_an_hour_exactly_below_2048ns() {
        let mut h = histogram();
        h.record(1_234).unwrap();
        h.record(HISTOGRAM_MAX).unwrap();
        assert!(h.record(HISTOGRAM_MAX * 2).is_err(), "beyond the bound");
        assert_eq!(h.value_at_quantile(0.0), 1_234);
        assert!(h.max() >= HISTOGRAM_MAX);
    }
}
