//! Numbers as the formats print them, read exactly (no floating point),
//! and the quoting of a bad value in an error.

/// A field that is wrong, and why; the reader adds the file and line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Bad {
    pub field: &'static str,
    pub why: String,
}

impl Bad {
    pub fn new(field: &'static str, why: impl Into<String>) -> Self {
        Bad {
            field,
            why: why.into(),
        }
    }
}

/// The longest part of a value an error echoes.
const QUOTE_MAX: usize = 40;

/// `'value'`, cut to 40 characters and escaped, so an error stays one
/// short line whatever the row held.
pub(crate) fn quoted(s: &str) -> String {
    let mut out = String::from("'");
    for (i, c) in s.chars().enumerate() {
        if i == QUOTE_MAX {
            out.push_str("...");
            break;
        }
        out.extend(c.escape_debug());
    }
    out.push('\'');
    out
}

/// A whole number (digits only: no sign, no exponent, no `0x`).
pub(crate) fn uint(s: &str, field: &'static str) -> Result<u64, Bad> {
    match fast_uint(s.as_bytes()) {
        Some(v) => Ok(v),
        None => uint_error(s, field),
    }
}

/// The digits of `b` as a number in one pass (`None` for anything but
/// 1 to 20 digits below 2^64): the per-field path of every text reader
/// (issue 41 item 7; `str::parse` after a separate digit check read each
/// field twice).
#[inline]
pub(crate) fn fast_uint(b: &[u8]) -> Option<u64> {
    if b.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &c in b {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    Some(v)
}

/// Why `s` is not a whole number below 2^64 (the slow path's errors).
#[cold]
fn uint_error(s: &str, field: &'static str) -> Result<u64, Bad> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Bad::new(
            field,
            format!("{} is not a whole number", quoted(s)),
        ));
    }
    s.parse()
        .map_err(|_| Bad::new(field, format!("{} is past 2^64", quoted(s))))
}

pub(crate) fn uint32(s: &str, field: &'static str) -> Result<u32, Bad> {
    let v = uint(s, field)?;
    u32::try_from(v).map_err(|_| Bad::new(field, format!("{v} is past 2^32")))
}

/// `a * b`, or an error naming `field` when it overflows.
pub(crate) fn times(a: u64, b: u64, field: &'static str, unit: &str) -> Result<u64, Bad> {
    a.checked_mul(b)
        .ok_or_else(|| Bad::new(field, format!("{a} {unit} is past 2^64 in the unit read")))
}

/// A sector count as bytes in a `u32`.
pub(crate) fn sectors_to_bytes(n: u64, field: &'static str) -> Result<u32, Bad> {
    n.checked_mul(512)
        .and_then(|b| u32::try_from(b).ok())
        .ok_or_else(|| Bad::new(field, format!("{n} sectors is past 2^32 bytes")))
}

/// A decimal `123.456789` in a unit of `unit_ns` nanoseconds (1e9 for
/// seconds, 1e6 for milliseconds) as whole nanoseconds; digits past a
/// nanosecond are dropped.
pub(crate) fn decimal_ns(s: &str, unit_ns: u64, field: &'static str) -> Result<u64, Bad> {
    match fast_decimal_ns(s.as_bytes(), unit_ns) {
        Some(ns) => Ok(ns),
        None => decimal_ns_checked(s, unit_ns, field),
    }
}

/// [`decimal_ns`] in one pass for the common shape (`digits.digits`, no
/// overflow); `None` sends the value to the checked path, which says what
/// is wrong.
#[inline]
fn fast_decimal_ns(b: &[u8], unit_ns: u64) -> Option<u64> {
    let dot = memchr::memchr(b'.', b);
    let (int, frac) = match dot {
        Some(i) => (&b[..i], &b[i + 1..]),
        None => (b, &b[..0]),
    };
    let whole = if int.is_empty() {
        if frac.is_empty() {
            return None;
        }
        0
    } else {
        fast_uint(int)?
    };
    let mut ns = whole.checked_mul(unit_ns)?;
    let mut scale = unit_ns;
    for &c in frac {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        scale /= 10;
        if scale == 0 {
            // Digits past a nanosecond are dropped, but still checked.
            continue;
        }
        ns = ns.checked_add(u64::from(d) * scale)?;
    }
    Some(ns)
}

/// [`decimal_ns`]'s checked path: the value, or what is wrong with it.
#[cold]
fn decimal_ns_checked(s: &str, unit_ns: u64, field: &'static str) -> Result<u64, Bad> {
    let bad = || {
        Bad::new(
            field,
            format!("{} is not a non-negative decimal number", quoted(s)),
        )
    };
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(bad());
    }
    let whole: u64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| bad())?
    };
    let mut ns = whole
        .checked_mul(unit_ns)
        .ok_or_else(|| Bad::new(field, format!("{} is past 2^64 ns", quoted(s))))?;
    let mut scale = unit_ns;
    for d in frac.bytes() {
        scale /= 10;
        if scale == 0 {
            break;
        }
        ns = ns
            .checked_add(u64::from(d - b'0') * scale)
            .ok_or_else(|| Bad::new(field, format!("{} is past 2^64 ns", quoted(s))))?;
    }
    Ok(ns)
}

/// A non-negative decimal in seconds, as the data-warehouse exports print
/// them (`1705276800.123456`, `0.0125`, and with an exponent, `1.5e-05` or
/// `1.7052768E9`), as whole nanoseconds; digits past a nanosecond are
/// dropped. Exact: the digits are scaled as integers, never through a float.
pub(crate) fn seconds_ns(s: &str, field: &'static str) -> Result<u64, Bad> {
    let bad = || {
        Bad::new(
            field,
            format!("{} is not a non-negative number of seconds", quoted(s)),
        )
    };
    let past = || Bad::new(field, format!("{} seconds is past 2^64 ns", quoted(s)));
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, ""),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(bad());
    }
    let exp: i64 = if exponent.is_empty() {
        if s.len() != mantissa.len() {
            return Err(bad());
        }
        0
    } else {
        let digits = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
        if digits.is_empty() || digits.len() > 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        exponent.parse().map_err(|_| bad())?
    };
    // The value is DIGITS * 10^(exp - frac.len()) seconds, so
    // DIGITS * 10^(9 + exp - frac.len()) ns. Leading zeros carry no value;
    // more than 38 significant digits cannot be held in a u128.
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return Ok(0);
    }
    if digits.len() > 38 {
        return Err(past());
    }
    let mut ns: u128 = digits.parse().map_err(|_| bad())?;
    let mut scale = 9 + exp - frac.len() as i64;
    while scale > 0 {
        ns = ns.checked_mul(10).ok_or_else(past)?;
        scale -= 1;
    }
    while scale < 0 && ns > 0 {
        ns /= 10;
        scale += 1;
    }
    u64::try_from(ns).map_err(|_| past())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_exact() {
        assert_eq!(
            decimal_ns("0.000403211", 1_000_000_000, "t").unwrap(),
            403_211
        );
        assert_eq!(decimal_ns("12.5", 1_000_000, "t").unwrap(), 12_500_000);
        assert_eq!(decimal_ns("3", 1_000_000_000, "t").unwrap(), 3_000_000_000);
        assert_eq!(
            decimal_ns("1.0000000009", 1_000_000_000, "t").unwrap(),
            1_000_000_000
        );
        for bad in ["", ".", "-1", "1e3", "1.2.3", "nan", " 1"] {
            assert!(decimal_ns(bad, 1_000, "t").is_err(), "{bad}");
        }
        assert!(decimal_ns("99999999999999999999", 1, "t").is_err());
    }

    #[test]
    fn seconds_with_exponents_are_exact() {
        let ns = |s| seconds_ns(s, "t");
        assert_eq!(ns("1705276800.123456").unwrap(), 1_705_276_800_123_456_000);
        assert_eq!(ns("0.0125").unwrap(), 12_500_000);
        assert_eq!(ns("1.5e-05").unwrap(), 15_000);
        assert_eq!(ns("1.7052768E9").unwrap(), 1_705_276_800_000_000_000);
        assert_eq!(ns("2e+0").unwrap(), 2_000_000_000);
        assert_eq!(ns("3e-12").unwrap(), 0);
        assert_eq!(ns("0000.5").unwrap(), 500_000_000);
        assert_eq!(ns("0").unwrap(), 0);
        for bad in [
            "", ".", "-1", "e5", "1e", "1e+", "1.2.3", "nan", "inf", " 1", "1e99999", "0x10",
        ] {
            assert!(ns(bad).is_err(), "{bad}");
        }
        assert!(ns("18446744074").is_err(), "past 2^64 ns");
        assert!(ns("1e300").is_err());
    }

    #[test]
    fn the_fast_paths_agree_with_the_checked_ones() {
        let cases = [
            "",
            "0",
            "7",
            "007",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999999",
            "1x",
            "x1",
            "-1",
            "+1",
            " 1",
            "1.5",
            ".",
            "1.",
            ".5",
            "0.000403211",
            "1.0000000009",
            "1.00000000099x",
            "12.5",
            "1e3",
            "1.2.3",
            "18446744073.709551615",
            "18446744073.709551616",
        ];
        for c in cases {
            let slow: Result<u64, Bad> = if c.is_empty() || !c.bytes().all(|b| b.is_ascii_digit()) {
                uint_error(c, "f")
            } else {
                c.parse().map_err(|_| Bad::new("f", "past"))
            };
            assert_eq!(uint(c, "f").ok(), slow.ok(), "{c}");
            for unit in [1, 1_000, 1_000_000_000] {
                assert_eq!(
                    decimal_ns(c, unit, "t"),
                    decimal_ns_checked(c, unit, "t"),
                    "{c} in {unit}"
                );
            }
        }
    }

    #[test]
    fn quotes_are_cut_and_escaped() {
        assert_eq!(quoted("a\nb"), "'a\\nb'");
        assert_eq!(quoted(&"x".repeat(100)).len(), 40 + 5);
    }
}
