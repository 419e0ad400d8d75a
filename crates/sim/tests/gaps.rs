//! Completion gaps (time between consecutive posts to the same CQ) on
//! devices whose timing makes them hand-computable: a constant service
//! time, one unit or an IOPS ceiling that keeps the device the bottleneck.

use policy::{PolicySpec, MS};
use report::RunReport;
use sim::{DeviceProfile, HostProfile, SimConfig};

/// A device with a constant service time `service`, `parallelism` units
/// and an IOPS ceiling.
fn device(service: &str, parallelism: u32, max_read_iops: u64) -> DeviceProfile {
    DeviceProfile::constant_service(service, parallelism, max_read_iops).unwrap()
}

/// One libaio reader at `iodepth`, 4 KiB random reads, on core 1.
fn job(iodepth: u32, extra: &str) -> Vec<jobs::Job> {
    let text = format!(
        "[r]\nioengine=libaio\nrw=randread\nbs=4k\nsize=256m\ncpus_allowed=1\n\
         iodepth={iodepth}\ntime_based\nruntime=1\n{extra}"
    );
    jobs::parse_str(&text, "t.fio", &|_| None).unwrap().jobs
}

fn simulate(jobs: &[jobs::Job], device: DeviceProfile, runtime: u64) -> RunReport {
    let cfg = SimConfig {
        device,
        host: HostProfile::load("xeon-e5-2660v4").unwrap(),
        policy: PolicySpec::named("default"),
        seed: 1,
        runtime: Some(runtime),
    };
    sim::simulate(jobs, &cfg, &mut |_, _| {}).unwrap()
}

/// One unit that never idles (iodepth 8 keeps commands waiting, and
/// refilling takes the host far less than 8 service times): a completion
/// every service time, exactly.
#[test]
fn a_busy_single_unit_posts_one_completion_per_service_time() {
    let r = simulate(&job(8, ""), device("10us", 1, 10_000_000), 20 * MS);
    let g = r.completion_gaps.expect("gaps recorded");
    assert_eq!(g.value_at(0.0), 10_000, "{g:?}");
    assert_eq!(g.value_at(1.0), 10_000, "{g:?}");
    // 20 ms at one per 10 us: 2,000 posts, so about as many gaps.
    assert!((1_995..=2_001).contains(&g.count), "{}", g.count);
}

/// Under the IOPS ceiling (250K/s: a start every 4 us) with more units than
/// needed, completions leave at the ceiling's pace whatever the service
/// time.
#[test]
fn the_iops_ceiling_spaces_completions_evenly() {
    let r = simulate(&job(64, ""), device("10us", 8, 250_000), 20 * MS);
    let g = r.completion_gaps.unwrap();
    assert_eq!((g.min(), g.max()), (4_000, 4_000), "{g:?}");
}

/// Only posts inside the measured window count: with a 10 ms ramp and a
/// 10 ms window, half the run's completions.
#[test]
fn gaps_are_counted_in_the_measured_window_only() {
    let r = simulate(
        &job(8, "ramp_time=10ms\n"),
        device("10us", 1, 10_000_000),
        10 * MS,
    );
    let g = r.completion_gaps.unwrap();
    assert!((995..=1_001).contains(&g.count), "{}", g.count);
    assert_eq!(g.value_at(0.5), 10_000);
}

/// Blocking reads at QD1 under `default`: the gap is a whole round trip
/// (device, interrupt, wake-up, the next submission), so it is longer than
/// the service time, and every round trip costs the same.
#[test]
fn a_blocking_reader_waits_a_round_trip_between_completions() {
    let text = "[r]\nioengine=psync\nrw=randread\nbs=4k\nsize=256m\ncpus_allowed=1\n\
                time_based\nruntime=1\n";
    let jobs = jobs::parse_str(text, "t.fio", &|_| None).unwrap().jobs;
    let r = simulate(&jobs, device("10us", 1, 10_000_000), 20 * MS);
    let g = r.completion_gaps.unwrap();
    assert_eq!(g.min(), g.max(), "a deterministic loop: {g:?}");
    assert!(g.min() > 10_000, "{g:?}");
    // One I/O per gap: the window holds as many I/Os and gaps as gaps fit
    // in it, give or take the first (no gap before it) and the edges.
    let fit = r.duration_ns / g.min();
    let ops = r.jobs[0].read.io_ops;
    assert!(ops.abs_diff(fit) <= 2, "{ops} I/Os, {fit} gaps fit");
    assert!(g.count.abs_diff(fit) <= 2, "{} gaps, {fit} fit", g.count);
}
