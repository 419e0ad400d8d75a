//! An NVMe device's timing, as the simulator and the emulator both model
//! it: each command's service time inside the device drawn from a
//! distribution per operation ([`ServiceTime`], [`Sampler`]), and the
//! IOPS ceiling as a token bucket over the starts ([`Gate`]).
//!
//! One crate for both front ends so that a profile means the same device in
//! `cinterrupts sim --device` and `cinterrupts run --device`: the numbers
//! come from the simulator's profiles (`profiles/devices/*.toml`), the
//! draws from here. Times are `u64` nanoseconds.

use policy::{Nanos, SEC};
use rand::Rng;
use rand_distr::{Distribution as _, LogNormal, Normal};
use serde::{Deserialize, Deserializer};

/// The longest a command may take in the device: Linux's NVMe driver
/// aborts a command after `io_timeout`, 30 s by default
/// (drivers/nvme/host/core.c, `nvme_io_timeout = NVME_IO_TIMEOUT`, 30 s).
/// Service times above it are refused in a profile, and every drawn
/// service time (a long-tailed distribution, `per_kib` times a large block)
/// is clamped to it.
pub const MAX_SERVICE: Nanos = 30 * SEC;

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
    jobs::units::parse_duration(&s, None).map_err(serde::de::Error::custom)
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

/// The IOPS ceiling over a device's starts: a token bucket holding one
/// token per internal unit, refilled at the ceiling. A free unit starts its
/// command at once; only the sustained rate is bounded (issue 13: spacing
/// every start by 1/IOPS kept a batch from ever completing in a cluster,
/// against TOS Fig 18's batched gaps). Written as the GCRA form of the
/// bucket: `tat` is the theoretical arrival time; a command may start
/// `tolerance` before it, so up to `depth` commands start together after a
/// quiet spell, and over any long stretch starts come no faster than the
/// ceiling. One gate serves reads and writes, each with its own spacing.
#[derive(Clone, Debug)]
pub struct Gate {
    tat: f64,
    depth: u32,
}

impl Gate {
    /// `depth`: the device's internal parallelism, its units.
    pub fn new(depth: u32) -> Gate {
        Gate { tat: 0.0, depth }
    }

    /// When a command that a unit could start at `now` does start, given
    /// `spacing` ns per start ([`spacing`]). Fractional, so that a ceiling
    /// whose spacing is not a whole number of ns keeps its rate; the caller
    /// rounds up ([`ceil`]) where it needs a time.
    pub fn start(&mut self, now: Nanos, spacing: f64) -> f64 {
        let tolerance = (self.depth.saturating_sub(1)) as f64 * spacing;
        let start = (self.tat - tolerance).max(now as f64);
        self.tat = self.tat.max(start) + spacing;
        start
    }
}

/// Nanoseconds between starts at `iops` a second (at least one a second).
pub fn spacing(iops: u64) -> f64 {
    1e9 / iops.max(1) as f64
}

/// `v.round() as u64` without the libm call (not inlined on baseline
/// x86-64; this is the device's per-command path). Exact: for 0 <= v < 2^53
/// the fraction `v - trunc(v)` is representable, and casts saturate as
/// `as u64` does (negative and NaN to 0).
pub fn round(v: f64) -> u64 {
    let t = v as u64;
    if v - t as f64 >= 0.5 && t < u64::MAX {
        t + 1
    } else {
        t
    }
}

/// `v.ceil() as u64`, likewise.
pub fn ceil(v: f64) -> u64 {
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
        let d = mean_of(&OPTANE_READ, 64 * 1024) - mean_of(&OPTANE_READ, 4096);
        assert!((d - 60.0 * OPTANE_READ.per_kib as f64).abs() < 1.0, "{d}");
    }

    #[test]
    fn the_gate_lets_a_burst_of_depth_through_and_holds_the_rate() {
        let mut g = Gate::new(4);
        let sp = spacing(1_000_000); // 1 us a start
        let starts: Vec<f64> = (0..12).map(|_| g.start(0, sp)).collect();
        // Four units' tokens at once, then one a microsecond.
        assert_eq!(&starts[..4], [0.0; 4]);
        for (i, s) in starts[4..].iter().enumerate() {
            assert_eq!(*s, (i + 1) as f64 * 1_000.0, "{starts:?}");
        }
        // With one unit, the bucket is a minimum gap between starts.
        let mut g = Gate::new(1);
        assert_eq!(
            [g.start(0, sp), g.start(0, sp), g.start(5_000, sp)],
            [0.0, 1_000.0, 5_000.0]
        );
    }
}
