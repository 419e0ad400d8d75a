//! Time order (issue 41 item 0): a trace whose times go backwards further
//! than its format allows is refused with one line naming the file and the
//! request, unless it is asked to be sorted, which is done through a
//! bounded window ([`SORT_WINDOW`] requests), never by holding the trace.
//!
//! What is ordered is the time at which a reader yields a request (its
//! *record time*): the issue for the formats with one request a line, the
//! completion for those that yield a request at its completion (blkparse,
//! blktrace, biosnoop), whose issues are in completion order, not issue
//! order. A request yielded without a completion at the end of a paired
//! trace (issued, never completed) is not checked.
//!
//! The allowance per format ([`rule`]), and where it comes from:
//!
//! - blkparse text: 0. blkparse merges every CPU's events by time
//!   (blktrace's `blkparse.c`, its sorted rb-tree of traces), and
//!   blktrace's own `verify_blkparse.c` counts any line earlier than the one
//!   before it as "unordered" and fails on it. The per-CPU clocks' skew is
//!   already inside the merged times; `capture` writes the kernel's merged
//!   `trace` file on one clock (`trace_clock` mono).
//! - blktrace binary: 0. This crate merges the per-CPU files by time, as
//!   blkparse does, so only a file whose own times go back is out of order.
//! - biosnoop: 10 ms, assumed. bcc's `biosnoop.py` prints each CPU's perf
//!   buffer in turn (`perf_buffer_poll`), so two CPUs' lines interleave out
//!   of time order by up to a poll's batch; no bound is published: 10 ms is
//!   ours, far above a batch at the rates such traces carry and far below
//!   a corrupted time.
//! - fio iolog v2: 0. The times are the sums of the `wait`s before each
//!   line (this crate's `fio` module): they cannot go back.
//! - fio iolog v3: 0. fio's `log_io_u` (iolog.c) writes each I/O's
//!   `utime_since_now` of the log's start when its one thread issues it, so
//!   the times of one log only rise.
//! - MSR Cambridge, Alibaba, Tencent CBS: 0. Their releases are one file
//!   per volume and period with rows in time order; no row earlier than
//!   the one before is published, so one is a corruption or two files
//!   joined (ours, not a published rule).
//! - DiskSim (as MQSim reads it): 0. MQSim's `IO_Flow_Trace_Based` makes
//!   each line an event at its arrival time, and its `EventTree::
//!   Insert_sim_event` refuses an event before the simulated "Now".
//! - libCacheSim oracleGeneral and lcs: 0. A record's `next_access_vtime`
//!   is the position of the object's next request, counted in the trace's
//!   time order (libCacheSim's `traceConv`), so the records are written in
//!   time order; `clock_time`'s whole seconds tie, never step back.
//! - Thesios, Tectonic, CloudPhysics vscsi: 0, assumed: their releases
//!   publish no order, and a step back is taken as a corruption or two
//!   files joined, as for the CSV formats above (`--sort` reorders).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::{Format, Request, Requests, TraceError};

/// The most requests `--sort` holds to reorder them: the same bound as the
/// requests a paired reader holds in flight ([`crate::MAX_IN_FLIGHT`]),
/// about 10 MB of requests (ours: a bound of memory, not a published one).
/// A request that would have to move further back than this is an error.
pub const SORT_WINDOW: usize = 65_536;

/// Which of a request's times a format yields it in the order of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordTime {
    Issue,
    Completion,
}

/// How far a format's record times may go back, and why (the module's
/// list).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    pub time: RecordTime,
    /// Nanoseconds a record time may fall before the latest one seen.
    pub allowance_ns: u64,
    /// Where the allowance comes from, in a few words.
    pub source: &'static str,
}

/// The allowance of `format` (the module's list says each one's source).
pub fn rule(format: Format) -> Rule {
    let (time, allowance_ns, source) = match format {
        Format::Blkparse => (
            RecordTime::Completion,
            0,
            "blkparse merges the CPUs' events by time; blktrace's verify_blkparse.c fails on any step back",
        ),
        Format::Blktrace => (
            RecordTime::Completion,
            0,
            "the per-CPU files are merged by time",
        ),
        Format::Biosnoop => (
            RecordTime::Completion,
            10_000_000,
            "assumed: biosnoop prints each CPU's perf buffer in turn",
        ),
        Format::FioV2 | Format::FioV3 => (
            RecordTime::Issue,
            0,
            "fio logs each I/O at its issue, from one thread",
        ),
        Format::Msr | Format::Alibaba | Format::Tencent => (
            RecordTime::Issue,
            0,
            "the releases' rows are in time order",
        ),
        Format::Disksim => (
            RecordTime::Issue,
            0,
            "MQSim refuses an arrival before the one it replays",
        ),
        Format::OracleGeneral | Format::Lcs => (
            RecordTime::Issue,
            0,
            "libCacheSim's next_access_vtime counts records in time order",
        ),
        Format::Thesios | Format::Tectonic | Format::Vscsi => (
            RecordTime::Issue,
            0,
            "assumed: the releases' records are in arrival order (not published)",
        ),
    };
    Rule {
        time,
        allowance_ns,
        source,
    }
}

/// What a reader does with times out of order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Order {
    /// Refuse a step back beyond the format's allowance.
    #[default]
    Check,
    /// Reorder through a window of [`SORT_WINDOW`] requests (`--sort`).
    Sort,
}

/// `requests` of `format`, named `origin` in errors, checked or sorted as
/// `order` says.
pub fn in_order(requests: Requests, origin: &str, format: Format, order: Order) -> Requests {
    in_order_within(requests, origin, format, order, SORT_WINDOW)
}

/// [`in_order`] with its own window (tests use a small one).
pub fn in_order_within(
    requests: Requests,
    origin: &str,
    format: Format,
    order: Order,
    window: usize,
) -> Requests {
    Requests::new(Ordered {
        inner: requests,
        origin: origin.to_string(),
        format,
        rule: rule(format),
        order,
        window: window.max(1),
        n: 0,
        latest: None,
        held: BinaryHeap::new(),
        tail: VecDeque::new(),
        emitted: None,
        ended: false,
    })
    .of(format)
}

/// A request held by the sorting window, ordered by (record time, number).
struct Held {
    time: u64,
    n: u64,
    request: Request,
}

impl PartialEq for Held {
    fn eq(&self, o: &Self) -> bool {
        (self.time, self.n) == (o.time, o.n)
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Held {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.time, self.n).cmp(&(o.time, o.n))
    }
}

struct Ordered {
    inner: Requests,
    origin: String,
    format: Format,
    rule: Rule,
    order: Order,
    window: usize,
    /// Requests read so far (the last one's number, from 1).
    n: u64,
    /// Check: the latest record time seen, and its request's number.
    latest: Option<(u64, u64)>,
    /// Sort: the window, and the requests without a record time (given
    /// after it, in their order).
    held: BinaryHeap<Reverse<Held>>,
    tail: VecDeque<Request>,
    /// Sort: the last record time given out, and its request's number.
    emitted: Option<(u64, u64)>,
    ended: bool,
}

/// Seconds with nanoseconds, as the traces' own times are shown.
fn secs(ns: u64) -> String {
    format!("{}.{:09} s", ns / 1_000_000_000, ns % 1_000_000_000)
}

impl Ordered {
    fn record_time(&self, r: &Request) -> Option<u64> {
        match self.rule.time {
            RecordTime::Issue => Some(r.issue_ns),
            RecordTime::Completion => r.complete_ns,
        }
    }

    fn field(&self) -> &'static str {
        match self.rule.time {
            RecordTime::Issue => "issue time",
            RecordTime::Completion => "completion time",
        }
    }

    fn backwards(&self, n: u64, t: u64, (before, m): (u64, u64), sorting: bool) -> TraceError {
        let how = if sorting {
            format!(
                "further back than --sort reorders ({} requests)",
                self.window
            )
        } else {
            let allowance = match self.rule.allowance_ns {
                0 => "none".to_string(),
                a => secs(a),
            };
            format!(
                "further back than {} allows ({allowance}: {}); --sort reorders within {} requests",
                self.format, self.rule.source, self.window
            )
        };
        TraceError::Format {
            origin: self.origin.clone(),
            why: format!(
                "request {n}: {} {} is {} before request {m}'s {}: the times go backwards, {how}",
                self.field(),
                secs(t),
                secs(before - t),
                secs(before)
            ),
        }
    }

    fn check(&mut self, r: Request) -> Result<Request, TraceError> {
        let Some(t) = self.record_time(&r) else {
            return Ok(r);
        };
        match self.latest {
            Some((latest, m)) if t.saturating_add(self.rule.allowance_ns) < latest => {
                Err(self.backwards(self.n, t, (latest, m), false))
            }
            Some((latest, _)) if t <= latest => Ok(r),
            _ => {
                self.latest = Some((t, self.n));
                Ok(r)
            }
        }
    }

    /// The next request out of the window, once it is full or the input
    /// ended.
    fn release(&mut self) -> Option<Request> {
        let Reverse(h) = self.held.pop()?;
        self.emitted = Some((h.time, h.n));
        Some(h.request)
    }

    fn sort_next(&mut self) -> Option<Result<Request, TraceError>> {
        while !self.ended && self.held.len() < self.window {
            match self.inner.next() {
                None => self.ended = true,
                Some(Err(e)) => return Some(Err(e)),
                Some(Ok(r)) => {
                    self.n += 1;
                    let Some(t) = self.record_time(&r) else {
                        self.tail.push_back(r);
                        continue;
                    };
                    // Too late: a later request already left the window.
                    if let Some(e) = self.emitted.filter(|&(e, _)| t < e) {
                        return Some(Err(self.backwards(self.n, t, e, true)));
                    }
                    self.held.push(Reverse(Held {
                        time: t,
                        n: self.n,
                        request: r,
                    }));
                }
            }
        }
        if let Some(r) = self.release() {
            return Some(Ok(r));
        }
        self.tail.pop_front().map(Ok)
    }
}

impl Iterator for Ordered {
    type Item = Result<Request, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.order {
            Order::Check => {
                let r = self.inner.next()?;
                Some(r.and_then(|r| {
                    self.n += 1;
                    self.check(r)
                }))
            }
            Order::Sort => self.sort_next(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(issue: u64, complete: Option<u64>) -> Request {
        Request {
            issue_ns: issue,
            complete_ns: complete,
            bytes: 4096,
            ..Default::default()
        }
    }

    fn stream(v: Vec<Request>) -> Requests {
        Requests::new(v.into_iter().map(Ok))
    }

    fn issues(r: Requests) -> Result<Vec<u64>, String> {
        r.map(|r| r.map(|r| r.issue_ns).map_err(|e| e.to_string()))
            .collect()
    }

    #[test]
    fn a_step_back_in_a_csv_is_refused_naming_the_request_and_the_allowance() {
        let v = vec![req(0, None), req(200, None), req(100, None)];
        let e = issues(in_order(stream(v), "t.csv", Format::Alibaba, Order::Check)).unwrap_err();
        assert!(
            e.starts_with("t.csv: request 3: issue time 0.000000100 s is 0.000000100 s before request 2's 0.000000200 s"),
            "{e}"
        );
        assert!(e.contains("alibaba allows (none: "), "{e}");
        assert!(e.contains("--sort"), "{e}");
        assert_eq!(e.lines().count(), 1);
        // Equal times are in order.
        let v = vec![req(5, None), req(5, None), req(9, None)];
        assert_eq!(
            issues(in_order(stream(v), "t", Format::Msr, Order::Check)).unwrap(),
            [5, 5, 9]
        );
    }

    #[test]
    fn paired_formats_are_ordered_by_completion_and_unfinished_ones_pass() {
        // Issues out of order, completions in order: a blkparse trace as
        // its reader yields it.
        let v = vec![
            req(50, Some(100)),
            req(10, Some(120)),
            req(60, None),
            req(0, None),
        ];
        assert_eq!(
            issues(in_order(stream(v), "b", Format::Blkparse, Order::Check)).unwrap(),
            [50, 10, 60, 0]
        );
        let v = vec![req(50, Some(100)), req(10, Some(90))];
        let e = issues(in_order(stream(v), "b", Format::Blkparse, Order::Check)).unwrap_err();
        assert!(e.contains("request 2: completion time"), "{e}");
    }

    #[test]
    fn biosnoop_allows_its_assumed_interleaving_and_no_more() {
        let ms = 1_000_000;
        let ok = vec![req(0, Some(20 * ms)), req(0, Some(11 * ms))];
        assert!(issues(in_order(stream(ok), "s", Format::Biosnoop, Order::Check)).is_ok());
        let bad = vec![req(0, Some(20 * ms)), req(0, Some(9 * ms))];
        assert!(issues(in_order(stream(bad), "s", Format::Biosnoop, Order::Check)).is_err());
    }

    #[test]
    fn sort_reorders_within_its_window_and_refuses_beyond_it() {
        let v: Vec<Request> = [3, 1, 2, 6, 4, 5].map(|t| req(t, None)).to_vec();
        assert_eq!(
            issues(in_order_within(
                stream(v.clone()),
                "t",
                Format::Msr,
                Order::Sort,
                3
            ))
            .unwrap(),
            [1, 2, 3, 4, 5, 6]
        );
        // 0 comes after 8 has left a window of 2: too
        // late.
        let v: Vec<Request> = [5, 6, 7, 8, 9, 0].map(|t| req(t, None)).to_vec();
        let e = issues(in_order_within(stream(v), "t", Format::Msr, Order::Sort, 2)).unwrap_err();
        assert!(
            e.starts_with(
                "t: request 6: issue time 0.000000000 s is 0.000000008 s before request 4's"
            ),
            "{e}"
        );
        assert!(
            e.contains("further back than --sort reorders (2 requests)"),
            "{e}"
        );
    }

    #[test]
    fn sort_gives_unfinished_requests_last_and_stops_after_an_error() {
        let v = vec![req(7, None), req(1, Some(30)), req(2, Some(20))];
        assert_eq!(
            issues(in_order(stream(v), "b", Format::Blkparse, Order::Sort)).unwrap(),
            [2, 1, 7]
        );
        let mut r = in_order(
            Requests::new(
                vec![
                    Ok(req(1, None)),
                    Err(TraceError::Format {
                        origin: "x".into(),
                        why: "bad".into(),
                    }),
                    Ok(req(2, None)),
                ]
                .into_iter(),
            ),
            "x",
            Format::Msr,
            Order::Sort,
        );
        assert!(matches!(r.next(), Some(Err(_))));
        assert!(r.next().is_none());
    }
}
