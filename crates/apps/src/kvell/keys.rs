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

fn zeta_terms(from: u64, to: u64) -> f64 {
    (from + 1..=to)
        .map(|i| 1.0 / (i as f64).powf(ZIPFIAN_CONSTANT))
        .sum()
}

impl Chooser {
    pub fn new(dist: RequestDistribution, items: u64) -> Result<Chooser, String> {
        Ok(match dist {
            RequestDistribution::Uniform => Chooser::Uniform(items),
            RequestDistribution::Zipfian => Chooser::Zipfian(ScrambledZipfian::new(items)?),
            RequestDistribution::Latest => Chooser::Latest {
                n: items,
                zetan: zeta_terms(0, items),
            },
        })
    }

    /// One key in `0..keys` (`keys`: loaded plus inserted so far).
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
