//! A device's timing fitted from a block trace (issue 27 item 6): each
//! request's issue-to-completion time read as its service time, per
//! direction, into the profile's terms (a 4 KiB shape, its floor and
//! `per_kib`), with the device's observed parallelism and IOPS, and the
//! fit's error on a held-out part of the trace at p50 to p99.99.
//!
//! What a trace can and cannot say: issue-to-completion (blkparse's D to
//! C) includes the driver's completion path and, beyond the device's
//! parallelism, queueing inside it; a capture at queue depth 1 reads the
//! device itself. The parallelism is the most requests seen in flight at
//! once, the IOPS the busiest 100 ms's completions (lower bounds: a
//! trace that never saturates the device cannot show its ceiling).
//!
//! The device's own service time and its concurrency are fitted apart
//! (issue 37 item 5: a fit dominated by depth-8 and depth-32 requests read
//! their queueing inside the device as service time: 298 us for reads
//! whose clat p50 at depth 1 is about 52 us on this VM's disk, PLATFORM.md
//! "fio 3.33, 4 KiB randread"). The
//! service time of a direction comes from the requests alone for their
//! whole life: none other in flight at their issue and none issued before
//! they completed (a batch-completing device holds a lone-issued request
//! to its batch's end; `issued_alone`) ([`crate::fit::MIN_ALONE`] of them at least;
//! otherwise from all, as a trace with none alone can give no better). The
//! parallelism is then the concurrency the busiest window needs at that
//! service time, by Little's law (L = lambda W: the busiest 100 ms's IOPS
//! times the own mean service time), at most the most seen in flight.
//! This method was fixed before the held-out results it would change were
//! looked at, and applies to every trace alike.

use rand::SeedableRng;

use crate::{Distribution, Sampler, ServiceTime};

/// One traced request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    pub write: bool,
    pub bytes: u64,
    pub issue: u64,
    pub complete: u64,
}

impl Sample {
    fn latency(&self) -> u64 {
        self.complete.saturating_sub(self.issue)
    }
}

/// The fewest requests alone that a direction's service time is
/// fitted from: the fit's p99 (which picks its shape) needs 100.
pub const MIN_ALONE: usize = 100;

/// The percentiles the fit reports its error at.
pub const QUANTILES: [f64; 5] = [0.50, 0.90, 0.99, 0.999, 0.9999];

/// One direction's fit.
#[derive(Clone, Debug, PartialEq)]
pub struct Direction {
    pub time: ServiceTime,
    /// Fitted from the requests alone (no other in flight over their life), not
    /// from all.
    pub alone: bool,
    /// Requests fitted, and held out.
    pub fitted: usize,
    pub held_out: usize,
    /// Per quantile: (held-out value, the fitted model's, relative error).
    pub errors: Vec<(f64, u64, u64, f64)>,
}

/// The whole fit.
#[derive(Clone, Debug, PartialEq)]
pub struct Fit {
    pub read: Option<Direction>,
    pub write: Option<Direction>,
    pub parallelism: u32,
    /// The most requests in flight at once in the trace.
    pub most_in_flight: u32,
    pub max_read_iops: u64,
    pub max_write_iops: u64,
    /// TOS 5.2's delta: the 90th percentile of the gaps between consecutive
    /// completions, ns.
    pub delta: u64,
}

fn quantile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Least-squares slope of latency against KiB beyond 4, over the requests
/// larger than 4 KiB (0 without any, and never negative).
fn per_kib(s: &[&Sample]) -> u64 {
    let big: Vec<(f64, f64)> = s
        .iter()
        .map(|x| ((x.bytes / 1024) as f64 - 4.0, x.latency() as f64))
        .collect();
    if big.iter().all(|p| p.0 <= 0.0) {
        return 0;
    }
    let n = big.len() as f64;
    let mx = big.iter().map(|p| p.0).sum::<f64>() / n;
    let my = big.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = big.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if sxx == 0.0 {
        return 0;
    }
    let sxy: f64 = big.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxy / sxx).max(0.0).round() as u64
}

fn direction(fit: &[&Sample], held: &[&Sample], seed: u64) -> Option<Direction> {
    if fit.len() < 2 {
        return None;
    }
    let slope = per_kib(fit);
    // Each latency as its 4 KiB equivalent.
    let base: Vec<f64> = fit
        .iter()
        .map(|x| {
            let extra = (x.bytes / 1024).saturating_sub(4) * slope;
            x.latency().saturating_sub(extra) as f64
        })
        .collect();
    // The shape from the quantiles, not the moments: a trace's few
    // outliers (a host hiccup, a cache miss behind the device) would set
    // the moments alone. Each candidate matches the fitting part's p50 and
    // p90 exactly (normal: mean p50, sd (p90 - p50) / z90; log-normal: mu
    // ln p50, sigma (ln p90 - mu) / z90, its own mean and sd from those);
    // the one whose p99 is nearer the fitting part's is kept.
    const Z90: f64 = 1.281_551_565_5;
    let mut sorted: Vec<u64> = base.iter().map(|&v| v.round() as u64).collect();
    sorted.sort_unstable();
    let (p50, p90, p99) = (
        quantile(&sorted, 0.5).max(1) as f64,
        quantile(&sorted, 0.9).max(1) as f64,
        quantile(&sorted, 0.99).max(1) as f64,
    );
    let min = sorted[0];
    let normal = ServiceTime {
        distribution: Distribution::Normal,
        mean: p50.round() as u64,
        stddev: ((p90 - p50) / Z90).max(0.0).round() as u64,
        floor: min.min((p50 as u64).saturating_sub(1)),
        per_kib: slope,
    };
    let sigma = ((p90.ln() - p50.ln()) / Z90).max(0.0);
    let ln_mean = (p50.ln() + sigma * sigma / 2.0).exp();
    let lognormal = ServiceTime {
        distribution: Distribution::Lognormal,
        mean: ln_mean.round().max(1.0) as u64,
        stddev: (ln_mean * ((sigma * sigma).exp() - 1.0).sqrt()).round() as u64,
        floor: min.min((ln_mean as u64).saturating_sub(1)),
        per_kib: slope,
    };
    let p99_of = |t: &ServiceTime| -> f64 {
        let sm = Sampler::new(t);
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
        let mut v: Vec<u64> = (0..20_000).map(|_| sm.sample(&mut rng, 4096)).collect();
        v.sort_unstable();
        quantile(&v, 0.99) as f64
    };
    let time = if (p99_of(&lognormal) - p99).abs() < (p99_of(&normal) - p99).abs() {
        lognormal
    } else {
        normal
    };
    let mut errors = Vec::new();
    if !held.is_empty() {
        let sampler = Sampler::new(&time);
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
        // The model drawn for the held-out requests' own sizes, many times
        // over so its tail quantiles are its own, not the draw's.
        let reps = (100_000 / held.len()).max(1);
        let mut model: Vec<u64> = Vec::with_capacity(held.len() * reps);
        for _ in 0..reps {
            model.extend(held.iter().map(|x| sampler.sample(&mut rng, x.bytes)));
        }
        model.sort_unstable();
        let mut seen: Vec<u64> = held.iter().map(|x| x.latency()).collect();
        seen.sort_unstable();
        for q in QUANTILES {
            let (s, m) = (quantile(&seen, q), quantile(&model, q));
            let err = if s == 0 {
                0.0
            } else {
                (m as f64 - s as f64) / s as f64
            };
            errors.push((q, s, m, err));
        }
    }
    Some(Direction {
        time,
        alone: false,
        fitted: fit.len(),
        held_out: held.len(),
        errors,
    })
}

fn pick(v: &[Sample], w: bool) -> Vec<&Sample> {
    v.iter().filter(|x| x.write == w).collect()
}

/// For each sample (in `samples`' order), whether it was alone for its
/// whole life: no other sample in flight at its issue (issued before it
/// and not yet complete) and none issued before it completed.
///
/// Alone at issue is not enough. A device that completes in batches holds
/// a request issued alone until the batch it joined is done: Firecracker's
/// virtio block device serves every available request in one
/// `process_queue` pass and signals the used ring once after it
/// (src/vmm/src/devices/virtio/block/virtio/device.rs at 00110f3e), and
/// Linux's `virtblk_done` drains the whole used ring per interrupt
/// (drivers/block/virtio_blk.c). The first request of a burst is issued
/// alone but completes with the burst, so its time is the batch's, not the
/// device's: on this VM's disk the fitted read read p50 36 us but p90 290
/// us from such firsts (crates/validate/results/2026-12-07-2/README.md).
/// Fixed from that mechanism, before the held-out results it changes were
/// seen, for every trace alike.
fn issued_alone(samples: &[Sample]) -> Vec<bool> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut order: Vec<usize> = (0..samples.len()).collect();
    order.sort_by_key(|&i| (samples[i].issue, i));
    let mut out = vec![false; samples.len()];
    let mut pending: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
    for (k, &i) in order.iter().enumerate() {
        let s = &samples[i];
        while pending.peek().is_some_and(|Reverse(c)| *c <= s.issue) {
            pending.pop();
        }
        // The next issue in time order is the first that could join it.
        let joined = order
            .get(k + 1)
            .is_some_and(|&j| samples[j].issue < s.complete);
        out[i] = pending.is_empty() && !joined;
        pending.push(Reverse(s.complete));
    }
    out
}

/// One direction fitted from its requests alone when there are
/// [`MIN_ALONE`] of them, else from all.
fn direction_of(
    fit: &[Sample],
    fit_alone: &[bool],
    held: &[Sample],
    held_alone: &[bool],
    w: bool,
    seed: u64,
) -> Option<Direction> {
    let alone = |v: &'_ [Sample], a: &[bool]| -> Vec<usize> {
        (0..v.len()).filter(|&i| v[i].write == w && a[i]).collect()
    };
    let fa = alone(fit, fit_alone);
    if fa.len() >= MIN_ALONE {
        let f: Vec<&Sample> = fa.iter().map(|&i| &fit[i]).collect();
        let h: Vec<&Sample> = alone(held, held_alone).iter().map(|&i| &held[i]).collect();
        let mut d = direction(&f, &h, seed)?;
        d.alone = true;
        return Some(d);
    }
    direction(&pick(fit, w), &pick(held, w), seed)
}

/// Fits `samples` (in trace order), holding out the last `hold_out`
/// fraction for the error.
pub fn fit(samples: &[Sample], hold_out: f64, seed: u64) -> Fit {
    let cut = ((samples.len() as f64) * (1.0 - hold_out.clamp(0.0, 0.9))).round() as usize;
    let (a, b) = samples.split_at(cut.min(samples.len()));
    // Concurrency: +1 at each issue, -1 at each completion.
    let mut edges: Vec<(u64, i64)> = samples
        .iter()
        .flat_map(|s| [(s.issue, 1), (s.complete, -1)])
        .collect();
    edges.sort_unstable_by_key(|&(t, d)| (t, d));
    let (mut now, mut most) = (0i64, 0i64);
    for (_, d) in edges {
        now += d;
        most = most.max(now);
    }
    let busiest = |w: bool| -> u64 {
        let mut per: std::collections::HashMap<u64, u64> = Default::default();
        for s in samples.iter().filter(|s| s.write == w) {
            *per.entry(s.complete / 100_000_000).or_insert(0) += 1;
        }
        per.values().copied().max().unwrap_or(0) * 10
    };
    let mut done: Vec<u64> = samples.iter().map(|s| s.complete).collect();
    done.sort_unstable();
    let mut gaps: Vec<u64> = done.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort_unstable();
    let alone = issued_alone(samples);
    let (fa, ha) = alone.split_at(a.len());
    let read = direction_of(a, fa, b, ha, false, seed);
    let write = direction_of(a, fa, b, ha, true, seed ^ 1);
    let (max_read_iops, max_write_iops) = (busiest(false), busiest(true));
    let most = most.max(1) as u32;
    // Little's law over each direction fitted from its own service time:
    // the units its busiest window kept busy.
    let needed = [(&read, max_read_iops), (&write, max_write_iops)]
        .iter()
        .filter_map(|(d, iops)| {
            let d = d.as_ref().filter(|d| d.alone)?;
            Some((*iops as f64 * d.time.mean as f64 / 1e9).ceil() as u32)
        })
        .max();
    Fit {
        read,
        write,
        parallelism: needed.map_or(most, |n| n.clamp(1, most)),
        most_in_flight: most,
        max_read_iops,
        max_write_iops,
        delta: quantile(&gaps, 0.9),
    }
}

/// A profile's `[read]`/`[write]` table for `t`.
fn table(name: &str, t: &ServiceTime) -> String {
    let dist = match t.distribution {
        Distribution::Normal => "normal",
        Distribution::Lognormal => "lognormal",
    };
    format!(
        "[{name}]\ndistribution = \"{dist}\"\nmean = \"{}ns\"\nstddev = \"{}ns\"\nfloor = \"{}ns\"\nper_kib = \"{}ns\"\n",
        t.mean, t.stddev, t.floor, t.per_kib
    )
}

impl Fit {
    /// A comment saying which requests a direction's timing was fitted from.
    fn source(&self, d: Option<&Direction>) -> String {
        match d {
            Some(d) if d.alone => format!(
                "# From the {} requests alone for their whole life, none other in flight from issue to completion (the device's own time).\n",
                d.fitted
            ),
            Some(d) => format!(
                "# From all {} requests (fewer than {MIN_ALONE} alone).\n",
                d.fitted
            ),
            None => String::new(),
        }
    }

    /// Where the profile's parallelism comes from.
    fn parallelism_note(&self) -> String {
        let alone = |d: &Option<Direction>| d.as_ref().is_some_and(|d| d.alone);
        if alone(&self.read) || alone(&self.write) {
            format!(
                "Little's law: the busiest 100 ms's IOPS times the service time of the requests alone (at most the {} seen in flight).",
                self.most_in_flight
            )
        } else {
            "The most requests the trace had in flight at once.".into()
        }
    }

    /// The fit as a device profile (TOML, every number saying where it
    /// comes from); a direction the trace lacks takes the other's timing.
    pub fn profile(&self, name: &str, origin: &str) -> Option<String> {
        let read = self.read.as_ref().or(self.write.as_ref())?.time;
        let write = self.write.as_ref().or(self.read.as_ref())?.time;
        // A direction the trace lacks takes the other's ceiling too (a
        // ceiling of 1 would hold another program's few writes a second
        // each in a replay).
        let (r_iops, w_iops) = match (self.read.is_some(), self.write.is_some()) {
            (true, false) => (self.max_read_iops, self.max_read_iops),
            (false, true) => (self.max_write_iops, self.max_write_iops),
            _ => (self.max_read_iops, self.max_write_iops),
        };
        let iops = |v: u64| v.max(1);
        Some(format!(
            "# Fitted by `cinterrupts calibrate --device-from {origin}`: issue-to-completion\n\
             # times read as service times (crates/service/src/fit.rs says what a trace\n\
             # can and cannot show).\n\
             name = \"{name}\"\n\
             description = \"fitted from {origin}\"\n\
             # Not in a trace: the shipped profiles' values.\n\
             queues = 32\nqueue_depth = 4096\n\
             # {}\n\
             parallelism = {}\n\
             # The busiest 100 ms of the trace, per second (a lower bound).\n\
             max_read_iops = {}\nmax_write_iops = {}\n\
             # TOS 5.2: the 90th percentile of the gaps between completions.\n\
             default_delta = \"{}ns\"\n\
             # TOS 5.2's thr for the paper's devices (not derivable from a trace).\n\
             default_thr = 32\n\n{}\n{}",
            self.parallelism_note(),
            self.parallelism,
            iops(r_iops),
            iops(w_iops),
            self.delta.max(1),
            self.source(self.read.as_ref().or(self.write.as_ref())) + &table("read", &read),
            self.source(self.write.as_ref().or(self.read.as_ref())) + &table("write", &write),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn qd1(n: usize, lat: impl Fn(usize) -> u64, bytes: u64, write: bool) -> Vec<Sample> {
        let mut t = 0;
        (0..n)
            .map(|i| {
                let l = lat(i);
                let s = Sample {
                    write,
                    bytes,
                    issue: t,
                    complete: t + l,
                };
                t += l + 1_000;
                s
            })
            .collect()
    }

    #[test]
    fn a_constant_device_is_fitted_exactly() {
        let s = qd1(1000, |_| 10_000, 4096, false);
        let f = fit(&s, 0.3, 1);
        let r = f.read.unwrap();
        assert_eq!((r.time.mean, r.time.stddev, r.time.per_kib), (10_000, 0, 0));
        assert!(f.write.is_none());
        assert_eq!(f.parallelism, 1);
        for (q, seen, model, err) in &r.errors {
            assert_eq!((seen, model), (&10_000, &10_000), "{q}");
            assert_eq!(*err, 0.0);
        }
    }

    /// `n` latencies drawn from `t` (4 KiB), as a trace at queue depth 1.
    fn drawn(t: &ServiceTime, n: usize, write: bool, seed: u64) -> Vec<Sample> {
        let s = Sampler::new(t);
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
        let lat: Vec<u64> = (0..n).map(|_| s.sample(&mut rng, 4096)).collect();
        qd1(n, |i| lat[i], 4096, write)
    }

    const NORMAL: ServiceTime = ServiceTime {
        distribution: Distribution::Normal,
        mean: 10_000,
        stddev: 3_000,
        floor: 0,
        per_kib: 0,
    };

    fn near(got: u64, want: u64, within: f64) -> bool {
        (got as f64 / want as f64 - 1.0).abs() < within
    }

    #[test]
    fn quantile_is_the_nearest_rank_of_the_sorted_values() {
        let v = [10, 20, 30, 40, 50];
        assert_eq!(quantile(&v, 0.0), 10);
        assert_eq!(quantile(&v, 0.5), 30);
        // Rank (5 - 1) x 0.6 = 2.4, the third value; 3.6, the fifth.
        assert_eq!(quantile(&v, 0.6), 30);
        assert_eq!(quantile(&v, 0.9), 50);
        assert_eq!(quantile(&v, 1.0), 50);
        assert_eq!(quantile(&[], 0.5), 0);
    }

    #[test]
    fn a_normal_trace_is_fitted_as_normal_with_its_mean_and_spread() {
        // The candidate whose p99 is nearer the trace's is kept; a normal
        // one's mean is the p50, its sd (p90 - p50) / z90.
        let f = fit(&drawn(&NORMAL, 20_000, false, 4), 0.2, 5);
        let t = f.read.unwrap().time;
        assert_eq!(t.distribution, Distribution::Normal, "{t:?}");
        assert!(near(t.mean, 10_000, 0.02), "{t:?}");
        assert!(near(t.stddev, 3_000, 0.05), "{t:?}");
    }

    #[test]
    fn a_lognormal_trace_is_fitted_as_lognormal_with_its_own_mean_and_spread() {
        // Log-normal: mu = ln p50, sigma = (ln p90 - mu) / z90, and the
        // profile gives the distribution's own mean exp(mu + sigma^2 / 2)
        // and sd mean * sqrt(exp(sigma^2) - 1) (as `Sampler` reads them).
        let t = ServiceTime {
            distribution: Distribution::Lognormal,
            stddev: 5_000,
            ..NORMAL
        };
        let f = fit(&drawn(&t, 20_000, false, 6), 0.2, 7);
        let got = f.read.unwrap().time;
        assert_eq!(got.distribution, Distribution::Lognormal, "{got:?}");
        assert!(near(got.mean, 10_000, 0.03), "{got:?}");
        assert!(near(got.stddev, 5_000, 0.08), "{got:?}");
    }

    #[test]
    fn a_constant_trace_is_written_as_a_normal_of_no_spread_with_its_gap_as_delta() {
        // Both candidates are the same constant device then: the tie keeps
        // the normal, the form of the constant-service fixtures
        // (`DeviceProfile::constant_service_toml`). TOS 5.2's delta is the
        // p90 of the gaps between completions: 10 us of service and 1 us
        // idle apart.
        let f = fit(&qd1(1000, |_| 10_000, 4096, false), 0.3, 1);
        assert_eq!(f.read.unwrap().time.distribution, Distribution::Normal);
        assert_eq!(f.delta, 11_000);
    }

    #[test]
    fn requests_of_at_most_4k_give_no_per_kib_slope() {
        // per_kib is the transfer time of each KiB beyond the first 4
        // (`Sampler::sample`): 1 KiB and 4 KiB requests have none, however
        // their latencies differ.
        let mut s = qd1(100, |_| 5_000, 1024, false);
        s.extend(qd1(100, |_| 10_000, 4096, false).into_iter().map(|mut x| {
            x.issue += 1 << 40;
            x.complete += 1 << 40;
            x
        }));
        assert_eq!(fit(&s, 0.0, 1).read.unwrap().time.per_kib, 0);
    }

    #[test]
    fn a_trace_of_only_large_requests_still_gives_their_slope() {
        // 8 KiB at 10 us + 4 x 500 ns, 64 KiB at 10 us + 60 x 500 ns.
        let mut s = qd1(100, |_| 12_000, 8192, false);
        s.extend(qd1(100, |_| 40_000, 65536, false).into_iter().map(|mut x| {
            x.issue += 1 << 40;
            x.complete += 1 << 40;
            x
        }));
        let t = fit(&s, 0.0, 1).read.unwrap().time;
        assert_eq!((t.per_kib, t.mean), (500, 10_000));
    }

    #[test]
    fn two_requests_are_enough_to_fit_a_direction_and_one_is_not() {
        let f = fit(&qd1(2, |_| 10_000, 4096, false), 0.0, 1);
        assert_eq!(f.read.map(|r| r.fitted), Some(2));
        assert!(fit(&qd1(1, |_| 10_000, 4096, false), 0.0, 1).read.is_none());
    }

    #[test]
    fn the_last_hold_out_fraction_of_the_trace_is_held_out() {
        let r = fit(&qd1(10, |_| 10_000, 4096, false), 0.3, 1).read.unwrap();
        assert_eq!((r.fitted, r.held_out), (7, 3));
    }

    #[test]
    fn the_error_is_the_models_quantile_relative_to_the_held_out_ones() {
        // Fitted at 10 us, held out at 12 us: the model is 1/6 short at
        // every quantile.
        let s = qd1(10, |i| if i < 8 { 10_000 } else { 12_000 }, 4096, false);
        let r = fit(&s, 0.2, 1).read.unwrap();
        assert_eq!(r.errors.len(), QUANTILES.len());
        for &(q, seen, model, err) in &r.errors {
            assert_eq!(
                (seen, model, err),
                (12_000, 10_000, -2_000.0 / 12_000.0),
                "{q}"
            );
        }
    }

    #[test]
    fn few_held_out_requests_are_modelled_by_many_draws_each() {
        // Three held out: the model is drawn for their sizes many times
        // over, so its p99.99 is the fitted distribution's own (beyond
        // mean + 3 sd for a normal), not the largest of three draws.
        let r = fit(&drawn(&NORMAL, 1_000, false, 8), 0.003, 9)
            .read
            .unwrap();
        assert_eq!(r.held_out, 3);
        let (q, _, model, _) = *r.errors.last().unwrap();
        assert_eq!(q, 0.9999);
        let t = r.time;
        assert!(model > t.mean + 3 * t.stddev, "{model} {t:?}");
    }

    #[test]
    fn reads_and_writes_are_modelled_from_different_draws() {
        // The same latencies each way: with one seed for both, the two
        // models would be the same draws.
        let (r, w) = (
            drawn(&NORMAL, 2_000, false, 10),
            drawn(&NORMAL, 2_000, true, 10),
        );
        let s: Vec<Sample> = r.into_iter().zip(w).flat_map(|(r, w)| [r, w]).collect();
        let f = fit(&s, 0.5, 1);
        let (r, w) = (f.read.unwrap(), f.write.unwrap());
        assert_eq!(r.time, w.time);
        assert_ne!(r.errors, w.errors);
    }

    #[test]
    fn a_reads_only_trace_gives_writes_the_read_ceiling() {
        let s: Vec<Sample> = (0..8)
            .map(|i| Sample {
                write: false,
                bytes: 4096,
                issue: i,
                complete: 100 + i,
            })
            .collect();
        let p = fit(&s, 0.0, 3).profile("fitted", "x.trace").unwrap();
        assert!(
            p.contains("max_read_iops = 80\nmax_write_iops = 80\n"),
            "{p}"
        );
    }

    #[test]
    fn the_size_slope_and_a_spread_are_recovered() {
        // 4 KiB at 8 us +- a spread, 64 KiB 60 * 500 ns more.
        let mut s = qd1(2000, |i| 8_000 + (i % 7) as u64 * 300, 4096, false);
        s.extend(
            qd1(
                2000,
                |i| 8_000 + 60 * 500 + (i % 7) as u64 * 300,
                65536,
                false,
            )
            .into_iter()
            .map(|mut x| {
                x.issue += 1 << 40;
                x.complete += 1 << 40;
                x
            }),
        );
        let f = fit(&s, 0.2, 2);
        let r = f.read.unwrap();
        assert!((r.time.per_kib as i64 - 500).abs() <= 5, "{:?}", r.time);
        assert!((r.time.mean as i64 - 8_900).abs() <= 50, "{:?}", r.time);
        assert!(r.time.stddev > 0 && r.time.floor <= 8_000);
    }

    #[test]
    fn concurrency_and_the_busiest_window_are_read() {
        let s: Vec<Sample> = (0..8)
            .map(|i| Sample {
                write: true,
                bytes: 4096,
                issue: i,
                complete: 100 + i,
            })
            .collect();
        let f = fit(&s, 0.0, 3);
        assert_eq!(f.parallelism, 8);
        assert_eq!(f.max_write_iops, 80);
        let p = f.profile("fitted", "x.trace").unwrap();
        assert!(p.contains("parallelism = 8"), "{p}");
        // Writes only: the read ceiling is the write one, not 1.
        assert!(p.contains("max_read_iops = 80\n"), "{p}");
        assert!(p.contains("[read]") && p.contains("[write]"), "{p}");
    }

    #[test]
    fn the_service_time_comes_from_requests_issued_alone_and_the_parallelism_from_littles_law() {
        // 200 requests alone at 100 us, then 40 bursts of 32 at once whose
        // latencies grow with their place in the burst (queueing inside the
        // device: 100 us each, 4 at a time).
        let mut s = qd1(200, |_| 100_000, 4096, false);
        let mut t = s.last().unwrap().complete + 1_000_000;
        for _ in 0..40 {
            for k in 0..32u64 {
                s.push(Sample {
                    write: false,
                    bytes: 4096,
                    issue: t,
                    complete: t + (k / 4 + 1) * 100_000,
                });
            }
            t += 900_000;
        }
        let f = fit(&s, 0.0, 1);
        let r = f.read.as_ref().unwrap();
        assert!(r.alone);
        assert_eq!(
            r.fitted, 200,
            "a burst's first is issued alone but joined by the rest: not alone"
        );
        assert_eq!(r.time.mean, 100_000, "{:?}", r.time);
        assert_eq!(f.most_in_flight, 32);
        // The busiest 100 ms: 3,200 / 0.1 s at 100 us each needs 32 units.
        let busiest = f.max_read_iops as f64;
        let need = (busiest * 100e-6).ceil() as u32;
        assert_eq!(f.parallelism, need.clamp(1, 32));
        let p = f.profile("x", "t").unwrap();
        assert!(p.contains("alone for their whole life"), "{p}");
        assert!(p.contains("Little's law"), "{p}");
    }

    #[test]
    fn a_request_issued_alone_but_joined_before_it_completes_is_not_alone() {
        // Under batch completion (virtio), a request issued alone at 0 is
        // joined at 10 us and both complete at 300 us, the batch's end;
        // 150 truly lone requests take 50 us. The fit reads 50 us.
        let mut s = qd1(150, |_| 50_000, 4096, false);
        let mut t = s.last().unwrap().complete + 1_000_000;
        for _ in 0..150 {
            s.push(Sample {
                write: false,
                bytes: 4096,
                issue: t,
                complete: t + 300_000,
            });
            s.push(Sample {
                write: false,
                bytes: 4096,
                issue: t + 10_000,
                complete: t + 300_000,
            });
            t += 1_000_000;
        }
        let alone = issued_alone(&s);
        assert_eq!(alone.iter().filter(|&&a| a).count(), 150);
        assert!(!alone[150], "issued alone, joined at 10 us");
        let r = fit(&s, 0.0, 1).read.unwrap();
        assert!(r.alone);
        assert_eq!(r.time.mean, 50_000, "{:?}", r.time);
    }

    #[test]
    fn a_trace_with_too_few_requests_alone_is_fitted_from_all_of_them() {
        // Always 2 in flight: none alone after the first.
        let s: Vec<Sample> = (0..500u64)
            .map(|i| Sample {
                write: false,
                bytes: 4096,
                issue: i * 10_000,
                complete: i * 10_000 + 15_000,
            })
            .collect();
        let f = fit(&s, 0.0, 1);
        let r = f.read.clone().unwrap();
        assert!(!r.alone);
        assert_eq!(r.fitted, 500);
        assert_eq!(f.parallelism, f.most_in_flight);
        assert!(f
            .profile("x", "t")
            .unwrap()
            .contains("most requests the trace had"));
    }
}
