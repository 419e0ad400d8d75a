//! A tiny front end for the application models: every thread on its own
//! core, every I/O completing a fixed delay after its submission, virtual
//! time only. It checks the interface's contract as it runs (tags unique
//! in flight, each completed once, `max_in_flight` kept, waits and parks
//! well-formed) and records what the threads did.

#![allow(dead_code)]

use std::collections::{BTreeMap, HashSet};

use apps::{Action, AppIo, OpDone, PlacedThread};
use policy::Nanos;
use rand::SeedableRng;
use rand_pcg::Pcg64;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum State {
    Ready(Nanos),
    Waiting { min: u32, max: u32 },
    Parked,
    Done,
}

/// One submitting call: when, by which thread, and its I/Os.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Submit {
    pub time: Nanos,
    pub thread: usize,
    pub ios: Vec<AppIo>,
}

/// One I/O returned to its thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reaped {
    pub time: Nanos,
    pub thread: usize,
    pub tag: u64,
}

#[derive(Debug, Default, PartialEq)]
pub struct Trace {
    pub submits: Vec<Submit>,
    pub reaped: Vec<Reaped>,
    pub ops: Vec<OpDone>,
    /// (thread, op) in the order drained.
    pub op_threads: Vec<usize>,
    pub parks: usize,
    pub wakes: usize,
    pub end: Nanos,
    pub states: Vec<State>,
}

pub struct Run {
    pub delay: Nanos,
    /// Call `stop()` on every thread at this time.
    pub stop_at: Option<Nanos>,
    /// Give up (a failure) after this many actions.
    pub max_actions: usize,
    pub seed: u64,
}

/// One thread of the fake front end, with its completions.
struct Thread<'a> {
    index: usize,
    placed: &'a mut PlacedThread,
    arrived: &'a mut Vec<u64>,
    in_flight: &'a mut HashSet<u64>,
}

/// The waiting call returns the `k` oldest arrived completions: each is
/// taken off the thread's in-flight set (once), traced, and handed to the
/// model.
fn reap(t: &mut Thread, k: usize, now: Nanos, trace: &mut Trace) {
    let tags: Vec<u64> = t.arrived.drain(..k).collect();
    for &tag in &tags {
        assert!(t.in_flight.remove(&tag), "tag {tag} reaped twice");
        trace.reaped.push(Reaped {
            time: now,
            thread: t.index,
            tag,
        });
    }
    t.placed.thread.completed(&tags, now);
}

impl Default for Run {
    fn default() -> Run {
        Run {
            delay: 10_000,
            stop_at: None,
            max_actions: 5_000_000,
            seed: 1,
        }
    }
}

impl Run {
    /// Runs the threads until every one is `Done`; panics on a broken
    /// contract, a deadlock or a run past `max_actions`.
    pub fn run(&self, mut threads: Vec<PlacedThread>) -> Trace {
        let n = threads.len();
        let mut rng = Pcg64::seed_from_u64(self.seed);
        let mut state = vec![State::Ready(0); n];
        // Per thread: completions due (time -> tags) and arrived, unreaped.
        let mut due: BTreeMap<(Nanos, usize, u64), ()> = BTreeMap::new();
        let mut arrived: Vec<Vec<u64>> = vec![Vec::new(); n];
        let mut in_flight: Vec<HashSet<u64>> = vec![HashSet::new(); n];
        let mut trace = Trace::default();
        let mut stopped = false;
        let mut now: Nanos = 0;
        for (i, t) in threads.iter().enumerate() {
            assert_eq!(t.index, i, "thread {} placed at index {}", t.name, t.index);
        }
        let mut actions = 0;
        loop {
            // The next event: a completion or a ready thread.
            let next_ready = state
                .iter()
                .enumerate()
                .filter_map(|(i, s)| match s {
                    State::Ready(t) => Some((*t, i)),
                    _ => None,
                })
                .min();
            let next_due = due.keys().next().copied();
            let mut when = match (next_ready, next_due) {
                (None, None) => break,
                (Some((t, _)), None) => t,
                (None, Some((t, _, _))) => t,
                (Some((a, _)), Some((b, _, _))) => a.min(b),
            };
            if let Some(stop) = self.stop_at {
                if !stopped && stop <= when {
                    when = when.max(stop);
                    now = now.max(stop);
                    stopped = true;
                    for t in threads.iter_mut() {
                        t.thread.stop();
                    }
                    continue;
                }
            }
            assert!(when >= now, "time went back: {when} < {now}");
            now = when;
            // Completions first.
            if let Some(&(t, th, tag)) = due.keys().next() {
                if t == now {
                    due.remove(&(t, th, tag));
                    arrived[th].push(tag);
                    if let State::Waiting { min, max } = state[th] {
                        if arrived[th].len() as u32 >= min {
                            let k = (max as usize).min(arrived[th].len());
                            let mut t = Thread {
                                index: th,
                                placed: &mut threads[th],
                                arrived: &mut arrived[th],
                                in_flight: &mut in_flight[th],
                            };
                            reap(&mut t, k, now, &mut trace);
                            state[th] = State::Ready(now);
                        }
                    }
                    continue;
                }
            }
            let Some((_, i)) = next_ready.filter(|&(t, _)| t == now) else {
                continue;
            };
            actions += 1;
            assert!(
                actions <= self.max_actions,
                "no end after {actions} actions"
            );
            let action = threads[i].thread.next(now, &mut rng);
            let mut ops = Vec::new();
            threads[i].thread.drain_ops(&mut ops);
            for op in &ops {
                assert!(op.start <= op.end, "{op:?} ends before it starts");
                trace.op_threads.push(i);
            }
            trace.ops.extend(ops);
            let mut wakes = Vec::new();
            threads[i].thread.drain_wakes(&mut wakes);
            for w in wakes {
                assert!(w < n, "wake of thread {w} of {n}");
                if state[w] == State::Parked {
                    trace.wakes += 1;
                    state[w] = State::Ready(now);
                }
            }
            match action {
                Action::Compute(ns) => {
                    assert!(ns > 0, "{}: Compute(0)", threads[i].name);
                    state[i] = State::Ready(now + ns);
                }
                Action::Submit(ios) => {
                    assert!(!ios.is_empty(), "{}: empty Submit", threads[i].name);
                    for io in &ios {
                        assert!(
                            in_flight[i].insert(io.tag),
                            "{}: tag {} submitted while in flight",
                            threads[i].name,
                            io.tag
                        );
                        due.insert((now + self.delay, i, io.tag), ());
                    }
                    assert!(
                        in_flight[i].len() as u32 <= threads[i].thread.max_in_flight(),
                        "{}: {} in flight, max {}",
                        threads[i].name,
                        in_flight[i].len(),
                        threads[i].thread.max_in_flight()
                    );
                    trace.submits.push(Submit {
                        time: now,
                        thread: i,
                        ios,
                    });
                    state[i] = State::Ready(now);
                }
                Action::Wait { min, max } => {
                    assert!(
                        min >= 1 && min <= max,
                        "{}: Wait {min}..{max}",
                        threads[i].name
                    );
                    assert!(
                        (min as usize) <= in_flight[i].len(),
                        "{}: waits for {min} with {} in flight",
                        threads[i].name,
                        in_flight[i].len()
                    );
                    if arrived[i].len() as u32 >= min {
                        let k = (max as usize).min(arrived[i].len());
                        let mut t = Thread {
                            index: i,
                            placed: &mut threads[i],
                            arrived: &mut arrived[i],
                            in_flight: &mut in_flight[i],
                        };
                        reap(&mut t, k, now, &mut trace);
                        state[i] = State::Ready(now);
                    } else {
                        state[i] = State::Waiting { min, max };
                    }
                }
                Action::SleepUntil(t) => {
                    assert!(t > now, "{}: sleeps until {t} at {now}", threads[i].name);
                    state[i] = State::Ready(t);
                }
                Action::Park => {
                    trace.parks += 1;
                    state[i] = State::Parked;
                }
                Action::Done => {
                    assert!(
                        in_flight[i].is_empty(),
                        "{}: Done with {} I/Os in flight",
                        threads[i].name,
                        in_flight[i].len()
                    );
                    state[i] = State::Done;
                }
            }
        }
        assert!(
            state.iter().all(|s| *s == State::Done),
            "deadlock at {now}: {:?}",
            state
                .iter()
                .zip(&threads)
                .map(|(s, t)| (t.name.clone(), s.clone()))
                .collect::<Vec<_>>()
        );
        trace.end = now;
        trace.states = state;
        trace
    }
}
