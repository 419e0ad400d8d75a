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
/// time, once the first burst (one start per free unit) has gone.
#[test]
fn the_iops_ceiling_spaces_completions_evenly() {
    let r = simulate(&job(64, ""), device("10us", 8, 250_000), 20 * MS);
    let g = r.completion_gaps.unwrap();
    assert_eq!(g.value_at(0.01), 4_000, "{g:?}");
    assert_eq!(g.value_at(0.999), 4_000, "{g:?}");
}

/// Issue 13: free units start at once, so a batch that finds the device
/// idle completes in a cluster (constant service: at the same instant), and
/// the ceiling only bounds the sustained rate. Spacing every start by
/// 1/IOPS, as before, put 4 us between the batch's completions.
#[test]
fn a_batch_on_an_idle_device_completes_in_a_cluster() {
    let batch = "iodepth_batch_submit=4\niodepth_batch_complete_min=4\n";
    let r = simulate(&job(4, batch), device("10us", 4, 250_000), 20 * MS);
    let g = r.completion_gaps.clone().unwrap();
    // Three of every four gaps are inside a batch.
    assert_eq!(g.value_at(0.7), 0, "{g:?}");
    assert!(g.max() >= 10_000, "between batches, a round trip: {g:?}");
    assert!(r.total_iops() <= 250_000.0 * 1.001, "{}", r.total_iops());
}

/// The authors' emulator sends one IPI per fire and never merges them
/// (`ipi`, the shipped host's default); a merging line (`apic`) takes the
/// fires of a clustered batch as fewer interrupts.
#[test]
fn ipi_delivery_takes_every_fire_and_apic_merges_them() {
    let batch = "iodepth_batch_submit=4\niodepth_batch_complete_min=4\n";
    let run = |delivery: sim::IrqDelivery| {
        let mut host = HostProfile::load("xeon-e5-2660v4").unwrap();
        host.irq_delivery = delivery;
        let cfg = SimConfig {
            device: device("10us", 4, 250_000),
            host,
            policy: PolicySpec::named("default"),
            seed: 1,
            runtime: Some(20 * MS),
        };
        sim::simulate(&job(4, batch), &cfg, &mut |_, _| {}).unwrap()
    };
    let ipi = run(sim::IrqDelivery::Ipi);
    let ios: u64 = ipi.jobs.iter().map(|j| j.read.io_ops).sum();
    // Within the window a fire's interrupt may land just outside it.
    assert!(
        ipi.interrupts.abs_diff(ios) <= 4,
        "{} vs {ios}",
        ipi.interrupts
    );
    let apic = run(sim::IrqDelivery::Apic);
    let ios: u64 = apic.jobs.iter().map(|j| j.read.io_ops).sum();
    // The first fire of a batch is taken at once, the other three merge
    // into one pending interrupt: two per batch of four.
    assert!(
        apic.interrupts * 4 <= ios * 3,
        "{} vs {ios}",
        apic.interrupts
    );
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
