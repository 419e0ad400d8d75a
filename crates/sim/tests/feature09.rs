//! `feature09` in the simulator (issue 40): NVMe Feature 09h's per-vector
//! Coalescing Disable beside 08h aggregation, "Urgent by queue". A
//! blocking reader on core 0 (queue 0, vector 1) and a libaio batcher at
//! iodepth 32 on core 1 (vector 2): the plan gives the reader an interrupt
//! per completion and the batcher 08h's coalescing, so the pair does
//! better than either one setting for every vector (`default`: no
//! coalescing; `nvme`: 08h everywhere). Virtual time, deterministic.

mod common;

use common::{check_exactly_once, config, iops, lat_us};
use policy::feature09::CdVectors;
use policy::{PolicySpec, MS};
use report::RunReport;

const PAIR: &str = "[global]\nrw=randread\nbs=4k\nsize=256m\ndirect=1\ntime_based\nruntime=1\n\
    [reader]\nioengine=psync\ncpus_allowed=0\n\
    [batcher]\nioengine=libaio\niodepth=32\niodepth_batch_submit=32\n\
    iodepth_batch_complete_min=32\ncpus_allowed=1\n";

fn run(spec: PolicySpec) -> RunReport {
    let jobs = jobs::parse_str(PAIR, "pair.fio", &|_| None).unwrap().jobs;
    let cfg = config("optane", spec, 50 * MS, 1);
    let (r, audit) = sim::simulate_audited(&jobs, &cfg, &mut |_, _| {}).unwrap();
    check_exactly_once(&audit);
    r
}

fn feature09(cd: &str) -> PolicySpec {
    PolicySpec {
        cd: Some(CdVectors::parse(cd).unwrap()),
        ..PolicySpec::named("feature09")
    }
}

#[test]
fn the_plan_beats_one_setting_for_every_vector_on_the_pair() {
    let default = run(PolicySpec::named("default"));
    let nvme = run(PolicySpec::named("nvme"));
    let plan = run(feature09("sync"));
    // The reader keeps an interrupt per completion: its latency is
    // default's, not 08h's 100 us timer.
    let (r_plan, r_default, r_nvme) = (
        lat_us(&plan, "reader"),
        lat_us(&default, "reader"),
        lat_us(&nvme, "reader"),
    );
    assert!(r_plan < 1.1 * r_default, "{r_plan} vs default {r_default}");
    assert!(2.0 * r_plan < r_nvme, "{r_plan} vs nvme {r_nvme}");
    // The batcher is coalesced: fewer interrupts than default's, more
    // batcher I/Os than without coalescing.
    assert!(
        2 * plan.interrupts < default.interrupts,
        "{} vs {}",
        plan.interrupts,
        default.interrupts
    );
    assert!(iops(&plan, "batcher") > 1.05 * iops(&default, "batcher"));
    // The pair does more than under either setting alone.
    for other in [&default, &nvme] {
        assert!(
            plan.total_iops() > 1.05 * other.total_iops(),
            "{} vs {} {}",
            plan.total_iops(),
            other.policy.name,
            other.total_iops()
        );
    }
}

#[test]
fn sync_is_the_blocking_readers_vector_and_the_vector_matters() {
    // --cd sync resolves to vector 1 (queue 0, the reader's core).
    let sync = run(feature09("sync"));
    let listed = run(feature09("1"));
    assert_eq!(sync.interrupts, listed.interrupts);
    assert_eq!(sync.total_iops(), listed.total_iops());
    // The batcher's vector disabled instead: the reader waits 08h's time.
    let wrong = run(feature09("2"));
    assert!(lat_us(&wrong, "reader") > 2.0 * lat_us(&sync, "reader"));
    // None disabled: every vector aggregated, as nvme.
    let none = run(feature09("none"));
    let nvme = run(PolicySpec::named("nvme"));
    assert_eq!(none.interrupts, nvme.interrupts);
}
