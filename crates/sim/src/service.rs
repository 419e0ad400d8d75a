//! Drawing a command's service time inside the device from its profile.

use rand::Rng;
use rand_distr::{Distribution as _, LogNormal, Normal};

use crate::limits::MAX_SERVICE;
use crate::profile::{Distribution, ServiceTime};

/// Samples one operation's service time: the 4 KiB shape, plus transfer time
/// for every KiB beyond 4.
#[derive(Clone, Debug)]
pub(crate) struct Sampler {
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
    pub(crate) fn new(t: &ServiceTime) -> Sampler {
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

    pub(crate) fn sample(&self, rng: &mut impl Rng, bytes: u64) -> u64 {
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
        // No command outlives Linux's NVMe I/O timeout (crate::limits): a
        // long tail or a huge block cannot push an event past it.
        round(base)
            .saturating_add(extra_kib.saturating_mul(self.per_kib))
            .min(MAX_SERVICE)
    }
}

/// `v.round() as u64` without the libm call (not inlined on baseline
/// x86-64; this is the device's per-command path). Exact: for 0 <= v < 2^53
/// the fraction `v - trunc(v)` is representable, and casts saturate as
/// `as u64` does (negative and NaN to 0).
pub(crate) fn round(v: f64) -> u64 {
    let t = v as u64;
    if v - t as f64 >= 0.5 && t < u64::MAX {
        t + 1
    } else {
        t
    }
}

/// `v.ceil() as u64`, likewise.
pub(crate) fn ceil(v: f64) -> u64 {
    let t = v as u64;
    if (t as f64) < v && t < u64::MAX {
        t + 1
    } else {
        t
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

    #[test]
    fn lognormal_keeps_the_profiles_mean_and_normal_respects_the_floor() {
        let p3700 = crate::DeviceProfile::load("p3700").unwrap();
        let m = mean_of(&p3700.read, 4096);
        assert!((m / p3700.read.mean as f64 - 1.0).abs() < 0.02, "{m}");
        let optane = crate::DeviceProfile::load("optane").unwrap();
        let s = Sampler::new(&optane.read);
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
        assert!((0..100_000).all(|_| s.sample(&mut rng, 4096) >= optane.read.floor));
    }

    #[test]
    fn round_and_ceil_match_the_float_ones() {
        let mut cases = vec![0.0, 0.5, 1.5, 2.5, 0.49999999999999994, 4503599627370495.5];
        cases.extend([-0.3, -2.5, f64::NAN, 1e30, 7.000000000000001, 6260.4999]);
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(3);
        cases.extend((0..10_000).map(|_| rng.random_range(0.0..1e7)));
        for v in cases {
            assert_eq!(round(v), v.round() as u64, "round {v}");
            assert_eq!(ceil(v), v.ceil() as u64, "ceil {v}");
        }
    }

    #[test]
    fn larger_blocks_add_transfer_time() {
        let optane = crate::DeviceProfile::load("optane").unwrap();
        let d = mean_of(&optane.read, 64 * 1024) - mean_of(&optane.read, 4096);
        assert!((d - 60.0 * optane.read.per_kib as f64).abs() < 1.0, "{d}");
    }
}
