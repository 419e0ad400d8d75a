//! The engine's invariants on every shipped example and on random workloads:
//! exactly-once completion, full CPU accounting, determinism, and bounded
//! memory of the results.

mod common;

use common::*;
use policy::{PolicySpec, MS};
use proptest::prelude::*;

const EXAMPLES: [&str; 8] = [
    "sync-read",
    "async-256",
    "mixed-16",
    "mixed-256",
    "barrier-1",
    "barrier-2",
    "barrier-4",
    "storm",
];

/// Runs a job file's text with its own runtime and checks the audit.
fn run_text(text: &str, policy: &str, seed: u64) -> report::RunReport {
    let jobs = jobs::parse_str(text, "t.fio", &|_| None).unwrap().jobs;
    let mut cfg = config("optane", PolicySpec::named(policy), 0, seed);
    cfg.runtime = None;
    let (r, audit) = sim::simulate_audited(&jobs, &cfg, &mut |_, _| {}).unwrap();
    check(&audit, text);
    r
}

fn check(audit: &sim::Audit, what: &str) {
    assert!(audit.submitted > 0, "{what}: nothing ran");
    assert_eq!(audit.duplicates, 0, "{what}: {audit:?}");
    assert_eq!(audit.stranded, 0, "{what}: {audit:?}");
    assert_eq!(audit.unfinished_threads, 0, "{what}: {audit:?}");
    assert_eq!(audit.submitted, audit.serviced, "{what}: {audit:?}");
    assert_eq!(audit.submitted, audit.delivered, "{what}: {audit:?}");
    assert_eq!(audit.submitted, audit.consumed, "{what}: {audit:?}");
    assert!(!audit.core_accounted_ns.is_empty());
    for &(core, ns) in &audit.core_accounted_ns {
        assert_eq!(
            ns, audit.window_ns,
            "{what}: core {core} accounts {ns} ns of a {} ns window",
            audit.window_ns
        );
    }
}

#[test]
fn every_example_under_every_policy_completes_each_request_once_and_accounts_all_cpu_time() {
    for ex in EXAMPLES {
        for p in [
            "default", "cint", "adaptive", "nvme100", "nvme6", "dynamic", "dim",
        ] {
            let (r, audit) = run_audited(ex, "optane", p, 20 * MS);
            check(&audit, &format!("{ex} {p}"));
            let ops: u64 = r.jobs.iter().map(|j| j.read.io_ops + j.write.io_ops).sum();
            assert!(ops > 0, "{ex} {p}: no I/O measured");
            for c in &r.cores {
                let sum = c.user + c.kernel + c.irq + c.idle;
                assert!(
                    (sum - 1.0).abs() < 1e-9,
                    "{ex} {p}: core {} sums to {sum}",
                    c.core
                );
            }
        }
    }
}

#[test]
fn the_p3700_profile_runs_the_examples_too() {
    for ex in ["sync-read", "mixed-16", "barrier-2"] {
        let (_, audit) = run_audited(ex, "p3700", "cint", 20 * MS);
        check(&audit, ex);
    }
}

#[test]
fn the_same_seed_gives_the_same_report_and_another_seed_another() {
    let jobs = example("mixed-16");
    let run = |seed| {
        let cfg = config("optane", PolicySpec::named("cint"), 20 * MS, seed);
        let r = sim::simulate(&jobs, &cfg, &mut |_, _| {}).unwrap();
        report::json::render(&r).to_string()
    };
    let a = run(7);
    assert_eq!(a, run(7));
    assert_ne!(a, run(8));
}

#[test]
fn a_ramp_time_is_left_out_of_the_measured_window() {
    let text =
        "[j]\nioengine=psync\nrw=randread\nbs=4k\nruntime=20ms\nramp_time=10ms\ntime_based\n";
    let r = run_text(text, "default", 1);
    assert_eq!(r.duration_ns, 20 * MS);
    // ~11 us per read (10 us of I/O, 1 us of fio's own work): about 1,800
    // in 20 ms, not the 2,700 of the whole 30 ms.
    let ops = r.jobs[0].read.io_ops;
    assert!((1_700..1_900).contains(&ops), "{ops}");
}

#[test]
fn an_amount_bounded_job_does_exactly_its_ios() {
    let text =
        "[j]\nioengine=libaio\niodepth=8\niodepth_batch_submit=4\nrw=randrw\nbs=4k\nsize=4m\n";
    let r = run_text(text, "cint", 3);
    let j = &r.jobs[0];
    assert_eq!(j.read.io_ops + j.write.io_ops, 1024);
    assert_eq!(j.read.io_bytes + j.write.io_bytes, 4 << 20);
    assert!(j.read.io_ops > 400 && j.write.io_ops > 400, "rwmixread 50");
}

#[test]
fn rate_iops_holds_a_job_to_its_rate() {
    let text = "[j]\nioengine=libaio\niodepth=32\nrw=randread\nbs=4k\nrate_iops=20000\nruntime=50ms\ntime_based\n";
    let r = run_text(text, "cint", 1);
    let iops = r.iops(&r.jobs[0].read);
    assert!((19_000.0..=20_100.0).contains(&iops), "{iops}");
}

#[test]
fn thinktime_slows_a_blocking_reader() {
    let text = "[j]\nioengine=psync\nrw=randread\nbs=4k\nthinktime=40\nruntime=50ms\ntime_based\n";
    let r = run_text(text, "default", 1);
    // Each read: ~10 us of I/O, ~1 us of user work, 40 us asleep, plus the
    // timer interrupt's wake-up: about 19K IOPS, far below 90K.
    let iops = r.iops(&r.jobs[0].read);
    assert!((17_000.0..21_000.0).contains(&iops), "{iops}");
}

#[test]
fn jobs_the_simulator_cannot_model_are_refused_naming_job_and_line() {
    let cases = [
        (
            "[w]\nrw=randwrite\ndirect=1\nfsync=1\nruntime=1s\ntime_based\n",
            "job 'w' (line 1): fsync/fdatasync with direct=1",
        ),
        (
            "[e]\nrw=write\nend_fsync=1\nruntime=1s\ntime_based\n",
            "job 'e' (line 1): end_fsync",
        ),
        (
            "[v]\nrw=write\nverify=crc32c\nsize=1m\n",
            "job 'v' (line 1): verify",
        ),
        (
            "[c]\nrw=read\ncpus_allowed=99\nruntime=1s\n",
            "CPU 99 does not exist",
        ),
        ("[forever]\nrw=randread\n", "needs runtime="),
        (
            "[deep]\nioengine=libaio\niodepth=9000\nruntime=1s\n",
            "exceeds the device's queue depth",
        ),
    ];
    for (text, want) in cases {
        let jobs = jobs::parse_str(text, "bad.fio", &|_| None).unwrap().jobs;
        let mut cfg = config("optane", PolicySpec::named("cint"), 0, 1);
        cfg.runtime = None;
        let err = sim::simulate(&jobs, &cfg, &mut |_, _| {})
            .unwrap_err()
            .to_string();
        assert!(err.contains(want), "{err:?} should contain {want:?}");
        assert!(!err.contains('\n'));
    }
}

#[test]
fn progress_is_reported_in_virtual_time_up_to_the_planned_end() {
    let jobs = example("async-256");
    // Long enough for several reports (one every 65,536 events).
    let cfg = config("optane", PolicySpec::named("cint"), 500 * MS, 1);
    let mut seen = Vec::new();
    sim::simulate(&jobs, &cfg, &mut |now, end| seen.push((now, end))).unwrap();
    assert!(seen.len() >= 3, "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0));
    assert!(seen.iter().all(|&(_, end)| end == 500 * MS));
    // The last call comes when the run is over (after the drain).
    assert!(seen.last().unwrap().0 >= 500 * MS);
}

fn arb_job() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["psync", "pvsync2", "libaio", "io_uring"]),
        1u32..64,
        0u32..17,
        0u32..17,
        prop::sample::select(vec!["randread", "randwrite", "randrw"]),
        prop::sample::select(vec!["4k", "16k", "128k"]),
        1u32..4,
        prop::bool::ANY,
        0u32..3,
    )
        .prop_map(|(engine, depth, submit, complete, rw, bs, numjobs, barrier, cpu)| {
            format!(
                "[j]\nioengine={engine}\niodepth={depth}\niodepth_batch_submit={}\niodepth_batch_complete_min={}\nrw={rw}\nbs={bs}\nnumjobs={numjobs}\ncpus_allowed={cpu}\n{}",
                submit.min(depth),
                complete.min(depth),
                if barrier && engine == "libaio" { "barrier=1\n" } else { "" }
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Random mixes of engines, depths, batches, directions, sizes and
    /// threads under every strategy: nothing lost, nothing duplicated, no
    /// thread stuck, every core's time accounted.
    #[test]
    fn random_workloads_keep_the_invariants(
        a in arb_job(),
        b in arb_job(),
        policy in prop::sample::select(vec!["default", "cint", "adaptive", "nvme100", "nvme20", "dynamic", "dim"]),
        strict in prop::bool::ANY,
        storm in prop::bool::ANY,
        polled in prop::bool::ANY,
        seed in 0u64..1000,
    ) {
        let text = format!("{a}{}", b.replacen("[j]", "[k]", 1));
        let jobs = jobs::parse_str(&text, "p.fio", &|_| None).unwrap().jobs;
        let mut spec = PolicySpec::named(policy);
        if policy == "cint" {
            if strict { spec.barrier = Some(policy::cint::BarrierMode::Strict); }
            if storm { spec.max_irq_rate = Some(50_000); }
        }
        let mut cfg = config("optane", spec, 3 * MS, seed);
        if polled {
            // exec's polled delivery: interrupts wait for a poll point.
            cfg.host.irq_taken = sim::IrqTaken::Poll;
        }
        let (_, audit) = sim::simulate_audited(&jobs, &cfg, &mut |_, _| {}).unwrap();
        check(&audit, &text);
    }
}

#[test]
fn memory_of_the_results_does_not_grow_with_the_run() {
    // The request table is recycled: its size is bounded by what is in
    // flight, not by how many requests ran.
    let short = run_audited("async-256", "optane", "cint", 10 * MS).1;
    let long = run_audited("async-256", "optane", "cint", 100 * MS).1;
    assert!(long.submitted > 5 * short.submitted);
    assert!(long.request_slots <= 256 + 16, "{}", long.request_slots);
    assert_eq!(long.request_slots, short.request_slots);
}
