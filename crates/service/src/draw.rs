//! A command's service time inside the device: drawn per command from the
//! profile's distribution for its direction, plus transfer time by size.

use rand::Rng;
use rand_distr::{Distribution as _, LogNormal, Normal};
use serde::{Deserialize, Deserializer};

use crate::gate::round;
use crate::limits::MAX_SERVICE;

/// How a service time is drawn around its mean.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Distribution {
    /// Normal with the given mean and standard deviation, redrawn (truncated)
    /// below `floor`.
    Normal,
    /// Log-normal whose own mean and standard deviation are the given ones
    /// (right-skewed, like NAND read latency); values below `floor` are
    /// raised to it.
    Lognormal,
}

/// The service time of one operation (read or write) inside the device: from
/// the command being fetched to its CQE being written, without any host cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceTime {
    /// Shape of the 4 KiB service time.
    pub distribution: Distribution,
    /// Mean 4 KiB service time, ns (`mean = "6.26us"`). Must be > 0.
    #[serde(deserialize_with = "duration")]
    pub mean: u64,
    /// Standard deviation of the 4 KiB service time, ns.
    #[serde(deserialize_with = "duration")]
    pub stddev: u64,
    /// Shortest possible 4 KiB service time, ns (default 0). Must be below
    /// `mean`.
    #[serde(default, deserialize_with = "duration")]
    pub floor: u64,
    /// Extra transfer time per KiB beyond the first 4 KiB, ns.
    #[serde(deserialize_with = "duration")]
    pub per_kib: u64,
}

/// A time with units (`"8us"`) as nanoseconds: serde's `deserialize_with`
/// for the times of a profile.
pub fn duration<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let s = String::deserialize(d)?;
    policy::time::parse_duration(&s, None).map_err(serde::de::Error::custom)
}

/// Samples one operation's service time: the 4 KiB shape, plus transfer time
/// for every KiB beyond 4.
#[derive(Clone, Debug)]
pub struct Sampler {
    shape: Shape,
    floor: f64,
    per_kib: u64,
}

#[derive(Clone, Debug)]
enum Shape {
    Normal(Normal<f64>),
    LogNormal(LogNormal<f64>),
    Constant(f64),
}

impl Sampler {
    /// `t` as a profile validates it: `mean` > 0 and `floor` below it.
    pub fn new(t: &ServiceTime) -> Sampler {
        let mean = t.mean as f64;
        let sd = t.stddev as f64;
        let shape = if sd == 0.0 {
            Shape::Constant(mean)
        } else {
            match t.distribution {
                Distribution::Normal => Shape::Normal(Normal::new(mean, sd).expect("sd > 0")),
                Distribution::Lognormal => {
                    // The profile gives the distribution's own mean and sd;
                    // the underlying normal's parameters follow from them.
                    let sigma2 = (1.0 + (sd * sd) / (mean * mean)).ln();
                    let mu = mean.ln() - sigma2 / 2.0;
                    Shape::LogNormal(LogNormal::new(mu, sigma2.sqrt()).expect("sigma > 0"))
                }
            }
        };
        Sampler {
            shape,
            floor: t.floor as f64,
            per_kib: t.per_kib,
        }
    }

    pub fn sample(&self, rng: &mut impl Rng, bytes: u64) -> u64 {
        let base = match &self.shape {
            Shape::Constant(v) => *v,
            // Truncated normal: redraw below the floor (the profile keeps
            // the floor well below the mean, so this ends quickly).
            Shape::Normal(n) => loop {
                let v = n.sample(rng);
                if v >= self.floor {
                    break v;
                }
            },
            Shape::LogNormal(l) => l.sample(rng).max(self.floor),
        };
        let extra_kib = (bytes / 1024).saturating_sub(4);
        // No command outlives Linux's NVMe I/O timeout (MAX_SERVICE): a
        // long tail or a huge block cannot push an event past it.
        round(base)
            .saturating_add(extra_kib.saturating_mul(self.per_kib))
            .min(MAX_SERVICE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn mean_of(t: &ServiceTime, bytes: u64) -> f64 {
        let s = Sampler::new(t);
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
        let n = 200_000;
        (0..n)
            .map(|_| s.sample(&mut rng, bytes) as f64)
            .sum::<f64>()
            / n as f64
    }

    /// The shipped profiles' read times (profiles/devices/*.toml): Optane's
    /// truncated normal, the P3700's log-normal.
    const OPTANE_READ: ServiceTime = ServiceTime {
        distribution: Distribution::Normal,
        mean: 7_369,
        stddev: 1_300,
        floor: 4_000,
        per_kib: 427,
    };
    const P3700_READ: ServiceTime = ServiceTime {
        distribution: Distribution::Lognormal,
        mean: 77_369,
        stddev: 29_000,
        floor: 20_000,
        per_kib: 379,
    };

    #[test]
    fn lognormal_keeps_the_profiles_mean_and_normal_respects_the_floor() {
        let m = mean_of(&P3700_READ, 4096);
        assert!((m / P3700_READ.mean as f64 - 1.0).abs() < 0.02, "{m}");
        let s = Sampler::new(&OPTANE_READ);
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
        assert!((0..100_000).all(|_| s.sample(&mut rng, 4096) >= OPTANE_READ.floor));
    }

    #[test]
    fn larger_blocks_add_transfer_time() {
        let d = mean_of(&OPTANE_READ, 64 * 1024) - mean_of(&OPTANE_READ, 4096);
        assert!((d - 60.0 * OPTANE_READ.per_kib as f64).abs() < 1.0, "{d}");
    }
}
