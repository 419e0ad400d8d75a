//! Sizes at the edges: petabytes, hexadecimal errors, and fractions longer
//! than the 20 digits that can change a u64.

use jobs::units::parse_size;

#[test]
fn petabyte_suffixes_are_2_to_the_50() {
    for s in ["1p", "1P", "1pb", "1PiB"] {
        assert_eq!(parse_size(s), Ok(1 << 50), "{s}");
    }
    assert_eq!(parse_size("2p"), Ok(2 << 50));
}

#[test]
fn a_hex_size_without_hex_digits_is_invalid_not_too_large() {
    for s in ["0x", "0xg", "0x1g"] {
        assert_eq!(parse_size(s), Err(format!("invalid size '{s}'")));
    }
    assert!(parse_size("0x10000000000000000")
        .unwrap_err()
        .contains("too large"));
}

#[test]
fn digits_past_the_twentieth_still_decide_whether_a_size_is_whole() {
    // 1.5 KiB followed by zeros is 1536 bytes however many zeros follow.
    assert_eq!(parse_size(&format!("1.5{}k", "0".repeat(23))), Ok(1536));
    // A 1 in the 24th decimal is not a whole number of bytes.
    let e = parse_size(&format!("1.{}1k", "0".repeat(23))).unwrap_err();
    assert!(e.contains("not a whole number of bytes"), "{e}");
}

#[test]
fn rates_take_g_for_a_billion() {
    assert_eq!(jobs::units::parse_rate("2g"), Ok(2_000_000_000));
}

#[test]
fn a_cpu_range_may_be_a_single_cpu() {
    assert_eq!(jobs::units::parse_cpu_list("3-3"), Ok(vec![3]));
}

#[test]
fn a_cpu_that_is_not_a_number_is_invalid_not_too_high() {
    use jobs::units::parse_cpu_list;
    for s in ["1,a", "1,", "x-2"] {
        assert_eq!(parse_cpu_list(s), Err(format!("invalid CPU list '{s}'")));
    }
    assert!(parse_cpu_list("8192").unwrap_err().contains("above 8191"));
}
