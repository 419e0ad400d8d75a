//! Trace-driven simulation (issue 27 item 5): a block trace's requests
//! issued by simulated threads on the host profile's cores, to the modelled
//! device, so a user sees the host's CPU and latency beside the device's
//! interrupts.
//!
//! The front end (`cinterrupts sim --trace`) reads the trace (the `traces`
//! crate) and hands this module plain [`TraceIo`]s with their marks already
//! decided; this crate does not read trace files.
//!
//! **Threads.** One per trace process (its pid; one thread for a trace
//! without pids), an application thread ([`apps::AppThread`]) driven by
//! [`crate::simulate_app`]: each process its own instance (a switch between
//! two is a process switch), pinned round-robin on the host's cores
//! (process `i` on core `i mod cores`). A process whose requests were never
//! more than one in flight (recorded) is a blocking one (a `pread` that
//! sleeps until its completion, fio's psync); any other, and any whose
//! trace lacks completion times (fio's iolog, Alibaba, Tencent, DiskSim),
//! waits as libaio does (`io_submit`, then `io_getevents`).
//!
//! **Requests.** Size and direction are the trace's; the offset is not used
//! (the device model's service time does not depend on it). Each request's
//! recorded in-flight count is the number of its process's requests issued
//! and not yet completed at its issue, itself included (a request without a
//! completion time counts only at its own issue: a trace without
//! completions replays closed loop at one in flight per process).
//!
//! **Two loops** (choose by the question):
//! - [`Loop::Open`]: each request is submitted at its trace time (relative
//!   to the trace's first issue), whatever the device does: *what would
//!   this arrival stream cost on that host and device* (interrupt rate,
//!   CPU, latency under the recorded load, a device slower than the
//!   recorded one queueing up). A thread never sleeps with I/Os in flight:
//!   with nothing due it waits for a completion, so a completion slower than
//!   the next gap makes the next submit late; that lateness is the drift
//!   reported ([`Drift`]). It charges no user work of its own: the trace's
//!   gaps already hold the application's.
//! - [`Loop::Closed`]: a request is submitted as soon as its process has
//!   fewer in flight than it had when the request was recorded, each after
//!   the host's `user_per_io` of user work (as a fio job's I/O): *what
//!   throughput and latency would this application get* on another device
//!   or host, the application's concurrency kept, its think time not (a
//!   trace does not tell think time from the recorded host's own path).
//!   Each process starts at its first recorded issue (processes that ran
//!   one after another do not overlap). Its drift is the replay's duration against the trace's, and the IOPS
//!   ratio.
//!
//! Marks are the front end's (`cinterrupts` applies TOS Table 1's logic as
//! `coalesce --trace` does: reads, sync writes and flushes Urgent, other
//! writes unmarked).

use std::cell::RefCell;
use std::collections::{BinaryHeap, HashMap};
use std::rc::Rc;

use apps::{Action, AppIo, AppThread, OpDone, PlacedThread, Waiter};
use policy::{Marks, Nanos};
use rand::RngCore;
use report::RunReport;

use crate::limits::MAX_THREADS;
use crate::{Audit, SimConfig, SimError};

/// The most requests a replay holds (each about 32 bytes in memory: the
/// whole trace is held, as closed loop needs each process's requests in
/// order and open loop their times). Our bound: 1.6 GB at most.
pub const MAX_REQUESTS: usize = 50_000_000;

/// One request of a trace, as the replay needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceIo {
    /// When the trace issued it, ns (any origin).
    pub issue_ns: Nanos,
    /// When the trace saw it complete, if it did.
    pub complete_ns: Option<Nanos>,
    pub bytes: u64,
    pub write: bool,
    /// The marks the device sees.
    pub marks: Marks,
    /// Its process, if the trace names one.
    pub pid: Option<u32>,
}

/// TOS Table 1's marks for a traced request, from what a block trace
/// records (the marking engine's `marks::kernel::block`): a read, a
/// synchronous write or a flush has a thread waiting for it (Urgent); an
/// asynchronous write does not (no mark).
pub fn table1_marks(r: &traces::Request) -> Marks {
    marks::kernel::block(r.write, r.sync, r.flush)
}

/// A trace file's requests as the replay takes them, marked by
/// [`table1_marks`]: those `comm` issued, if given. One line naming the
/// file if it cannot be read or holds more than [`MAX_REQUESTS`], or if
/// its times go backwards (`traces::order`).
pub fn load(
    path: &std::path::Path,
    format: Option<traces::Format>,
    comm: Option<&str>,
) -> Result<Vec<TraceIo>, String> {
    load_with(
        path,
        format,
        comm,
        traces::Order::Check,
        &mut crate::trace_marks::Marker::table1(),
    )
}

/// [`load`] of every request in the file (its format detected), marked by
/// `marker` (`--marks-from`, [`crate::trace_marks`]): a sweep's traces.
pub fn load_marked(
    path: &std::path::Path,
    marker: &mut crate::trace_marks::Marker,
) -> Result<Vec<TraceIo>, String> {
    load_with(path, None, None, traces::Order::Check, marker)
}

/// [`load`], the trace's times checked or sorted as `order` says
/// (`--sort`), its requests marked by `marker` (`--marks-from`,
/// [`crate::trace_marks`]).
pub fn load_with(
    path: &std::path::Path,
    format: Option<traces::Format>,
    comm: Option<&str>,
    order: traces::Order,
    marker: &mut crate::trace_marks::Marker,
) -> Result<Vec<TraceIo>, String> {
    let mut ios = Vec::new();
    for r in traces::open_in_order(path, format, order).map_err(|e| e.to_string())? {
        let r = r.map_err(|e| e.to_string())?;
        if comm.is_some_and(|c| r.comm.as_deref() != Some(c)) {
            continue;
        }
        if ios.len() == MAX_REQUESTS {
            return Err(format!(
                "{}: more than {MAX_REQUESTS} requests, the most a replay holds",
                path.display()
            ));
        }
        ios.push(TraceIo {
            issue_ns: r.issue_ns,
            complete_ns: r.complete_ns,
            bytes: u64::from(r.bytes),
            write: r.write,
            marks: marker.mark(&r),
            pid: r.pid,
        });
    }
    Ok(ios)
}

/// How the replay paces its requests (the module's comment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loop {
    Open,
    Closed,
}

impl Loop {
    pub fn name(self) -> &'static str {
        match self {
            Loop::Open => "open",
            Loop::Closed => "closed",
        }
    }
}

impl std::str::FromStr for Loop {
    type Err = String;
    fn from_str(s: &str) -> Result<Loop, String> {
        match s {
            "open" => Ok(Loop::Open),
            "closed" => Ok(Loop::Closed),
            _ => Err(format!("'{s}' is not a loop: open or closed")),
        }
    }
}

/// One request as a thread replays it.
#[derive(Clone, Copy, Debug)]
struct Item {
    /// Its due time, from the trace's first issue.
    due: Nanos,
    bytes: u64,
    write: bool,
    marks: Marks,
    /// Its process's requests in flight at its issue, itself included.
    depth: u32,
}

/// One trace process's requests, in issue order.
#[derive(Clone, Debug)]
struct Process {
    pid: Option<u32>,
    /// Its last completion (or issue), from the trace's first issue.
    end: Nanos,
    items: Vec<Item>,
    /// Every request's completion is in the trace (its in-flight counts
    /// are known).
    completions: bool,
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
                "  pid {pid}: {} requests; trace {:.3}ms, {:.0} IOPS; replay {:.3}ms, {:.0} IOPS\n",
                p.requests,
                p.trace_ns as f64 / 1e6,
                p.trace_iops,
                p.replay_ns as f64 / 1e6,
                p.replay_iops
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

/// What the threads write as they replay, read after the run.
#[derive(Debug, Default)]
struct Book {
    late: Vec<Nanos>,
    issued: u64,
    /// Per process: its first submit and its last completion taken.
    first: Vec<Option<Nanos>>,
    last: Vec<Nanos>,
}

/// The requests grouped by process (in order of first appearance), each
/// process's in issue order with its recorded in-flight count.
fn processes(ios: Vec<TraceIo>) -> (Vec<Process>, Nanos, Nanos) {
    let t0 = ios.iter().map(|r| r.issue_ns).min().unwrap_or(0);
    let end = ios
        .iter()
        .map(|r| r.complete_ns.unwrap_or(r.issue_ns).max(r.issue_ns))
        .max()
        .unwrap_or(0);
    let mut at: HashMap<Option<u32>, usize> = HashMap::new();
    let mut grouped: Vec<(Option<u32>, Vec<TraceIo>)> = Vec::new();
    for r in ios {
        let i = *at.entry(r.pid).or_insert_with(|| {
            grouped.push((r.pid, Vec::new()));
            grouped.len() - 1
        });
        grouped[i].1.push(r);
    }
    let procs = grouped
        .into_iter()
        .map(|(pid, mut rs)| {
            rs.sort_by_key(|r| r.issue_ns);
            // The completions still ahead, earliest first.
            let mut open: BinaryHeap<std::cmp::Reverse<Nanos>> = BinaryHeap::new();
            let items = rs
                .iter()
                .map(|r| {
                    while open.peek().is_some_and(|c| c.0 <= r.issue_ns) {
                        open.pop();
                    }
                    let depth = open.len() as u32 + 1;
                    if let Some(c) = r.complete_ns.filter(|&c| c > r.issue_ns) {
                        open.push(std::cmp::Reverse(c));
                    }
                    Item {
                        due: r.issue_ns - t0,
                        bytes: r.bytes,
                        write: r.write,
                        marks: r.marks,
                        depth,
                    }
                })
                .collect();
            let completions = rs.iter().all(|r| r.complete_ns.is_some());
            let end = rs
                .iter()
                .map(|r| r.complete_ns.unwrap_or(r.issue_ns).max(r.issue_ns) - t0)
                .max()
                .unwrap_or(0);
            Process {
                pid,
                end,
                items,
                completions,
            }
        })
        .collect();
    (procs, t0, end - t0)
}

/// One trace process's thread (the module's comment).
#[derive(Debug)]
struct TraceThread {
    items: Vec<Item>,
    next: usize,
    in_flight: u32,
    max: u32,
    mode: Loop,
    waiter: Waiter,
    user_per_io: Nanos,
    /// Closed loop: the user work of the next batch is done.
    computed: bool,
    stopped: bool,
    book: Rc<RefCell<Book>>,
    /// Its index among the processes (the book's).
    ix: usize,
}

impl TraceThread {
    /// How many of the next requests may go in one submit call now.
    fn batch(&self, now: Nanos) -> usize {
        let mut n = 0;
        let cap = match self.waiter {
            Waiter::Blocking => 1,
            _ => usize::MAX,
        };
        while n < cap {
            let Some(it) = self.items.get(self.next + n) else {
                break;
            };
            let ahead = self.in_flight + n as u32;
            let ok = match self.mode {
                Loop::Open => it.due <= now && ahead < self.max,
                Loop::Closed => ahead < it.depth.min(self.max),
            };
            if !ok {
                break;
            }
            n += 1;
        }
        n
    }

    fn wait(&self) -> Action {
        Action::Wait {
            min: 1,
            max: self.in_flight,
        }
    }
}

impl AppThread for TraceThread {
    fn waiter(&self) -> Waiter {
        self.waiter
    }

    fn next(&mut self, now: Nanos, _rng: &mut dyn RngCore) -> Action {
        if self.stopped || self.next >= self.items.len() {
            return if self.in_flight > 0 {
                self.wait()
            } else {
                Action::Done
            };
        }
        if self.next == 0 && now < self.items[0].due {
            // Every process starts at its first recorded issue, in either
            // loop: processes that ran at different times do not overlap.
            return Action::SleepUntil(self.items[0].due);
        }
        let n = self.batch(now);
        if n == 0 {
            if self.in_flight > 0 {
                return self.wait();
            }
            // Open loop, nothing in flight: sleep until the next is due.
            return Action::SleepUntil(self.items[self.next].due);
        }
        if self.mode == Loop::Closed && !self.computed && self.user_per_io > 0 {
            self.computed = true;
            return Action::Compute(self.user_per_io * n as u64);
        }
        self.computed = false;
        let mut book = self.book.borrow_mut();
        let ios = (self.next..self.next + n)
            .map(|i| {
                let it = self.items[i];
                if self.mode == Loop::Open {
                    book.late.push(now.saturating_sub(it.due));
                }
                AppIo {
                    tag: i as u64,
                    write: it.write,
                    bytes: it.bytes,
                    marks: it.marks,
                }
            })
            .collect();
        book.issued += n as u64;
        book.first[self.ix].get_or_insert(now);
        self.next += n;
        self.in_flight += n as u32;
        Action::Submit(ios)
    }

    fn completed(&mut self, tags: &[u64], now: Nanos) {
        self.in_flight = self.in_flight.saturating_sub(tags.len() as u32);
        if !tags.is_empty() {
            self.book.borrow_mut().last[self.ix] = now;
        }
    }

    fn drain_ops(&mut self, _out: &mut Vec<OpDone>) {}

    fn stop(&mut self) {
        self.stopped = true;
    }

    fn max_in_flight(&self) -> u32 {
        self.max
    }
}

/// Replays `ios` on the configured host and device (the module's comment):
/// the usual report, its audit and the drift. `config.runtime` bounds the
/// replay's virtual time; without it, four times the trace's span plus one
/// second.
pub fn simulate_trace(
    ios: Vec<TraceIo>,
    mode: Loop,
    config: &SimConfig,
    progress: &mut dyn FnMut(Nanos, Nanos),
) -> Result<(RunReport, Audit, Drift), SimError> {
    if ios.is_empty() {
        return Err(SimError::Config(
            "the trace has no requests to replay".into(),
        ));
    }
    if ios.len() > MAX_REQUESTS {
        return Err(SimError::Config(format!(
            "{} requests: more than {MAX_REQUESTS}, the most a replay holds",
            ios.len()
        )));
    }
    let requests = ios.len() as u64;
    let (procs, _t0, span) = processes(ios);
    if procs.len() > MAX_THREADS {
        return Err(SimError::Config(format!(
            "the trace has {} processes: more than {MAX_THREADS}, the simulator's threads (keep fewer processes' requests)",
            procs.len()
        )));
    }
    let qd = config.device.queue_depth;
    let book = Rc::new(RefCell::new(Book {
        first: vec![None; procs.len()],
        last: vec![0; procs.len()],
        ..Book::default()
    }));
    let spans: Vec<(Option<u32>, u64, Nanos)> = procs
        .iter()
        .map(|p| {
            let first = p.items.first().map_or(0, |it| it.due);
            (p.pid, p.items.len() as u64, p.end - first)
        })
        .collect();
    let mut clamped = 0u64;
    let cores = config.host.cores as usize;
    let nprocs = procs.len();
    let threads = procs
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let deepest = p.items.iter().map(|it| it.depth).max().unwrap_or(1);
            clamped += p.items.iter().filter(|it| it.depth > qd).count() as u64;
            let waiter = if deepest <= 1 && p.completions {
                Waiter::Blocking
            } else {
                Waiter::Libaio
            };
            let max = match mode {
                Loop::Open => qd,
                Loop::Closed => deepest.min(qd),
            };
            let name = match p.pid {
                Some(pid) => format!("pid{pid}"),
                None => "trace".to_string(),
            };
            PlacedThread {
                name,
                instance: i,
                core: i % cores.max(1),
                background: false,
                index: 0,
                thread: Box::new(TraceThread {
                    items: p.items,
                    next: 0,
                    in_flight: 0,
                    max,
                    mode,
                    waiter,
                    user_per_io: config.host.user_per_io,
                    computed: false,
                    stopped: false,
                    book: Rc::clone(&book),
                    ix: i,
                }),
            }
        })
        .collect();
    let mut config = config.clone();
    if config.runtime.is_none() {
        config.runtime = Some(span.saturating_mul(4).saturating_add(policy::SEC));
    }
    let (mut report, audit) = crate::run::simulate_app_floored(threads, &config, progress)?;
    // No operations of an application: the threads' entries and the
    // cores' lines are the report.
    report.apps = None;
    let book = book.borrow();
    let mut late = book.late.clone();
    late.sort_unstable();
    let rate = |n: u64, ns: Nanos| {
        if ns == 0 {
            0.0
        } else {
            n as f64 * 1e9 / ns as f64
        }
    };
    let trace_iops = rate(requests, span);
    let replay_iops = rate(report.completed_ios(), report.duration_ns);
    let drift = Drift {
        mode: mode.name(),
        requests,
        issued: book.issued,
        processes: nprocs,
        late_mean_ns: if late.is_empty() {
            0.0
        } else {
            late.iter().map(|&l| l as f64).sum::<f64>() / late.len() as f64
        },
        late_p99_ns: percentile(&late, 0.99),
        late_max_ns: late.last().copied().unwrap_or(0),
        trace_ns: span,
        replay_ns: report.duration_ns,
        trace_iops,
        replay_iops,
        iops_ratio: if trace_iops > 0.0 {
            replay_iops / trace_iops
        } else {
            0.0
        },
        clamped,
        per_process: spans
            .iter()
            .enumerate()
            .map(|(i, &(pid, n, trace_ns))| {
                let replay_ns = book.first[i].map_or(0, |f| book.last[i].saturating_sub(f));
                ProcessDrift {
                    pid,
                    requests: n,
                    trace_ns,
                    replay_ns,
                    trace_iops: rate(n, trace_ns),
                    replay_iops: rate(n, replay_ns),
                }
            })
            .collect(),
    };
    if book.issued < requests {
        report.notes.push(format!(
            "the replay issued {} of the trace's {requests} requests before its runtime ended",
            book.issued
        ));
    }
    Ok((report, audit, drift))
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

    fn io(pid: u32, issue: Nanos, complete: Nanos) -> TraceIo {
        TraceIo {
            issue_ns: issue,
            complete_ns: Some(complete),
            bytes: 4096,
            write: false,
            marks: Marks::URGENT,
            pid: Some(pid),
        }
    }

    #[test]
    fn recorded_in_flight_counts_each_process_apart() {
        let ios = vec![
            io(1, 100, 500),
            io(1, 200, 300),
            io(2, 250, 900),
            io(1, 300, 400),
            io(1, 600, 700),
        ];
        let (procs, t0, span) = processes(ios);
        assert_eq!((t0, span), (100, 800));
        let depths: Vec<Vec<u32>> = procs
            .iter()
            .map(|p| p.items.iter().map(|i| i.depth).collect())
            .collect();
        // pid 1: 1; 2 (the first out); 2 (the second done at 300); 1.
        assert_eq!(depths, vec![vec![1, 2, 2, 1], vec![1]]);
        assert_eq!(procs[0].items[0].due, 0);
        assert_eq!(procs[1].items[0].due, 150);
    }

    #[test]
    fn loop_names_parse() {
        assert_eq!("open".parse::<Loop>(), Ok(Loop::Open));
        assert_eq!("closed".parse::<Loop>(), Ok(Loop::Closed));
        assert!("half".parse::<Loop>().is_err());
    }
}
