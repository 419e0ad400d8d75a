//! One simulated thread of a replay: it takes its processes' requests from
//! the [`Feed`] and issues them as the loop says (the parent module's
//! comment).

use std::cell::RefCell;
use std::rc::Rc;

use apps::{Action, AppIo, AppThread, OpDone, Waiter};
use policy::{Nanos, SEC, US};
use rand::RngCore;

use super::drift::Lateness;
use super::feed::{Feed, Head, Item};
use super::Loop;

/// How long a thread whose next request lies past the read-ahead window
/// sleeps before looking again, when the window's frontier is already
/// due (our choice, assumed: a few of a fast device's service times; a
/// stall happens only when one process runs a whole read-ahead window
/// ahead of another, and is counted in the drift).
pub(crate) const STALL_SLEEP: Nanos = 100 * US;

/// What the threads write as they replay, read after the run.
#[derive(Debug, Default)]
pub(crate) struct Book {
    pub late: Lateness,
    pub issued: u64,
    pub stalls: u64,
    /// Per thread: its first submit and its last completion taken.
    pub first: Vec<Option<Nanos>>,
    pub last: Vec<Nanos>,
}

/// One replay thread (the module's comment).
pub(crate) struct TraceThread {
    pub feed: Rc<RefCell<Feed>>,
    pub book: Rc<RefCell<Book>>,
    /// Its index among the threads.
    pub k: usize,
    pub in_flight: u32,
    pub max: u32,
    pub mode: Loop,
    pub waiter: Waiter,
    pub user_per_io: Nanos,
    /// Without a runtime and a trace longer than the windows: stop taking
    /// requests past four times the span read so far plus 1 s.
    pub bounded_by_span: bool,
    /// Closed loop: a batch taken whose user work is being charged.
    pub taken: Vec<Item>,
    pub stopped: bool,
}

impl std::fmt::Debug for TraceThread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceThread")
            .field("k", &self.k)
            .field("in_flight", &self.in_flight)
            .field("mode", &self.mode)
            .finish()
    }
}

impl TraceThread {
    /// The requests that may go in one submit call now, taken from the
    /// feed, and what it found next when it stopped.
    fn batch(&mut self, now: Nanos) -> (Vec<Item>, Head) {
        let cap = match self.waiter {
            Waiter::Blocking => 1,
            _ => usize::MAX,
        };
        let mut f = self.feed.borrow_mut();
        let mut out: Vec<Item> = Vec::new();
        loop {
            let head = f.head(self.k, self.mode == Loop::Closed);
            if out.len() >= cap {
                return (out, head);
            }
            let Head::Item(it) = head else {
                return (out, head);
            };
            let ahead = self.in_flight + out.len() as u32;
            let pr = &f.procs[it.proc as usize];
            let ok = match self.mode {
                Loop::Open => it.due <= now && ahead < self.max,
                // A process starts at its first recorded issue; from then
                // on it keeps its recorded depth (the feed's target).
                Loop::Closed => {
                    (pr.started || it.due <= now)
                        && pr.in_flight < it.target.min(self.max)
                        && ahead < self.max
                }
            };
            if !ok {
                return (out, head);
            }
            let it = f.take(it.proc);
            let pr = &mut f.procs[it.proc as usize];
            pr.in_flight += 1;
            pr.started = true;
            out.push(it);
        }
    }

    fn wait(&self) -> Action {
        Action::Wait {
            min: 1,
            max: self.in_flight,
        }
    }

    fn submit(&mut self, batch: Vec<Item>, now: Nanos) -> Action {
        let mut f = self.feed.borrow_mut();
        let mut book = self.book.borrow_mut();
        let ios = batch
            .iter()
            .map(|it| {
                if self.mode == Loop::Open {
                    book.late.push(now.saturating_sub(it.due));
                }
                let pr = &mut f.procs[it.proc as usize];
                pr.first_submit.get_or_insert(now);
                pr.move_out(now, 1);
                AppIo {
                    tag: u64::from(it.proc),
                    write: it.write,
                    bytes: it.bytes,
                    marks: it.marks,
                }
            })
            .collect();
        book.issued += batch.len() as u64;
        book.first[self.k].get_or_insert(now);
        self.in_flight += batch.len() as u32;
        Action::Submit(ios)
    }

    /// Taken requests never submitted (the run ended during their user
    /// work) leave their processes' counts.
    fn drop_taken(&mut self) {
        let mut f = self.feed.borrow_mut();
        for it in self.taken.drain(..) {
            let pr = &mut f.procs[it.proc as usize];
            pr.in_flight = pr.in_flight.saturating_sub(1);
        }
    }
}

impl AppThread for TraceThread {
    fn waiter(&self) -> Waiter {
        self.waiter
    }

    fn next(&mut self, now: Nanos, _rng: &mut dyn RngCore) -> Action {
        if !self.stopped && self.bounded_by_span {
            let f = self.feed.borrow();
            let span = f.end.saturating_sub(f.t0);
            self.stopped = now > span.saturating_mul(4).saturating_add(SEC);
        }
        if self.stopped {
            self.drop_taken();
            return if self.in_flight > 0 {
                self.wait()
            } else {
                Action::Done
            };
        }
        if !self.taken.is_empty() {
            let batch = std::mem::take(&mut self.taken);
            return self.submit(batch, now);
        }
        let (batch, head) = self.batch(now);
        if batch.is_empty() {
            if self.in_flight > 0 {
                return self.wait();
            }
            return match head {
                // Not due yet (open loop; a process's first in closed).
                Head::Item(it) => Action::SleepUntil(it.due),
                Head::Stalled => {
                    self.book.borrow_mut().stalls += 1;
                    let frontier = self.feed.borrow().frontier_due();
                    Action::SleepUntil(frontier.max(now + STALL_SLEEP))
                }
                Head::End => Action::Done,
            };
        }
        if self.mode == Loop::Closed && self.user_per_io > 0 {
            let n = batch.len() as u64;
            self.taken = batch;
            return Action::Compute(self.user_per_io * n);
        }
        self.submit(batch, now)
    }

    fn completed(&mut self, tags: &[u64], now: Nanos) {
        self.in_flight = self.in_flight.saturating_sub(tags.len() as u32);
        if tags.is_empty() {
            return;
        }
        self.book.borrow_mut().last[self.k] = now;
        let mut f = self.feed.borrow_mut();
        for &t in tags {
            let pr = &mut f.procs[t as usize];
            pr.in_flight = pr.in_flight.saturating_sub(1);
            pr.last_done = now;
            pr.move_out(now, -1);
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
