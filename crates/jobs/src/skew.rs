//! fio's skewed block generators, as lib/zipf.c and lib/gauss.c write them:
//! a block index in `0..nranges` per draw. fio draws from its own 32-bit
//! generator (`__rand`, `FRAND32_MAX`); here the caller's generator gives
//! the same 32-bit uniform numbers.

use rand::Rng;

/// fio's `ZIPF_MAX_GEN` (lib/zipf.c): zeta(n) is summed over at most this
/// many terms ("Precision will take a slight hit, but nothing major").
const ZIPF_MAX_GEN: u64 = 10_000_000;

/// fio's `GAUSS_ITERS` (lib/gauss.c): the normal is the mean of 12
/// uniforms.
const GAUSS_ITERS: u64 = 12;

/// fio's `FRAND32_MAX` (lib/rand.h).
const FRAND32_MAX: f64 = u32::MAX as f64;

/// fio's `__hash_u64` (hash.h): scatters the hot blocks over the file.
fn hash_u64(v: u64) -> u64 {
    v.wrapping_mul(0x61C8_8646_80B5_83EB)
}

fn uniform<R: Rng + ?Sized>(rng: &mut R) -> u64 {
    u64::from(rng.random::<u32>())
}

/// One file's generator state (fio's `struct zipf_state` / `gauss_state`).
#[derive(Clone, Debug)]
pub(crate) enum Skew {
    Zipf {
        n: u64,
        theta: f64,
        zetan: f64,
        zeta2: f64,
        rand_off: u64,
    },
    Pareto {
        n: u64,
        pow: f64,
        rand_off: u64,
    },
    Gauss {
        n: u64,
        stddev: u64,
        rand_off: u64,
    },
}

/// `shared_rand_init`: the offset is a random 32-bit number, or the
/// center's share of the ranges.
fn rand_off<R: Rng + ?Sized>(n: u64, center: Option<f64>, rng: &mut R) -> u64 {
    let off = uniform(rng);
    match center {
        Some(c) => (n as f64 * c) as u64,
        None => off,
    }
}

impl Skew {
    /// `zipf_init`.
    pub fn zipf<R: Rng + ?Sized>(n: u64, theta: f64, center: Option<f64>, rng: &mut R) -> Skew {
        let n = n.max(1);
        let rand_off = rand_off(n, center, rng);
        let zeta2 = 1.0f64.powf(theta) + 0.5f64.powf(theta);
        let zetan = (0..n.min(ZIPF_MAX_GEN))
            .map(|i| (1.0 / (i + 1) as f64).powf(theta))
            .sum();
        Skew::Zipf {
            n,
            theta,
            zetan,
            zeta2,
            rand_off,
        }
    }

    /// `pareto_init`.
    pub fn pareto<R: Rng + ?Sized>(n: u64, h: f64, center: Option<f64>, rng: &mut R) -> Skew {
        let n = n.max(1);
        Skew::Pareto {
            n,
            pow: h.ln() / (1.0 - h).ln(),
            rand_off: rand_off(n, center, rng),
        }
    }

    /// `gauss_init`: `dev` is percent of the ranges; the center shifts the
    /// peak from the middle.
    pub fn gauss<R: Rng + ?Sized>(n: u64, dev: f64, center: Option<f64>, rng: &mut R) -> Skew {
        let n = n.max(1);
        // fio seeds its generator here and draws nothing.
        let _ = rng;
        let stddev = if dev != 0.0 {
            ((n as f64 * dev / 100.0).ceil() as u64).min(n / 2)
        } else {
            0
        };
        let rand_off = match center {
            None => 0,
            Some(c) => (n as f64 * (c - 0.5)) as i64 as u64,
        };
        Skew::Gauss {
            n,
            stddev,
            rand_off,
        }
    }

    /// The next block index, `0..n` (`zipf_next`, `pareto_next`,
    /// `gauss_next`, with fio's hash on: the rank is scattered over the
    /// file, so the hottest blocks are not the first ones).
    pub fn next<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        let (n, off) = match *self {
            Skew::Zipf { n, rand_off, .. }
            | Skew::Pareto { n, rand_off, .. }
            | Skew::Gauss { n, rand_off, .. } => (n, rand_off),
        };
        hash_u64(self.rank(rng)).wrapping_add(off) % n
    }

    /// The generator's value before fio's hash and offset: for zipf and
    /// pareto the popularity rank (0 the hottest), for normal the block.
    fn rank<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        match *self {
            Skew::Zipf {
                n,
                theta,
                zetan,
                zeta2,
                ..
            } => {
                let alpha = 1.0 / (1.0 - theta);
                let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
                let rand_uni = uniform(rng) as f64 / FRAND32_MAX;
                let rand_z = rand_uni * zetan;
                let val = if rand_z < 1.0 {
                    1
                } else if rand_z < 1.0 + 0.5f64.powf(theta) {
                    2
                } else {
                    1 + (n as f64 * (eta * rand_uni - eta + 1.0).powf(alpha)) as u64
                };
                val - 1
            }
            Skew::Pareto { n, pow, .. } => {
                let r = uniform(rng) as f64 / FRAND32_MAX;
                ((n - 1) as f64 * r.powf(pow)) as u64
            }
            Skew::Gauss { n, stddev, .. } => {
                let mut sum: u64 = (0..GAUSS_ITERS).map(|_| uniform(rng) % (n + 1)).sum();
                sum = sum.div_ceil(GAUSS_ITERS);
                if stddev > 0 {
                    // gauss_dev: a uniform deviation in [-stddev/2, stddev/2).
                    let r = uniform(rng) as f64;
                    let vr = (stddev as f64 * (r / (FRAND32_MAX + 1.0))) as i64;
                    let mut dev = vr - (stddev / 2) as i64;
                    // C's `dev + sum` is unsigned: a sum below zero wraps
                    // high and halves the deviation too. (At dev 0 with
                    // sum == n fio would loop for ever; it stops here.)
                    while dev != 0 && sum.wrapping_add(dev as u64) >= n {
                        dev /= 2;
                    }
                    sum = sum.wrapping_add(dev as u64);
                }
                sum
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    fn shares(skew: &Skew, draws: usize) -> Vec<f64> {
        let (Skew::Zipf { n, .. } | Skew::Pareto { n, .. } | Skew::Gauss { n, .. }) = *skew;
        let mut r = StdRng::seed_from_u64(5);
        let mut c = vec![0usize; n as usize + 1];
        for _ in 0..draws {
            c[skew.rank(&mut r).min(n) as usize] += 1;
        }
        c.iter().map(|&k| k as f64 / draws as f64).collect()
    }

    /// fio's zipf_next (Gray et al., "Quickly generating billion-record
    /// synthetic databases") against Zipf's law, P(rank i) = i^-theta /
    /// zeta(n): exact for the two hottest ranks, which it draws directly,
    /// and close beyond.
    #[test]
    fn zipf_ranks_follow_zipfs_law() {
        let mut r = StdRng::seed_from_u64(1);
        for theta in [0.5, 1.2] {
            let n = 10_000u64;
            let z = Skew::zipf(n, theta, None, &mut r);
            let s = shares(&z, 1_000_000);
            let zeta: f64 = (1..=n).map(|i| (i as f64).powf(-theta)).sum();
            for rank in [1usize, 2] {
                let want = (rank as f64).powf(-theta) / zeta;
                assert!(
                    (s[rank - 1] - want).abs() < 0.05 * want + 0.0005,
                    "theta {theta} rank {rank}: {} vs {want}",
                    s[rank - 1]
                );
            }
            let top100: f64 = s[..100].iter().sum();
            let want100: f64 = (1..=100).map(|i| (i as f64).powf(-theta)).sum::<f64>() / zeta;
            assert!(
                (top100 - want100).abs() < 0.1 * want100,
                "theta {theta}: top 100 {top100} vs {want100}"
            );
        }
    }

    /// pareto_next: n * u^(ln h / ln(1-h)); with h = 0.2 the lowest 20% of
    /// ranks take 80% of the draws ("80/20").
    #[test]
    fn pareto_ranks_put_80_percent_on_20_percent() {
        let mut r = StdRng::seed_from_u64(2);
        let n = 10_000u64;
        let s = shares(&Skew::pareto(n, 0.2, None, &mut r), 500_000);
        let low: f64 = s[..2000].iter().sum();
        assert!((low - 0.8).abs() < 0.005, "{low}");
    }

    /// gauss_next: the mean of 12 uniforms over 0..=n, centred on n/2.
    #[test]
    fn normal_values_centre_on_the_middle() {
        let mut r = StdRng::seed_from_u64(3);
        let n = 10_000u64;
        let s = shares(&Skew::gauss(n, 0.0, None, &mut r), 200_000);
        let mean: f64 = s.iter().enumerate().map(|(i, p)| i as f64 * p).sum();
        assert!((mean - n as f64 / 2.0).abs() < 20.0, "{mean}");
        // The mean of 12 uniforms has sd n/sqrt(144): 95% within 2 sd.
        let sd = n as f64 / 12.0;
        let inside: f64 = s
            .iter()
            .enumerate()
            .filter(|(i, _)| (*i as f64 - n as f64 / 2.0).abs() < 2.0 * sd)
            .map(|(_, p)| p)
            .sum();
        assert!((inside - 0.954).abs() < 0.01, "{inside}");
    }
}
