//! NVMe 1.4 Feature 08h encodes the aggregation time in 8 bits of 100 us:
//! 25.5 ms is the longest it can express.

use policy::nvme::Aggregation;
use policy::US;

fn agg(time: u64, threshold: u32) -> Aggregation {
    Aggregation { time, threshold }
}

#[test]
fn the_longest_encodable_aggregation_time_is_25_5_ms() {
    assert_eq!(agg(25_500 * US, 32).to_feature(), Some(0xff1f));
    assert_eq!(agg(25_600 * US, 32).to_feature(), None);
    assert_eq!(agg(100 * US, 256).to_feature(), Some(0x01ff));
    assert_eq!(agg(0, 1).to_feature(), Some(0x0000));
}

#[test]
fn encoding_and_decoding_agree() {
    for f in [0x0000, 0x011f, 0x0a07, 0xff00, 0xffff] {
        let a = Aggregation::from_feature(f).unwrap();
        assert_eq!(a.to_feature(), Some(f), "{f:#06x}");
    }
}
