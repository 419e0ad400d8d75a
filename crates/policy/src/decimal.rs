//! Decimal numbers at the edges, read exactly: the one reader behind the
//! job language's sizes and rates (`jobs::units`) and every duration
//! ([`crate::time::parse_duration`]).

/// A non-negative decimal number split into its integer part and the digits
/// after the point, followed by whatever text comes after it.
pub struct Number<'a> {
    pub int: u128,
    pub frac: &'a str,
    pub rest: &'a str,
}

/// Reads `digits[.digits]` from the front of `s`. `None` if there is no digit
/// at all, or the integer part does not fit in a u128.
pub fn leading_number(s: &str) -> Option<Number<'_>> {
    let int_len = s.bytes().take_while(u8::is_ascii_digit).count();
    let (int_str, after) = s.split_at(int_len);
    let (frac, rest) = match after.strip_prefix('.') {
        Some(tail) => {
            let n = tail.bytes().take_while(u8::is_ascii_digit).count();
            tail.split_at(n)
        }
        None => ("", after),
    };
    if int_str.is_empty() && frac.is_empty() {
        return None;
    }
    let mut int: u128 = 0;
    for b in int_str.bytes() {
        int = int.checked_mul(10)?.checked_add(u128::from(b - b'0'))?;
    }
    Some(Number { int, frac, rest })
}

/// `number * unit`, with the fractional digits scaled and rounded half up
/// (`exact` rejects any remainder instead). `None` on overflow of u64.
pub fn scale(n: &Number<'_>, unit: u64, exact: bool) -> Result<u64, Scale> {
    let unit = u128::from(unit);
    let whole = n.int.checked_mul(unit).ok_or(Scale::Overflow)?;
    // More than 20 fractional digits cannot change a u64 result except at an
    // exact .5 tie; keep 20 so 10^k stays in range.
    let frac = &n.frac[..n.frac.len().min(20)];
    let mut frac_value: u128 = 0;
    for b in frac.bytes() {
        frac_value = frac_value * 10 + u128::from(b - b'0');
    }
    let denom = 10u128.pow(frac.len() as u32);
    let scaled = frac_value * unit; // < 10^20 * 2^64: fits in u128
    let mut part = scaled / denom;
    let rem = scaled % denom;
    if exact
        && (rem != 0
            || frac.len() < n.frac.len() && n.frac[frac.len()..].bytes().any(|b| b != b'0'))
    {
        return Err(Scale::Inexact);
    }
    if !exact && rem * 2 >= denom && rem != 0 {
        part += 1;
    }
    let total = whole.checked_add(part).ok_or(Scale::Overflow)?;
    u64::try_from(total).map_err(|_| Scale::Overflow)
}

pub enum Scale {
    Overflow,
    Inexact,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Number<'_> {
        leading_number(s).expect("a number")
    }

    #[test]
    fn a_number_splits_into_its_integer_digits_fraction_and_rest() {
        let x = n("12.50us");
        assert_eq!((x.int, x.frac, x.rest), (12, "50", "us"));
        let x = n(".5k");
        assert_eq!((x.int, x.frac, x.rest), (0, "5", "k"));
        assert!(leading_number("k").is_none());
        assert!(leading_number(".k").is_none());
        // Past u128: no number rather than a wrapped one.
        assert!(leading_number(&"9".repeat(40)).is_none());
    }

    #[test]
    fn scaling_rounds_half_up_unless_exact_is_asked() {
        assert!(matches!(scale(&n("1.5"), 1, false), Ok(2)));
        assert!(matches!(scale(&n("1.49"), 1, false), Ok(1)));
        assert!(matches!(scale(&n("1.5"), 1, true), Err(Scale::Inexact)));
        assert!(matches!(scale(&n("1.5"), 2, true), Ok(3)));
        // Zeros past the twentieth digit keep a value exact; a non-zero
        // digit there does not.
        let zeros = format!("1.{}", "0".repeat(25));
        assert!(matches!(scale(&n(&zeros), 1, true), Ok(1)));
        let late = format!("1.{}1", "0".repeat(25));
        assert!(matches!(scale(&n(&late), 1, true), Err(Scale::Inexact)));
    }

    #[test]
    fn scaling_past_u64_is_an_overflow() {
        assert!(matches!(
            scale(&n("18446744073709551615"), 1, true),
            Ok(u64::MAX)
        ));
        assert!(matches!(
            scale(&n("18446744073709551616"), 1, true),
            Err(Scale::Overflow)
        ));
        assert!(matches!(
            scale(&n("2"), u64::MAX, false),
            Err(Scale::Overflow)
        ));
    }
}
