//! A tiny generic closed-loop engine: each operation is some user CPU, then
//! its I/Os, the next one starting when the last is back. For the
//! simulator's scale benchmark (issue 16 item 5) and for tests of a front
//! end; the engines that model real applications are [`crate::kvell`] and
//! [`crate::rocks`].
//!
//! A [`Waiter::Blocking`] thread reads its I/Os one after another, each a
//! blocking `pread` (dependent reads: an index block, then the data), each
//! Urgent as TOS Table 1 marks blocking calls. Any other waiter submits
//! them together in one call (`io_submit`) with Barrier on the last (Table
//! 1's mark for the end of an `io_submit` batch) and waits for all of them.

use policy::{Marks, Nanos};
use rand::RngCore;

use crate::{Action, AppIo, AppThread, OpDone, OpKind, Waiter};

/// What one closed-loop thread does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Closed {
    pub waiter: Waiter,
    /// The kind its operations are reported as.
    pub kind: OpKind,
    /// User CPU before each operation's I/Os.
    pub user_ns: Nanos,
    /// I/Os per operation (at least 1).
    pub ios_per_op: u32,
    pub bytes: u64,
    pub write: bool,
    /// Operations before it ends on its own; `None`: until stopped.
    pub ops: Option<u64>,
}

/// Where a closed-loop thread is in its operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Between operations: start one (or end).
    Idle,
    /// Its user CPU is done: submit.
    Issue,
    /// I/Os are out: wait for them (an asynchronous waiter).
    Waiting,
}

/// A closed-loop thread ([`Closed`]).
#[derive(Debug)]
pub struct ClosedLoop {
    cfg: Closed,
    phase: Phase,
    /// The operation's start, and its I/Os not yet back.
    start: Nanos,
    out: u32,
    /// A blocking thread's I/Os of this operation still to read.
    to_read: u32,
    next_tag: u64,
    done: Vec<OpDone>,
    stopped: bool,
    finished: u64,
}

impl ClosedLoop {
    pub fn new(cfg: Closed) -> ClosedLoop {
        ClosedLoop {
            cfg: Closed {
                ios_per_op: cfg.ios_per_op.max(1),
                ..cfg
            },
            phase: Phase::Idle,
            start: 0,
            out: 0,
            to_read: 0,
            next_tag: 0,
            done: Vec::new(),
            stopped: false,
            finished: 0,
        }
    }

    /// Operations finished so far.
    pub fn finished(&self) -> u64 {
        self.finished
    }

    fn io(&mut self, marks: Marks) -> AppIo {
        self.next_tag += 1;
        AppIo {
            tag: self.next_tag,
            write: self.cfg.write,
            bytes: self.cfg.bytes,
            marks,
        }
    }

    fn blocking(&self) -> bool {
        self.cfg.waiter == Waiter::Blocking
    }
}

impl AppThread for ClosedLoop {
    fn waiter(&self) -> Waiter {
        self.cfg.waiter
    }

    fn next(&mut self, now: Nanos, _rng: &mut dyn RngCore) -> Action {
        match self.phase {
            Phase::Idle => {
                if self.stopped || self.cfg.ops.is_some_and(|n| self.finished >= n) {
                    return Action::Done;
                }
                self.start = now;
                self.phase = Phase::Issue;
                self.to_read = self.cfg.ios_per_op;
                Action::Compute(self.cfg.user_ns)
            }
            Phase::Issue if self.blocking() => {
                // One dependent read; completed() comes back here for the
                // next, or ends the operation.
                self.to_read -= 1;
                self.out = 1;
                Action::Submit(vec![self.io(Marks::URGENT)])
            }
            Phase::Issue => {
                let n = self.cfg.ios_per_op;
                let ios = (0..n)
                    .map(|i| {
                        self.io(if i + 1 == n {
                            Marks::BARRIER
                        } else {
                            Marks::NONE
                        })
                    })
                    .collect();
                self.out = n;
                self.phase = Phase::Waiting;
                Action::Submit(ios)
            }
            Phase::Waiting => Action::Wait {
                min: self.out,
                max: self.out,
            },
        }
    }

    fn completed(&mut self, tags: &[u64], now: Nanos) {
        self.out = self.out.saturating_sub(tags.len() as u32);
        if self.out > 0 || (self.blocking() && self.to_read > 0) {
            return;
        }
        self.done.push(OpDone {
            kind: self.cfg.kind,
            start: self.start,
            end: now,
            items: 1,
        });
        self.finished += 1;
        self.phase = Phase::Idle;
    }

    fn drain_ops(&mut self, out: &mut Vec<OpDone>) {
        out.append(&mut self.done);
    }

    fn stop(&mut self) {
        self.stopped = true;
    }

    fn max_in_flight(&self) -> u32 {
        if self.blocking() {
            1
        } else {
            self.cfg.ios_per_op
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn cfg(waiter: Waiter, ios: u32, ops: Option<u64>) -> Closed {
        Closed {
            waiter,
            kind: OpKind::Read,
            user_ns: 1_000,
            ios_per_op: ios,
            bytes: 4096,
            write: false,
            ops,
        }
    }

    fn tags(a: &Action) -> Vec<u64> {
        match a {
            Action::Submit(ios) => ios.iter().map(|io| io.tag).collect(),
            other => panic!("not a submit: {other:?}"),
        }
    }

    #[test]
    fn a_blocking_loop_reads_its_ios_one_after_another() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
        let mut t = ClosedLoop::new(cfg(Waiter::Blocking, 2, Some(1)));
        assert_eq!(t.next(0, &mut rng), Action::Compute(1_000));
        let first = t.next(1_000, &mut rng);
        assert_eq!(tags(&first), [1]);
        t.completed(&[1], 11_000);
        let second = t.next(11_000, &mut rng);
        assert_eq!(tags(&second), [2]);
        if let Action::Submit(ios) = &second {
            assert_eq!(ios[0].marks, Marks::URGENT);
        }
        t.completed(&[2], 21_000);
        let mut ops = Vec::new();
        t.drain_ops(&mut ops);
        assert_eq!(ops.len(), 1);
        assert_eq!((ops[0].start, ops[0].end), (0, 21_000));
        assert_eq!(t.next(21_000, &mut rng), Action::Done);
    }

    #[test]
    fn an_aio_loop_submits_a_batch_with_barrier_last_and_waits_for_it() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
        let mut t = ClosedLoop::new(cfg(Waiter::Libaio, 3, None));
        assert_eq!(t.max_in_flight(), 3);
        t.next(0, &mut rng);
        let batch = t.next(1_000, &mut rng);
        let Action::Submit(ios) = &batch else {
            panic!("{batch:?}")
        };
        let marks: Vec<Marks> = ios.iter().map(|io| io.marks).collect();
        assert_eq!(marks, [Marks::NONE, Marks::NONE, Marks::BARRIER]);
        assert_eq!(t.next(2_000, &mut rng), Action::Wait { min: 3, max: 3 });
        t.completed(&[1, 2], 9_000);
        assert_eq!(t.next(9_000, &mut rng), Action::Wait { min: 1, max: 1 });
        t.completed(&[3], 12_000);
        assert_eq!(t.finished(), 1);
        t.stop();
        assert_eq!(t.next(12_000, &mut rng), Action::Done);
    }
}
