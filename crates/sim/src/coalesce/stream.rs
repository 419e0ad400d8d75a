//! A trace's requests as a time-ordered stream of submit and complete
//! rows, through a reordering window (the module above says why).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use policy::stream::{Event, Row};
use policy::{Marks, Nanos, MS};
use traces::Request;

/// How far behind the latest issue an event may come and still be
/// replayed in order once [`BUFFERED`] events wait.
pub const REORDER: Nanos = 1_000 * MS;
/// Events held for ordering before the window applies (about 64 MiB):
/// a trace this size is replayed in exact time order.
pub const BUFFERED: usize = 2_000_000;

/// An event waiting to be replayed: its time, request id, kind (0 submit,
/// 1 complete: a completion at the same time sorts after) and marks' bits.
/// `(time, id, kind)` is unique, so the order of events is total.
type Key = (Nanos, u64, u8, u8);

/// The events waiting, taken smallest first: those that come in order (a
/// trace's submits mostly do, and completions a fixed service after them)
/// appended to a run each for submits and completions, the rest in a heap.
/// The same order as one heap, without its log-time push and pop for the
/// events already in order (issue 41 item 7: the heap's pops were 13% of
/// `coalesce --trace`'s instructions).
#[derive(Default)]
struct Waiting {
    runs: [VecDeque<Key>; 2],
    heap: BinaryHeap<Reverse<Key>>,
}

impl Waiting {
    fn len(&self) -> usize {
        self.runs[0].len() + self.runs[1].len() + self.heap.len()
    }

    fn push(&mut self, k: Key) {
        let run = &mut self.runs[usize::from(k.2)];
        if run.back().map_or(true, |&b| b < k) {
            run.push_back(k);
        } else {
            self.heap.push(Reverse(k));
        }
    }

    /// Where the smallest waits: a run (0, 1) or the heap (2).
    fn smallest(&self) -> Option<(Key, usize)> {
        let mut best = self.runs[0].front().map(|&k| (k, 0));
        if let Some(&k) = self.runs[1].front() {
            if best.map_or(true, |(b, _)| k < b) {
                best = Some((k, 1));
            }
        }
        if let Some(&Reverse(k)) = self.heap.peek() {
            if best.map_or(true, |(b, _)| k < b) {
                best = Some((k, 2));
            }
        }
        best
    }

    /// Takes the smallest, found by [`Waiting::smallest`] at `from`.
    fn take(&mut self, from: usize) {
        match from {
            0 | 1 => {
                self.runs[from].pop_front();
            }
            _ => {
                self.heap.pop();
            }
        }
    }

    #[cfg(test)]
    fn peek(&self) -> Option<Key> {
        self.smallest().map(|(k, _)| k)
    }

    fn pop(&mut self) -> Option<Key> {
        let (k, from) = self.smallest()?;
        self.take(from);
        Some(k)
    }
}

/// The trace as a time-ordered stream of rows, through the reorder window.
pub struct Stream {
    heap: Waiting,
    next_id: u64,
    frontier: Nanos,
    latest_issue: Nanos,
    pub late: u64,
    pub derived: u64,
    service: Nanos,
    /// Events held before the window applies ([`BUFFERED`]).
    buffered: usize,
}

impl Stream {
    pub fn new(service: Nanos) -> Stream {
        Stream {
            heap: Waiting::default(),
            next_id: 0,
            frontier: 0,
            latest_issue: 0,
            late: 0,
            derived: 0,
            service,
            buffered: BUFFERED,
        }
    }

    /// As [`Stream::new`], holding `buffered` events before the window.
    #[cfg(test)]
    pub fn with_buffer(service: Nanos, buffered: usize) -> Stream {
        Stream {
            buffered,
            ..Stream::new(service)
        }
    }

    /// Takes one request; the rows now due (older than the window).
    pub fn push(&mut self, r: &Request, marks: Marks, out: &mut Vec<Row>) {
        let id = self.next_id;
        self.next_id += 1;
        let bits = u8::from(marks.urgent) | u8::from(marks.barrier) << 1;
        let done = r.complete_ns.unwrap_or_else(|| {
            self.derived += 1;
            r.issue_ns + self.service
        });
        // 0 submit, 1 complete: a completion at the same time sorts after.
        self.heap.push((r.issue_ns, id, 0, bits));
        self.heap.push((done.max(r.issue_ns), id, 1, bits));
        self.latest_issue = self.latest_issue.max(r.issue_ns);
        // Time order within the reordering window; a reader may also hold
        // a request back until its end (one whose completion never came is
        // given at the end of the trace), so the window stretches to
        // [`BUFFERED`] events before anything is let through early.
        if self.heap.len() > self.buffered {
            let edge = self.latest_issue.saturating_sub(REORDER);
            self.drain(Some(edge), out);
            while self.heap.len() > self.buffered / 2 {
                self.drain_one(out);
            }
        }
    }

    fn drain_one(&mut self, out: &mut Vec<Row>) {
        let Some((t, id, kind, bits)) = self.heap.pop() else {
            return;
        };
        self.emit(t, id, kind, bits, out);
    }

    /// The rows up to `edge` (all at the end).
    pub fn drain(&mut self, edge: Option<Nanos>, out: &mut Vec<Row>) {
        while let Some(((t, id, kind, bits), from)) = self.heap.smallest() {
            if edge.is_some_and(|e| t > e) {
                break;
            }
            self.heap.take(from);
            self.emit(t, id, kind, bits, out);
        }
    }

    fn emit(&mut self, t: Nanos, id: u64, kind: u8, bits: u8, out: &mut Vec<Row>) {
        let time = if t < self.frontier {
            self.late += 1;
            self.frontier
        } else {
            t
        };
        self.frontier = time;
        out.push(Row {
            line: id as usize + 1,
            time,
            id,
            marks: Marks {
                urgent: bits & 1 != 0,
                barrier: bits & 2 != 0,
            },
            event: if kind == 0 {
                Event::Submit
            } else {
                Event::Complete
            },
        });
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use policy::US;

    /// A 4 KiB request of process 7, `db`, on no named volume.
    pub(in crate::coalesce) fn req(
        issue: u64,
        done: Option<u64>,
        write: bool,
        sync: bool,
    ) -> Request {
        Request {
            issue_ns: issue,
            complete_ns: done,
            offset: 0,
            bytes: 4096,
            write,
            discard: false,
            sync,
            flush: false,
            pid: Some(7),
            comm: Some("db".into()),
            device: None,
            cpu: None,
            ..Request::default()
        }
    }

    #[test]
    fn waiting_events_come_out_as_one_heap_gives_them() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
        let mut w = Waiting::default();
        let mut heap = BinaryHeap::new();
        for id in 0..5_000u64 {
            // Mostly in order, some behind, a burst at one time.
            let t = if rng.random_bool(0.2) {
                rng.random_range(0..id * 10 + 1)
            } else {
                id * 10
            };
            for kind in [0u8, 1] {
                let k = (t + u64::from(kind) * rng.random_range(0..50), id, kind, 0);
                w.push(k);
                heap.push(Reverse(k));
            }
            if rng.random_bool(0.3) {
                assert_eq!(w.pop(), heap.pop().map(|r| r.0));
            }
            assert_eq!(w.len(), heap.len());
        }
        while let Some(Reverse(k)) = heap.pop() {
            assert_eq!(w.peek(), Some(k));
            assert_eq!(w.pop(), Some(k));
        }
        assert_eq!(w.pop(), None);
    }

    #[test]
    fn rows_come_out_in_time_order_with_derived_completions() {
        let mut s = Stream::new(10 * US);
        let mut out = Vec::new();
        // A completion-ordered pair: the second issued before the first.
        s.push(&req(100, Some(500), false, false), Marks::URGENT, &mut out);
        s.push(&req(50, None, true, false), Marks::NONE, &mut out);
        s.drain(None, &mut out);
        let times: Vec<(Nanos, Event)> = out.iter().map(|r| (r.time, r.event)).collect();
        assert_eq!(
            times,
            vec![
                (50, Event::Submit),
                (100, Event::Submit),
                (500, Event::Complete),
                (10_050, Event::Complete)
            ]
        );
        assert_eq!((s.derived, s.late), (1, 0));
    }

    #[test]
    fn an_event_beyond_the_window_is_replayed_late_not_out_of_order() {
        let mut s = Stream::with_buffer(US, 2);
        let mut out = Vec::new();
        s.push(&req(0, Some(10), false, false), Marks::NONE, &mut out);
        s.push(
            &req(3 * REORDER, Some(3 * REORDER + 10), false, false),
            Marks::NONE,
            &mut out,
        );
        s.push(&req(5, Some(20), false, false), Marks::NONE, &mut out);
        s.drain(None, &mut out);
        assert!(out.windows(2).all(|w| w[0].time <= w[1].time));
        assert_eq!(s.late, 2);
    }
}
