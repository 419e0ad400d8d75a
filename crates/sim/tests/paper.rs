//! The paper's qualitative results, reproduced by the simulator with the
//! shipped profiles (Optane P4800X on the 2.0 GHz Xeon). Each test states
//! the paper's figure, what the paper measured, and the tolerance we hold
//! the simulator to. 100 ms of virtual time per run.

mod common;

use common::*;
use policy::{PolicySpec, MS};

const RUNTIME: u64 = 100 * MS;

fn run(ex: &str, policy: &str) -> report::RunReport {
    let (r, _) = run_audited(ex, "optane", policy, RUNTIME);
    r
}

/// TOS Fig 8a / Fig 20a: blocking 4 KiB reads. Default is about the
/// device's 10 us; every coalescing strategy adds its timeout (adaptive
/// delta = 6 us, nvme100 100 us), and cint matches default thanks to Urgent.
/// Tolerance: default within 10 us +- 1 us; the others within 1 us of
/// default + their timeout.
#[test]
fn sync_reads_pay_exactly_the_coalescing_timeout() {
    let default = lat_us(&run("sync-read", "default"), "sync-read");
    let cint = lat_us(&run("sync-read", "cint"), "sync-read");
    let adaptive = lat_us(&run("sync-read", "adaptive"), "sync-read");
    let nvme100 = lat_us(&run("sync-read", "nvme100"), "sync-read");
    assert!((9.0..11.0).contains(&default), "default {default}");
    assert!(
        (cint - default).abs() < 0.5,
        "cint {cint} default {default}"
    );
    assert!(
        (adaptive - default - 6.0).abs() < 1.0,
        "adaptive {adaptive}"
    );
    assert!((nvme100 - default - 100.0).abs() < 1.0, "nvme100 {nvme100}");
}

/// The same on the P3700 profile (TOS Fig 20a): ~80 us, adaptive + 15 us.
#[test]
fn sync_reads_on_the_p3700_pay_its_15us_delta() {
    let lat = |p| {
        let (r, _) = run_audited("sync-read", "p3700", p, RUNTIME);
        lat_us(&r, "sync-read")
    };
    let default = lat("default");
    let adaptive = lat("adaptive");
    assert!((75.0..85.0).contains(&default), "default {default}");
    assert!(
        (adaptive - default - 15.0).abs() < 2.0,
        "adaptive {adaptive}"
    );
}

/// TOS Fig 10: the mixed workload (a blocking reader beside libaio at
/// iodepth 16 on one core). The paper: default fires 2.74x cint's
/// interrupts, cint's sync latency is within 6% of default's, adaptive's
/// sync latency is 4.39x cint's. Held here: default >= 2x cint's
/// interrupts; cint's sync latency within 10% of default's; adaptive's
/// sync latency at least 1.5x cint's (the simulator gives ~1.8x; see the
/// README for why it is not 4.39x).
#[test]
fn urgent_keeps_sync_latency_in_the_mixed_workload() {
    let default = run("mixed-16", "default");
    let cint = run("mixed-16", "cint");
    let adaptive = run("mixed-16", "adaptive");
    assert!(
        default.interrupts as f64 >= 2.0 * cint.interrupts as f64,
        "default {} cint {}",
        default.interrupts,
        cint.interrupts
    );
    let (d, c, a) = (
        lat_us(&default, "sync"),
        lat_us(&cint, "sync"),
        lat_us(&adaptive, "sync"),
    );
    assert!((c / d - 1.0).abs() <= 0.10, "cint {c} default {d}");
    assert!(a >= 1.5 * c, "adaptive {a} cint {c}");
    // And adaptive fires the fewest interrupts (Fig 10d: 0.25x cint).
    assert!(adaptive.interrupts < cint.interrupts);
}

/// TOS Fig 11/15 (iodepth 256): with a deep async queue, adaptive and
/// nvme100 bury the sync reads behind thr; Urgent delivers them. Held:
/// cint's sync latency at least 1.3x lower than adaptive's (1.49x measured
/// since a submit call yields at each request, Linux 5.0's voluntary
/// preemption points, `sim::thread`: the woken reader no longer waits out
/// the async thread's call of 16; 2.0x before, and 3x when every device
/// start was spaced by 1/IOPS, issue 13; `reproduce` gives the paper's
/// numbers).
#[test]
fn urgent_matters_most_beside_a_deep_async_queue() {
    let cint = lat_us(&run("mixed-256", "cint"), "sync");
    let adaptive = lat_us(&run("mixed-256", "adaptive"), "sync");
    assert!(adaptive >= 1.3 * cint, "adaptive {adaptive} cint {cint}");
}

/// TOS Fig 20b-d: async-only (libaio, iodepth 256, batches of 16). The paper:
/// default fires 12-15x cint's interrupts and cint has up to 35% more IOPS.
/// Held: at least 5x the interrupts, and cint's IOPS above default's. This
/// is our example under Table 1 (Barrier on each batch's last request): the
/// Optane's 28 dies run a batch of 16 at once and finish it in random
/// order, so the Barrier is often not last and the stragglers wait delta
/// (7.1x measured, ~2.2 interrupts per batch; 10x held with 4 units). The
/// paper's own configuration (basis marks, thr 32) is `reproduce`'s fig20.
#[test]
fn barrier_coalesces_async_batches() {
    let default = run("async-256", "default");
    let cint = run("async-256", "cint");
    assert!(
        default.interrupts >= 5 * cint.interrupts,
        "default {} cint {}",
        default.interrupts,
        cint.interrupts
    );
    assert!(
        cint.total_iops() > default.total_iops(),
        "cint {} default {}",
        cint.total_iops(),
        default.total_iops()
    );
}

/// TOS Fig 12, one thread submitting batches of 4 with barrier=1: cint's
/// latency is below adaptive's by about delta (the paper: 22 us against
/// 29 us); default is lowest but fires 4.4x cint's interrupts. Held: cint
/// below adaptive, default at least 2.5x the interrupts. The gap is 2 us,
/// not delta: the four commands of a batch start together on four free
/// units (issue 13's token bucket) and finish in random order (Table 2's
/// 1.3 us spread), so the Barrier is often not the last, and the entries
/// after it wait cint's delta too (1.74 interrupts per batch, measured in
/// `reproduce --only fig12`), the stragglers the authors' fig7/test.sh
/// comment describes.
#[test]
fn barrier_saves_adaptive_its_delta_on_batches() {
    let cint = run("barrier-1", "cint");
    let adaptive = run("barrier-1", "adaptive");
    let default = run("barrier-1", "default");
    let gap = lat_us(&adaptive, "barrier") - lat_us(&cint, "barrier");
    assert!(gap > 0.5, "gap {gap}");
    assert!(lat_us(&default, "barrier") < lat_us(&cint, "barrier"));
    assert!(default.interrupts as f64 >= 2.5 * cint.interrupts as f64);
}

/// TOS Fig 17: 4 pread processes on one core, every request Urgent; with
/// `max-irq-rate 100k` the rate stays under 100K/s and CPU use falls. Held:
/// unprotected above 100K/s, protected at most 100K/s (+2% for the EWMA's
/// lag), and less interrupt time.
#[test]
fn storm_protection_caps_the_interrupt_rate() {
    let free = run("storm", "cint");
    let mut spec = PolicySpec::named("cint");
    spec.max_irq_rate = Some(100_000);
    let (capped, audit) = run_spec("storm", "optane", spec, RUNTIME);
    assert_eq!(audit.stranded, 0);
    assert!(
        free.interrupts_per_sec() > 100_000.0,
        "{}",
        free.interrupts_per_sec()
    );
    assert!(
        capped.interrupts_per_sec() <= 102_000.0,
        "{}",
        capped.interrupts_per_sec()
    );
    assert!(capped.cores[0].irq < free.cores[0].irq);
}
