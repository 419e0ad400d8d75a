//! Where KVell keeps a key: which worker owns it, and on which page of the
//! worker's slab it lies; and how YCSB picks keys.

use jobs::ycsb::{ScrambledZipfian, Zipfian, ZIPFIAN_CONSTANT};
use rand::Rng;

use super::{Config, RequestDistribution};

/// KVell's slab size classes (`slabworker.c`, `slab_sizes`): an item goes
/// to the first class that holds it (`get_slab`).
pub const SLAB_SIZES: [u64; 9] = [100, 128, 256, 400, 512, 1024, 1365, 2048, 4096];

/// The slot size of an item of `bytes` bytes, or `None` if KVell refuses it
/// ("Item is too big").
pub fn slab_size_for(bytes: u64) -> Option<u64> {
    if bytes == 0 {
        return None;
    }
    SLAB_SIZES.iter().copied().find(|&s| bytes <= s)
}

/// Our choice: the multiplier of the permutation that stands in for the
/// load's shuffle (`workload-common.c`, `repopulate_db`: items are inserted
/// in a shuffled order, so a key's slot in its worker's slab is random).
/// The 64-bit golden-ratio constant, made coprime with the slab's length.
const PERMUTATION_SEED: u64 = 0x9E37_79B9_7F4A_7C15;

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The loaded key space: `0..items`, partitioned over the workers.
#[derive(Clone, Debug)]
pub struct KeySpace {
    pub items: u64,
    pub workers: u64,
    /// Slots per page (`slab.c`, `item_page_num`: `PAGE_SIZE / item_size`).
    pub items_per_page: u64,
    /// Per worker: (loaded items, permutation multiplier, offset).
    slabs: Vec<(u64, u64, u64)>,
}

impl KeySpace {
    pub fn new(config: &Config, seed: u64) -> Result<KeySpace, String> {
        let workers = config.worker_cores.len() as u64;
        let slab = slab_size_for(config.item_bytes)
            .ok_or_else(|| format!("item of {} bytes is too big", config.item_bytes))?;
        let items_per_page = config.page_bytes / slab;
        let slabs = (0..workers)
            .map(|w| {
                // Keys w, w + W, w + 2W, ... below `items`.
                let n = (config.items + workers - 1 - w) / workers;
                let mut a = PERMUTATION_SEED.wrapping_add(seed.wrapping_mul(2)) % n.max(1);
                while n > 1 && gcd(a, n) != 1 {
                    a = (a + 1) % n;
                }
                let off = seed.wrapping_add(w) % n.max(1);
                (n, a.max(1), off)
            })
            .collect();
        Ok(KeySpace {
            items: config.items,
            workers,
            items_per_page,
            slabs,
        })
    }

    /// `get_slab_context`: `hash % nb_workers`, the hash being the key.
    pub fn worker_of(&self, key: u64) -> usize {
        (key % self.workers) as usize
    }

    /// The loaded items of worker `w`: the length of its slab at the start.
    pub fn loaded(&self, w: usize) -> u64 {
        self.slabs[w].0
    }

    /// The slot of a loaded key (`key < items`) in its worker's slab.
    pub fn slot_of(&self, key: u64) -> u64 {
        let (n, a, off) = self.slabs[self.worker_of(key)];
        let j = key / self.workers;
        ((a as u128 * j as u128 + off as u128) % n as u128) as u64
    }

    /// The page of a slot (`item_page_num`).
    pub fn page_of_slot(&self, slot: u64) -> u64 {
        slot / self.items_per_page
    }
}

/// YCSB's key chooser over a key space that grows with inserts.
#[derive(Clone, Debug)]
pub enum Chooser {
    /// Over the loaded keys, as YCSB's `UniformLongGenerator` over
    /// `recordcount`.
    Uniform(u64),
    Zipfian(ScrambledZipfian),
    /// `SkewedLatestGenerator`: the newest key minus a zipfian draw over
    /// the keys so far; zeta(n) grown one term per insert, as YCSB's
    /// `ZipfianGenerator` does incrementally.
    Latest {
        n: u64,
        zetan: f64,
    },
}

/// The sum of `1 / i^theta` for `i` in `from + 1..=to`, term by term.
fn zeta_terms(from: u64, to: u64) -> f64 {
    (from + 1..=to)
        .map(|i| 1.0 / (i as f64).powf(ZIPFIAN_CONSTANT))
        .sum()
}

/// Our choice: terms summed one by one before the Euler-Maclaurin tail.
const ZETA_EXACT_TERMS: u64 = 100_000;

/// zeta(n, theta): the first [`ZETA_EXACT_TERMS`] terms summed, the rest by
/// Euler-Maclaurin to the first derivative (the integral, half the end
/// terms, a twelfth of the derivatives' difference; the next correction is
/// below 1e-17 of the sum past 10^5 terms). Summing 80 M terms one by one
/// took two seconds per instance.
fn zeta(n: u64) -> f64 {
    let m = n.min(ZETA_EXACT_TERMS);
    let head = zeta_terms(0, m);
    if n == m {
        return head;
    }
    let t = ZIPFIAN_CONSTANT;
    let f = |x: f64| x.powf(-t);
    let df = |x: f64| -t * x.powf(-t - 1.0);
    let (a, b) = (m as f64, n as f64);
    let integral = (b.powf(1.0 - t) - a.powf(1.0 - t)) / (1.0 - t);
    // Sum over m+1..=n = integral over [m, n] + (f(n) - f(m)) / 2 + ...
    head + integral + (f(b) - f(a)) / 2.0 + (df(b) - df(a)) / 12.0
}

impl Chooser {
    pub fn new(dist: RequestDistribution, items: u64) -> Result<Chooser, String> {
        Ok(match dist {
            RequestDistribution::Uniform => Chooser::Uniform(items),
            RequestDistribution::Zipfian => Chooser::Zipfian(ScrambledZipfian::new(items)?),
            RequestDistribution::Latest => Chooser::Latest {
                n: items,
                zetan: zeta(items),
            },
        })
    }

    /// One key in `0..keys` (`keys`: loaded plus inserts acknowledged).
    pub fn next<R: Rng + ?Sized>(&mut self, keys: u64, rng: &mut R) -> u64 {
        match self {
            Chooser::Uniform(items) => rng.random_range(0..*items),
            // YCSB's scrambled zipfian covers the loaded records; an
            // inserted key is reached by `latest` only.
            Chooser::Zipfian(z) => z.next(rng),
            Chooser::Latest { n, zetan } => {
                if keys > *n {
                    *zetan += zeta_terms(*n, keys);
                    *n = keys;
                }
                match Zipfian::with_zetan(*n, ZIPFIAN_CONSTANT, *zetan) {
                    Ok(z) => *n - 1 - z.next(rng),
                    Err(_) => 0,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeta_past_the_exact_terms_matches_the_sum() {
        for n in [ZETA_EXACT_TERMS + 1, 3 * ZETA_EXACT_TERMS + 7, 2_000_000] {
            let exact = zeta_terms(0, n);
            let fast = zeta(n);
            assert!(
                (exact - fast).abs() < 1e-9 * exact,
                "n {n}: {exact} vs {fast}"
            );
        }
        assert_eq!(zeta(10), zeta_terms(0, 10));
    }

    #[test]
    fn slots_are_a_permutation() {
        let config = Config {
            worker_cores: vec![0, 1, 2],
            items: 1000,
            ..Config::default()
        };
        let keys = KeySpace::new(&config, 5).unwrap();
        for w in 0..3 {
            let mut slots: Vec<u64> = (0..1000)
                .filter(|k| keys.worker_of(*k) == w)
                .map(|k| keys.slot_of(k))
                .collect();
            slots.sort();
            assert_eq!(slots, (0..keys.loaded(w)).collect::<Vec<_>>());
        }
        // Four 1 KB items per 4 KiB page (slab.c item_page_num).
        assert_eq!(keys.items_per_page, 4);
        assert_eq!(slab_size_for(1024), Some(1024));
        assert_eq!(slab_size_for(1025), Some(1365));
        assert_eq!(slab_size_for(4097), None);
    }
}
