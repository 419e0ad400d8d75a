//! Whether a recording lost anything (issue 41 item 0): the ring buffer's
//! own counts of events it could not keep, and the completions the kernel
//! counted on a device beyond those recorded.
//!
//! The buffer's counts are each CPU's `per_cpu/cpuN/stats`
//! (Documentation/trace/ftrace.rst, "per_cpu/cpu0/stats"): `overrun`,
//! "lost events due to overwriting when the buffer was full" (with the
//! `overwrite` option on); `dropped events`, "events lost due to overwrite
//! option being off" (capture's instance runs with `overwrite` 0, so a full
//! buffer refuses new events and counts them here); `commit overrun`,
//! events dropped when nested events fill the buffer ("should always be
//! zero"). All three are losses.
//!
//! The shortfall is the device's `stat` count of completed I/Os while the
//! program ran beside the completions recorded in that time (the crate's
//! `Counts`): a device the trace recorded (or was asked for with
//! `--device`) with fewer completions than the kernel counted lost the
//! rest, whatever the buffer says. A device the kernel counted and the
//! trace never saw is a partition (its I/O is traced under its whole
//! disk's number), not a loss.
//!
//! Pure: the stats are read by the caller ([`read_stats`] for an instance)
//! and handed in, so the decision is tested without a kernel.

use std::collections::BTreeMap;
use std::path::Path;

use crate::Counts;

/// One CPU's buffer counts of lost events.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuStats {
    pub overrun: u64,
    pub commit_overrun: u64,
    pub dropped: u64,
}

/// One `per_cpu/cpuN/stats` file's text (`key: value` lines; the other
/// keys, `entries`, `bytes`, the timestamps, are not losses).
pub fn parse_stats(text: &str) -> CpuStats {
    let mut s = CpuStats::default();
    for l in text.lines() {
        let Some((k, v)) = l.split_once(':') else {
            continue;
        };
        let Ok(n) = v.trim().parse::<u64>() else {
            continue;
        };
        match k.trim() {
            "overrun" => s.overrun = n,
            "commit overrun" => s.commit_overrun = n,
            "dropped events" => s.dropped = n,
            _ => {}
        }
    }
    s
}

/// Every CPU's stats of a tracefs instance.
pub fn read_stats(instance: &Path) -> Vec<CpuStats> {
    let Ok(dir) = std::fs::read_dir(instance.join("per_cpu")) else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|c| std::fs::read_to_string(c.path().join("stats")).ok())
        .map(|t| parse_stats(&t))
        .collect()
}

/// What a recording lost.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Loss {
    /// Summed over the CPUs.
    pub buffer: CpuStats,
    /// Per device (major, minor) short of the kernel's count: (completions
    /// recorded while the program ran, completed by the kernel then).
    pub short: BTreeMap<(u32, u32), (u64, u64)>,
}

/// The loss of a recording: the buffer's counts over every CPU, and each
/// recorded (or `wanted`) device's completions short of the kernel's.
pub fn judge(
    stats: &[CpuStats],
    per_device: &BTreeMap<(u32, u32), Counts>,
    wanted: &[(u32, u32)],
) -> Loss {
    let mut buffer = CpuStats::default();
    for s in stats {
        buffer.overrun += s.overrun;
        buffer.commit_overrun += s.commit_overrun;
        buffer.dropped += s.dropped;
    }
    let short = per_device
        .iter()
        .filter(|(dev, c)| c.completed > 0 || c.queued > 0 || c.issued > 0 || wanted.contains(dev))
        .filter(|(_, c)| c.completed_while_running < c.counted)
        .map(|(&dev, c)| (dev, (c.completed_while_running, c.counted)))
        .collect();
    Loss { buffer, short }
}

impl Loss {
    /// Events the buffer could not keep.
    pub fn events(&self) -> u64 {
        self.buffer.overrun + self.buffer.commit_overrun + self.buffer.dropped
    }

    pub fn any(&self) -> bool {
        self.events() > 0 || !self.short.is_empty()
    }

    /// The loss in one line: `lost 1821234 events (per_cpu/cpuN/stats: 0
    /// overrun, 0 commit overrun, 1821234 dropped); device 253,0: 592000 of
    /// 1500000 completions recorded (/sys/dev/block/253:0/stat)`.
    pub fn line(&self) -> String {
        let b = &self.buffer;
        let mut parts = vec![format!(
            "lost {} events (per_cpu/cpuN/stats: {} overrun, {} commit overrun, {} dropped)",
            self.events(),
            b.overrun,
            b.commit_overrun,
            b.dropped
        )];
        for ((major, minor), (recorded, counted)) in &self.short {
            parts.push(format!(
                "device {major},{minor}: {recorded} of {counted} completions recorded (/sys/dev/block/{major}:{minor}/stat)"
            ));
        }
        parts.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stats file as this kernel prints it (Linux 6.18, `cat
    /// /sys/kernel/tracing/per_cpu/cpu0/stats`).
    fn stats(overrun: u64, dropped: u64) -> String {
        format!(
            "entries: 70\noverrun: {overrun}\ncommit overrun: 0\nbytes: 4032\noldest event ts:  5210.362114\nnow ts:  5210.897221\ndropped events: {dropped}\nread events: 0\n"
        )
    }

    fn device(completed: u64, counted: u64) -> Counts {
        Counts {
            queued: completed,
            issued: completed,
            completed,
            completed_while_running: completed,
            counted,
        }
    }

    #[test]
    fn a_whole_recording_is_no_loss() {
        let cpus = [parse_stats(&stats(0, 0)), parse_stats(&stats(0, 0))];
        let devs = BTreeMap::from([((254, 0), device(3000, 3000))]);
        let l = judge(&cpus, &devs, &[]);
        assert!(!l.any(), "{l:?}");
        assert_eq!(l.events(), 0);
    }

    #[test]
    fn dropped_and_overrun_events_of_every_cpu_are_a_loss() {
        let cpus = [
            parse_stats(&stats(0, 1_821_000)),
            parse_stats(&stats(7, 234)),
        ];
        let l = judge(&cpus, &BTreeMap::new(), &[]);
        assert!(l.any());
        assert_eq!(l.events(), 1_821_241);
        assert_eq!(
            l.line(),
            "lost 1821241 events (per_cpu/cpuN/stats: 7 overrun, 0 commit overrun, 1821234 dropped)"
        );
    }

    #[test]
    fn completions_short_of_the_kernels_count_are_a_loss_even_with_a_clean_buffer() {
        let cpus = [parse_stats(&stats(0, 0))];
        let devs = BTreeMap::from([
            ((253, 0), device(592_000, 1_500_000)),
            // More recorded than counted: the recorded window holds the
            // counted one.
            ((254, 0), device(12, 10)),
            // Counted, never recorded, not asked for: a partition.
            ((254, 1), device(0, 40)),
        ]);
        let l = judge(&cpus, &devs, &[]);
        assert_eq!(l.short, BTreeMap::from([((253, 0), (592_000, 1_500_000))]));
        assert!(l.line().ends_with(
            "; device 253,0: 592000 of 1500000 completions recorded (/sys/dev/block/253:0/stat)"
        ));
        // Asked for with --device and never recorded: all of it was lost.
        let l = judge(&cpus, &devs, &[(254, 1)]);
        assert!(l.short.contains_key(&(254, 1)), "{l:?}");
    }

    #[test]
    fn stats_without_the_loss_keys_count_nothing() {
        assert_eq!(parse_stats("entries: 3\nbytes: 9\n"), CpuStats::default());
        assert_eq!(
            parse_stats("overrun: x\ndropped events: 5\ncommit overrun: 2"),
            CpuStats {
                overrun: 0,
                commit_overrun: 2,
                dropped: 5
            }
        );
    }
}
