//! The oracle floor against every strategy (issue 27 item 4): on random
//! streams and budgets (Urgent: 0; the rest: `B`), the oracle delivers
//! every completion within its budget, and no strategy in the catalogue
//! that also delivered every completion within its budget raised fewer
//! interrupts than the oracle.
//!
//! The comparison is fair only among strategies that met the budget: one
//! that lets an Urgent completion wait (adaptive ignores marks) or an
//! unmarked one wait past `B` may raise fewer interrupts than the floor,
//! and is not held to it on that stream. Which strategies met the budget
//! is part of each check's outcome; `default` (an interrupt per
//! completion) always does, so no case compares nothing, and a fixed set
//! of streams shows every strategy meeting the budget somewhere, so every
//! strategy is held to the floor.

use std::collections::HashMap;

use policy::catalogue::STRATEGIES;
use policy::oracle::{floor, schedule, Budget};
use policy::replay::{Delivery, Replay};
use policy::{build, Command, Completion, Marks, Nanos, PolicySpec, MS, US};
use proptest::prelude::*;

#[derive(Clone, Copy, Debug)]
struct Cmd {
    id: u64,
    submit: Nanos,
    done: Nanos,
    marks: Marks,
    error: bool,
}

fn marks() -> impl Strategy<Value = Marks> {
    prop_oneof![
        4 => Just(Marks::NONE),
        2 => Just(Marks::URGENT),
        2 => Just(Marks::BARRIER),
        1 => Just(Marks::BOTH),
    ]
}

/// Bursty submissions, each completing after a random service time, so
/// completions come out of order.
fn stream() -> impl Strategy<Value = Vec<Cmd>> {
    prop::collection::vec(
        (
            prop_oneof![0..2_000u64, 0..60_000u64, Just(0u64)],
            prop_oneof![0..20_000u64, 0..400_000u64],
            marks(),
            prop::bool::weighted(0.03),
        ),
        1..200,
    )
    .prop_map(|v| build_stream(v.into_iter()))
}

fn build_stream(v: impl Iterator<Item = (Nanos, Nanos, Marks, bool)>) -> Vec<Cmd> {
    let mut t = 0;
    v.enumerate()
        .map(|(i, (gap, latency, marks, error))| {
            t += gap;
            Cmd {
                id: i as u64,
                submit: t,
                done: t + latency,
                marks,
                error,
            }
        })
        .collect()
}

/// Budgets from none to past every strategy's own delay bound (dim's
/// longest, 64 x 63 us, is about 4 ms).
fn budget() -> impl Strategy<Value = Nanos> {
    prop_oneof![Just(0u64), 0..20 * US, 0..400 * US, Just(10 * MS),]
}

/// The completions in time order, `(time, urgent)`.
fn completions(cmds: &[Cmd]) -> Vec<(Nanos, bool)> {
    let mut c: Vec<(Nanos, bool)> = cmds
        .iter()
        .map(|c| (c.done, c.marks.normalized().urgent))
        .collect();
    c.sort_unstable();
    c
}

/// What one strategy did on a stream.
struct Run {
    interrupts: u64,
    /// Every completion delivered within its budget.
    met: bool,
}

fn run(spec: &PolicySpec, cmds: &[Cmd], budget: Budget) -> Run {
    let mut replay = Replay::new(build(spec).unwrap());
    let by_id: HashMap<u64, Cmd> = cmds.iter().map(|c| (c.id, *c)).collect();
    let mut events: Vec<(Nanos, bool, Cmd)> = cmds
        .iter()
        .flat_map(|c| [(c.submit, false, *c), (c.done, true, *c)])
        .collect();
    events.sort_by_key(|&(t, is_done, c)| (t, is_done, c.id));
    let mut interrupts = 0u64;
    let mut met = true;
    let mut delivered = 0usize;
    let mut sink = |d: &Delivery| {
        interrupts += 1;
        for r in d.reaped {
            let c = by_id[&r.id];
            delivered += 1;
            if d.time - c.done > budget.of(c.marks.normalized().urgent) {
                met = false;
            }
        }
    };
    for (t, is_done, c) in events {
        if is_done {
            let cqe = Completion {
                id: c.id,
                marks: c.marks,
                error: c.error,
            };
            replay.complete(t, cqe, &mut sink).unwrap();
        } else {
            let cmd = Command {
                id: c.id,
                marks: c.marks,
            };
            replay.submit(t, cmd, &mut sink).unwrap();
        }
    }
    replay.finish(&mut sink);
    assert_eq!(
        delivered,
        cmds.len(),
        "{}: every completion delivered",
        spec.name
    );
    Run { interrupts, met }
}

/// The oracle's own schedule delivers each completion, by the first
/// interrupt at or after it, within its budget; and it has as many
/// interrupts as the floor.
fn check_oracle(cmds: &[Cmd], budget: Budget) -> Result<u64, TestCaseError> {
    let c = completions(cmds);
    let times = schedule(c.iter().copied(), budget).unwrap();
    let n = floor(c.iter().copied(), budget).unwrap();
    prop_assert_eq!(times.len() as u64, n);
    prop_assert!(times.windows(2).all(|w| w[0] < w[1]), "{:?}", times);
    for &(t, urgent) in &c {
        let i = times.partition_point(|&x| x < t);
        prop_assert!(i < times.len(), "completion at {} never delivered", t);
        let delay = times[i] - t;
        prop_assert!(
            delay <= budget.of(urgent),
            "completion at {} (urgent {}) delivered at {}, budget {}",
            t,
            urgent,
            times[i],
            budget.of(urgent)
        );
    }
    Ok(n)
}

/// Holds every strategy that met the budget to the floor; returns the
/// names of those that met it.
fn check(cmds: &[Cmd], b: Nanos) -> Result<Vec<&'static str>, TestCaseError> {
    let budget = Budget::new(b);
    let floor = check_oracle(cmds, budget)?;
    let mut met = Vec::new();
    for s in STRATEGIES {
        let r = run(&PolicySpec::named(s.name), cmds, budget);
        if r.met {
            met.push(s.name);
            prop_assert!(
                r.interrupts >= floor,
                "{} met every budget (B = {} ns) with {} interrupts, under the floor {}",
                s.name,
                b,
                r.interrupts,
                floor
            );
        }
    }
    // `default` delivers each completion at once: it always meets the
    // budget, so every case compares at least one strategy.
    prop_assert!(
        met.contains(&"default"),
        "default missed the budget: {:?}",
        met
    );
    Ok(met)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn no_strategy_that_meets_the_budget_beats_the_oracle(cmds in stream(), b in budget()) {
        check(&cmds, b)?;
    }
}

#[test]
fn every_strategy_meets_the_budget_on_some_stream_and_is_held_to_the_floor() {
    // A fixed set: streams with and without Urgent completions, budgets
    // small and large, from a small linear congruential generator.
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: u64| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    };
    let mut met_somewhere: HashMap<&str, u32> = HashMap::new();
    let (mut cases, mut large, mut cint_large) = (0, 0, 0);
    for urgent_share in [0, 3] {
        for b in [0, 5 * US, 100 * US, 10 * MS] {
            for _ in 0..10 {
                let cmds = build_stream((0..150).map(|_| {
                    let marks = match next(10) {
                        x if x < urgent_share => Marks::URGENT,
                        x if x < urgent_share + 2 => Marks::BARRIER,
                        _ => Marks::NONE,
                    };
                    (next(20_000), next(100_000), marks, false)
                }));
                cases += 1;
                let met = check(&cmds, b).unwrap();
                if b == 10 * MS {
                    large += 1;
                    cint_large += u32::from(met.contains(&"cint"));
                }
                for name in met {
                    *met_somewhere.entry(name).or_default() += 1;
                }
            }
        }
    }
    eprintln!("streams on which each strategy met the budget (of {cases}):");
    for s in STRATEGIES {
        eprintln!(
            "  {:10} {}",
            s.name,
            met_somewhere.get(s.name).copied().unwrap_or(0)
        );
    }
    for s in STRATEGIES {
        assert!(
            met_somewhere.get(s.name).copied().unwrap_or(0) > 0,
            "{} never met the budget: it was never held to the floor",
            s.name
        );
    }
    // cint delivers Urgent at once and the rest within (thr - 1) deltas:
    // at 10 ms it meets every budget.
    assert_eq!(cint_large, large);
}

#[test]
fn hand_computed_floor_beside_strategies() {
    // Three unmarked completions 2 us apart, then one 50 us later; B = 10 us.
    let cmds = build_stream(
        [(0, 1_000), (2_000, 1_000), (2_000, 1_000), (50_000, 1_000)]
            .into_iter()
            .map(|(gap, lat)| (gap, lat, Marks::NONE, false)),
    );
    let budget = Budget::new(10 * US);
    // Completions at 1, 3, 5 us (one interrupt at 11 us) and 55 us.
    assert_eq!(
        schedule(completions(&cmds), budget).unwrap(),
        [11 * US, 65 * US]
    );
    let default = run(&PolicySpec::named("default"), &cmds, budget);
    assert!(default.met);
    assert_eq!(default.interrupts, 4);
    // cint: a quiet gap of 6 us after the third (at 11 us) and after the
    // fourth (at 61 us): the floor exactly.
    let cint = run(&PolicySpec::named("cint"), &cmds, budget);
    assert!(cint.met);
    assert_eq!(cint.interrupts, 2);
    // nvme100 waits 100 us from the first: one interrupt, over budget; it
    // beats the floor only by missing the budget.
    let nvme = run(&PolicySpec::named("nvme100"), &cmds, budget);
    assert!(!nvme.met);
    assert!(nvme.interrupts < 2);
}
