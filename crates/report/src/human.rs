//! Numbers the way fio prints them: a few significant figures and a k/M (or
//! Ki/Mi) prefix, so `95211` reads `95.2k` and a bandwidth `372MiB/s`.

const SI: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
const IEC: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

/// fio's `num2str`: `num` in at most `max_len` characters (the decimal
/// point counts), scaled by 1000 (or 1024 with `pow2`) until it fits, then
/// the prefix and `unit`. `num2str(95211, 4, false, "")` is `95.2k`.
///
/// Unlike fio's, a fraction that rounds up to a whole unit carries into the
/// integer part instead of being dropped.
pub fn num2str(num: u64, max_len: usize, pow2: bool, unit: &str) -> String {
    let (prefixes, thousand) = if pow2 { (&IEC, 1024) } else { (&SI, 1000) };
    let mut whole = num;
    let mut index = 0;
    let mut remainder = None;
    while digits(whole) > max_len && index + 1 < prefixes.len() {
        remainder = Some(whole % thousand);
        whole /= thousand;
        index += 1;
    }
    let prefix = prefixes[index];
    let Some(remainder) = remainder else {
        return format!("{whole}{prefix}{unit}");
    };
    let value = whole as f64 + remainder as f64 / thousand as f64;
    // The point takes one of the places.
    let decimals = max_len.saturating_sub(digits(whole) + 1);
    format!("{value:.decimals$}{prefix}{unit}")
}

/// A count or rate with four significant figures and an SI prefix, as fio
/// shows IOPS: `12.3k`, `1200k`, `12.0M`, `812`. Negative or non-finite values show as
/// `0`.
pub fn count(value: f64) -> String {
    let n = if value.is_finite() && value > 0.0 {
        value.round() as u64
    } else {
        0
    };
    num2str(n, 4, false, "")
}

/// `x`, or 0 where it is NaN or infinite (an empty window's ratios), so
/// neither output ever shows `NaN` nor JSON gets `null` for a number.
/// A fraction of 1 as a percentage (0 for NaN or infinity).
pub(crate) fn percent(fraction: f64) -> f64 {
    finite(fraction) * 100.0
}

pub(crate) fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

pub(crate) fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// `0-3,8` for [0, 1, 2, 3, 8]: CPUs as fio's `cpus_allowed` is written
/// (the inverse of `jobs::units::parse_cpu_list`), in reports and messages.
pub fn cpu_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_fio_num2str() {
        assert_eq!(num2str(95_211, 4, false, ""), "95.2k");
        assert_eq!(num2str(812, 4, false, ""), "812");
        assert_eq!(num2str(9_999, 4, false, ""), "9999");
        assert_eq!(num2str(390_000_000, 4, true, "B/s"), "372MiB/s");
        assert_eq!(num2str(390_000_000, 4, false, "B/s"), "390MB/s");
        assert_eq!(num2str(3_900_000_000, 4, true, "B"), "3719MiB");
        assert_eq!(num2str(1_234_567, 4, false, ""), "1235k");
        assert_eq!(num2str(12_345_678, 4, false, ""), "12.3M");
        assert_eq!(num2str(0, 4, false, ""), "0");
        assert_eq!(num2str(u64::MAX, 4, false, ""), "18.4E");
    }

    #[test]
    fn a_fraction_rounding_up_carries() {
        // 99.96k with room for one decimal rounds to 100.0k; fio's keeps the
        // 99 and prints "99.0k".
        assert_eq!(num2str(99_960, 4, false, ""), "100.0k");
    }

    #[test]
    fn counts_round_and_refuse_nonsense() {
        assert_eq!(count(12_345.4), "12.3k");
        assert_eq!(count(0.4), "0");
        assert_eq!(count(f64::NAN), "0");
        assert_eq!(count(-5.0), "0");
        // Four digits fit before the prefix changes, as fio prints 1.2M IOPS.
        assert_eq!(count(1_200_000.0), "1200k");
        assert_eq!(count(12_000_000.0), "12.0M");
    }

    #[test]
    fn cpu_lists_collapse_ranges() {
        assert_eq!(cpu_list(&[1]), "1");
        assert_eq!(cpu_list(&[3, 0, 1, 2, 8]), "0-3,8");
        assert_eq!(cpu_list(&[0, 2, 4]), "0,2,4");
    }
}
