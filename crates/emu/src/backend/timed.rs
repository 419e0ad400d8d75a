//! `--device NAME|FILE.toml`: a modelled NVMe device that transfers nothing
//! and takes, per command, a service time drawn from the device's
//! distribution: the simulator's device (its units, IOPS ceiling and
//! service-time draws, crate `service`) under the emulator's real host.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use policy::time::readable;
use policy::Nanos;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use service::{Gate, Sampler, ServiceTime};

use super::{Backend, Done, Faults, Io};

/// A device's timing, as a profile gives it (the CLI converts the
/// simulator's `DeviceProfile` into this; emu does not depend on sim).
///
/// The service times are the device's part only: the profiles subtract the
/// simulator's host path from the paper's end-to-end figures, and here the
/// host path is the emulator's own, real one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceModel {
    /// Short name (`optane`), for the description.
    pub name: String,
    /// Commands served at once (internal units); the rest wait in arrival
    /// order. At least 1.
    pub parallelism: u32,
    /// The sustained ceilings of starts, each way.
    pub max_read_iops: u64,
    pub max_write_iops: u64,
    /// The bandwidth ceilings, bytes a second, each way (none: `None`).
    pub max_read_bw: Option<u64>,
    pub max_write_bw: Option<u64>,
    pub read: ServiceTime,
    pub write: ServiceTime,
    /// Seed of the service-time draws: the same seed and the same
    /// submissions give the same times.
    pub seed: u64,
}

impl DeviceModel {
    /// The longest the device may plausibly hold one of `in_flight`
    /// commands of at most `bytes` each, for the stall watchdog: a draw ten
    /// standard deviations above the mean (never reached in practice),
    /// once per round of the units the commands need, plus the IOPS
    /// ceiling's spacing of all of them and the bandwidth ceiling's (the
    /// slower way's) transfer of all their bytes.
    pub fn hold_bound(&self, in_flight: u64, bytes: u64) -> Nanos {
        let one = |t: &ServiceTime| {
            let extra_kib = (bytes / 1024).saturating_sub(4);
            t.mean
                .saturating_add(t.stddev.saturating_mul(10))
                .saturating_add(extra_kib.saturating_mul(t.per_kib))
                .min(service::MAX_SERVICE)
        };
        let rounds = in_flight
            .div_ceil(u64::from(self.parallelism.max(1)))
            .max(1);
        let iops = self.max_read_iops.min(self.max_write_iops);
        let gate = service::ceil(service::spacing(iops) * in_flight as f64);
        let slower = match (self.max_read_bw, self.max_write_bw) {
            (Some(r), Some(w)) => Some(r.min(w)),
            (r, w) => r.or(w),
        };
        let bytes_gate = service::per_byte(slower).map_or(0, |per_byte| {
            service::ceil(per_byte * in_flight as f64 * bytes as f64)
        });
        one(&self.read)
            .max(one(&self.write))
            .saturating_mul(rounds)
            .saturating_add(gate)
            .saturating_add(bytes_gate)
    }
}

/// A command waiting for a unit: the time it was taken.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    token: u32,
    arrived: Nanos,
    write: bool,
    len: u32,
    result: i32,
}

/// A command in service. Ordered by due time, then by start order, so that
/// commands due together complete in the order they started.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Serving {
    due: Nanos,
    seq: u64,
    token: u32,
    result: i32,
}

/// Times are virtual, as [`super::NullBackend`]'s: a command starts at
/// `max(submitted, unit free, IOPS gate, bandwidth gate)` and is due its drawn service time
/// later, whatever moment `poll` happens to notice it, so a late poll
/// delays the report of a completion but never the device. Service times
/// differ, so commands complete in due order, not in start order.
#[derive(Debug)]
pub struct TimedBackend {
    describe: String,
    parallelism: usize,
    read: Sampler,
    write: Sampler,
    read_spacing: f64,
    write_spacing: f64,
    /// ns a byte takes at the bandwidth ceiling, each way (none: `None`).
    read_per_byte: Option<f64>,
    write_per_byte: Option<f64>,
    gate: Gate,
    rng: Pcg64Mcg,
    faults: Faults,
    submitted: u64,
    /// Latest `now` seen by `submit`, so a caller's clock going backwards
    /// cannot start a command before one taken earlier.
    last_submit: Nanos,
    /// Starts so far, the tie-break between equal due times.
    started: u64,
    /// In service, earliest due first.
    serving: BinaryHeap<Reverse<Serving>>,
    /// Waiting for a unit, by arrival. Non-empty only while every unit is
    /// busy.
    waiting: VecDeque<Waiting>,
}

impl TimedBackend {
    pub fn new(model: &DeviceModel, faults: Faults) -> TimedBackend {
        let parallelism = model.parallelism.max(1);
        let gbps = |way: &str, bw: Option<u64>| {
            bw.map(|bw| format!(", {way} {:.2} GB/s", bw as f64 / 1e9))
                .unwrap_or_default()
        };
        TimedBackend {
            describe: format!(
                "device:{} ({parallelism} units, read {}±{}, write {}±{}{}{})",
                model.name,
                readable(model.read.mean),
                readable(model.read.stddev),
                readable(model.write.mean),
                readable(model.write.stddev),
                gbps("read", model.max_read_bw),
                gbps("write", model.max_write_bw),
            ),
            parallelism: parallelism as usize,
            read: Sampler::new(&model.read),
            write: Sampler::new(&model.write),
            read_spacing: service::spacing(model.max_read_iops),
            write_spacing: service::spacing(model.max_write_iops),
            read_per_byte: service::per_byte(model.max_read_bw),
            write_per_byte: service::per_byte(model.max_write_bw),
            // One token per unit, as the simulator's device.
            gate: Gate::new(parallelism),
            rng: Pcg64Mcg::seed_from_u64(model.seed),
            faults,
            submitted: 0,
            last_submit: 0,
            started: 0,
            serving: BinaryHeap::with_capacity((parallelism as usize).min(4096)),
            waiting: VecDeque::new(),
        }
    }

    /// When the next command in service finishes, if any.
    pub fn next_due(&self) -> Option<Nanos> {
        self.serving.peek().map(|Reverse(s)| s.due)
    }

    /// Starts `w` on a unit free at `at`: the gate may hold it later, and
    /// its service time is drawn now, in start order, so that a seed gives
    /// the same times for the same submissions.
    fn start(&mut self, w: Waiting, at: Nanos) {
        let (spacing, per_byte, sampler) = if w.write {
            (self.write_spacing, self.write_per_byte, &self.write)
        } else {
            (self.read_spacing, self.read_per_byte, &self.read)
        };
        let start = self
            .gate
            .start_sized(at, spacing, u64::from(w.len), per_byte);
        // At least 1 ns, as the simulator: a command never completes at the
        // instant it starts.
        let took = sampler.sample(&mut self.rng, u64::from(w.len)).max(1);
        self.started += 1;
        self.serving.push(Reverse(Serving {
            due: service::ceil(start).saturating_add(took),
            seq: self.started,
            token: w.token,
            result: w.result,
        }));
    }
}

impl Backend for TimedBackend {
    fn describe(&self) -> String {
        self.describe.clone()
    }

    fn submit(&mut self, now: Nanos, io: Io) {
        self.submitted += 1;
        let every = self.faults.error_every;
        let result = if every != 0 && self.submitted % every == 0 {
            -libc::EIO
        } else {
            io.buf.len() as i32
        };
        let now = now.max(self.last_submit);
        self.last_submit = now;
        let w = Waiting {
            token: io.token,
            arrived: now,
            write: io.write,
            len: io.buf.len(),
            result,
        };
        if self.serving.len() < self.parallelism {
            self.start(w, now);
        } else {
            self.waiting.push_back(w);
        }
    }

    #[inline]
    fn poll(&mut self, now: Nanos, out: &mut Vec<Done>) {
        while let Some(&Reverse(done)) = self.serving.peek() {
            if done.due > now {
                return;
            }
            self.serving.pop();
            out.push(Done {
                token: done.token,
                result: done.result,
            });
            // The unit freed at `done.due`, not now: the next one started
            // then (and may itself be due by now: the loop goes on).
            if let Some(next) = self.waiting.pop_front() {
                self.start(next, next.arrived.max(done.due));
            }
        }
    }

    fn in_flight(&self) -> usize {
        self.serving.len() + self.waiting.len()
    }
}

#[cfg(test)]
mod tests {
    use std::ptr::NonNull;

    use service::Distribution;

    use super::*;

    const LEN: u32 = 4096;

    fn io(token: u32, write: bool) -> Io {
        sized(token, write, LEN)
    }

    fn sized(token: u32, write: bool, len: u32) -> Io {
        // SAFETY: TimedBackend never dereferences the buffer.
        unsafe { Io::new(token, write, 0, NonNull::dangling(), len) }
    }

    fn time(distribution: Distribution, mean: Nanos, stddev: Nanos, floor: Nanos) -> ServiceTime {
        ServiceTime {
            distribution,
            mean,
            stddev,
            floor,
            per_kib: 0,
        }
    }

    /// Optane's numbers as profiles/devices/optane.toml gives them.
    fn optane(seed: u64) -> DeviceModel {
        let t = ServiceTime {
            per_kib: 427,
            ..time(Distribution::Normal, 7_369, 1_300, 4_000)
        };
        DeviceModel {
            name: "optane".to_string(),
            parallelism: 28,
            max_read_iops: 550_000,
            max_write_iops: 500_000,
            max_read_bw: None,
            max_write_bw: None,
            read: t,
            write: ServiceTime { per_kib: 512, ..t },
            seed,
        }
    }

    /// A device whose every command takes exactly `service`, with no
    /// ceiling to speak of (10M IOPS, sim's `MAX_IOPS`).
    fn constant(service: Nanos, parallelism: u32) -> DeviceModel {
        let t = time(Distribution::Normal, service, 0, 0);
        DeviceModel {
            name: "const".to_string(),
            parallelism,
            max_read_iops: 10_000_000,
            max_write_iops: 10_000_000,
            max_read_bw: None,
            max_write_bw: None,
            read: t,
            write: t,
            seed: 1,
        }
    }

    fn tokens(b: &mut TimedBackend, now: Nanos) -> Vec<u32> {
        let mut out = Vec::new();
        b.poll(now, &mut out);
        out.iter().map(|d| d.token).collect()
    }

    /// Every command's (token, due) in completion order, polling each
    /// nanosecond-exact due time.
    fn dues(b: &mut TimedBackend) -> Vec<(u32, Nanos)> {
        let mut all = Vec::new();
        while let Some(due) = b.next_due() {
            for t in tokens(b, due) {
                all.push((t, due));
            }
        }
        all
    }

    #[test]
    fn completes_no_earlier_than_the_floor() {
        let mut b = TimedBackend::new(&optane(3), Faults::default());
        for t in 0..2_000 {
            b.submit(1_000, io(t, t % 2 == 0));
        }
        let all = dues(&mut b);
        assert_eq!(all.len(), 2_000);
        // The floor (4 us) after the earliest start (1 us).
        assert!(all.iter().all(|&(_, due)| due >= 5_000), "{:?}", all[0]);
        assert!(tokens(&mut b, u64::MAX).is_empty());
        assert_eq!(b.in_flight(), 0);
    }

    #[test]
    fn parallelism_bounds_concurrency() {
        let mut b = TimedBackend::new(&constant(10_000, 2), Faults::default());
        for t in 0..5 {
            b.submit(0, io(t, false));
        }
        assert_eq!(b.in_flight(), 5);
        assert_eq!(tokens(&mut b, 9_999), Vec::<u32>::new());
        assert_eq!(tokens(&mut b, 10_000), [0, 1]);
        assert_eq!(tokens(&mut b, 19_999), Vec::<u32>::new());
        assert_eq!(tokens(&mut b, 20_000), [2, 3]);
        assert_eq!(tokens(&mut b, 30_000), [4]);
        // A late poll does not delay the device: due at 40, 40 and 50 us
        // whatever the poll saw.
        for t in 5..8 {
            b.submit(30_000, io(t, false));
        }
        assert_eq!(tokens(&mut b, 100_000), [5, 6, 7]);
        for t in 8..11 {
            b.submit(100_000, io(t, false));
        }
        assert_eq!(dues(&mut b), [(8, 110_000), (9, 110_000), (10, 120_000)]);
    }

    #[test]
    fn a_shorter_service_completes_before_a_longer_one_started_earlier() {
        // Reads take 50 us, writes 5 us: the write passes the read.
        let mut m = constant(50_000, 4);
        m.write = time(Distribution::Normal, 5_000, 0, 0);
        let mut b = TimedBackend::new(&m, Faults::default());
        b.submit(0, io(1, false));
        b.submit(100, io(2, true));
        assert_eq!(dues(&mut b), [(2, 5_100), (1, 50_000)]);

        // And with one distribution, varying draws reorder a batch.
        let mut b = TimedBackend::new(&optane(5), Faults::default());
        for t in 0..28 {
            b.submit(0, io(t, false));
        }
        let order: Vec<u32> = dues(&mut b).iter().map(|&(t, _)| t).collect();
        assert_ne!(order, (0..28).collect::<Vec<_>>());
    }

    #[test]
    fn the_iops_ceiling_spaces_starts_beyond_a_burst_of_the_units() {
        // 100K IOPS: a start every 10 us once the 2 units' tokens are spent;
        // the service itself (1 us) never limits.
        let mut m = constant(1_000, 2);
        m.max_read_iops = 100_000;
        let mut b = TimedBackend::new(&m, Faults::default());
        for t in 0..6 {
            b.submit(0, io(t, false));
        }
        let got: Vec<Nanos> = dues(&mut b).iter().map(|&(_, d)| d).collect();
        assert_eq!(got, [1_000, 1_000, 11_000, 21_000, 31_000, 41_000]);

        // Writes have their own spacing: 50K IOPS, 20 us.
        let mut m = constant(1_000, 1);
        m.max_write_iops = 50_000;
        let mut b = TimedBackend::new(&m, Faults::default());
        for t in 0..3 {
            b.submit(0, io(t, true));
        }
        let got: Vec<Nanos> = dues(&mut b).iter().map(|&(_, d)| d).collect();
        assert_eq!(got, [1_000, 21_000, 41_000]);
    }

    #[test]
    fn the_bandwidth_ceiling_spaces_starts_by_their_bytes() {
        // 1 GB/s reads, 0.5 GB/s writes; 8 units whose 1 us service never
        // limits, and no IOPS ceiling to speak of. The byte bucket holds
        // 8 x 4 KiB = 32 KiB.
        let mut m = constant(1_000, 8);
        m.max_read_bw = Some(1_000_000_000);
        m.max_write_bw = Some(500_000_000);
        let mut b = TimedBackend::new(&m, Faults::default());
        // 64 KiB reads, larger than the bucket: each starts its whole
        // transfer (65,536 ns at 1 GB/s) after the one before.
        for t in 0..4 {
            b.submit(0, sized(t, false, 65_536));
        }
        let got: Vec<Nanos> = dues(&mut b).iter().map(|&(_, d)| d).collect();
        assert_eq!(got, [1_000, 66_536, 132_072, 197_608]);
        // A 4 KiB command per unit passes at once after a quiet spell, the
        // ninth waits for the bucket: 4,096 ns at 1 GB/s.
        let at = 1_000_000;
        for t in 0..9 {
            b.submit(at, sized(t, false, 4_096));
        }
        let got: Vec<Nanos> = dues(&mut b).iter().map(|&(_, d)| d - at).collect();
        assert_eq!(
            got,
            [1_000, 1_000, 1_000, 1_000, 1_000, 1_000, 1_000, 1_000, 5_096]
        );
        // Writes take the write ceiling's time: 32 KiB at 0.5 GB/s is
        // 65,536 ns, and a full bucket lets the first through.
        let at = 2_000_000;
        for t in 0..3 {
            b.submit(at, sized(t, true, 32_768));
        }
        let got: Vec<Nanos> = dues(&mut b).iter().map(|&(_, d)| d - at).collect();
        assert_eq!(got, [1_000, 66_536, 132_072]);
        assert_eq!(
            b.describe(),
            "device:const (8 units, read 1.00us±0ns, write 1.00us±0ns, read 1.00 GB/s, write 0.50 GB/s)"
        );
    }

    #[test]
    fn with_the_ceiling_binding_throughput_holds_and_latency_grows_with_depth() {
        // optane-900p's numbers (profiles/devices/optane-900p.toml): 32 KiB
        // reads kept at a constant depth, resubmitted as each completes.
        let run = |depth: u32| {
            let mut m = optane(1);
            m.name = "optane-900p".to_string();
            m.parallelism = 8;
            m.read.per_kib = 410;
            m.max_read_bw = Some(2_500_000_000);
            m.max_write_bw = Some(2_000_000_000);
            let mut b = TimedBackend::new(&m, Faults::default());
            let mut submitted_at = vec![0; depth as usize];
            for t in 0..depth {
                b.submit(0, sized(t, false, 32_768));
            }
            let (mut done, mut lat) = (0u64, 0u64);
            let mut now = 0;
            while done < 20_000 {
                now = b.next_due().unwrap();
                for t in tokens(&mut b, now) {
                    lat += now - submitted_at[t as usize];
                    done += 1;
                    submitted_at[t as usize] = now;
                    b.submit(now, sized(t, false, 32_768));
                }
            }
            let bw = done as f64 * 32_768.0 / (now as f64 / 1e9);
            (bw, lat as f64 / done as f64)
        };
        let (bw8, lat8) = run(8);
        let (bw32, lat32) = run(32);
        for bw in [bw8, bw32] {
            assert!(bw > 0.95 * 2.5e9 && bw < 1.01 * 2.5e9, "{bw}");
        }
        // Little's law: latency = depth x 32 KiB / 2.5 GB/s.
        for (depth, lat) in [(8.0, lat8), (32.0, lat32)] {
            let little = depth * 32_768.0 / 2.5;
            assert!(
                (lat / little - 1.0).abs() < 0.05,
                "{depth}: {lat} vs {little}"
            );
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_times_and_another_seed_others() {
        let run = |seed| {
            let mut b = TimedBackend::new(&optane(seed), Faults::default());
            for t in 0..500 {
                b.submit(u64::from(t) * 300, io(t, t % 3 == 0));
            }
            dues(&mut b)
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
    }

    #[test]
    fn the_mean_service_is_the_profiles() {
        // One at a time, far apart: each completes its drawn time after its
        // submission.
        let mut b = TimedBackend::new(&optane(11), Faults::default());
        let n = 20_000u64;
        let mut sum = 0;
        for t in 0..n {
            let at = t * 1_000_000;
            b.submit(at, io(t as u32, false));
            let due = b.next_due().unwrap();
            assert_eq!(tokens(&mut b, due), [t as u32]);
            sum += due - at;
        }
        let mean = sum as f64 / n as f64;
        assert!((mean / 7_369.0 - 1.0).abs() < 0.02, "{mean}");
    }

    #[test]
    fn every_nth_command_fails_with_eio() {
        let faults = Faults {
            error_every: 3,
            corrupt_every: 0,
        };
        let mut b = TimedBackend::new(&optane(1), faults);
        for t in 1..=9 {
            b.submit(0, io(t, false));
        }
        let mut out = Vec::new();
        b.poll(u64::MAX, &mut out);
        let mut failed: Vec<u32> = out
            .iter()
            .filter(|d| d.result == -libc::EIO)
            .map(|d| d.token)
            .collect();
        failed.sort();
        assert_eq!(failed, [3, 6, 9]);
        assert_eq!(out.len(), 9);
    }

    #[test]
    fn describes_itself_with_its_units_and_times() {
        let b = TimedBackend::new(&optane(1), Faults::default());
        assert_eq!(
            b.describe(),
            "device:optane (28 units, read 7.37us±1.30us, write 7.37us±1.30us)"
        );
    }

    #[test]
    fn the_watchdogs_bound_covers_a_round_per_unit() {
        let m = constant(10_000, 2);
        // 5 commands need 3 rounds of 10 us, plus 5 spacings of 100 ns.
        assert_eq!(m.hold_bound(5, 4096), 30_500);
        // And, with a bandwidth ceiling, their bytes at the slower way's
        // rate: 5 x 4 KiB at 1 GB/s is 20,480 ns.
        let m = DeviceModel {
            max_read_bw: Some(2_000_000_000),
            max_write_bw: Some(1_000_000_000),
            ..m
        };
        assert_eq!(m.hold_bound(5, 4096), 30_500 + 20_480);
    }
}
