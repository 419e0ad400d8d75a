//! Where a request's time goes, as FastResponse breaks the read path down
//! (FR 2.2 Fig 5a, 4.4 Fig 15a), and the device's queue depth over time
//! (FR Fig 16). Measurement only: nothing here changes what the run does.
//!
//! - T_Dev: from the request reaching the device (its doorbell; a split
//!   request's first piece) to the device finishing it (its last piece).
//! - T_Sched: from the interrupt handler's end that woke the thread for a
//!   completion (try_to_wake_up done) to the thread running again (its
//!   switch-in done). A request whose thread was not asleep for it (polled,
//!   or the thread already running) adds 0: the figures are the mean
//!   latency's parts.
//! - Device queue depth: commands at the device (submitted, not finished),
//!   as time spent at each depth in the measured window.

use policy::Nanos;
use report::{IoPath, JobPath, QueueDepth};

/// Per request slot: when it reached the device and when the device
/// finished it (a block layer's pieces fold into their request's slot).
#[derive(Clone, Copy, Debug)]
struct Times {
    at_device: Nanos,
    done: Nanos,
}

const UNSET: Times = Times {
    at_device: Nanos::MAX,
    done: 0,
};

#[derive(Clone, Copy, Debug, Default)]
struct PerThread {
    requests: u64,
    t_dev: Nanos,
    t_sched: Nanos,
    /// Woken for a completion at this time and not yet switched in.
    woken_at: Option<Nanos>,
    /// The wait of the last wake-up for a completion, for the next request
    /// the thread takes.
    pending: Nanos,
    /// The handler decided to wake it for a completion.
    io_wake: bool,
}

#[derive(Debug, Default)]
pub(crate) struct Tracker {
    slots: Vec<Times>,
    threads: Vec<PerThread>,
    depth: u64,
    since: Nanos,
    /// ns spent at each depth inside the window.
    at_depth: Vec<Nanos>,
    max: u64,
}

impl Tracker {
    pub(crate) fn new(threads: usize) -> Tracker {
        Tracker {
            threads: vec![PerThread::default(); threads],
            ..Tracker::default()
        }
    }

    fn slot(&mut self, req: u32) -> &mut Times {
        let i = req as usize;
        if self.slots.len() <= i {
            self.slots.resize(i + 1, UNSET);
        }
        &mut self.slots[i]
    }

    /// A command (`req`, of the request in slot `owner`) reaches the device.
    pub(crate) fn at_device(&mut self, owner: u32, now: Nanos, window: (Nanos, Nanos)) {
        let t = self.slot(owner);
        t.at_device = t.at_device.min(now);
        self.depth_change(now, window, 1);
    }

    /// The device finished a command of the request in slot `owner`.
    pub(crate) fn serviced(&mut self, owner: u32, now: Nanos, window: (Nanos, Nanos)) {
        let t = self.slot(owner);
        t.done = t.done.max(now);
        self.depth_change(now, window, -1);
    }

    fn depth_change(&mut self, now: Nanos, (from, to): (Nanos, Nanos), by: i64) {
        let a = self.since.max(from);
        let b = now.min(to);
        if b > a {
            let d = self.depth as usize;
            if self.at_depth.len() <= d {
                self.at_depth.resize(d + 1, 0);
            }
            self.at_depth[d] += b - a;
            self.max = self.max.max(self.depth);
        }
        self.since = now;
        self.depth = self.depth.saturating_add_signed(by);
        if now >= from && now < to {
            self.max = self.max.max(self.depth);
        }
    }

    /// The handler decided to wake `tid` for a completion.
    pub(crate) fn io_wake(&mut self, tid: u32) {
        self.threads[tid as usize].io_wake = true;
    }

    /// `tid` became runnable (the handler ended).
    pub(crate) fn runnable(&mut self, tid: u32, now: Nanos) {
        let t = &mut self.threads[tid as usize];
        if std::mem::take(&mut t.io_wake) {
            t.woken_at = Some(now);
        }
    }

    /// `tid` is switched in; it runs at `running`.
    pub(crate) fn switched_in(&mut self, tid: u32, running: Nanos) {
        let t = &mut self.threads[tid as usize];
        if let Some(at) = t.woken_at.take() {
            t.pending += running.saturating_sub(at);
        }
    }

    /// `tid` took the request in slot `req`; `measured` if it counts.
    pub(crate) fn taken(&mut self, tid: u32, req: u32, measured: bool) {
        let times = std::mem::replace(self.slot(req), UNSET);
        let t = &mut self.threads[tid as usize];
        let wait = std::mem::take(&mut t.pending);
        if measured {
            t.requests += 1;
            t.t_dev += times.done.saturating_sub(times.at_device.min(times.done));
            t.t_sched += wait;
        }
    }

    /// The report's part, for the window `[from, to)`.
    pub(crate) fn report(&self, (from, to): (Nanos, Nanos)) -> IoPath {
        let mut at_depth = self.at_depth.clone();
        // The depth held from the last change to the window's end.
        let held = to.saturating_sub(self.since.max(from));
        if held > 0 {
            let d = self.depth as usize;
            if at_depth.len() <= d {
                at_depth.resize(d + 1, 0);
            }
            at_depth[d] += held;
        }
        let deepest = at_depth.iter().rposition(|&ns| ns > 0).unwrap_or(0) as u64;
        let total: Nanos = at_depth.iter().sum();
        let weighted: f64 = at_depth
            .iter()
            .enumerate()
            .map(|(d, &ns)| d as f64 * ns as f64)
            .sum();
        let mut p99 = 0;
        let mut seen = 0;
        for (d, &ns) in at_depth.iter().enumerate() {
            seen += ns;
            if total > 0 && seen as f64 >= 0.99 * total as f64 {
                p99 = d as u64;
                break;
            }
        }
        let mean = |sum: Nanos, n: u64| if n == 0 { 0.0 } else { sum as f64 / n as f64 };
        IoPath {
            jobs: self
                .threads
                .iter()
                .map(|t| JobPath {
                    requests: t.requests,
                    t_dev_mean_ns: mean(t.t_dev, t.requests),
                    t_sched_mean_ns: mean(t.t_sched, t.requests),
                })
                .collect(),
            device_queue: QueueDepth {
                mean: if total == 0 {
                    0.0
                } else {
                    weighted / total as f64
                },
                p99,
                max: self.max.max(deepest),
            },
        }
    }
}
