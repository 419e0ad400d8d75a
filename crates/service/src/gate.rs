//! The device's ceilings over its starts: IOPS and bandwidth as token
//! buckets (GCRA), shared by reads and writes.

use policy::Nanos;

/// The IOPS ceiling over a device's starts: a token bucket holding one
/// token per internal unit, refilled at the ceiling. A free unit starts its
/// command at once; only the sustained rate is bounded (issue 13: spacing
/// every start by 1/IOPS kept a batch from ever completing in a cluster,
/// against TOS Fig 18's batched gaps). Written as the GCRA form of the
/// bucket: `tat` is the theoretical arrival time; a command may start
/// `tolerance` before it, so up to `depth` commands start together after a
/// quiet spell, and over any long stretch starts come no faster than the
/// ceiling. One gate serves reads and writes, each with its own spacing.
///
/// A device with a bandwidth ceiling (a profile's `max_read_bw`,
/// `max_write_bw`) has a second bucket, in bytes, that every start must
/// also conform to ([`Gate::start_sized`]): it holds [`BUCKET_BYTES`] per
/// unit and refills at the ceiling, so a command of `b` bytes takes `b`
/// bytes' worth of it. Once the ceiling binds, starts come at the rate the
/// bytes allow, the commands behind wait in the device, and latency grows
/// with the queue depth (Little's law: at a steady `bw`, `depth` commands
/// of `b` bytes each take `depth * b / bw`); a command larger than the
/// bucket waits for it to be empty, its whole transfer time.
#[derive(Clone, Debug)]
pub struct Gate {
    tat: f64,
    depth: u32,
    /// The byte bucket's theoretical arrival time, in ns as `tat` (each
    /// start adds its bytes times the ns a byte takes at the ceiling).
    bytes_tat: f64,
}

/// The byte bucket's size per unit: one 4 KiB block, the size the profiles'
/// service times and IOPS ceilings are given for. So after a quiet spell
/// every unit may start a 4 KiB command at once, as the IOPS bucket lets
/// them, while larger commands wait for the bytes they move.
pub const BUCKET_BYTES: u64 = 4096;

impl Gate {
    /// `depth`: the device's internal parallelism, its units.
    pub fn new(depth: u32) -> Gate {
        Gate {
            tat: 0.0,
            depth,
            bytes_tat: 0.0,
        }
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

    /// [`Gate::start`] for a command of `bytes` under a bandwidth ceiling
    /// of `per_byte` ns a byte ([`per_byte`]): the later of the two
    /// buckets' times. Without a ceiling (`None`) it is [`Gate::start`],
    /// the same arithmetic, so a profile without one times exactly as
    /// before the ceiling existed.
    pub fn start_sized(
        &mut self,
        now: Nanos,
        spacing: f64,
        bytes: u64,
        per_byte: Option<f64>,
    ) -> f64 {
        let Some(per_byte) = per_byte else {
            return self.start(now, spacing);
        };
        let tolerance = (self.depth.saturating_sub(1)) as f64 * spacing;
        let by_iops = (self.tat - tolerance).max(now as f64);
        // GCRA over a bucket of `capacity` bytes: a command of `bytes` may
        // start once the bucket has room for it, `(capacity - bytes)` bytes'
        // time before the bucket empties; one larger than the bucket, once
        // it is empty.
        let capacity = u64::from(self.depth).saturating_mul(BUCKET_BYTES);
        let room = capacity.saturating_sub(bytes) as f64 * per_byte;
        let by_bytes = (self.bytes_tat - room).max(now as f64);
        let start = by_iops.max(by_bytes);
        self.tat = self.tat.max(start) + spacing;
        self.bytes_tat = self.bytes_tat.max(start) + bytes as f64 * per_byte;
        start
    }
}

/// Nanoseconds between starts at `iops` a second (at least one a second).
pub fn spacing(iops: u64) -> f64 {
    1e9 / iops.max(1) as f64
}

/// Nanoseconds a byte takes at a bandwidth ceiling of `bytes_per_sec`
/// (none: `None`), for [`Gate::start_sized`].
pub fn per_byte(bytes_per_sec: Option<u64>) -> Option<f64> {
    bytes_per_sec.map(|bw| 1e9 / bw.max(1) as f64)
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
    use rand::{Rng as _, SeedableRng};

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

    #[test]
    fn without_a_bandwidth_ceiling_the_sized_start_is_the_plain_one() {
        let mut a = Gate::new(5);
        let mut b = Gate::new(5);
        let sp = spacing(550_000);
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(9);
        let mut now = 0;
        for _ in 0..10_000 {
            now += rng.random_range(0..3_000);
            let bytes = 512 << rng.random_range(0..9);
            let x = a.start(now, sp);
            let y = b.start_sized(now, sp, bytes, None);
            assert_eq!(x.to_bits(), y.to_bits());
        }
    }

    #[test]
    fn the_byte_bucket_lets_a_unit_each_of_4k_through_and_holds_the_bandwidth() {
        // 1 GB/s: a byte a ns; 4 KiB takes 4,096 ns of the bucket. IOPS
        // ceiling far away (10M).
        let pb = per_byte(Some(1_000_000_000));
        let sp = spacing(10_000_000);
        let mut g = Gate::new(4);
        let starts: Vec<f64> = (0..8).map(|_| g.start_sized(0, sp, 4096, pb)).collect();
        // A 4 KiB block per unit at once (the IOPS bucket's 4 as well), then
        // one every 4,096 ns.
        assert_eq!(&starts[..4], [0.0; 4]);
        for (i, s) in starts[4..].iter().enumerate() {
            assert!((s - (i + 1) as f64 * 4_096.0).abs() < 1e-6, "{starts:?}");
        }
        // 64 KiB commands, larger than the 16 KiB bucket: each waits for it
        // to empty, its whole transfer time (65,536 ns) after the one before.
        let mut g = Gate::new(4);
        let starts: Vec<f64> = (0..4)
            .map(|_| g.start_sized(1_000, sp, 65_536, pb))
            .collect();
        assert_eq!(starts, [1_000.0, 66_536.0, 132_072.0, 197_608.0]);
        // A quiet spell refills it.
        assert_eq!(g.start_sized(1_000_000, sp, 65_536, pb), 1_000_000.0);
    }

    #[test]
    fn the_byte_buckets_room_is_its_free_bytes_at_the_ceilings_time_per_byte() {
        // 500 MB/s: 2 ns a byte, so a 4 KiB block takes 8,192 ns of the
        // bucket (the GCRA: a command may start once the bucket has room
        // for it, its free bytes' time before it empties). After a quiet
        // spell a unit each starts at once, then one every 8,192 ns.
        let pb = per_byte(Some(500_000_000));
        let sp = spacing(10_000_000);
        let mut g = Gate::new(4);
        let starts: Vec<f64> = (0..6).map(|_| g.start_sized(0, sp, 4096, pb)).collect();
        assert_eq!(starts, [0.0, 0.0, 0.0, 0.0, 8_192.0, 16_384.0]);
    }

    #[test]
    fn the_sustained_rate_is_the_lower_of_the_two_ceilings() {
        // 550K IOPS and 2.5 GB/s: 4 KiB commands are held by the IOPS
        // bucket (2.5 GB/s / 4 KiB = 610K), 32 KiB by the bytes (76K).
        for (bytes, rate) in [(4_096u64, 550_000.0), (32_768, 2.5e9 / 32_768.0)] {
            let mut g = Gate::new(8);
            let (sp, pb) = (spacing(550_000), per_byte(Some(2_500_000_000)));
            let n = 100_000;
            let last = (0..n).map(|_| g.start_sized(0, sp, bytes, pb)).last();
            let got = n as f64 / (last.unwrap() / 1e9);
            assert!((got / rate - 1.0).abs() < 0.001, "{bytes}: {got} vs {rate}");
        }
    }
}
