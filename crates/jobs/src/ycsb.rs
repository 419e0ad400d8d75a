//! YCSB's key choosers and its core workloads A-F (Cooper et al., SoCC'10;
//! the YCSB client's `CoreWorkload` and `workloads/workload[a-f]`), as TOS
//! 5.4.2 (Table 4) runs them against KVell: the first piece of issue 16's
//! operation-level workloads. Pure: the caller passes its generator.
//!
//! - [`Zipfian`]: Gray et al.'s rejection-free zipfian ("Quickly generating
//!   billion-record synthetic databases", SIGMOD'94), the algorithm YCSB's
//!   `ZipfianGenerator` implements, over `0..n` with YCSB's constant 0.99
//!   ([`ZIPFIAN_CONSTANT`]). Item 0 is the most popular.
//! - [`ScrambledZipfian`]: YCSB's default `requestdistribution=zipfian`:
//!   a zipfian over a fixed space of 10^10 items, hashed (64-bit FNV-1a over
//!   the value's eight bytes, low byte first) onto `0..n`, so the popular
//!   keys are spread over the key space instead of clustered at its start.
//! - [`Latest`]: `requestdistribution=latest` (workload D): the most
//!   recently inserted keys are the most popular (`SkewedLatestGenerator`:
//!   the newest key minus a zipfian draw over the keys inserted so far).
//! - [`Mix`]: the operation proportions of workloads A-F.

use rand::Rng;

/// YCSB's `ZipfianGenerator.ZIPFIAN_CONSTANT`: the skew of every zipfian
/// request distribution in the core workloads (issue 16: "YCSB's default
/// constant 0.99").
pub const ZIPFIAN_CONSTANT: f64 = 0.99;

/// YCSB's `ScrambledZipfianGenerator.ITEM_COUNT`: the space the scrambled
/// zipfian draws in before hashing onto the key space.
pub const SCRAMBLED_ITEM_COUNT: u64 = 10_000_000_000;

/// 64-bit FNV-1a's offset basis and prime (YCSB `Utils.fnvhash64`; the
/// FNV reference, www.isthe.com/chongo/tech/comp/fnv).
const FNV_OFFSET_BASIS_64: u64 = 0xCBF2_9CE4_8422_2325;
const FNV_PRIME_64: u64 = 1_099_511_628_211;

/// YCSB's `fnvhash64`: FNV-1a over the eight bytes of `v`, low byte first,
/// made non-negative as Java's `Math.abs` on the signed result would.
pub fn fnv_hash64(mut v: u64) -> u64 {
    let mut h = FNV_OFFSET_BASIS_64;
    for _ in 0..8 {
        h ^= v & 0xff;
        h = h.wrapping_mul(FNV_PRIME_64);
        v >>= 8;
    }
    (h as i64).unsigned_abs()
}

/// zeta(n, theta) = sum over i in 1..=n of 1 / i^theta.
fn zeta(n: u64, theta: f64) -> f64 {
    (1..=n).map(|i| 1.0 / (i as f64).powf(theta)).sum()
}

/// A zipfian over `0..n` (Gray et al. 1994, as YCSB's `ZipfianGenerator`):
/// item `i` is drawn with probability proportional to `1 / (i + 1)^theta`.
#[derive(Clone, Debug)]
pub struct Zipfian {
    n: u64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
}

impl Zipfian {
    /// Over `0..n` with skew `theta` (0 < theta < 1). Computing zeta(n) is
    /// O(n): a million items take a few milliseconds.
    pub fn new(n: u64, theta: f64) -> Result<Zipfian, String> {
        Zipfian::with_zetan(n, theta, zeta(n.max(1), theta))
    }

    /// As [`Zipfian::new`] with zeta(n, theta) given (YCSB precomputes it
    /// for the scrambled zipfian's 10^10 items).
    pub fn with_zetan(n: u64, theta: f64, zetan: f64) -> Result<Zipfian, String> {
        if n == 0 {
            return Err("a zipfian needs at least one item".into());
        }
        if !(theta > 0.0 && theta < 1.0) {
            return Err(format!(
                "zipfian constant {theta} is outside (0, 1) (YCSB uses 0.99)"
            ));
        }
        let zeta2 = zeta(2, theta);
        let alpha = 1.0 / (1.0 - theta);
        let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
        Ok(Zipfian {
            n,
            theta,
            alpha,
            zetan,
            eta,
        })
    }

    pub fn items(&self) -> u64 {
        self.n
    }

    /// The probability of item 0, the most popular: 1 / zeta(n).
    pub fn p_first(&self) -> f64 {
        1.0 / self.zetan
    }

    /// One draw in `0..n`.
    pub fn next<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        let u: f64 = rng.random();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return 1.min(self.n - 1);
        }
        let v = (self.n as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64;
        v.min(self.n - 1)
    }
}

/// YCSB's `ScrambledZipfianGenerator`: a zipfian over
/// [`SCRAMBLED_ITEM_COUNT`] items, hashed onto `0..n`.
#[derive(Clone, Debug)]
pub struct ScrambledZipfian {
    n: u64,
    inner: Zipfian,
}

/// zeta(10^10, 0.99), which YCSB hard-codes (`ScrambledZipfianGenerator.
/// ZETAN`) rather than sum 10^10 terms. Checked in the tests against the
/// Euler-Maclaurin estimate of the same sum.
pub const SCRAMBLED_ZETAN: f64 = 26.469_028_201_783_02;

impl ScrambledZipfian {
    pub fn new(n: u64) -> Result<ScrambledZipfian, String> {
        if n == 0 {
            return Err("a key space needs at least one key".into());
        }
        Ok(ScrambledZipfian {
            n,
            inner: Zipfian::with_zetan(SCRAMBLED_ITEM_COUNT, ZIPFIAN_CONSTANT, SCRAMBLED_ZETAN)?,
        })
    }

    /// One key in `0..n`.
    pub fn next<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        fnv_hash64(self.inner.next(rng)) % self.n
    }
}

/// `requestdistribution=latest`: the newest keys are the most popular.
#[derive(Clone, Debug)]
pub struct Latest {
    zipf: Zipfian,
}

impl Latest {
    /// Over the `inserted` keys `0..inserted` (key `inserted - 1` the
    /// newest).
    pub fn new(inserted: u64) -> Result<Latest, String> {
        Ok(Latest {
            zipf: Zipfian::new(inserted, ZIPFIAN_CONSTANT)?,
        })
    }

    /// One key: the newest minus a zipfian draw.
    pub fn next<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        let newest = self.zipf.items() - 1;
        newest - self.zipf.next(rng)
    }
}

/// One YCSB operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Read,
    Update,
    Insert,
    Scan,
    ReadModifyWrite,
}

/// A core workload's operation proportions (YCSB `workloads/workload[a-f]`;
/// TOS Table 4 lists the same mixes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mix {
    pub read: f64,
    pub update: f64,
    pub insert: f64,
    pub scan: f64,
    pub read_modify_write: f64,
}

impl Mix {
    /// Workload `a`..`f` (case-insensitive).
    pub fn core(name: &str) -> Result<Mix, String> {
        let m = |read, update, insert, scan, read_modify_write| Mix {
            read,
            update,
            insert,
            scan,
            read_modify_write,
        };
        Ok(match name.to_ascii_lowercase().as_str() {
            // A: update heavy, 50/50 reads and updates.
            "a" => m(0.5, 0.5, 0.0, 0.0, 0.0),
            // B: read mostly, 95/5.
            "b" => m(0.95, 0.05, 0.0, 0.0, 0.0),
            // C: read only.
            "c" => m(1.0, 0.0, 0.0, 0.0, 0.0),
            // D: read latest, 95/5 reads and inserts (requestdistribution=latest).
            "d" => m(0.95, 0.0, 0.05, 0.0, 0.0),
            // E: short ranges, 95/5 scans and inserts.
            "e" => m(0.0, 0.0, 0.05, 0.95, 0.0),
            // F: read-modify-write, 50/50 reads and read-modify-writes.
            "f" => m(0.5, 0.0, 0.0, 0.0, 0.5),
            _ => return Err(format!("unknown YCSB workload '{name}' (a, b, c, d, e, f)")),
        })
    }

    /// One operation drawn from the proportions.
    pub fn next<R: Rng + ?Sized>(&self, rng: &mut R) -> Op {
        let mut u: f64 = rng.random::<f64>() * self.total();
        for (p, op) in [
            (self.read, Op::Read),
            (self.update, Op::Update),
            (self.insert, Op::Insert),
            (self.scan, Op::Scan),
            (self.read_modify_write, Op::ReadModifyWrite),
        ] {
            if u < p {
                return op;
            }
            u -= p;
        }
        // Rounding at the top end: the last operation with a share.
        [
            (self.read_modify_write, Op::ReadModifyWrite),
            (self.scan, Op::Scan),
            (self.insert, Op::Insert),
            (self.update, Op::Update),
        ]
        .into_iter()
        .find(|&(p, _)| p > 0.0)
        .map_or(Op::Read, |(_, op)| op)
    }

    fn total(&self) -> f64 {
        self.read + self.update + self.insert + self.scan + self.read_modify_write
    }
}
