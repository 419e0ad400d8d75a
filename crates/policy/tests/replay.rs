//! The replay driver: interrupts are delivered in time order, a deadline
//! due at an event's instant comes first, time never runs back, and a policy
//! that leaves completions behind is flushed at the end and counted.

use policy::replay::{Delivery, Replay, TimeWentBack};
use policy::{build, Command, Completion, Interrupt, Marks, Nanos, Policy, PolicySpec, US};

/// What a replay delivered: (time, kind, ids reaped).
type Log = Vec<(Nanos, Interrupt, Vec<u64>)>;

fn sink(log: &mut Log) -> impl FnMut(&Delivery) + '_ {
    |d: &Delivery| log.push((d.time, d.kind, d.reaped.iter().map(|r| r.id).collect()))
}

fn named(name: &str) -> Replay {
    Replay::new(build(&PolicySpec::named(name)).unwrap())
}

fn ok(id: u64) -> Completion {
    Completion::ok(id, Marks::NONE)
}

/// A policy that, at its first deadline (10 us after a completion), only
/// pushes the deadline 5 us later, and fires at the second.
#[derive(Default)]
struct Postpones {
    deadline: Option<Nanos>,
    postponed: bool,
}

impl Policy for Postpones {
    fn name(&self) -> &str {
        "postpones"
    }
    fn completed(&mut self, now: Nanos, _: Completion) -> Option<Interrupt> {
        self.deadline = Some(now + 10 * US);
        None
    }
    fn deadline_reached(&mut self, now: Nanos) -> Option<Interrupt> {
        if !self.postponed {
            self.postponed = true;
            self.deadline = Some(now + 5 * US);
            return None;
        }
        self.deadline = None;
        Some(Interrupt::Full)
    }
    fn deadline(&self) -> Option<Nanos> {
        self.deadline
    }
    fn delay_bound(&self) -> Nanos {
        15 * US
    }
}

/// A broken policy: its deadline never moves and never fires.
#[derive(Default)]
struct Stuck {
    deadline: Option<Nanos>,
}

impl Policy for Stuck {
    fn name(&self) -> &str {
        "stuck"
    }
    fn completed(&mut self, now: Nanos, _: Completion) -> Option<Interrupt> {
        self.deadline = Some(now + 10 * US);
        None
    }
    fn deadline_reached(&mut self, _: Nanos) -> Option<Interrupt> {
        None
    }
    fn deadline(&self) -> Option<Nanos> {
        self.deadline
    }
    fn delay_bound(&self) -> Nanos {
        10 * US
    }
}

#[test]
fn a_deadline_due_at_an_events_instant_fires_before_the_event() {
    // adaptive, delta 6 us: the first completion's quiet gap ends at 6 us,
    // exactly when the second comes, so it goes alone.
    let mut r = named("adaptive");
    let mut log = Log::new();
    r.complete(0, ok(1), &mut sink(&mut log)).unwrap();
    r.complete(6 * US, ok(2), &mut sink(&mut log)).unwrap();
    assert_eq!(log, vec![(6 * US, Interrupt::Full, vec![1])]);
    assert_eq!(r.finish(&mut sink(&mut log)), 12 * US);
    assert_eq!(log[1], (12 * US, Interrupt::Full, vec![2]));
}

#[test]
fn advancing_fires_every_deadline_due_by_then_even_one_moved_on_the_way() {
    let mut r = Replay::new(Box::new(Postpones::default()));
    let mut log = Log::new();
    r.complete(0, ok(1), &mut sink(&mut log)).unwrap();
    r.advance(100 * US, &mut sink(&mut log)).unwrap();
    assert_eq!(log, vec![(15 * US, Interrupt::Full, vec![1])]);
    assert_eq!(r.now(), 100 * US);
}

#[test]
fn time_never_runs_back() {
    let mut r = named("adaptive");
    let mut log = Log::new();
    r.complete(10 * US, ok(1), &mut sink(&mut log)).unwrap();
    assert_eq!(r.now(), 10 * US);
    let back = TimeWentBack {
        at: 5 * US,
        now: 10 * US,
    };
    let cmd = Command {
        id: 2,
        marks: Marks::NONE,
    };
    assert_eq!(r.submit(5 * US, cmd, &mut sink(&mut log)), Err(back));
    assert_eq!(r.complete(5 * US, ok(2), &mut sink(&mut log)), Err(back));
    assert_eq!(r.advance(5 * US, &mut sink(&mut log)), Err(back));
    assert_eq!(r.pending(), 1, "the refused completion was not posted");
    // The same instant again is fine.
    assert_eq!(r.complete(10 * US, ok(3), &mut sink(&mut log)), Ok(()));
    assert_eq!(r.pending(), 2);
    assert!(log.is_empty());
}

#[test]
fn pending_counts_the_completions_posted_and_not_yet_delivered() {
    let mut r = named("adaptive");
    let mut log = Log::new();
    assert_eq!(r.pending(), 0);
    r.complete(0, ok(1), &mut sink(&mut log)).unwrap();
    r.complete(US, ok(2), &mut sink(&mut log)).unwrap();
    assert_eq!(r.pending(), 2);
    r.advance(7 * US, &mut sink(&mut log)).unwrap();
    assert_eq!(r.pending(), 0);
    assert_eq!(log, vec![(7 * US, Interrupt::Full, vec![1, 2])]);
}

#[test]
fn finish_runs_time_on_to_the_last_delivery() {
    let mut r = named("adaptive");
    let mut log = Log::new();
    r.complete(3 * US, ok(1), &mut sink(&mut log)).unwrap();
    assert_eq!(r.finish(&mut sink(&mut log)), 9 * US);
    assert_eq!(r.now(), 9 * US);
    assert_eq!(r.forced_flushes(), 0);
}

#[test]
fn finish_with_nothing_pending_delivers_nothing_more() {
    let mut r = named("default");
    let mut log = Log::new();
    r.complete(3 * US, ok(1), &mut sink(&mut log)).unwrap();
    assert_eq!(r.finish(&mut sink(&mut log)), 3 * US);
    assert_eq!(log, vec![(3 * US, Interrupt::Full, vec![1])]);
    assert_eq!(r.forced_flushes(), 0);
}

#[test]
fn a_policy_stuck_on_its_deadline_is_flushed_at_the_end_and_counted() {
    let mut r = Replay::new(Box::new(Stuck::default()));
    let mut log = Log::new();
    r.complete(0, ok(1), &mut sink(&mut log)).unwrap();
    r.advance(50 * US, &mut sink(&mut log)).unwrap();
    assert!(log.is_empty(), "its deadline fires nothing");
    r.complete(60 * US, ok(2), &mut sink(&mut log)).unwrap();
    assert_eq!(r.finish(&mut sink(&mut log)), 70 * US);
    assert_eq!(log, vec![(70 * US, Interrupt::Full, vec![1, 2])]);
    assert_eq!(r.forced_flushes(), 1);
}

#[test]
fn the_replay_exposes_the_policy_it_drives() {
    assert_eq!(named("cint").policy().name(), "cint");
}
