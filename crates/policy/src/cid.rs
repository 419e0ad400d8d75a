//! The NVMe command identifier as the paper's emulator uses it (TOS 4.2.1).
//!
//! The two cinterrupts bits ride in the 16-bit CID, so the polling core can
//! read them from the CQE; the third most significant bit is the driver's
//! "completion" flag for out-of-order Urgent processing, which keeps an
//! already-reaped Urgent entry from being completed again by a later
//! interrupt. The low 13 bits are the blk-mq tag, restored by clearing the
//! others before the tag lookup.
//!
//! The paper says "third most significant bit" for the reaped flag and that the
//! annotations are "embedded in the command ID" without naming their bits; we
//! take bit 15 for Urgent and bit 14 for Barrier (the digest's inference).

use crate::Marks;

pub const URGENT_BIT: u16 = 1 << 15;
pub const BARRIER_BIT: u16 = 1 << 14;
/// TOS 4.2.1: "the driver allocates the third most significant bit as a
/// 'completion' flag".
pub const REAPED_BIT: u16 = 1 << 13;
pub const TAG_MASK: u16 = REAPED_BIT - 1;
/// Tags are 13 bits: at most 8192 commands in flight per queue.
pub const MAX_TAGS: usize = TAG_MASK as usize + 1;

/// Builds the CID for a tag and its marks. `None` if the tag does not fit.
pub fn encode(tag: u16, marks: Marks) -> Option<u16> {
    if tag > TAG_MASK {
        return None;
    }
    let mut cid = tag;
    if marks.urgent {
        cid |= URGENT_BIT;
    }
    if marks.barrier {
        cid |= BARRIER_BIT;
    }
    Some(cid)
}

pub fn tag(cid: u16) -> u16 {
    cid & TAG_MASK
}

pub fn marks(cid: u16) -> Marks {
    Marks {
        urgent: cid & URGENT_BIT != 0,
        barrier: cid & BARRIER_BIT != 0,
    }
}

pub fn is_reaped(cid: u16) -> bool {
    cid & REAPED_BIT != 0
}

pub fn set_reaped(cid: u16) -> u16 {
    cid | REAPED_BIT
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_round_trip_and_tag_is_restored() {
        for tag_v in [0u16, 1, 4095, TAG_MASK] {
            for m in [Marks::NONE, Marks::URGENT, Marks::BARRIER, Marks::BOTH] {
                let cid = encode(tag_v, m).unwrap();
                assert_eq!(tag(cid), tag_v);
                assert_eq!(marks(cid), m);
                assert!(!is_reaped(cid));
                let r = set_reaped(cid);
                assert!(is_reaped(r));
                assert_eq!(tag(r), tag_v);
                assert_eq!(marks(r), m);
            }
        }
    }

    #[test]
    fn oversized_tag_is_refused() {
        assert_eq!(encode(TAG_MASK + 1, Marks::NONE), None);
        assert_eq!(MAX_TAGS, 8192);
    }
}
