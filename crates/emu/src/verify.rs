//! fio's `verify=crc32c` for the emulator: every written block carries a
//! header (magic, length, offset, crc32c of the rest) and a payload drawn
//! from the block's offset, so a read-back can tell a stale, misplaced or
//! corrupted block from the one that was written. Like fio's header, the
//! offset catches a block that landed at the wrong place; the checksum
//! catches flipped bytes.

/// "cint" in ASCII.
const MAGIC: u32 = 0x746e_6963;
const HEADER: usize = 20;

/// Why a block did not verify.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mismatch {
    /// No header: never written, or overwritten by something else.
    Magic,
    /// A header for another block length or offset (misplaced write).
    Header { len: u32, offset: u64 },
    /// The header is right, the data is not.
    Checksum { want: u32, got: u32 },
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Mismatch::Magic => write!(f, "bad magic"),
            Mismatch::Header { len, offset } => {
                write!(f, "header of another block (len {len}, offset {offset})")
            }
            Mismatch::Checksum { want, got } => {
                write!(f, "crc32c {got:#010x}, expected {want:#010x}")
            }
        }
    }
}

/// Fills `buf` with the block written at `offset`.
pub fn fill(buf: &mut [u8], offset: u64) {
    assert!(buf.len() >= HEADER, "a block holds the verify header");
    // xorshift64*: the payload only has to differ by offset, and be cheap.
    let mut x = offset.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    for chunk in buf[HEADER..].chunks_mut(8) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        let v = x.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
    buf[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    let len = buf.len() as u32;
    buf[4..8].copy_from_slice(&len.to_le_bytes());
    buf[8..16].copy_from_slice(&offset.to_le_bytes());
    let crc = checksum(buf);
    buf[16..20].copy_from_slice(&crc.to_le_bytes());
}

/// Checks a block read back from `offset`.
pub fn check(buf: &[u8], offset: u64) -> Result<(), Mismatch> {
    if buf.len() < HEADER || u32::from_le_bytes(buf[0..4].try_into().unwrap()) != MAGIC {
        return Err(Mismatch::Magic);
    }
    let len = u32::from_le_bytes(buf[4..8].try_into().unwrap());
    let at = u64::from_le_bytes(buf[8..16].try_into().unwrap());
    if len as usize != buf.len() || at != offset {
        return Err(Mismatch::Header { len, offset: at });
    }
    let want = u32::from_le_bytes(buf[16..20].try_into().unwrap());
    let got = checksum(buf);
    if want != got {
        return Err(Mismatch::Checksum { want, got });
    }
    Ok(())
}

/// crc32c over the header's first 16 bytes and the payload.
fn checksum(buf: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&buf[..16]), &buf[HEADER..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_block_verifies_and_every_kind_of_damage_is_caught() {
        let mut b = vec![0u8; 4096];
        fill(&mut b, 8192);
        assert_eq!(check(&b, 8192), Ok(()));
        assert!(matches!(
            check(&b, 4096),
            Err(Mismatch::Header { offset: 8192, .. })
        ));
        let mut other = vec![0u8; 4096];
        fill(&mut other, 4096);
        assert_ne!(
            other[HEADER..],
            b[HEADER..],
            "payload depends on the offset"
        );
        for at in [HEADER, 100, 4095] {
            let mut bad = b.clone();
            bad[at] ^= 0x01;
            assert!(
                matches!(check(&bad, 8192), Err(Mismatch::Checksum { .. })),
                "byte {at}"
            );
        }
        assert_eq!(check(&[0u8; 4096], 0), Err(Mismatch::Magic));
        assert_eq!(
            check(&b[..2048], 8192),
            Err(Mismatch::Header {
                len: 4096,
                offset: 8192
            })
        );
    }

    #[test]
    fn odd_lengths_fill_to_the_last_byte() {
        let mut b = vec![0u8; 4096 + 3];
        fill(&mut b, 0);
        assert_eq!(check(&b, 0), Ok(()));
        assert!(b[4096..].iter().any(|&x| x != 0));
    }
}
