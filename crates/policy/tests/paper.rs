//! The behaviour the papers describe, one test each, named after it.

mod common;
use common::*;
use policy::{Interrupt, Marks, PolicySpec, US};

const NONE: Marks = Marks::NONE;

#[test]
fn lone_completion_under_adaptive_is_delivered_exactly_delta_later() {
    // TOS 3.2: "All coalescing strategies add exactly their timeout".
    let irqs = run_named("adaptive", &[done(1_000, 7)]);
    assert_eq!(
        irqs,
        vec![Irq {
            time: 1_000 + 6 * US,
            kind: Interrupt::Full,
            ids: vec![7]
        }]
    );
    let spec = PolicySpec {
        delta: Some(15 * US),
        ..PolicySpec::named("adaptive")
    };
    assert_eq!(run_spec(&spec, &[done(0, 1)])[0].time, 15 * US);
}

#[test]
fn lone_completion_under_nvme_presets_waits_the_whole_timeout() {
    for (name, t) in [
        ("nvme100", 100 * US),
        ("nvme20", 20 * US),
        ("nvme6", 6 * US),
    ] {
        let irqs = run_named(name, &[done(500, 1)]);
        assert_eq!(irqs.len(), 1, "{name}");
        assert_eq!(irqs[0].time, 500 + t, "{name}");
    }
}

#[test]
fn burst_of_40_under_adaptive_fires_at_the_32nd_then_last_plus_delta() {
    let events: Vec<_> = (0..40).map(|i| done(i * US, i)).collect();
    let irqs = run_named("adaptive", &events);
    assert_eq!(irqs.len(), 2);
    assert_eq!(irqs[0].time, 31 * US, "the 32nd completion, at 31 us");
    assert_eq!(irqs[0].ids, (0..32).collect::<Vec<_>>());
    assert_eq!(irqs[1].time, 39 * US + 6 * US, "last + delta");
    assert_eq!(irqs[1].ids, (32..40).collect::<Vec<_>>());
}

#[test]
fn burst_extends_the_adaptive_timeout_but_not_the_nvme_timer() {
    // TOS Fig. 7: NVMe's timer is not extended, so a 1 us-spaced run of 10
    // under nvme6 fires at first + 6 us; adaptive waits for the run to end.
    let events: Vec<_> = (0..10).map(|i| done(i * US, i)).collect();
    let nvme = run_named("nvme6", &events);
    assert_eq!(nvme[0].time, 6 * US);
    assert_eq!(
        nvme[0].ids,
        (0..6).collect::<Vec<_>>(),
        "c0..c5 are in by 6 us; c6 comes at 6 us, after the timer"
    );
    let adaptive = run_named("adaptive", &events);
    assert_eq!(adaptive.len(), 1);
    assert_eq!(adaptive[0].time, 9 * US + 6 * US);
}

#[test]
fn sustained_stream_nvme_fires_every_timeout_adaptive_at_thr() {
    // TOS 3.2, Fig. 8(c): nvme20 and nvme6 must fire every 20 / 6 us under a
    // stream that adaptive batches by thr. 1000 completions, one a microsecond.
    let events: Vec<_> = (0..1000).map(|i| done(i * US, i)).collect();
    assert_eq!(run_named("adaptive", &events).len(), 1000 / 32 + 1);
    assert_eq!(
        run_named("nvme20", &events).len(),
        50,
        "20 completions per 20 us window"
    );
    assert_eq!(run_named("nvme6", &events).len(), 167, "6 per 6 us window");
    assert_eq!(
        run_named("nvme100", &events).len(),
        1000 / 32 + 1,
        "thr 32 comes first"
    );
}

#[test]
fn urgent_fires_at_its_own_completion() {
    for ooo in [true, false] {
        let spec = PolicySpec {
            ooo: Some(ooo),
            ..PolicySpec::named("cint")
        };
        let irqs = run_spec(&spec, &[(3 * US, Ev::Done(1, Marks::URGENT))]);
        assert_eq!(irqs[0].time, 3 * US, "ooo={ooo}");
        assert_eq!(irqs[0].ids, vec![1]);
    }
}

#[test]
fn ooo_costs_nothing_when_only_urgent_entries_wait() {
    // A sync-only stream: one interrupt per Urgent, no empty delta interrupts.
    let events: Vec<_> = (0..100)
        .map(|i| (i * 20 * US, Ev::Done(i, Marks::URGENT)))
        .collect();
    let irqs = run_named("cint", &events);
    assert_eq!(irqs.len(), 100);
    assert!(irqs
        .iter()
        .all(|i| i.kind == Interrupt::UrgentOnly && i.ids.len() == 1));
}

#[test]
fn urgent_only_interrupt_leaves_unmarked_entries_for_the_next_interrupt() {
    // TOS 3.5, Fig. 14.
    let events = [
        done(0, 1),
        (US, Ev::Done(2, Marks::URGENT)),
        done(2 * US, 3),
    ];
    let irqs = run_named("cint", &events);
    assert_eq!(
        irqs[0],
        Irq {
            time: US,
            kind: Interrupt::UrgentOnly,
            ids: vec![2]
        }
    );
    assert_eq!(
        irqs[1],
        Irq {
            time: 2 * US + 6 * US,
            kind: Interrupt::Full,
            ids: vec![1, 3]
        }
    );
    assert_eq!(irqs.len(), 2);
}

#[test]
fn without_ooo_urgent_reaps_everything_and_resets() {
    let spec = PolicySpec {
        ooo: Some(false),
        ..PolicySpec::named("cint")
    };
    let irqs = run_spec(&spec, &[done(0, 1), (US, Ev::Done(2, Marks::URGENT))]);
    assert_eq!(
        irqs,
        vec![Irq {
            time: US,
            kind: Interrupt::Full,
            ids: vec![1, 2]
        }]
    );
}

#[test]
fn reaped_urgent_entries_count_toward_thr() {
    // TOS 3.5: with thr = 9 "an interrupt for the non-OOO requests will fire
    // as soon as 9 entries (already reaped or otherwise) accumulate".
    let spec = PolicySpec {
        thr: Some(9),
        ..PolicySpec::named("cint")
    };
    let mut events = vec![];
    for i in 0..9u64 {
        let m = if i % 2 == 0 { Marks::URGENT } else { NONE };
        events.push((i * US, Ev::Done(i, m)));
    }
    let irqs = run_spec(&spec, &events);
    let full: Vec<_> = irqs.iter().filter(|i| i.kind == Interrupt::Full).collect();
    assert_eq!(full.len(), 1);
    assert_eq!(
        full[0].time,
        8 * US,
        "the 9th entry fires the full interrupt"
    );
    assert_eq!(
        full[0].ids,
        vec![1, 3, 5, 7, 8],
        "it reaps what the urgent-only ones left, and the 9th"
    );
    assert_eq!(
        irqs.iter()
            .filter(|i| i.kind == Interrupt::UrgentOnly)
            .count(),
        4
    );
}

#[test]
fn relaxed_barrier_fires_a_full_interrupt_when_it_completes() {
    let events = [
        done(0, 1),
        done(US, 2),
        (2 * US, Ev::Done(3, Marks::BARRIER)),
    ];
    let irqs = run_named("cint", &events);
    assert_eq!(
        irqs,
        vec![Irq {
            time: 2 * US,
            kind: Interrupt::Full,
            ids: vec![1, 2, 3]
        }]
    );
}

#[test]
fn strict_barrier_waits_for_earlier_submissions() {
    let spec = PolicySpec {
        barrier: Some(policy::cint::BarrierMode::Strict),
        ..PolicySpec::named("cint")
    };
    let events = [
        (0, Ev::Submit(1, NONE)),
        (0, Ev::Submit(2, NONE)),
        (0, Ev::Submit(3, Marks::BARRIER)),
        (0, Ev::Submit(4, NONE)), // after the Barrier: does not hold it
        (5 * US, Ev::Done(3, Marks::BARRIER)), // completes first, out of order
        (7 * US, Ev::Done(1, NONE)),
        (9 * US, Ev::Done(2, NONE)),
    ];
    let irqs = run_spec(&spec, &events);
    assert_eq!(
        irqs[0],
        Irq {
            time: 9 * US,
            kind: Interrupt::Full,
            ids: vec![3, 1, 2]
        }
    );
    // Relaxed fires at the Barrier itself and leaves 1 and 2 to delta.
    let relaxed = run_named("cint", &events);
    assert_eq!(
        relaxed[0],
        Irq {
            time: 5 * US,
            kind: Interrupt::Full,
            ids: vec![3]
        }
    );
    assert_eq!(relaxed[1].time, 9 * US + 6 * US);
}

#[test]
fn strict_barrier_is_not_stuck_behind_a_slow_request() {
    // The earlier request takes 1 ms; the Barrier entry still leaves by delta.
    let spec = PolicySpec {
        barrier: Some(policy::cint::BarrierMode::Strict),
        ..PolicySpec::named("cint")
    };
    let events = [
        (0, Ev::Submit(1, NONE)),
        (0, Ev::Submit(2, Marks::BARRIER)),
        (10 * US, Ev::Done(2, Marks::BARRIER)),
        (1_000 * US, Ev::Done(1, NONE)),
    ];
    let irqs = run_spec(&spec, &events);
    assert_eq!(
        irqs[0],
        Irq {
            time: 16 * US,
            kind: Interrupt::Full,
            ids: vec![2]
        }
    );
    assert_eq!(
        irqs[1],
        Irq {
            time: 1_000 * US,
            kind: Interrupt::Full,
            ids: vec![1]
        },
        "the batch is now done"
    );
}

#[test]
fn storm_protection_holds_a_150k_urgent_stream_under_100k() {
    // TOS 4.3, Fig. 17: 150K Urgent interrupts/s without protection.
    let gap = 6_667; // ns: 150K/s
    let n = 150_000u64; // one second
    let events: Vec<_> = (0..n)
        .map(|i| (i * gap, Ev::Done(i, Marks::URGENT)))
        .collect();
    let unprotected = run_named("cint", &events);
    assert_eq!(unprotected.len() as u64, n);
    let spec = PolicySpec {
        max_irq_rate: Some(100_000),
        ..PolicySpec::named("cint")
    };
    let protected = run_spec(&spec, &events);
    let seconds = (n * gap) as f64 / 1e9;
    let rate = protected.len() as f64 / seconds;
    assert!(rate <= 100_000.0, "rate {rate:.0}/s over the limit");
    // Throttling engages after the EWMA notices; it is not a blanket cut.
    assert!(
        rate > 50_000.0,
        "rate {rate:.0}/s: throttled far below the limit"
    );
    // And over any 10 ms once the EWMA has settled (after 100 ms) too.
    let late: Vec<_> = protected
        .iter()
        .filter(|i| i.time >= 100_000 * US)
        .collect();
    let span = (n * gap - 100_000 * US) as f64 / 1e9;
    assert!(late.len() as f64 / span <= 100_000.0);
}

#[test]
fn storm_protection_restores_when_the_storm_subsides() {
    let spec = PolicySpec {
        max_irq_rate: Some(100_000),
        ..PolicySpec::named("cint")
    };
    let gap = 6_667;
    let mut events: Vec<_> = (0..50_000u64)
        .map(|i| (i * gap, Ev::Done(i, Marks::URGENT)))
        .collect();
    // Then a quiet 10 ms, and a trickle of Urgent at 10K/s.
    let start = 50_000 * gap + 10_000 * US;
    for j in 0..100u64 {
        events.push((start + j * 100 * US, Ev::Done(1_000_000 + j, Marks::URGENT)));
    }
    let irqs = run_spec(&spec, &events);
    let trickle: Vec<_> = irqs.iter().filter(|i| i.time >= start).collect();
    assert_eq!(trickle.len(), 100, "each Urgent fires again at once");
    for (j, irq) in trickle.iter().enumerate() {
        assert_eq!(irq.time, start + j as u64 * 100 * US);
    }
}

#[test]
fn errors_fire_at_once_under_every_policy() {
    for s in policy::catalogue::STRATEGIES {
        let irqs = run_named(s.name, &[done(0, 1), (2 * US, Ev::Error(2, NONE))]);
        let with_error = irqs.iter().find(|i| i.ids.contains(&2)).unwrap();
        assert_eq!(with_error.time, 2 * US, "{}", s.name);
    }
}

#[test]
fn dynamic_timeout_shrinks_as_the_batch_fills() {
    // Gyawali Alg. 1: a lone completion waits e^(0.1*32) - 1 = 23.5 us.
    let irqs = run_named("dynamic", &[done(0, 1)]);
    assert_eq!(irqs[0].time, 23_533);
    // Second completion 1 us later: delta = e^(3.1) - 1 = 21.2 us from it.
    let irqs = run_named("dynamic", &[done(0, 1), done(US, 2)]);
    assert_eq!(irqs.len(), 1);
    assert_eq!(irqs[0].time, US + 21_198);
}

#[test]
fn default_fires_once_per_completion() {
    let events: Vec<_> = (0..50).map(|i| done(i * 100, i)).collect();
    let irqs = run_named("default", &events);
    assert_eq!(irqs.len(), 50);
    assert!(irqs
        .iter()
        .enumerate()
        .all(|(i, irq)| irq.ids == vec![i as u64]));
}

#[test]
fn async_batches_with_barrier_fire_once_per_batch_under_cint() {
    // Batches of 16 completing 0.5 us apart, the last marked Barrier (TOS
    // Table 1, io_submit), 20 us between batches: one interrupt each, at the
    // Barrier; adaptive waits delta after each batch; default fires 16x.
    let mut events = vec![];
    for b in 0..100u64 {
        for i in 0..16u64 {
            let m = if i == 15 { Marks::BARRIER } else { NONE };
            events.push((b * 20 * US + i * 500, Ev::Done(b * 16 + i, m)));
        }
    }
    let cint = run_named("cint", &events);
    assert_eq!(cint.len(), 100);
    assert!(cint
        .iter()
        .enumerate()
        .all(|(b, i)| i.time == b as u64 * 20 * US + 15 * 500));
    let adaptive = run_named("adaptive", &events);
    assert_eq!(adaptive.len(), 100);
    assert!(adaptive
        .iter()
        .enumerate()
        .all(|(b, i)| i.time == b as u64 * 20 * US + 15 * 500 + 6 * US));
    assert_eq!(run_named("default", &events).len(), 1600);
}
