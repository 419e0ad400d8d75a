//! The block size of each I/O: fio's io_u.c `get_next_buflen`, drawn only
//! where a direction's sizes differ (`bsrange`, `bssplit`), so a job with
//! one `bs` draws nothing and keeps its random stream as before.

use rand::Rng;

use crate::job::BlockSizes;

/// fio's `FRAND32_MAX` (lib/rand.h): its block-size generator is 32-bit.
const FRAND32_MAX: u64 = u32::MAX as u64;

/// The size of the next I/O, drawing one 32-bit number when the sizes vary.
pub(crate) fn next<R: Rng + ?Sized>(sizes: &BlockSizes, rng: &mut R) -> u64 {
    let (min, max) = (sizes.min(), sizes.max());
    if min == max {
        return min;
    }
    let r = u64::from(rng.random::<u32>());
    let mut len = match sizes {
        BlockSizes::Fixed(b) => *b,
        // `minbs + maxbs * (r / (frand_max + 1.0))`: fio adds the maximum's
        // fraction to the minimum, then clamps below; kept as fio has it.
        BlockSizes::Range { .. } => {
            min + (max as f64 * (r as f64 / (FRAND32_MAX as f64 + 1.0))) as u64
        }
        // Walk the entries (sorted by percent) summing percents until
        // `r / perc <= frand_max / 100`.
        BlockSizes::Split(split) => {
            let (mut perc, mut len) = (0u64, min);
            for e in split.iter().filter(|e| e.perc > 0) {
                len = e.bs;
                perc += u64::from(e.perc);
                if r / perc <= FRAND32_MAX / 100 {
                    break;
                }
            }
            len
        }
    };
    // Aligned down to the minimum (fio's default `bs_unaligned=0`).
    if min.is_power_of_two() {
        len &= !(min - 1);
    } else {
        len -= len % min;
    }
    len.clamp(min, max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::BsSplit;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    #[test]
    fn a_fixed_size_draws_nothing() {
        let mut a = StdRng::seed_from_u64(1);
        let mut b = StdRng::seed_from_u64(1);
        assert_eq!(next(&BlockSizes::Fixed(4096), &mut a), 4096);
        assert_eq!(a.random::<u64>(), b.random::<u64>());
    }

    #[test]
    fn a_range_stays_inside_and_aligned_to_its_minimum() {
        let mut r = StdRng::seed_from_u64(2);
        let sizes = BlockSizes::Range {
            min: 4096,
            max: 65536,
        };
        for _ in 0..10_000 {
            let b = next(&sizes, &mut r);
            assert!((4096..=65536).contains(&b) && b % 4096 == 0, "{b}");
        }
    }

    #[test]
    fn a_split_takes_its_sizes_only() {
        let split = BlockSizes::Split(
            vec![
                BsSplit { bs: 512, perc: 50 },
                BsSplit { bs: 8192, perc: 50 },
            ]
            .into(),
        );
        let mut r = StdRng::seed_from_u64(3);
        for _ in 0..1000 {
            assert!(matches!(next(&split, &mut r), 512 | 8192));
        }
    }
}
