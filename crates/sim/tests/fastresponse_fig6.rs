//! Issue 15, item 1: the `optane-900p` profile shows FastResponse's Fig 6
//! (FR 2.2): random-read throughput flat past QD 8 while latency grows
//! with the queue depth, and the device near its full bandwidth at 32 KB.
//! Run through the simulator on small fio jobs; virtual time, so the
//! figures are the same on every run.

use policy::{PolicySpec, MS};
use report::RunReport;
use sim::{DeviceProfile, HostProfile, SimConfig};

/// One thread of libaio random reads of `bs` at `iodepth`, for 50 ms.
fn randread(bs: &str, iodepth: u32) -> RunReport {
    let text = format!(
        "[global]\nfilename=/dev/nvme0n1\nsize=256m\ndirect=1\nbs={bs}\n\
         rw=randread\ncpus_allowed=1\nruntime=1\ntime_based\n\
         [fig6]\nioengine=libaio\niodepth={iodepth}\n"
    );
    let jobs = jobs::parse_str(&text, "fig6.fio", &|_| None).unwrap().jobs;
    let cfg = SimConfig {
        device: DeviceProfile::load("optane-900p").unwrap(),
        host: HostProfile::load("xeon-e5-2660v4").unwrap(),
        policy: PolicySpec::named("default"),
        seed: 1,
        runtime: Some(50 * MS),
    };
    let (r, audit) = sim::simulate_audited(&jobs, &cfg, &mut |_, _| {}).unwrap();
    assert_eq!(audit.duplicates, 0);
    r
}

/// (IOPS, bytes a second, mean completion latency in us) of the reads.
fn figures(r: &RunReport) -> (f64, f64, f64) {
    let d = &r.jobs[0].read;
    (r.iops(d), r.bw_bytes(d) as f64, d.clat.mean / 1e3)
}

#[test]
fn throughput_is_flat_past_qd8_and_latency_grows_with_the_depth() {
    let (iops8, _, lat8) = figures(&randread("4k", 8));
    let (iops32, _, lat32) = figures(&randread("4k", 32));
    let (iops1, _, lat1) = figures(&randread("4k", 1));
    eprintln!("4k: QD1 {iops1:.0} IOPS {lat1:.2} us, QD8 {iops8:.0} IOPS {lat8:.2} us, QD32 {iops32:.0} IOPS {lat32:.2} us");
    // Flat: QD 32 within 10% of QD 8.
    assert!((iops32 / iops8 - 1.0).abs() < 0.10, "{iops8} vs {iops32}");
    // And the depth below it still adds: QD 8 well above QD 1.
    assert!(iops8 > 2.0 * iops1, "{iops1} vs {iops8}");
    // Latency grows with the depth once flat (Little's law: four times the
    // requests at the same rate wait about four times as long).
    assert!(lat32 > 3.0 * lat8, "{lat8} vs {lat32}");
    // QD1 is FR's ~10 us.
    assert!((lat1 - 10.0).abs() < 0.5, "{lat1}");
}

#[test]
fn reads_of_32k_reach_the_bandwidth_ceiling_and_larger_ones_take_longer() {
    let max = DeviceProfile::load("optane-900p")
        .unwrap()
        .max_read_bw
        .unwrap() as f64;
    let (_, bw8, lat8) = figures(&randread("32k", 8));
    let (_, bw32, lat32) = figures(&randread("32k", 32));
    let (_, bw4k, _) = figures(&randread("4k", 32));
    let (_, _, lat128) = figures(&randread("128k", 1));
    let (_, _, lat32k1) = figures(&randread("32k", 1));
    let (_, _, lat4k1) = figures(&randread("4k", 1));
    eprintln!(
        "32k: QD8 {:.3} GB/s {lat8:.1} us, QD32 {:.3} GB/s {lat32:.1} us (ceiling {:.1} GB/s); \
         4k QD32 {:.3} GB/s; QD1 4k {lat4k1:.1} us, 32k {lat32k1:.1} us, 128k {lat128:.1} us",
        bw8 / 1e9,
        bw32 / 1e9,
        max / 1e9,
        bw4k / 1e9
    );
    for bw in [bw8, bw32] {
        assert!(bw > 0.85 * max && bw <= 1.001 * max, "{bw} of {max}");
    }
    // 4 KiB commands are far from it (IOPS-bound), so 32 KiB is where the
    // device "approaches its maximum bandwidth".
    assert!(bw4k < 0.6 * max, "{bw4k}");
    // Past the ceiling, latency is the queue over the bandwidth.
    assert!(lat32 > 3.0 * lat8, "{lat8} vs {lat32}");
    // "The request latency increases rapidly with the growth of request
    // size": at QD1 a command pays its transfer time.
    assert!(
        lat4k1 < lat32k1 && 2.0 * lat32k1 < lat128,
        "{lat4k1} {lat32k1} {lat128}"
    );
}
