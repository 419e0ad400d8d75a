//! The modelled devices: `null:LATENCY[,depth=N]` (a fixed time per
//! command, like Linux null_blk's `completion_nsec`) and `--device
//! NAME|FILE.toml` (a profile's units, ceilings and service-time draws).
//! Both transfer nothing; both are the one device model every front end
//! applies ([`service::Device`]), under the emulator's real host.
//!
//! The profiles' service times are the device's part only (they subtract
//! the simulator's host path from the paper's end-to-end figures), and here
//! the host path is the emulator's own, real one.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use policy::format_nanos;
use policy::time::readable;
use policy::Nanos;
use service::{Command, Device, DeviceProfile, Started};

use super::{Backend, Done, Faults, Io};

/// A command in service. Ordered by due time, then by start order, so that
/// commands due together complete in the order they started.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Serving {
    due: Nanos,
    seq: u64,
    token: u32,
    result: i32,
}

/// Times are virtual, the device model's: a command is due its service
/// time after its start, whatever moment `poll` happens to notice it, so a
/// late poll delays the report of a completion but never the device.
/// Service times may differ, so commands complete in due order, not in
/// start order.
#[derive(Debug)]
pub struct ModelBackend {
    describe: String,
    device: Device<Token>,
    /// Starts so far, the tie-break between equal due times.
    started: u64,
    /// In service, earliest due first.
    serving: BinaryHeap<Reverse<Serving>>,
}

/// A command's token and its length, the result it returns unless it fails.
#[derive(Clone, Copy, Debug)]
struct Token {
    token: u32,
    len: u32,
}

impl ModelBackend {
    /// `null:LATENCY,depth=N`: `depth` units (at least 1), each command
    /// exactly `latency`.
    pub fn null(latency: Nanos, depth: u32, faults: Faults) -> ModelBackend {
        let depth = depth.max(1);
        ModelBackend::with(
            format!("null:{},depth={depth}", format_nanos(latency)),
            Device::null(latency, depth),
            faults,
        )
    }

    /// `--device`: the profile's device, its draws seeded by `seed`.
    pub fn device(p: &DeviceProfile, seed: u64, faults: Faults) -> ModelBackend {
        let gbps = |way: &str, bw: Option<u64>| {
            bw.map(|bw| format!(", {way} {:.2} GB/s", bw as f64 / 1e9))
                .unwrap_or_default()
        };
        let describe = format!(
            "device:{} ({} units, read {}±{}, write {}±{}{}{})",
            p.name,
            p.parallelism.max(1),
            readable(p.read.mean),
            readable(p.read.stddev),
            readable(p.write.mean),
            readable(p.write.stddev),
            gbps("read", p.max_read_bw),
            gbps("write", p.max_write_bw),
        );
        ModelBackend::with(describe, Device::new(p, seed), faults)
    }

    fn with(describe: String, device: Device<Token>, faults: Faults) -> ModelBackend {
        let units = device.units() as usize;
        ModelBackend {
            describe,
            device: device.failing_every(faults.error_every),
            started: 0,
            // Steady state never grows it beyond the units.
            serving: BinaryHeap::with_capacity(units.min(4096)),
        }
    }

    /// When the next command in service finishes, if any: a caller may
    /// spin until then instead of polling.
    pub fn next_due(&self) -> Option<Nanos> {
        self.serving.peek().map(|Reverse(s)| s.due)
    }

    fn serve(&mut self, s: Started<Token>) {
        self.started += 1;
        self.serving.push(Reverse(Serving {
            due: s.due,
            seq: self.started,
            token: s.tag.token,
            result: if s.failed {
                -libc::EIO
            } else {
                s.tag.len as i32
            },
        }));
    }
}

impl Backend for ModelBackend {
    fn describe(&self) -> String {
        self.describe.clone()
    }

    fn submit(&mut self, now: Nanos, io: Io) {
        let command = Command {
            tag: Token {
                token: io.token,
                len: io.buf.len(),
            },
            write: io.write,
            bytes: u64::from(io.buf.len()),
        };
        if let Some(s) = self.device.submit(now, command) {
            self.serve(s);
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
            if let Some(s) = self.device.unit_freed(done.due) {
                self.serve(s);
            }
        }
    }

    fn in_flight(&self) -> usize {
        self.device.in_flight()
    }
}

#[cfg(test)]
mod tests {
    use std::ptr::NonNull;

    use service::{Distribution, ServiceTime};

    use super::*;

    const LEN: u32 = 4096;

    /// A command whose buffer is never touched: the modelled devices only
    /// read its length, so one dangling pointer serves every test command.
    fn io(token: u32, write: bool) -> Io {
        sized(token, write, LEN)
    }

    fn sized(token: u32, write: bool, len: u32) -> Io {
        // SAFETY: ModelBackend never dereferences the buffer.
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

    /// A profile with the given units and times, ceilings far away (10M
    /// IOPS, the profiles' `MAX_IOPS`).
    fn profile(
        name: &str,
        parallelism: u32,
        read: ServiceTime,
        write: ServiceTime,
    ) -> DeviceProfile {
        let mut p = DeviceProfile::constant_service("1us", parallelism, 10_000_000)
            .expect("a valid profile");
        p.name = name.to_string();
        p.read = read;
        p.write = write;
        p
    }

    /// Optane's numbers as profiles/devices/optane.toml gives them.
    fn optane() -> DeviceProfile {
        let t = ServiceTime {
            per_kib: 427,
            ..time(Distribution::Normal, 7_369, 1_300, 4_000)
        };
        DeviceProfile {
            max_read_iops: 550_000,
            max_write_iops: 500_000,
            ..profile("optane", 28, t, ServiceTime { per_kib: 512, ..t })
        }
    }

    /// A device whose every command takes exactly `service`, with no
    /// ceiling to speak of.
    fn constant(service: Nanos, parallelism: u32) -> DeviceProfile {
        let t = time(Distribution::Normal, service, 0, 0);
        profile("const", parallelism, t, t)
    }

    fn tokens(b: &mut ModelBackend, now: Nanos) -> Vec<u32> {
        let mut out = Vec::new();
        b.poll(now, &mut out);
        out.iter().map(|d| d.token).collect()
    }

    fn null_tokens(b: &mut ModelBackend, now: Nanos) -> Vec<u32> {
        tokens(b, now)
    }

    /// Every command's (token, due) in completion order, polling each
    /// nanosecond-exact due time.
    fn dues(b: &mut ModelBackend) -> Vec<(u32, Nanos)> {
        let mut all = Vec::new();
        while let Some(due) = b.next_due() {
            for t in tokens(b, due) {
                all.push((t, due));
            }
        }
        all
    }

    #[test]
    fn completes_latency_after_submission_and_not_before() {
        let mut b = ModelBackend::null(10_000, 64, Faults::default());
        b.submit(1_000, io(7, false));
        assert_eq!(b.next_due(), Some(11_000));
        assert_eq!(null_tokens(&mut b, 10_999), Vec::<u32>::new());
        assert_eq!(b.in_flight(), 1);
        let mut out = Vec::new();
        b.poll(11_000, &mut out);
        assert_eq!(
            out,
            [Done {
                token: 7,
                result: LEN as i32
            }]
        );
        assert_eq!(b.in_flight(), 0);
        assert_eq!(b.next_due(), None);
    }

    #[test]
    fn depth_bounds_parallelism() {
        let mut b = ModelBackend::null(10, 2, Faults::default());
        for t in 0..5 {
            b.submit(0, io(t, false));
        }
        assert_eq!(b.in_flight(), 5);
        assert_eq!(null_tokens(&mut b, 9), Vec::<u32>::new());
        assert_eq!(null_tokens(&mut b, 10), [0, 1]);
        assert_eq!(null_tokens(&mut b, 19), Vec::<u32>::new());
        assert_eq!(null_tokens(&mut b, 20), [2, 3]);
        assert_eq!(null_tokens(&mut b, 29), Vec::<u32>::new());
        assert_eq!(null_tokens(&mut b, 30), [4]);
        assert_eq!(b.in_flight(), 0);
    }

    #[test]
    fn a_late_poll_does_not_delay_the_device() {
        let mut b = ModelBackend::null(10, 2, Faults::default());
        for t in 0..5 {
            b.submit(0, io(t, false));
        }
        // Due at 10, 10, 20, 20, 30 whatever the polls in between.
        assert_eq!(null_tokens(&mut b, 25), [0, 1, 2, 3]);
        assert_eq!(b.next_due(), Some(30));

        // A waiting command starts when it arrives if a unit was already
        // free by then, even though no poll noticed the unit freeing.
        let mut b = ModelBackend::null(10, 1, Faults::default());
        b.submit(0, io(0, false));
        b.submit(15, io(1, false));
        assert_eq!(null_tokens(&mut b, 24), [0]);
        assert_eq!(b.next_due(), Some(25));
        assert_eq!(null_tokens(&mut b, 25), [1]);
    }

    #[test]
    fn service_is_fifo() {
        let mut b = ModelBackend::null(100, 3, Faults::default());
        for t in 0..20 {
            b.submit(u64::from(t) * 7, io(t, false));
        }
        assert_eq!(null_tokens(&mut b, u64::MAX), (0..20).collect::<Vec<_>>());
    }

    #[test]
    fn a_clock_going_back_does_not_start_a_command_earlier() {
        let mut b = ModelBackend::null(10, 4, Faults::default());
        b.submit(100, io(0, false));
        b.submit(50, io(1, false));
        assert_eq!(null_tokens(&mut b, 109), Vec::<u32>::new());
        assert_eq!(null_tokens(&mut b, 110), [0, 1]);
    }

    #[test]
    fn zero_latency_completes_at_the_next_poll() {
        let mut b = ModelBackend::null(0, 1, Faults::default());
        b.submit(5, io(0, false));
        b.submit(5, io(1, false));
        assert_eq!(null_tokens(&mut b, 5), [0, 1]);
    }

    #[test]
    fn every_nth_null_command_fails_with_eio() {
        let faults = Faults {
            error_every: 3,
            corrupt_every: 0,
        };
        let mut b = ModelBackend::null(1, 2, faults);
        for t in 1..=9 {
            b.submit(0, io(t, false));
        }
        let mut out = Vec::new();
        b.poll(u64::MAX, &mut out);
        let failed: Vec<u32> = out
            .iter()
            .filter(|d| d.result == -libc::EIO)
            .map(|d| d.token)
            .collect();
        assert_eq!(failed, [3, 6, 9]);
        assert!(out
            .iter()
            .all(|d| d.result == -libc::EIO || d.result == LEN as i32));
        assert_eq!(out.len(), 9);
    }

    #[test]
    fn null_describes_itself_in_spec_syntax() {
        let b = ModelBackend::null(10_000, 64, Faults::default());
        assert_eq!(b.describe(), "null:10us,depth=64");
        let b = ModelBackend::null(0, 0, Faults::default());
        assert_eq!(b.describe(), "null:0,depth=1");
    }

    #[test]
    fn completes_no_earlier_than_the_floor() {
        let mut b = ModelBackend::device(&optane(), 3, Faults::default());
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
        let mut b = ModelBackend::device(&constant(10_000, 2), 1, Faults::default());
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
        let mut b = ModelBackend::device(&m, 1, Faults::default());
        b.submit(0, io(1, false));
        b.submit(100, io(2, true));
        assert_eq!(dues(&mut b), [(2, 5_100), (1, 50_000)]);

        // And with one distribution, varying draws reorder a batch.
        let mut b = ModelBackend::device(&optane(), 5, Faults::default());
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
        let mut b = ModelBackend::device(&m, 1, Faults::default());
        for t in 0..6 {
            b.submit(0, io(t, false));
        }
        let got: Vec<Nanos> = dues(&mut b).iter().map(|&(_, d)| d).collect();
        assert_eq!(got, [1_000, 1_000, 11_000, 21_000, 31_000, 41_000]);

        // Writes have their own spacing: 50K IOPS, 20 us.
        let mut m = constant(1_000, 1);
        m.max_write_iops = 50_000;
        let mut b = ModelBackend::device(&m, 1, Faults::default());
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
        let mut b = ModelBackend::device(&m, 1, Faults::default());
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
            let mut m = optane();
            m.name = "optane-900p".to_string();
            m.parallelism = 8;
            m.read.per_kib = 410;
            m.max_read_bw = Some(2_500_000_000);
            m.max_write_bw = Some(2_000_000_000);
            let mut b = ModelBackend::device(&m, 1, Faults::default());
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
            let mut b = ModelBackend::device(&optane(), seed, Faults::default());
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
        let mut b = ModelBackend::device(&optane(), 11, Faults::default());
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
    fn every_nth_drawn_command_fails_with_eio() {
        let faults = Faults {
            error_every: 3,
            corrupt_every: 0,
        };
        let mut b = ModelBackend::device(&optane(), 1, faults);
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
        let b = ModelBackend::device(&optane(), 1, Faults::default());
        assert_eq!(
            b.describe(),
            "device:optane (28 units, read 7.37us±1.30us, write 7.37us±1.30us)"
        );
    }
}
