//! Trace-driven simulation (issue 27 item 5): a block trace's requests
//! issued by simulated threads on the host profile's cores, to the modelled
//! device, so a user sees the host's CPU and latency beside the device's
//! interrupts.
//!
//! The front end (`cinterrupts sim --trace`) reads the trace (the `traces`
//! crate, [`stream`]) and hands this module plain [`TraceIo`]s with their
//! marks already decided, as a stream ([`simulate_stream`]: memory bounded
//! by the windows of [`feed`], whatever the trace's length; issue 41 item
//! 3) or a vector ([`simulate_trace`]).
//!
//! **Threads.** One per trace process (its pid; one thread for a trace
//! without pids), an application thread ([`apps::AppThread`]) driven by
//! [`crate::simulate_app`]: each thread its own instance (a switch between
//! two is a process switch), pinned round-robin on the host's cores
//! (thread `i` on core `i mod cores`). More processes than the simulator's
//! threads, or processes first seen past the read-ahead, share threads:
//! process `k` (in order of first appearance) on thread `k mod T` ([`feed`]
//! states the rule; the report says when it applied). A thread whose
//! process's requests were never more than one in flight (recorded) is a
//! blocking one (a `pread` that sleeps until its completion, fio's psync);
//! any other, and any whose trace lacks completion times (fio's iolog,
//! Alibaba, Tencent, DiskSim), waits as libaio does (`io_submit`, then
//! `io_getevents`). The kind is taken from the requests read before the
//! replay starts (the whole trace when it fits the windows).
//!
//! **Requests.** Size and direction are the trace's; the offset is not used
//! (the device model's service time does not depend on it). Each request's
//! recorded in-flight count is the number of its process's requests issued
//! and not yet completed at its issue, itself included (a request without a
//! completion time counts only at its own issue: a trace without
//! completions replays closed loop at one in flight per process); its
//! *target depth* is the highest count its process reached while it was in
//! flight (an `io_submit` of 8: 8 for each; [`feed`]).
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
//!   fewer in flight than its target depth, each after the host's
//!   `user_per_io` of user work (as a fio job's I/O): *what throughput and
//!   latency would this application get* on another device or host, the
//!   application's concurrency kept (its in-flight depth over time follows
//!   the trace's: a libaio QD8 capture whose completions came in bursts
//!   keeps 8 in flight, not the count its batch's first request saw; issue
//!   41 item 0), its think time not (a trace does not tell think time from
//!   the recorded host's own path). Each process starts at its first
//!   recorded issue (processes that ran one after another do not
//!   overlap). Its drift is the replay's duration against the trace's, and
//!   the IOPS ratio.
//!
//! **Each job's figures** (the report's `jobs[]`, one per thread) are over
//! its own active window, its first submit to its last completion taken,
//! as fio divides a job's I/Os by its own runtime (issue 41 item 0), not
//! over the whole replay's.
//!
//! Marks are the front end's (`cinterrupts` applies TOS Table 1's logic as
//! `coalesce --trace` does: reads, sync writes and flushes Urgent, other
//! writes unmarked).

pub mod drift;
pub mod feed;
pub mod generate;
pub mod ingest;
mod thread;

use std::cell::RefCell;
use std::rc::Rc;

use apps::{PlacedThread, Waiter};
use policy::{Marks, Nanos};
use report::RunReport;

use crate::limits::MAX_THREADS;
use crate::{Audit, SimConfig, SimError};

pub use drift::{Drift, ProcessDrift};
use feed::Feed;
use thread::{Book, TraceThread};

/// The most requests [`load`] and [`simulate_trace`] hold in a vector
/// (each about 32 bytes: 1.6 GB at most, our bound); [`stream`] and
/// [`simulate_stream`] have no cap.
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
    let mut ios = Vec::new();
    for r in stream(path, format, comm)? {
        if ios.len() == MAX_REQUESTS {
            return Err(format!(
                "{}: more than {MAX_REQUESTS} requests, the most a replay holds",
                path.display()
            ));
        }
        ios.push(r?);
    }
    Ok(ios)
}

/// Every request of the file (its format detected) as the replay takes
/// them, marked by `marker` (`--marks-from`, [`crate::trace_marks`]): a
/// sweep's traces.
pub fn load_marked(
    path: &std::path::Path,
    marker: &mut crate::trace_marks::Marker,
) -> Result<Vec<TraceIo>, String> {
    let requests = traces::open(path, None).map_err(|e| e.to_string())?;
    ingest::collect(requests, None, ingest::QueuesBy::Process, marker)
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

/// A stream of requests as the replay takes them.
pub type Stream = Box<dyn Iterator<Item = Result<TraceIo, String>>>;

/// A trace file's requests as a stream, marked by [`table1_marks`]: those
/// `comm` issued, if given. A row the reader refuses is the stream's error
/// (its file, line and field); the stream ends there.
pub fn stream(
    path: &std::path::Path,
    format: Option<traces::Format>,
    comm: Option<&str>,
) -> Result<impl Iterator<Item = Result<TraceIo, String>> + 'static, String> {
    let reqs = traces::open(path, format).map_err(|e| e.to_string())?;
    Ok(ingest::stream(
        reqs,
        comm.map(str::to_string),
        ingest::QueuesBy::Process,
        Rc::new(RefCell::new(crate::trace_marks::Marker::table1())),
    ))
}

/// Makes the same stream again (a file read once more), for a run that
/// must be made twice ([`simulate_stream_with`]).
pub type Again<'a> = &'a mut dyn FnMut() -> Result<Stream, String>;

/// Replays `ios` on the configured host and device (the module's comment):
/// the usual report, its audit and the drift. `config.runtime` bounds the
/// replay's virtual time; without it, four times the trace's span plus one
/// second (a trace longer than the windows: four times the span read so
/// far plus one second, each thread stopping there).
pub fn simulate_trace(
    ios: Vec<TraceIo>,
    mode: Loop,
    config: &SimConfig,
    progress: &mut dyn FnMut(Nanos, Nanos),
) -> Result<(RunReport, Audit, Drift), SimError> {
    if ios.len() > MAX_REQUESTS {
        return Err(SimError::Config(format!(
            "{} requests: more than {MAX_REQUESTS}, the most a replay holds",
            ios.len()
        )));
    }
    let ios = Rc::new(ios);
    let from = |v: &Rc<Vec<TraceIo>>| -> Stream {
        let v = Rc::clone(v);
        Box::new((0..v.len()).map(move |i| Ok(v[i])))
    };
    let first = from(&ios);
    let mut again = || Ok(from(&ios));
    simulate_stream_with(first, Some(&mut again), mode, config, progress)
}

/// [`simulate_trace`] on a stream, in bounded memory ([`feed`]): one pass,
/// no cap on requests or processes. The slowest 1%'s request records are
/// kept on a guess (a few percent); a run whose guess falls short says so
/// in a note (with [`simulate_stream_with`] it is made again instead).
/// A stream's error ends the replay and is its error.
pub fn simulate_stream(
    ios: impl Iterator<Item = Result<TraceIo, String>> + 'static,
    mode: Loop,
    config: &SimConfig,
    progress: &mut dyn FnMut(Nanos, Nanos),
) -> Result<(RunReport, Audit, Drift), SimError> {
    simulate_stream_with(Box::new(ios), None, mode, config, progress)
}

/// [`simulate_stream`], with `again` to make the same stream once more
/// when the slowest 1%'s records kept on a guess fall short (as a job
/// file's run is made again: `crate::simulate_app_with`).
pub fn simulate_stream_with(
    ios: Stream,
    again: Option<Again<'_>>,
    mode: Loop,
    config: &SimConfig,
    progress: &mut dyn FnMut(Nanos, Nanos),
) -> Result<(RunReport, Audit, Drift), SimError> {
    replay_with(
        ios,
        again,
        mode,
        config,
        (feed::REORDER, feed::READ_AHEAD),
        progress,
    )
}

/// The replay's state a build leaves for the books after the run.
type Books = Rc<RefCell<Option<(Rc<RefCell<Feed>>, Rc<RefCell<Book>>)>>>;

/// [`simulate_stream_with`] with the feed's windows (reorder, read-ahead)
/// given: the tests make them small.
pub(crate) fn replay_with(
    ios: Stream,
    again: Option<Again<'_>>,
    mode: Loop,
    config: &SimConfig,
    windows: (usize, usize),
    progress: &mut dyn FnMut(Nanos, Nanos),
) -> Result<(RunReport, Audit, Drift), SimError> {
    let books: Books = Rc::new(RefCell::new(None));
    let feed = Feed::start(
        ios,
        windows.0,
        windows.1,
        config.device.queue_depth,
        MAX_THREADS,
    );
    if let Some(e) = &feed.error {
        return Err(SimError::Config(e.clone()));
    }
    if feed.read() == 0 {
        return Err(SimError::Config(
            "the trace has no requests to replay".into(),
        ));
    }
    // Without a runtime: four times the trace's span plus 1 s when the
    // whole trace was read; else unbounded here, each thread stopping at
    // four times the span read so far plus 1 s.
    let mut config = config.clone();
    let bounded_by_span = config.runtime.is_none() && !feed.ended();
    if config.runtime.is_none() {
        config.runtime = Some(if feed.ended() {
            let span = feed.end - feed.t0;
            span.saturating_mul(4).saturating_add(policy::SEC)
        } else {
            UNBOUNDED
        });
    }
    let threads = place(feed, mode, &config, bounded_by_span, &books);
    let mut rebuild = again.map(|again| {
        let books = Rc::clone(&books);
        let config = config.clone();
        move || -> Result<Vec<PlacedThread>, String> {
            let feed = Feed::start(
                again()?,
                windows.0,
                windows.1,
                config.device.queue_depth,
                MAX_THREADS,
            );
            Ok(place(feed, mode, &config, bounded_by_span, &books))
        }
    });
    let mut shown = |now: Nanos, end: Nanos| progress(now, if bounded_by_span { 0 } else { end });
    let (mut report, audit) = match rebuild.as_mut() {
        Some(r) => crate::run::simulate_app_floored(threads, Some(r), &config, &mut shown)?,
        None => crate::run::simulate_app_floored(threads, None, &config, &mut shown)?,
    };
    // No operations of an application: the threads' entries and the
    // cores' lines are the report.
    report.apps = None;
    let (feed, book) = books.borrow_mut().take().expect("the replay's books");
    let feed = feed.borrow();
    let book = book.borrow();
    if let Some(e) = &feed.error {
        return Err(SimError::Config(e.clone()));
    }
    own_windows(&mut report, &book);
    let drift = drift_of(&report, &feed, &book, mode);
    if feed.procs.len() > feed.threads() {
        report.notes.push(format!(
            "the trace's {} processes ran on {} simulated threads: process k (in order of first appearance) on thread k mod {}",
            feed.procs.len(),
            feed.threads(),
            feed.threads()
        ));
    }
    if book.issued < drift.requests {
        report.notes.push(format!(
            "the replay issued {} of the trace's {} requests before its runtime ended",
            book.issued, drift.requests
        ));
    } else if !feed.ended() {
        report.notes.push(format!(
            "the replay issued {} requests before its runtime ended; the rest of the trace was not read",
            book.issued
        ));
    }
    Ok((report, audit, drift))
}

/// The runtime of a replay bounded by its threads (our choice: a century
/// of virtual time, far from overflow with every sum the simulator makes).
const UNBOUNDED: Nanos = 100 * 365 * 24 * 3600 * policy::SEC;

/// The replay's threads on `feed` (the module's comment), its books in
/// `books`.
fn place(
    feed: Feed,
    mode: Loop,
    config: &SimConfig,
    bounded_by_span: bool,
    books: &Books,
) -> Vec<PlacedThread> {
    let t = feed.threads();
    // Each thread's bound on its requests in flight: the device's queue
    // depth, shared out under the simulator's bound on them all.
    let qd = config
        .device
        .queue_depth
        .min((crate::limits::MAX_IN_FLIGHT / t as u64) as u32);
    let cores = config.host.cores as usize;
    let book = Rc::new(RefCell::new(Book {
        first: vec![None; t],
        last: vec![0; t],
        ..Book::default()
    }));
    let kinds: Vec<(String, Waiter)> = (0..t)
        .map(|k| {
            let serves = feed.serves(k);
            let first = &feed.procs[serves[0] as usize];
            let blocking = serves.len() == 1 && first.deepest <= 1 && first.completions;
            let name = match first.pid {
                Some(pid) => format!("pid{pid}"),
                None => "trace".to_string(),
            };
            let waiter = if blocking {
                Waiter::Blocking
            } else {
                Waiter::Libaio
            };
            (name, waiter)
        })
        .collect();
    let feed = Rc::new(RefCell::new(feed));
    *books.borrow_mut() = Some((Rc::clone(&feed), Rc::clone(&book)));
    kinds
        .into_iter()
        .enumerate()
        .map(|(k, (name, waiter))| PlacedThread {
            name,
            instance: k,
            core: k % cores.max(1),
            background: false,
            index: 0,
            thread: Box::new(TraceThread {
                feed: Rc::clone(&feed),
                book: Rc::clone(&book),
                k,
                in_flight: 0,
                max: qd,
                mode,
                waiter,
                user_per_io: config.host.user_per_io,
                bounded_by_span,
                taken: Vec::new(),
                stopped: false,
            }),
        })
        .collect()
}

/// Each job's I/Os over its own active window (the module's comment): its
/// thread's first submit to its last completion taken, within the
/// measured window.
fn own_windows(report: &mut RunReport, book: &Book) {
    let end = report.duration_ns;
    for (k, job) in report.jobs.iter_mut().enumerate() {
        let Some(first) = book.first.get(k).copied().flatten() else {
            continue;
        };
        let own = book.last[k].min(end).saturating_sub(first);
        job.read.run_ns = Some(own);
        job.write.run_ns = Some(own);
    }
}

fn rate(n: u64, ns: Nanos) -> f64 {
    if ns == 0 {
        0.0
    } else {
        n as f64 * 1e9 / ns as f64
    }
}

/// The drift from the feed's and the threads' books.
fn drift_of(report: &RunReport, feed: &Feed, book: &Book, mode: Loop) -> Drift {
    let requests = feed.read();
    let span = feed.end.saturating_sub(feed.t0);
    let trace_iops = rate(requests, span);
    let replay_iops = rate(report.completed_ios(), report.duration_ns);
    let (late_mean_ns, late_p99_ns, late_max_ns) = book.late.summary();
    Drift {
        mode: mode.name(),
        requests,
        issued: book.issued,
        processes: feed.procs.len(),
        late_mean_ns,
        late_p99_ns,
        late_max_ns,
        trace_ns: span,
        replay_ns: report.duration_ns,
        trace_iops,
        replay_iops,
        iops_ratio: if trace_iops > 0.0 {
            replay_iops / trace_iops
        } else {
            0.0
        },
        clamped: feed.clamped,
        reordered: feed.reordered,
        stalls: book.stalls,
        targets_cut: feed.cut,
        per_process: feed
            .procs
            .iter()
            .map(|p| {
                let trace_ns = p.end - p.first_issue;
                let replay_ns = p.first_submit.map_or(0, |f| p.last_done.saturating_sub(f));
                let closed = mode == Loop::Closed;
                let mean = |area: u128, ns: Nanos| (ns > 0).then(|| area as f64 / ns as f64);
                ProcessDrift {
                    pid: p.pid,
                    requests: p.requests,
                    trace_ns,
                    replay_ns,
                    trace_iops: rate(p.requests, trace_ns),
                    replay_iops: rate(p.requests, replay_ns),
                    trace_depth: mean(p.busy, trace_ns).filter(|_| closed),
                    replay_depth: mean(p.area, replay_ns).filter(|_| closed),
                }
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> SimConfig {
        SimConfig {
            device: crate::DeviceProfile::load("optane").unwrap(),
            host: crate::HostProfile::load("xeon-e5-2660v4").unwrap(),
            policy: policy::catalogue::PolicySpec::named("cint"),
            seed: 1,
            runtime: None,
        }
    }

    /// A process at depth 4 with completions in pairs, yielded in
    /// completion order as the blkparse reader yields them.
    fn qd4(n: u64) -> Vec<TraceIo> {
        let mut v: Vec<TraceIo> = (0..n)
            .map(|i| {
                let issue = 1_000_000 + (i / 4) * 30_000 + (i % 4) * 700;
                TraceIo {
                    issue_ns: issue,
                    complete_ns: Some(issue + 20_000 - (i % 2) * 5_000),
                    bytes: 4096,
                    write: i % 5 == 0,
                    marks: if i % 5 == 0 {
                        Marks::NONE
                    } else {
                        Marks::URGENT
                    },
                    pid: Some(9),
                }
            })
            .collect();
        v.sort_by_key(|r| r.complete_ns);
        v
    }

    /// Issue 41 item 3: windows far smaller than the trace (read as the
    /// replay goes, runtime bounded by the threads) replay one process
    /// exactly as the whole trace held at once, in both loops.
    #[test]
    fn small_windows_replay_a_trace_as_the_whole_of_it() {
        let ios = qd4(3_000);
        for mode in [Loop::Open, Loop::Closed] {
            let run = |windows| {
                let src: Stream = Box::new(ios.clone().into_iter().map(Ok));
                let (r, a, d) =
                    replay_with(src, None, mode, &config(), windows, &mut |_, _| {}).unwrap();
                (report::json::document(&r), a.submitted, d)
            };
            let whole = run((1 << 16, 1 << 18));
            let small = run((16, 32));
            assert_eq!(whole.1, 3_000);
            assert_eq!(whole, small, "{mode:?}");
        }
    }

    /// More processes than the simulator's threads: process k on thread
    /// k mod 256, every request issued once, the rule in a note.
    #[test]
    fn processes_past_the_threads_share_them_by_the_stated_rule() {
        let ios: Vec<TraceIo> = (0..600u64)
            .map(|i| TraceIo {
                issue_ns: 1_000_000 + i * 10_000,
                complete_ns: Some(1_000_000 + i * 10_000 + 8_000),
                bytes: 4096,
                write: false,
                marks: Marks::URGENT,
                pid: Some((i % 300) as u32),
            })
            .collect();
        for mode in [Loop::Open, Loop::Closed] {
            let (r, a, d) = simulate_stream(
                ios.clone().into_iter().map(Ok),
                mode,
                &config(),
                &mut |_, _| {},
            )
            .unwrap();
            assert_eq!((a.submitted, d.issued, d.processes), (600, 600, 300));
            assert_eq!(r.jobs.len(), MAX_THREADS);
            // Thread 0 served processes 0 and 256: four requests.
            assert_eq!(r.jobs[0].read.io_ops, 4, "{mode:?}");
            assert_eq!(r.jobs[44].read.io_ops, 2, "{mode:?}");
            assert!(
                r.notes.iter().any(|n| n.contains("on thread k mod 256")),
                "{:?}",
                r.notes
            );
        }
    }

    /// A stream's error ends the replay and is its error.
    #[test]
    fn a_streams_error_is_the_replays() {
        let mut ios: Vec<Result<TraceIo, String>> = qd4(10).into_iter().map(Ok).collect();
        ios.push(Err("t.txt: line 11: bad sector".into()));
        let e =
            simulate_stream(ios.into_iter(), Loop::Open, &config(), &mut |_, _| {}).unwrap_err();
        assert_eq!(e.to_string(), "t.txt: line 11: bad sector");
    }

    #[test]
    fn loop_names_parse() {
        assert_eq!("open".parse::<Loop>(), Ok(Loop::Open));
        assert_eq!("closed".parse::<Loop>(), Ok(Loop::Closed));
        assert!("half".parse::<Loop>().is_err());
    }
}
