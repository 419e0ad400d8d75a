//! Human units at the edges: fio sizes, durations, rates and CPU lists.
//!
//! Every function returns a one-line `String` error that quotes the input, so
//! callers can prefix it with `FILE:LINE: option 'x': `.

use crate::error::quoted;
use policy::decimal::{leading_number, scale, Scale};
/// A duration in nanoseconds: kept in [`policy::time`] so that the device
/// profiles (crate `service`) parse times without the job language.
pub use policy::time::parse_duration;

/// Largest CPU number accepted in a CPU list (Linux's largest `NR_CPUS` is 8192).
pub const MAX_CPU: usize = 8191;

/// Nanoseconds per unit, for [`parse_duration`]'s `default_unit`.
pub use policy::time::NS;
/// Nanoseconds in a microsecond, a millisecond and a second: the project's
/// one set of time constants, [`policy::time`].
pub use policy::time::{MS, SEC, US};

/// A fio size in bytes with `kb_base=1024` (fio's default): `4096`, `4k`,
/// `4K`, `4kb`, `4KiB`, `1m`, `1M`, `1G`, `2t`, `1p`, `0x1000`. A decimal is
/// accepted if it is a whole number of bytes (`1.5k` = 1536). Negative
/// values, garbage and values beyond u64 are errors.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    // Errors quote the value cut and escaped (a 1 MB number stays one line).
    let q = quoted(t);
    let invalid = || format!("invalid size '{q}'");
    if t.is_empty() {
        return Err("invalid size '' (empty)".to_string());
    }
    if t.starts_with('-') {
        return Err(format!("invalid size '{q}' (negative)"));
    }
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(invalid());
        }
        return u64::from_str_radix(hex, 16).map_err(|_| format!("size '{q}' is too large"));
    }
    let n = leading_number(t).ok_or_else(invalid)?;
    let mult: u64 = match n.rest.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        "p" | "pb" | "pib" => 1 << 50,
        _ => return Err(invalid()),
    };
    scale(&n, mult, true).map_err(|e| match e {
        Scale::Overflow => format!("size '{q}' is too large"),
        Scale::Inexact => format!("invalid size '{q}' (not a whole number of bytes)"),
    })
}

/// A count per second with decimal suffixes: `250000`, `100k` = 100000,
/// `1.5m` or `1.5M` = 1500000, `2g`. Must come out a whole number.
pub fn parse_rate(s: &str) -> Result<u64, String> {
    let t = s.trim();
    // Errors quote the value cut and escaped (a 1 MB number stays one line).
    let q = quoted(t);
    let invalid = || format!("invalid rate '{q}'");
    if t.is_empty() {
        return Err("invalid rate '' (empty)".to_string());
    }
    if t.starts_with('-') {
        return Err(format!("invalid rate '{q}' (negative)"));
    }
    let n = leading_number(t).ok_or_else(invalid)?;
    let mult: u64 = match n.rest.to_ascii_lowercase().as_str() {
        "" => 1,
        "k" => 1_000,
        "m" => 1_000_000,
        "g" => 1_000_000_000,
        _ => return Err(invalid()),
    };
    scale(&n, mult, true).map_err(|e| match e {
        Scale::Overflow => format!("rate '{q}' is too large"),
        Scale::Inexact => format!("invalid rate '{q}' (not a whole number)"),
    })
}

/// fio's `cpus_allowed` syntax: `0`, `0-3`, `0,2,4-5`. The result is sorted
/// and deduplicated. CPU numbers above [`MAX_CPU`] are rejected.
pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>, String> {
    let t = s.trim();
    // Errors quote the value cut and escaped (a 1 MB number stays one line).
    let q = quoted(t);
    if t.is_empty() {
        return Err("invalid CPU list '' (empty)".to_string());
    }
    let cpu = |p: &str| -> Result<usize, String> {
        let p = p.trim();
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("invalid CPU list '{q}'"));
        }
        match p.parse::<usize>() {
            Ok(n) if n <= MAX_CPU => Ok(n),
            _ => Err(format!(
                "invalid CPU list '{q}' (CPU {p} is above {MAX_CPU})"
            )),
        }
    };
    let mut cpus = Vec::new();
    for part in t.split(',') {
        match part.split_once('-') {
            Some((lo, hi)) => {
                let (lo, hi) = (cpu(lo)?, cpu(hi)?);
                if lo > hi {
                    return Err(format!(
                        "invalid CPU list '{q}' (range {lo}-{hi} is backwards)"
                    ));
                }
                cpus.extend(lo..=hi);
            }
            None => cpus.push(cpu(part)?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// A fio boolean: no value, `1`/`0`, and for convenience `true`/`false`,
/// `yes`/`no`, `on`/`off`.
pub fn parse_bool(s: &str) -> Result<bool, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(format!("invalid boolean '{}' (0 or 1)", quoted(s.trim()))),
    }
}

/// A plain non-negative integer that fits in u32 (`iodepth=32`).
pub fn parse_u32(s: &str) -> Result<u32, String> {
    let t = s.trim();
    // Errors quote the value cut and escaped (a 1 MB number stays one line).
    let q = quoted(t);
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("invalid number '{q}'"));
    }
    t.parse::<u32>()
        .map_err(|_| format!("number '{q}' is too large"))
}

/// A plain non-negative integer that fits in u64, or a size with suffix
/// (`number_ios=1m` is 1048576, as fio reads integers).
pub fn parse_count(s: &str) -> Result<u64, String> {
    parse_size(s).map_err(|_| format!("invalid number '{}'", quoted(s.trim())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_use_kb_base_1024() {
        assert_eq!(parse_size("4096"), Ok(4096));
        for s in ["4k", "4K", "4kb", "4KB", "4KiB", "4kib"] {
            assert_eq!(parse_size(s), Ok(4096), "{s}");
        }
        assert_eq!(parse_size("1m"), Ok(1 << 20));
        assert_eq!(parse_size("1M"), Ok(1 << 20));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("2t"), Ok(2 << 40));
        assert_eq!(parse_size("1.5k"), Ok(1536));
        assert_eq!(parse_size("0x1000"), Ok(4096));
        assert_eq!(parse_size(" 8k "), Ok(8192));
    }

    #[test]
    fn bad_sizes_are_rejected() {
        for s in [
            "", "-4k", "abc", "4x", "k", "4kk", "1.1", "0x", "0xg", "4 k",
        ] {
            assert!(parse_size(s).is_err(), "{s:?} accepted");
        }
        assert!(parse_size("16777216t").unwrap_err().contains("too large"));
        assert!(parse_size("99999999999999999999999").is_err());
        assert_eq!(parse_size("abc").unwrap_err(), "invalid size 'abc'");
    }

    #[test]
    fn rates_use_decimal_suffixes() {
        assert_eq!(parse_rate("100k"), Ok(100_000));
        assert_eq!(parse_rate("1.5m"), Ok(1_500_000));
        assert_eq!(parse_rate("1.5M"), Ok(1_500_000));
        assert_eq!(parse_rate("250000"), Ok(250_000));
        assert!(parse_rate("1.5").is_err());
        assert!(parse_rate("-3").is_err());
        assert!(parse_rate("3kb").is_err());
    }

    #[test]
    fn cpu_lists_sorted_and_deduplicated() {
        assert_eq!(parse_cpu_list("0"), Ok(vec![0]));
        assert_eq!(parse_cpu_list("0-3"), Ok(vec![0, 1, 2, 3]));
        assert_eq!(parse_cpu_list("4-5,0,2"), Ok(vec![0, 2, 4, 5]));
        assert_eq!(parse_cpu_list("1,1,0-1"), Ok(vec![0, 1]));
        for s in ["", "a", "3-1", "1,,2", "0-", "-1", "99999"] {
            assert!(parse_cpu_list(s).is_err(), "{s:?} accepted");
        }
    }

    #[test]
    fn booleans_and_integers() {
        assert_eq!(parse_bool("1"), Ok(true));
        assert_eq!(parse_bool("0"), Ok(false));
        assert!(parse_bool("2").is_err());
        assert_eq!(parse_u32("32"), Ok(32));
        assert!(parse_u32("-1").is_err());
        assert!(parse_u32("4294967296").is_err());
        assert_eq!(parse_count("1k"), Ok(1024));
    }
}
