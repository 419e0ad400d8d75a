mod common;
use common::*;

#[test]
#[ignore]
fn scratch() {
    for ex in [
        "sync-read",
        "async-256",
        "mixed-16",
        "mixed-256",
        "barrier-1",
        "barrier-2",
        "barrier-4",
        "storm",
    ] {
        println!("== {ex}");
        for p in ["default", "cint", "adaptive", "nvme100"] {
            let (r, a) = run_audited(ex, "optane", p, 100 * policy::MS);
            println!("{}  audit={:?}", summary(&r), a);
        }
    }
}

#[test]
#[ignore]
fn one() {
    let ex = std::env::var("EX").unwrap();
    let p = std::env::var("POL").unwrap();
    let (r, a) = run_audited(&ex, "optane", &p, 100 * policy::MS);
    println!("{}  audit={:?}", summary(&r), a);
}

#[test]
#[ignore]
fn file() {
    let path = std::env::var("JOB").unwrap();
    let jobs = jobs::parse_file(std::path::Path::new(&path)).unwrap().jobs;
    for p in std::env::var("POLS").unwrap().split(',') {
        let cfg = config("optane", policy::PolicySpec::named(p), 200 * policy::MS, 1);
        let (r, a) = sim::simulate_audited(&jobs, &cfg, &mut |_, _| {}).unwrap();
        assert_eq!(a.stranded, 0);
        println!("{}", summary(&r));
    }
}

#[test]
#[ignore]
fn storm() {
    for rate in [50_000u64, 100_000, 145_000] {
        let mut spec = policy::PolicySpec::named("cint");
        spec.max_irq_rate = Some(rate);
        let (r, _) = run_spec("storm", "optane", spec, 100 * policy::MS);
        println!(
            "limit {rate}: {} urgent-only={}",
            summary(&r),
            r.urgent_only_interrupts
        );
    }
}

#[test]
#[ignore]
fn events() {
    let (r, a) = run_audited("mixed-16", "optane", "cint", 500 * policy::MS);
    println!(
        "events {} completions {} per completion {:.2}",
        a.events,
        r.completions,
        a.events as f64 / r.completions as f64
    );
}
