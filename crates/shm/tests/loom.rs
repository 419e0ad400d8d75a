//! loom models of the region's lock-free protocol (issue 38, Build item 1):
//! the submission ring (the program's `post` against the device's `peek`
//! and `fetched`), the completion ring and the futex wake-up (the
//! handler's `deliver` and `wake` against the waiter's `wait`, `take` and
//! `take_one`), and the slot table (`claim` against the take-over of a
//! dead process's slot). loom runs each model under every interleaving,
//! and every value a relaxed or acquire load may return, up to a bound on
//! preemptions; each asserts that every command is seen exactly once and
//! every completion taken exactly once.
//!
//! Run (the README, "Model checking"):
//!   RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test -p cinterrupts-shm --release --test loom
//! which runs `the_seeded_ordering_bug_is_caught` too: the first model
//! with one Release/Acquire pair weakened, which it must catch.
#![cfg(loom)]

use loom::thread;
use shm::{Cmd, Done, Region, Slot, RING};
// std's Arc, not loom's: a model that fails (a deadlock above all) then
// fails alone, where loom's Arc, dropped while the panic unwinds, aborts the
// whole test binary.
use std::sync::Arc;

/// Preemptions per execution unless `LOOM_MAX_PREEMPTIONS` says otherwise:
/// loom's advice for models this size (its README: 2-3 finds most bugs and
/// keeps the run to seconds); fitted to this machine's run time, not to a
/// result.
const PREEMPTIONS: usize = 3;

/// Commands per model: one more than a ring holds (loom's `RING` is 2), so
/// both rings wrap.
const N: u32 = RING + 1;

/// A pid no process has: above PID_MAX_LIMIT (4M on 64-bit, Linux
/// include/linux/threads.h), so `kill(DEAD, 0)` fails with ESRCH.
const DEAD: u32 = 1 << 30;

fn me() -> u32 {
    std::process::id()
}

fn check(model: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(PREEMPTIONS);
    }
    // How many executions loom ran (shown with --nocapture): a model that
    // ran one would check nothing.
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = runs.clone();
    b.check(move || {
        counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        model();
    });
    let runs = runs.load(std::sync::atomic::Ordering::Relaxed);
    eprintln!(
        "{runs} executions, at most {:?} preemptions each",
        b.preemption_bound
    );
    assert!(runs > 1, "loom explored one execution only");
}

/// Command `c`: every field nonzero and its own, so a read of the ring's
/// old (zeroed) contents or of another command shows.
fn cmd(c: u32) -> Cmd {
    Cmd {
        cookie: c,
        write: c % 2 == 1,
        marks: c as u8,
        critical: true,
        polled: c % 2 == 0,
        len: 512 * c,
        offset: 4096 * u64::from(c),
    }
}

/// The completion the device gives `c`.
fn done(c: &Cmd) -> Done {
    Done {
        cookie: c.cookie,
        result: c.len as i32,
        error: c.write,
    }
}

/// The device's fetch: the first command `peek` shows, as the device takes
/// fewer than it saw when its queue is full (exec's `SlotIngress::poll`),
/// or `None` after a yield when nothing is posted.
fn fetch_one(s: &Slot, batch: &mut Vec<Cmd>) -> Option<Cmd> {
    batch.clear();
    s.peek(RING as usize, batch);
    let Some(&c) = batch.first() else {
        thread::yield_now();
        return None;
    };
    s.fetched(1);
    Some(c)
}

/// The handler: leaves `c`'s completion and wakes the waiter if `deliver`
/// says it has what it waits for.
fn complete(s: &Slot, c: &Cmd) {
    if s.deliver(&[done(c)]) {
        s.wake();
    }
}

#[test]
fn a_post_races_the_devices_peek_and_fetch() {
    check(|| {
        let r = Arc::new(Region::model());
        let i = r.claim(me()).expect("a free slot");
        let program = {
            let r = r.clone();
            thread::spawn(move || {
                let s = r.slot(i);
                for c in 1..=RING {
                    assert!(s.post(cmd(c)), "room for command {c}");
                }
                assert!(!s.post(cmd(N)), "a full ring refuses");
            })
        };
        // The device looks at any moment, without a yield (after one,
        // loom returns no value the thread had seen before it, which
        // would hide the ring's old contents): whatever it fetches must be
        // the next command, whole.
        let device = {
            let r = r.clone();
            thread::spawn(move || {
                let s = r.slot(i);
                let mut seen = vec![];
                for _ in 0..RING {
                    let mut batch = vec![];
                    s.peek(RING as usize, &mut batch);
                    if let Some(&c) = batch.first() {
                        s.fetched(1);
                        seen.push(c);
                    }
                }
                seen
            })
        };
        program.join().unwrap();
        let mut seen = device.join().unwrap();
        // The rest, after both are done.
        let s = r.slot(i);
        s.peek(RING as usize, &mut seen);
        for (k, c) in seen.iter().enumerate() {
            assert_eq!(
                *c,
                cmd(k as u32 + 1),
                "command {k} read before its doorbell, or twice"
            );
        }
        assert_eq!(seen.len(), RING as usize, "every command seen once");
    });
}

#[test]
fn a_round_trip_wraps_both_rings_and_loses_nothing() {
    check(|| {
        let r = Arc::new(Region::model());
        let i = r.claim(me()).expect("a free slot");
        let program = {
            let r = r.clone();
            thread::spawn(move || {
                let s = r.slot(i);
                let (mut next, mut got) = (1, 0);
                while got < N {
                    if next <= N && s.post(cmd(next)) {
                        next += 1;
                    } else if let Some(d) = s.take_one() {
                        got += 1;
                        assert_eq!(
                            d,
                            done(&cmd(got)),
                            "completion {got} taken twice, out of order or overwritten"
                        );
                    } else {
                        thread::yield_now();
                    }
                }
            })
        };
        let s = r.slot(i);
        let mut batch = vec![];
        let mut fetched = 0;
        while fetched < N {
            if let Some(c) = fetch_one(s, &mut batch) {
                fetched += 1;
                assert_eq!(c, cmd(fetched), "command {fetched} seen once, in order");
                complete(s, &c);
            }
        }
        program.join().unwrap();
        assert_eq!((s.in_flight(), s.ready()), (0, 0));
    });
}

/// The waiter checks the ring, then sleeps on the futex; the handler
/// delivers one completion at a time. A wake-up lost between the check and
/// the sleep leaves the waiter asleep for ever: loom reports the deadlock.
fn waiter_model(min: u32) {
    check(move || {
        let r = Arc::new(Region::model());
        let i = r.claim(me()).expect("a free slot");
        let waiter = {
            let r = r.clone();
            thread::spawn(move || {
                let s = r.slot(i);
                for c in 1..=RING {
                    assert!(s.post(cmd(c)));
                }
                let mut got = vec![];
                while got.len() < RING as usize {
                    assert!(s.wait(min, None), "woken with what it waits for");
                    let before = got.len();
                    s.take(RING as usize, &mut got);
                    assert!(got.len() >= before + min as usize, "woken too early");
                }
                let want: Vec<Done> = (1..=RING).map(|c| done(&cmd(c))).collect();
                assert_eq!(got, want, "each completion taken once, in order");
            })
        };
        let s = r.slot(i);
        let mut batch = vec![];
        let mut fetched = 0;
        while fetched < RING {
            if let Some(c) = fetch_one(s, &mut batch) {
                fetched += 1;
                complete(s, &c);
            }
        }
        waiter.join().unwrap();
    });
}

#[test]
fn a_waiter_that_checks_then_sleeps_misses_no_wake_up() {
    waiter_model(1);
}

#[test]
fn a_waiter_for_two_is_woken_once_both_are_delivered() {
    waiter_model(2);
}

/// As exec runs it: the device's thread fetches and hands each command to
/// the interrupt handler's thread (exec's queue pair, here a channel),
/// which delivers and wakes; the program posts all three, then waits and
/// takes, sleeping whenever nothing is ready.
#[test]
fn the_device_and_the_handler_on_two_threads_lose_nothing() {
    check(|| {
        let r = Arc::new(Region::model());
        let i = r.claim(me()).expect("a free slot");
        let (to_handler, handler_in) = loom::sync::mpsc::channel::<Cmd>();
        let device = {
            let r = r.clone();
            thread::spawn(move || {
                let s = r.slot(i);
                let mut batch = vec![];
                let mut fetched = 0;
                while fetched < RING {
                    if let Some(c) = fetch_one(s, &mut batch) {
                        fetched += 1;
                        assert_eq!(c, cmd(fetched), "command {fetched} seen once, in order");
                        to_handler.send(c).unwrap();
                    }
                }
            })
        };
        let handler = {
            let r = r.clone();
            thread::spawn(move || {
                for _ in 0..RING {
                    complete(r.slot(i), &handler_in.recv().unwrap());
                }
            })
        };
        let s = r.slot(i);
        for c in 1..=RING {
            assert!(s.post(cmd(c)));
        }
        let mut got = vec![];
        while got.len() < RING as usize {
            assert!(s.wait(1, None));
            s.take(RING as usize, &mut got);
        }
        let want: Vec<Done> = (1..=RING).map(|c| done(&cmd(c))).collect();
        assert_eq!(got, want, "each completion taken once, in order");
        device.join().unwrap();
        handler.join().unwrap();
        assert_eq!((s.in_flight(), s.ready()), (0, 0));
    });
}

/// Two claims at once while slot 0 is `setup`'s: each must get its own.
fn two_claims(setup: fn(&Region)) {
    check(move || {
        let r = Arc::new(Region::model());
        setup(&r);
        let other = {
            let r = r.clone();
            thread::spawn(move || r.claim(me()))
        };
        let mine = r.claim(me());
        let other = other.join().unwrap();
        assert!(mine.is_some() && other.is_some(), "a slot each");
        assert_ne!(mine, other, "one slot claimed twice");
    });
}

#[test]
fn two_claims_race_to_take_over_a_dead_process_slot() {
    two_claims(|r| {
        assert_eq!(r.claim(DEAD), Some(0));
    });
}

#[test]
fn a_claim_of_a_released_slot_races_a_take_over() {
    // Slot 0 given back by a process that then died: free, its last pid
    // that of the dead.
    two_claims(|r| {
        assert_eq!(r.claim(DEAD), Some(0));
        r.slot(0).release();
    });
}

#[test]
fn a_take_over_races_the_dead_process_last_completion() {
    check(|| {
        let r = Arc::new(Region::model());
        assert_eq!(r.claim(DEAD), Some(0));
        let dead = cmd(7);
        let s0 = r.slot(0);
        assert!(s0.post(dead));
        let mut batch = vec![];
        assert_eq!(fetch_one(s0, &mut batch), Some(dead));
        let living = {
            let r = r.clone();
            thread::spawn(move || {
                let i = r.claim(me()).expect("a slot");
                let s = r.slot(i);
                assert_eq!(
                    s.ready(),
                    0,
                    "the dead process's completion reaches the living"
                );
                assert!(s.post(cmd(8)));
                loop {
                    if let Some(d) = s.take_one() {
                        assert_eq!(d, done(&cmd(8)), "the living take their own");
                        break;
                    }
                    thread::yield_now();
                }
            })
        };
        // The device: the dead's completion, then the living's command,
        // wherever it was posted.
        complete(s0, &dead);
        let mut served = 0;
        while served == 0 {
            for i in 0..r.high() {
                let s = r.slot(i);
                if let Some(c) = fetch_one(s, &mut batch) {
                    assert_eq!(c, cmd(8), "a command seen twice, or the dead's again");
                    complete(s, &c);
                    served += 1;
                }
            }
        }
        living.join().unwrap();
    });
}

/// The seeded ordering bug (`shm::with_seeded_bug`: the device reads the
/// doorbell Relaxed): the first model must see a command before its
/// fields.
#[test]
#[should_panic(expected = "read before its doorbell")]
fn the_seeded_ordering_bug_is_caught() {
    shm::with_seeded_bug(a_post_races_the_devices_peek_and_fetch);
}
