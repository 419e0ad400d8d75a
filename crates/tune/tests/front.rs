//! Issue 36 item 7: `tune` recommends from the Pareto front. On tune's own
//! workload (examples/tune-libaio.fio) on the Optane and the P3700, for
//! every objective, no candidate is at least as good as the recommendation
//! on both axes of its front and better on one, checked from the
//! candidates' own figures (not from the front `sweep::front` drew); and
//! TOS 5.2's pick is judged against the same figures. Short runs (20 ms):
//! the test takes seconds.

use policy::MS;
use sim::{DeviceProfile, HostProfile};
use tune::recommend::{Axes, Standing};
use tune::{Budget, Objective, Point, Target, TuneConfig, Tuning};

fn workload() -> Vec<jobs::Job> {
    let path = format!(
        "{}/../../examples/tune-libaio.fio",
        env!("CARGO_MANIFEST_DIR")
    );
    jobs::parse_file(path.as_ref()).unwrap().jobs
}

/// TOS 5.2 read delta at p90 on the Optane and at p99 on the P3700.
fn tuning(device: &str, percentile: f64, objective: Objective, budget: Budget) -> Tuning {
    let cfg = TuneConfig {
        runtime: Some(20 * MS),
        percentile,
        objective,
        budget,
        ..TuneConfig::new(Target::Sim {
            device: DeviceProfile::load(device).unwrap(),
            host: HostProfile::load("xeon-e5-2660v4").unwrap(),
            seed: 1,
        })
    };
    tune::tune(&workload(), &cfg, &|_| {}).unwrap()
}

/// A candidate's position on the front of `axes`, from its own figures:
/// CPU per I/O is the busy share over IOPS.
fn at(p: &Point, axes: Axes) -> (f64, f64) {
    let x = match axes {
        Axes::Interrupts => p.irq_per_sec,
        Axes::Cpu => p.cpu * 1e9 / p.iops,
    };
    (x, p.p99_ns as f64)
}

fn beats(q: (f64, f64), p: (f64, f64)) -> bool {
    q.0 <= p.0 && q.1 <= p.1 && (q.0 < p.0 || q.1 < p.1)
}

fn candidate<'a>(t: &'a Tuning, policy: &str) -> &'a Point {
    t.candidates
        .iter()
        .find(|p| tune::recommend::policy_of(p) == policy)
        .unwrap_or_else(|| panic!("{policy} is not a candidate"))
}

#[test]
fn the_recommendation_is_on_the_front_for_the_optane_and_the_p3700() {
    for (device, percentile) in [("optane", 90.0), ("p3700", 99.0)] {
        for objective in Objective::ALL {
            let t = tuning(device, percentile, objective, Budget::default());
            // More than TOS 5.2's one delta, each with all 14 thrs.
            assert!(t.candidates.len() >= 28, "{device}: {}", t.candidates.len());
            let r = t.recommended.as_ref().expect("no budget: a recommendation");
            let axes = objective.front();
            let mine = at(candidate(&t, &r.policy), axes);
            let better: Vec<String> = t
                .candidates
                .iter()
                .filter(|q| beats(at(q, axes), mine))
                .map(tune::recommend::policy_of)
                .collect();
            assert!(
                better.is_empty(),
                "{device}, {}: {} is beaten on both by {better:?}",
                objective.name(),
                r.policy
            );
            eprintln!(
                "{device} {:<10} recommended {} ({:.0} irq/s, p99 {} ns); TOS 5.2's pick {}",
                objective.name(),
                r.policy,
                r.interrupts_per_sec,
                r.p99_ns,
                t.tos_pick().policy
            );
        }
    }
}

#[test]
fn tos_picks_standing_agrees_with_the_candidates_figures() {
    for (device, percentile) in [("optane", 90.0), ("p3700", 99.0)] {
        let t = tuning(device, percentile, Objective::Balanced, Budget::default());
        let pick = t.tos_pick().policy.clone();
        assert!(pick.starts_with(&format!(
            "adaptive delta={} thr={}",
            policy::format_nanos(t.delta),
            t.thr
        )));
        for axes in [Axes::Interrupts, Axes::Cpu] {
            let p = at(candidate(&t, &pick), axes);
            let beaten_by: Vec<&Point> = t
                .candidates
                .iter()
                .filter(|q| beats(at(q, axes), p))
                .collect();
            match t.tos_standing(axes) {
                Standing::OnFront => assert!(beaten_by.is_empty(), "{device}: {pick}"),
                Standing::Dominated { by, less, .. } => {
                    let q = at(candidate(&t, &by.policy), axes);
                    assert!(beats(q, p), "{device}: {} does not beat {pick}", by.policy);
                    assert!((less.0 - (1.0 - q.0 / p.0)).abs() < 1e-9);
                    assert!((less.1 - (1.0 - q.1 / p.1)).abs() < 1e-9);
                }
            }
        }
    }
}

#[test]
fn budgets_bound_the_recommendation_or_leave_none() {
    let open = tuning("optane", 90.0, Objective::Interrupts, Budget::default());
    let p99s: Vec<u64> = open.candidates.iter().map(|p| p.p99_ns).collect();
    let (lo, hi) = (*p99s.iter().min().unwrap(), *p99s.iter().max().unwrap());
    // A budget between the lowest and highest p99 swept: the fewest
    // interrupts among the candidates within it, on the front.
    let mid = (lo + hi) / 2;
    let budget = Budget {
        p99_ns: Some(mid),
        interrupts_per_sec: None,
    };
    let t = tuning("optane", 90.0, Objective::Interrupts, budget);
    let r = t.recommended.as_ref().unwrap();
    assert!(r.p99_ns <= mid as f64);
    let fewest = t
        .candidates
        .iter()
        .filter(|p| p.p99_ns <= mid)
        .map(|p| p.irq_per_sec)
        .fold(f64::INFINITY, f64::min);
    assert_eq!(r.interrupts_per_sec, fewest);
    // Below every candidate's p99: nothing, and one line saying why.
    let none = Budget {
        p99_ns: Some(lo - 1),
        interrupts_per_sec: None,
    };
    let t = tuning("optane", 90.0, Objective::Balanced, none);
    assert!(t.recommended.is_none());
    let line = t.none_meets().unwrap();
    assert!(line.starts_with("no setting on the front"), "{line}");
    assert!(!line.contains('\n'), "{line}");
    // And an interrupt budget nobody meets.
    let irq = Budget {
        p99_ns: None,
        interrupts_per_sec: Some(1.0),
    };
    let t = tuning("p3700", 99.0, Objective::P99, irq);
    assert!(t.recommended.is_none());
    assert!(t.none_meets().unwrap().contains("interrupts/s <= 1"));
}
