//! The trace as a stream (issue 41 item 3): requests pulled from an
//! iterator as the replay's threads need them, in memory bounded by a
//! reorder window and a read-ahead window, whatever the trace's length.
//!
//! **Order.** A replay takes each process's requests in issue order, but
//! the block-layer readers yield a request at its completion
//! (`traces::pairing`), so the stream is in issue order only up to the
//! requests in flight. Requests are read into a min-heap by issue time of
//! [`REORDER`] entries and released from it in issue order once it is full
//! (or the stream has ended): a stream whose disorder is within that many
//! requests comes out sorted. One that arrives later than a request
//! already released (its issue before the released frontier) is released
//! at the frontier and counted (the drift's `reordered`).
//!
//! **Per-process figures, one pass.** At its release a request gets its
//! process's *recorded in-flight count* (its process's requests issued and
//! not completed at its issue, itself included: a min-heap of the
//! process's recorded completions still ahead) and, once known, its
//! *target depth* for closed loop (issue 41 item 0): the highest count its
//! process reached while it was in flight (from its issue to its recorded
//! completion). An `io_submit` of 8 is issued at counts 1..8, and each of
//! the 8 gets target 8; at a steady QD8 whose completions interleave with
//! the refills, every request's lifetime holds a moment at 8; at QD1, 1.
//! Holding a request until its process had fewer in flight than its own
//! count at issue (the rule before) refilled a burst only once the whole
//! burst was back. The target is known once the released frontier reaches
//! the request's completion (no issue before it is still to come) or the
//! stream ends; a request without a completion time gets its count.
//!
//! **Bounds.** At most [`REORDER`] requests in the heap and
//! [`READ_AHEAD`] released and not yet submitted (over all processes),
//! plus each process's small state (its completions ahead: at most its
//! recorded depth). A thread whose next request lies past the read-ahead
//! (other processes' requests fill it) waits for them to be submitted
//! (`Head::Stalled`); a request whose target is still open when the
//! read-ahead is full (a recorded completion further ahead than the
//! window) takes the highest count seen so far (counted: the drift's `targets_cut`).
//!
//! **Processes and threads.** Processes are numbered in order of first
//! appearance in the stream. The replay runs `T` simulated threads: the
//! number of processes among the requests read before it starts (the
//! whole trace when it fits in the windows), at most
//! [`crate::limits::MAX_THREADS`]. Process `k` runs on thread `k mod T`
//! (a thread serves its processes' requests in issue order).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use policy::{Marks, Nanos};

use super::TraceIo;

/// The reorder window, requests: the most a block trace holds between its
/// issue and completion (`traces::MAX_IN_FLIGHT`, 65,536), so a stream
/// yielded at completions (blkparse, blktrace) is restored to issue order.
pub const REORDER: usize = traces::MAX_IN_FLIGHT;

/// The read-ahead window, requests released and not yet submitted (our
/// choice: 262,144, about 10 MB at 40 bytes each; four times the reorder
/// window so that a process's next request is rarely past it). The
/// threads' kinds (blocking or not) are taken from the requests read
/// before the replay starts: this window and the reorder window.
pub const READ_AHEAD: usize = 1 << 18;

/// One request as a thread replays it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Item {
    /// Its due time, from the trace's first issue.
    pub due: Nanos,
    pub bytes: u64,
    pub write: bool,
    pub marks: Marks,
    /// Its process (in order of first appearance).
    pub proc: u32,
    /// Its process's requests in flight at its issue, itself included
    /// (the target's ingredient; kept for the tests that check it).
    #[cfg(test)]
    pub depth: u32,
    /// Closed loop's depth for it (the module's comment); valid once
    /// `ready`.
    pub target: u32,
    pub ready: bool,
}

/// A request read and not yet released, ordered by (issue, read order).
#[derive(Clone, Copy, Debug)]
struct Held {
    issue: Nanos,
    seq: u64,
    complete: Option<Nanos>,
    bytes: u64,
    write: bool,
    marks: Marks,
    proc: u32,
}

impl PartialEq for Held {
    fn eq(&self, o: &Self) -> bool {
        (self.issue, self.seq) == (o.issue, o.seq)
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
        (self.issue, self.seq).cmp(&(o.issue, o.seq))
    }
}

/// One trace process: its released requests, its recorded completions
/// ahead, its figures for the drift.
#[derive(Debug)]
pub(crate) struct Proc {
    pub pid: Option<u32>,
    /// Released, not yet submitted, in issue order.
    queue: VecDeque<Item>,
    /// Requests taken from the queue so far (a request's place in the
    /// queue is its number less this).
    taken: u64,
    /// The requests whose target is still open: (number, recorded
    /// completion), in issue order (some may be taken already: open loop
    /// takes them before their target is known).
    open_targets: VecDeque<(u64, Nanos)>,
    /// Its recorded completions after the released frontier.
    open: BinaryHeap<Reverse<Nanos>>,
    /// On its thread's list of processes with work.
    listed: bool,
    /// The trace: requests read, first issue, last completion (or issue).
    pub requests: u64,
    pub first_issue: Nanos,
    pub end: Nanos,
    /// The deepest recorded count released, and whether every request read
    /// has a completion time.
    pub deepest: u32,
    pub completions: bool,
    /// Its requests' recorded latencies summed (completion minus issue):
    /// over its span, its time-weighted mean in-flight depth (Little's
    /// law).
    pub busy: u128,
    /// The replay: in flight now, a request taken (closed loop's start
    /// rule), its first submit, its last completion.
    pub in_flight: u32,
    pub started: bool,
    pub first_submit: Option<Nanos>,
    pub last_done: Nanos,
    /// The replay's in-flight depth over time: submitted and not taken
    /// back, its integral over time (ns), and when it last changed.
    pub out: u32,
    pub area: u128,
    pub changed: Nanos,
}

impl Proc {
    /// The replay's submitted-and-not-taken count moves by `delta` at
    /// `now`: the time at the old count joins the integral.
    pub(crate) fn move_out(&mut self, now: Nanos, delta: i64) {
        self.area += u128::from(self.out) * u128::from(now.saturating_sub(self.changed));
        self.changed = now;
        self.out = (i64::from(self.out) + delta).max(0) as u32;
    }
}

/// What a thread finds next.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Head {
    Item(Item),
    /// Its next request lies past the read-ahead window.
    Stalled,
    /// The stream has ended and its processes have nothing left.
    End,
}

enum Step {
    Progress,
    Stalled,
    End,
}

/// The stream, its windows and the processes (the module's comment).
pub(crate) struct Feed {
    src: Box<dyn Iterator<Item = Result<TraceIo, String>>>,
    ended: bool,
    flushed: bool,
    /// The stream's error, if it gave one (it ended there).
    pub error: Option<String>,
    read: u64,
    heap: BinaryHeap<Reverse<Held>>,
    /// The issue time of the last request released.
    frontier: Option<Nanos>,
    /// The first released issue: the replay's time origin.
    pub t0: Nanos,
    pub procs: Vec<Proc>,
    index: HashMap<Option<u32>, u32>,
    /// Per thread, the processes it serves that have work.
    lists: Vec<Vec<u32>>,
    threads: usize,
    /// Released and not yet submitted.
    held: usize,
    reorder: usize,
    window: usize,
    qd: u32,
    /// Requests released at the frontier because they came too late.
    pub reordered: u64,
    /// Requests whose target was above the device's queue depth.
    pub clamped: u64,
    /// Requests whose target was settled early because the read-ahead
    /// was full.
    pub cut: u64,
    /// The latest completion (or issue) read, absolute.
    pub end: Nanos,
}

impl Feed {
    /// A feed on `src` with windows `reorder` and `window`, reading until
    /// the read-ahead is full or the stream has ended, then numbering the
    /// threads (the module's comment), at most `max_threads`.
    pub(crate) fn start(
        src: Box<dyn Iterator<Item = Result<TraceIo, String>>>,
        reorder: usize,
        window: usize,
        qd: u32,
        max_threads: usize,
    ) -> Feed {
        let mut f = Feed {
            src,
            ended: false,
            flushed: false,
            error: None,
            read: 0,
            heap: BinaryHeap::new(),
            frontier: None,
            t0: 0,
            procs: Vec::new(),
            index: HashMap::new(),
            lists: Vec::new(),
            threads: 0,
            held: 0,
            reorder: reorder.max(1),
            window: window.max(1),
            qd,
            reordered: 0,
            clamped: 0,
            cut: 0,
            end: 0,
        };
        while f.held < f.window {
            if let Step::End | Step::Stalled = f.step() {
                break;
            }
        }
        f.threads = f.procs.len().clamp(1, max_threads.max(1));
        f.lists = vec![Vec::new(); f.threads];
        for k in 0..f.procs.len() {
            f.list(k as u32);
        }
        f
    }

    /// The threads the replay runs.
    pub(crate) fn threads(&self) -> usize {
        self.threads
    }

    /// The requests read so far.
    pub(crate) fn read(&self) -> u64 {
        self.read
    }

    /// The stream has been read to its end (or its error).
    pub(crate) fn ended(&self) -> bool {
        self.ended
    }

    /// The processes thread `k` started with (its processes known when
    /// the replay began).
    pub(crate) fn serves(&self, k: usize) -> &[u32] {
        &self.lists[k]
    }

    /// The latest due time released: no request still to come is due
    /// before it.
    pub(crate) fn frontier_due(&self) -> Nanos {
        self.frontier.map_or(0, |f| f - self.t0)
    }

    /// Thread `k`'s next request in issue order (closed loop: once its
    /// target is known, `ready`), reading and releasing as needed.
    pub(crate) fn head(&mut self, k: usize, need_ready: bool) -> Head {
        loop {
            let mut best: Option<(Nanos, u32)> = None;
            let mut i = 0;
            while i < self.lists[k].len() {
                let p = self.lists[k][i];
                let pr = &mut self.procs[p as usize];
                match pr.queue.front() {
                    Some(it) => {
                        if best.map_or(true, |b| (it.due, p) < b) {
                            best = Some((it.due, p));
                        }
                        i += 1;
                    }
                    None if pr.in_flight == 0 => {
                        // Nothing of it here: off the list until its next
                        // request is released.
                        pr.listed = false;
                        self.lists[k].swap_remove(i);
                    }
                    None => i += 1,
                }
            }
            let mut unready = None;
            if let Some((_, p)) = best {
                self.settle(p, false);
                let it = *self.procs[p as usize].queue.front().expect("a head");
                if !need_ready || it.ready {
                    return Head::Item(it);
                }
                unready = Some(p);
            }
            match (self.step(), unready) {
                (Step::Progress, _) => {}
                (Step::Stalled, Some(p)) => {
                    // Its completion is further ahead than the read-ahead
                    // holds: the highest count so far, so that memory
                    // stays bounded.
                    self.settle(p, true);
                }
                (Step::Stalled, None) => return Head::Stalled,
                (Step::End, _) => return Head::End,
            }
        }
    }

    /// Takes process `p`'s next request (the one [`Feed::head`] gave).
    pub(crate) fn take(&mut self, p: u32) -> Item {
        let pr = &mut self.procs[p as usize];
        let it = pr.queue.pop_front().expect("a request to take");
        pr.taken += 1;
        self.held -= 1;
        it
    }

    /// One unit of progress: read a request, release one, or settle the
    /// last targets at the stream's end.
    fn step(&mut self) -> Step {
        if !self.ended && self.heap.len() < self.reorder {
            self.read_one();
            return Step::Progress;
        }
        if !self.heap.is_empty() {
            if self.held >= self.window {
                return Step::Stalled;
            }
            self.release();
            return Step::Progress;
        }
        if !self.flushed {
            self.flushed = true;
            for p in 0..self.procs.len() {
                self.settle(p as u32, true);
            }
            return Step::Progress;
        }
        Step::End
    }

    fn read_one(&mut self) {
        let io = match self.src.next() {
            None => {
                self.ended = true;
                return;
            }
            Some(Err(e)) => {
                self.error = Some(e);
                self.ended = true;
                return;
            }
            Some(Ok(io)) => io,
        };
        let next = self.procs.len() as u32;
        let p = *self.index.entry(io.pid).or_insert(next);
        if p == next {
            self.procs.push(Proc {
                pid: io.pid,
                queue: VecDeque::new(),
                taken: 0,
                open_targets: VecDeque::new(),
                open: BinaryHeap::new(),
                listed: false,
                requests: 0,
                first_issue: io.issue_ns,
                end: 0,
                deepest: 0,
                completions: true,
                in_flight: 0,
                started: false,
                first_submit: None,
                last_done: 0,
                busy: 0,
                out: 0,
                area: 0,
                changed: 0,
            });
        }
        let end = io.complete_ns.unwrap_or(io.issue_ns).max(io.issue_ns);
        let pr = &mut self.procs[p as usize];
        pr.requests += 1;
        pr.first_issue = pr.first_issue.min(io.issue_ns);
        pr.end = pr.end.max(end);
        pr.completions &= io.complete_ns.is_some();
        pr.busy += u128::from(end - io.issue_ns);
        self.end = self.end.max(end);
        self.heap.push(Reverse(Held {
            issue: io.issue_ns,
            seq: self.read,
            complete: io.complete_ns,
            bytes: io.bytes,
            write: io.write,
            marks: io.marks,
            proc: p,
        }));
        self.read += 1;
    }

    /// Releases the earliest request held: its recorded count, and the
    /// targets of its process's requests in flight at its issue.
    fn release(&mut self) {
        let Reverse(h) = self.heap.pop().expect("a request held");
        let issue = match self.frontier {
            None => {
                self.t0 = h.issue;
                h.issue
            }
            Some(f) if h.issue < f => {
                self.reordered += 1;
                f
            }
            Some(_) => h.issue,
        };
        self.frontier = Some(issue);
        let p = h.proc;
        let pr = &mut self.procs[p as usize];
        while pr.open.peek().is_some_and(|c| c.0 <= issue) {
            pr.open.pop();
        }
        let depth = pr.open.len() as u32 + 1;
        // Every request of its process still in flight (in the trace) saw
        // this count.
        for &(n, _) in &pr.open_targets {
            if let Some(i) = n.checked_sub(pr.taken) {
                let it = &mut pr.queue[i as usize];
                it.target = it.target.max(depth);
            }
        }
        let number = pr.taken + pr.queue.len() as u64;
        pr.queue.push_back(Item {
            due: issue - self.t0,
            bytes: h.bytes,
            write: h.write,
            marks: h.marks,
            proc: p,
            #[cfg(test)]
            depth,
            target: depth,
            ready: false,
        });
        pr.deepest = pr.deepest.max(depth);
        // Open until the frontier reaches its completion (none: its count).
        pr.open_targets
            .push_back((number, h.complete.unwrap_or(issue).max(issue)));
        if let Some(c) = h.complete.filter(|&c| c > issue) {
            pr.open.push(Reverse(c));
        }
        self.held += 1;
        self.settle(p, false);
        if !self.lists.is_empty() {
            self.list(p);
        }
    }

    /// Puts process `p` on its thread's list.
    fn list(&mut self, p: u32) {
        let pr = &mut self.procs[p as usize];
        if !pr.listed {
            pr.listed = true;
            self.lists[p as usize % self.threads].push(p);
        }
    }

    /// Makes ready `p`'s requests whose targets are known: those whose
    /// recorded completion the released frontier has reached (no issue of
    /// their lifetime is still to come), or every one when `all` (the
    /// stream's end; the read-ahead full, counted).
    fn settle(&mut self, p: u32, all: bool) {
        let frontier = self.frontier.unwrap_or(0);
        let qd = self.qd;
        let pr = &mut self.procs[p as usize];
        let before = pr.open_targets.len();
        let mut clamped = 0;
        let (queue, taken) = (&mut pr.queue, pr.taken);
        pr.open_targets.retain(|&(n, until)| {
            if !all && until > frontier {
                return true;
            }
            if let Some(i) = n.checked_sub(taken) {
                let it = &mut queue[i as usize];
                it.ready = true;
                clamped += u64::from(it.target > qd);
            }
            false
        });
        self.clamped += clamped;
        if all && !self.ended && before > pr.open_targets.len() {
            self.cut += (before - pr.open_targets.len()) as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(pid: u32, issue: Nanos, complete: Option<Nanos>) -> TraceIo {
        TraceIo {
            issue_ns: issue,
            complete_ns: complete,
            bytes: 4096,
            write: false,
            marks: Marks::URGENT,
            pid: Some(pid),
        }
    }

    /// Every request of `ios` through a feed with these windows, one
    /// thread per process, the threads taking a request each in turn:
    /// (process, due, depth, target), by process and due time.
    fn drain(ios: Vec<TraceIo>, reorder: usize, window: usize) -> Vec<(u32, Nanos, u32, u32)> {
        let src = Box::new(ios.into_iter().map(Ok));
        let mut f = Feed::start(src, reorder, window, 1024, 256);
        let mut out = Vec::new();
        let mut live = true;
        while live {
            live = false;
            for k in 0..f.threads() {
                match f.head(k, true) {
                    Head::Item(it) => {
                        let it = f.take(it.proc);
                        out.push((it.proc, it.due, it.depth, it.target));
                        live = true;
                    }
                    Head::Stalled => live = true,
                    Head::End => {}
                }
            }
        }
        out.sort_unstable();
        out
    }

    #[test]
    fn recorded_counts_and_targets_follow_each_process_apart() {
        let ios = vec![
            io(1, 100, Some(500)),
            io(1, 200, Some(300)),
            io(2, 250, Some(900)),
            io(1, 300, Some(400)),
            io(1, 600, Some(700)),
        ];
        // pid 1: counts 1, 2, 2 (the second done at 300), 1 (both done);
        // the first's lifetime (100-500) saw 2, the second's (200-300) 2,
        // the third's (300-400) 2, the fourth's 1.
        let want = vec![
            (0, 0, 1, 2),
            (0, 100, 2, 2),
            (0, 200, 2, 2),
            (0, 500, 1, 1),
            (1, 150, 1, 1),
        ];
        assert_eq!(drain(ios.clone(), 1 << 10, 1 << 10), want);
        // The same with windows of two (reading as it goes).
        assert_eq!(drain(ios.clone(), 2, 2), want);
        // A read-ahead of one cannot see the second issue: cut at one.
        assert_eq!(drain(ios, 2, 1)[0], (0, 0, 1, 1));
    }

    #[test]
    fn a_batch_of_eight_gets_target_eight() {
        // io_submit of 8, all complete at 1000; then 8 more.
        let mut ios = Vec::new();
        for b in 0..2u64 {
            for i in 0..8u64 {
                ios.push(io(7, b * 1000 + i, Some(b * 1000 + 1000)));
            }
        }
        let got = drain(ios.clone(), 4, 9);
        let depths: Vec<u32> = got.iter().map(|g| g.2).collect();
        let targets: Vec<u32> = got.iter().map(|g| g.3).collect();
        assert_eq!(depths, [1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(targets, [8; 16]);
        // A read-ahead of three: the first three cut at three.
        let cut: Vec<u32> = drain(ios, 4, 3).iter().map(|g| g.3).collect();
        assert_eq!(cut[..3], [3, 3, 3]);
    }

    #[test]
    fn a_stream_in_completion_order_comes_out_in_issue_order() {
        // Yielded at completion: the second issued completes first.
        let ios = vec![io(1, 200, Some(250)), io(1, 100, Some(300))];
        let got = drain(ios.clone(), 4, 4);
        assert_eq!(got, vec![(0, 0, 1, 2), (0, 100, 2, 2)]);
        // A reorder window of one cannot fix it: released at the frontier.
        let src = Box::new(ios.into_iter().map(Ok));
        let mut f = Feed::start(src, 1, 4, 1024, 256);
        while let Head::Item(it) = f.head(0, true) {
            f.take(it.proc);
        }
        assert_eq!(f.reordered, 1);
    }

    #[test]
    fn processes_past_the_thread_count_share_threads_by_their_number() {
        // Four processes, at most two threads: 0 and 2 on thread 0.
        let ios: Vec<TraceIo> = (0..4).map(|p| io(p, u64::from(p) * 10, None)).collect();
        let src = Box::new(ios.into_iter().map(Ok));
        let mut f = Feed::start(src, 16, 16, 1024, 2);
        assert_eq!(f.threads(), 2);
        assert_eq!(f.serves(0), &[0, 2]);
        assert_eq!(f.serves(1), &[1, 3]);
        let mut seen = Vec::new();
        while let Head::Item(it) = f.head(0, true) {
            seen.push(f.take(it.proc).proc);
        }
        assert_eq!(seen, [0, 2]);
    }

    #[test]
    fn a_thread_past_the_read_ahead_is_stalled_until_it_moves() {
        // Process 0's one request, then 5 of process 1: with a read-ahead
        // of 2, thread 0's second look finds the window full of process
        // 1's requests.
        let mut ios = vec![io(0, 0, None)];
        ios.extend((1..6).map(|i| io(1, i * 10, None)));
        ios.push(io(0, 100, None));
        let src = Box::new(ios.into_iter().map(Ok));
        let mut f = Feed::start(src, 1, 2, 1024, 256);
        assert_eq!(f.threads(), 2);
        let Head::Item(it) = f.head(0, true) else {
            panic!("process 0's first")
        };
        f.take(it.proc);
        assert!(matches!(f.head(0, true), Head::Stalled));
        while let Head::Item(it) = f.head(1, true) {
            f.take(it.proc);
            if let Head::Item(it) = f.head(0, true) {
                assert_eq!(it.due, 100);
                return;
            }
        }
        panic!("thread 0 never moved");
    }
}
