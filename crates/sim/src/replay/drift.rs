//! The replay's drift from the trace's timing (`sim --trace`'s `replay`
//! object and its text lines), and the submit lateness it is made from,
//! held in bounded memory.

use hdrhistogram::Histogram;
use policy::Nanos;

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// How far the replay's timing drifted from the trace's.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Drift {
    #[serde(rename = "loop")]
    pub mode: &'static str,
    /// The trace's requests, and how many the replay submitted (fewer when
    /// the runtime cut it).
    pub requests: u64,
    pub issued: u64,
    pub processes: usize,
    /// Open loop: how late each submit call started against its trace time
    /// (mean, p99, max), ns.
    pub late_mean_ns: f64,
    pub late_p99_ns: Nanos,
    pub late_max_ns: Nanos,
    /// The trace's span (first issue to last completion, or last issue)
    /// and the replay's (the measured window: to the last thread's end).
    pub trace_ns: Nanos,
    pub replay_ns: Nanos,
    /// The trace's IOPS over its span, the replay's over its own, and the
    /// replay's over the trace's.
    pub trace_iops: f64,
    pub replay_iops: f64,
    pub iops_ratio: f64,
    /// Requests whose recorded in-flight count was above the device's
    /// queue depth, replayed at it.
    pub clamped: u64,
    /// Requests the stream gave later than its reorder window allows,
    /// replayed at the released frontier (`feed`; left out when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub reordered: u64,
    /// Times a thread found its next request past the read-ahead window
    /// and slept (`feed`; left out when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub stalls: u64,
    /// Requests whose target depth was settled before their recorded
    /// completion, the read-ahead window being full (`feed`; left out when
    /// none).
    #[serde(skip_serializing_if = "is_zero")]
    pub targets_cut: u64,
    /// Each process's own span and IOPS, trace against replay (a process
    /// that ran for part of the trace is judged over its own part, as fio
    /// reports a job over its own runtime).
    pub per_process: Vec<ProcessDrift>,
}

/// One process's span, trace against replay.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ProcessDrift {
    pub pid: Option<u32>,
    pub requests: u64,
    /// The trace: its first issue to its last completion (or issue).
    pub trace_ns: Nanos,
    /// The replay: its first submit call to the return of the call that
    /// took its last completion.
    pub replay_ns: Nanos,
    pub trace_iops: f64,
    pub replay_iops: f64,
    /// Closed loop: its mean in-flight depth, time-weighted over its own
    /// span, in the trace (its recorded latencies summed over its span,
    /// Little's law) and in the replay (from its submits and the
    /// completions its thread took); left out in open loop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_depth: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay_depth: Option<f64>,
}

impl Drift {
    /// The text lines the front end prints after the report.
    pub fn render(&self) -> String {
        let us = |ns: f64| ns / 1e3;
        let mut s = format!(
            "replay ({} loop): {} of {} requests issued by {} thread(s)\n",
            self.mode, self.issued, self.requests, self.processes
        );
        if self.mode == "open" {
            s += &format!(
                "  issue drift: late mean {:.2}us, p99 {:.2}us, max {:.2}us\n",
                us(self.late_mean_ns),
                us(self.late_p99_ns as f64),
                us(self.late_max_ns as f64)
            );
        }
        s += &format!(
            "  duration: trace {:.3}ms, replay {:.3}ms; IOPS: trace {:.0}, replay {:.0} (ratio {:.3})\n",
            self.trace_ns as f64 / 1e6,
            self.replay_ns as f64 / 1e6,
            self.trace_iops,
            self.replay_iops,
            self.iops_ratio
        );
        for p in &self.per_process {
            let pid = p.pid.map_or("-".to_string(), |p| p.to_string());
            s += &format!(
                "  pid {pid}: {} requests; trace {:.3}ms, {:.0} IOPS; replay {:.3}ms, {:.0} IOPS",
                p.requests,
                p.trace_ns as f64 / 1e6,
                p.trace_iops,
                p.replay_ns as f64 / 1e6,
                p.replay_iops
            );
            if let (Some(t), Some(r)) = (p.trace_depth, p.replay_depth) {
                s += &format!("; mean in flight: trace {t:.2}, replay {r:.2}");
            }
            s += "\n";
        }
        if self.reordered > 0 {
            s += &format!(
                "  {} request(s) came later than the reorder window ({} requests) allows and were replayed at the frontier\n",
                self.reordered,
                super::feed::REORDER
            );
        }
        if self.stalls > 0 {
            s += &format!(
                "  {} time(s) a thread's next request lay past the read-ahead window ({} requests): it slept\n",
                self.stalls,
                super::feed::READ_AHEAD
            );
        }
        if self.targets_cut > 0 {
            s += &format!(
                "  {} request(s) completed further ahead than the read-ahead window: their target depth is the highest count seen until it was full\n",
                self.targets_cut
            );
        }
        if self.clamped > 0 {
            s += &format!(
                "  {} request(s) recorded deeper than the device's queue depth were replayed at it\n",
                self.clamped
            );
        }
        s
    }
}

/// How late each submit was against its trace time (open loop): exact
/// values while there are at most [`LATE_EXACT`] (the nearest-rank p99 of
/// every one), then a histogram at 3 significant digits (HdrHistogram's
/// p99, within 0.1%); mean and max always exact.
#[derive(Debug, Default)]
pub(crate) struct Lateness {
    exact: Vec<Nanos>,
    hist: Option<Histogram<u64>>,
    sum: f64,
    max: Nanos,
}

/// The most lateness values held exactly (our choice: 8 MB).
pub(crate) const LATE_EXACT: usize = 1 << 20;

impl Lateness {
    pub(crate) fn push(&mut self, late: Nanos) {
        self.sum += late as f64;
        self.max = self.max.max(late);
        if let Some(h) = &mut self.hist {
            h.saturating_record(late);
            return;
        }
        self.exact.push(late);
        if self.exact.len() > LATE_EXACT {
            let mut h = Histogram::<u64>::new(3).expect("3 significant digits");
            h.auto(true);
            for &l in &self.exact {
                h.saturating_record(l);
            }
            self.exact = Vec::new();
            self.hist = Some(h);
        }
    }

    /// (mean, p99, max), ns.
    pub(crate) fn summary(&self) -> (f64, Nanos, Nanos) {
        let n = match &self.hist {
            Some(h) => h.len(),
            None => self.exact.len() as u64,
        };
        if n == 0 {
            return (0.0, 0, 0);
        }
        let p99 = match &self.hist {
            Some(h) => h.value_at_quantile(0.99),
            None => {
                let mut v = self.exact.clone();
                v.sort_unstable();
                percentile(&v, 0.99)
            }
        };
        (self.sum / n as f64, p99, self.max)
    }
}

/// The nearest-rank percentile of sorted values (0 when empty).
fn percentile(sorted: &[Nanos], q: f64) -> Nanos {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_is_exact_then_a_histogram_within_its_precision() {
        let mut l = Lateness::default();
        for i in 1..=100u64 {
            l.push(i * 1000);
        }
        assert_eq!(l.summary(), (50_500.0, 99_000, 100_000));
        let mut big = Lateness::default();
        let n = LATE_EXACT as u64 + 10;
        for i in 0..n {
            big.push(i % 1000);
        }
        assert!(big.hist.is_some() && big.exact.is_empty());
        let (mean, p99, max) = big.summary();
        assert_eq!(max, 999);
        assert!((mean - 499.5).abs() < 1.0, "{mean}");
        assert!(p99.abs_diff(990) <= 1, "{p99}");
    }
}
