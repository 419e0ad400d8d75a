//! The ext4 fsync path in the simulator (issue 15): fio's `fsync=N` runs
//! `host::fsync` with its I/Os on the simulated device and JBD2 as a kernel
//! thread (crates/sim/src/world/journal.rs). FR 2.1 (Fig. 3): "one fsync leads to
//! four device I/O operations and six context switches" under ext4
//! `data=ordered` when another file is dirty; FR 3.4: fjournaling leaves
//! out D2 and JBD2. Virtual time, deterministic.

mod common;

use common::{check_exactly_once, config};
use policy::{PolicySpec, MS};
use report::{FsyncBreakdown, JobReport, RunReport};
use sim::{Audit, Journal};

/// A fillsync-like job: a 4 KiB buffered write then an fsync, 1,000 a
/// second, evenly spaced, on core 0.
const LS: &str = "[ls]\nrw=write\nbs=4k\nsize=1g\nioengine=sync\nfsync=1\nrate_iops=1000\n\
                  critical=1\ncpus_allowed=0\ntime_based\n";
/// A buffered writer of another file, 20 writes per fsync of `ls`: every
/// commit finds other files' dirty data (D2).
const DIRT: &str = "[dirt]\nrw=write\nbs=4k\nsize=1g\nioengine=psync\nrate_iops=20000\n\
                    cpus_allowed=1\ntime_based\n";

fn run_with(text: &str, journal: Journal, seed: u64) -> (RunReport, Audit) {
    let jobs = jobs::parse_str(text, "t.fio", &|_| None).unwrap().jobs;
    let mut cfg = config("optane", PolicySpec::named("default"), 300 * MS, seed);
    cfg.host.journal = journal;
    let (r, a) = sim::simulate_audited(&jobs, &cfg, &mut |_, _| {}).unwrap();
    // Every request completes exactly once: the page cache's writes, the
    // fsync path's I/Os and the rest.
    check_exactly_once(&a);
    (r, a)
}

fn run(text: &str, journal: Journal) -> (RunReport, Audit) {
    run_with(text, journal, 1)
}

fn job<'a>(r: &'a RunReport, name: &str) -> &'a JobReport {
    r.jobs.iter().find(|j| j.name == name).unwrap()
}

fn fsyncs(r: &RunReport) -> &FsyncBreakdown {
    &job(r, "ls").sync.as_ref().expect("ls fsyncs").breakdown
}

fn sync_mean(r: &RunReport) -> f64 {
    job(r, "ls").sync.as_ref().unwrap().lat.mean
}

#[test]
fn ordered_with_another_file_dirty_is_four_ios_and_six_switches_per_fsync() {
    let (r, a) = run(&format!("{LS}{DIRT}"), Journal::Ordered);
    let b = fsyncs(&r);
    // About 300 fsyncs in 300 ms, each D1 -> D2 -> JD -> JC (FR Fig. 3).
    assert!((290..=310).contains(&b.fsyncs), "{b:?}");
    assert_eq!(b.ios_per_fsync, 4.0, "{b:?}");
    assert_eq!(b.switches_per_fsync, 6.0, "{b:?}");
    assert!(b.d1_us > 0.0 && b.d2_us > 0.0 && b.jd_us > 0.0 && b.jc_us > 0.0);
    assert!(b.sched_us > 0.0, "{b:?}");
    // The device saw them: every device request is the fsync path's (the
    // writes are all buffered), 4 per fsync (a D2 of 20 blocks is one
    // request), give or take the fsync under way at the window's edges.
    let device = a.submitted - a.buffered;
    let n = b.fsyncs;
    assert!((4 * n..=4 * n + 8).contains(&device), "{device} for {n}");
    // fio's sync count is the breakdown's.
    assert_eq!(job(&r, "ls").sync.as_ref().unwrap().lat.samples, n);
}

#[test]
fn ordered_with_nothing_else_dirty_has_no_d2() {
    let (r, a) = run(LS, Journal::Ordered);
    let b = fsyncs(&r);
    assert_eq!(b.d2_us, 0.0, "{b:?}");
    // FR: D2 "appears" only when other files are dirty: D1, JD, JC, and
    // one wake-up after each I/O plus the two between caller and JBD2.
    assert_eq!(b.ios_per_fsync, 3.0, "{b:?}");
    assert_eq!(b.switches_per_fsync, 5.0, "{b:?}");
    let device = a.submitted - a.buffered;
    assert!(
        (3 * b.fsyncs..=3 * b.fsyncs + 6).contains(&device),
        "{device}"
    );
    // The job's writes went to the page cache: each is its submit call.
    let w = &job(&r, "ls").write;
    assert!(w.clat.max < 5_000, "{:?}", w.clat);
}

#[test]
fn fjournaling_wakes_no_jbd2_writes_no_d2_and_returns_sooner() {
    let text = format!("{LS}{DIRT}");
    let (ordered, _) = run(&text, Journal::Ordered);
    let (fj, _) = run(&text, Journal::Fjournal);
    let b = fsyncs(&fj);
    // FR 3.4: D1, then the f-transaction (header + commit together, the
    // authors' code): 3 I/Os, a wake-up after D1 and after the
    // f-transaction, no JBD2.
    assert_eq!(b.d2_us, 0.0, "{b:?}");
    assert_eq!(b.ios_per_fsync, 3.0, "{b:?}");
    assert_eq!(b.switches_per_fsync, 2.0, "{b:?}");
    assert!(b.switches_per_fsync < fsyncs(&ordered).switches_per_fsync);
    let notes = fj.notes.join("\n");
    assert!(notes.contains("0 context switch(es) of JBD2"), "{notes}");
    assert!(notes.contains("commits committed 0"), "{notes}");
    assert!(
        sync_mean(&fj) < 0.7 * sync_mean(&ordered),
        "fjournal {} ordered {}",
        sync_mean(&fj),
        sync_mean(&ordered)
    );
    assert!(fj.context_switches < ordered.context_switches);
}

#[test]
fn fjournaling_is_for_critical_callers_only() {
    let text = format!("{}{DIRT}", LS.replace("critical=1\n", ""));
    let (r, _) = run(&text, Journal::Fjournal);
    // A non-critical caller takes the ordered path (FR 3.4).
    assert_eq!(fsyncs(&r).ios_per_fsync, 4.0, "{:?}", fsyncs(&r));
}

#[test]
fn a_buffered_to_writer_beside_raises_d2_and_the_fsync_latency() {
    // FastResponse's Bayes (to-bayes.fio: 128 KiB, buffered writes, HDFS
    // through the page cache) on another core.
    let bayes = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/fastresponse/to-bayes.fio"
    ))
    .unwrap();
    let (alone, _) = run(LS, Journal::Ordered);
    let (co, a) = run(
        // Every Bayes job (reads, spills, map) on core 1.
        &format!(
            "{LS}cpus_allowed=0\n{}cpus_allowed=1\n",
            bayes
                .replace("\n[to-bayes-spill]", "cpus_allowed=1\n[to-bayes-spill]")
                .replace("\n[to-bayes-map]", "cpus_allowed=1\n[to-bayes-map]")
        ),
        Journal::Ordered,
    );
    let (b0, b1) = (fsyncs(&alone), fsyncs(&co));
    assert_eq!(b0.d2_us, 0.0);
    assert!(b1.d2_us > 5.0, "{b1:?}");
    assert!(b1.ios_per_fsync > b0.ios_per_fsync, "{b1:?}");
    assert!(sync_mean(&co) > sync_mean(&alone));
    // Bayes' writes reached the device as D2: its reads and the fsync
    // path's requests are all that did, yet its writes are in the page
    // cache's count.
    assert!(a.buffered > job(&co, "ls").write.io_ops);
}

#[test]
fn fdatasync_every_second_write_halves_the_syncs() {
    let text = LS.replace("fsync=1", "fdatasync=2");
    let (r, _) = run(&text, Journal::Ordered);
    let s = job(&r, "ls").sync.as_ref().unwrap().lat.samples;
    let w = job(&r, "ls").write.io_ops;
    assert!(s * 2 >= w - 2 && s * 2 <= w + 2, "{s} syncs for {w} writes");
    // Each fsync carries two writes' data in one D1.
    assert_eq!(fsyncs(&r).ios_per_fsync, 3.0);
}

#[test]
fn the_same_seed_gives_the_same_report() {
    let text = format!("{LS}{DIRT}");
    let a = report::json::document(&run_with(&text, Journal::Ordered, 7).0);
    let b = report::json::document(&run_with(&text, Journal::Ordered, 7).0);
    assert_eq!(a, b);
    assert!(a.contains("\"sync\""), "{a}");
    assert!(a.contains("\"switches_per_fsync\""), "{a}");
}

#[test]
fn runs_without_fsync_model_no_page_cache() {
    // A buffered writer alone goes to the device as before issue 15.
    let (r, a) = run(DIRT, Journal::Ordered);
    assert_eq!(a.buffered, 0);
    assert!(job(&r, "dirt").sync.is_none());
    assert!(job(&r, "dirt").write.clat.min > 5_000);
    assert!(!r.notes.join("\n").contains("ext4 journal"));
}

/// A 128 KiB reader at depth 32 on core 1, filling the device.
const HOG_IO: &str =
    "[hog]\nrw=randread\nbs=128k\nsize=1g\nioengine=libaio\niodepth=32\ndirect=1\n\
                      cpus_allowed=1\ntime_based\n";

fn breakdown(text: &str, host: impl Fn(&mut sim::HostProfile)) -> FsyncBreakdown {
    let jobs = jobs::parse_str(text, "t.fio", &|_| None).unwrap().jobs;
    let mut cfg = config("optane-900p", PolicySpec::named("default"), 300 * MS, 1);
    host(&mut cfg.host);
    let (r, a) = sim::simulate_audited(&jobs, &cfg, &mut |_, _| {}).unwrap();
    assert_eq!((a.duplicates, a.stranded), (0, 0), "{a:?}");
    fsyncs(&r).clone()
}

#[test]
fn a_critical_jbd2_bypasses_the_limited_depth_scheduler() {
    let text = format!("{LS}{HOG_IO}");
    let ld = |h: &mut sim::HostProfile| h.block_scheduler = sim::BlockScheduler::LD;
    let plain = breakdown(&text, ld);
    let critical = breakdown(&text, |h| {
        ld(h);
        h.jbd2_critical = true;
    });
    // The caller's D1 is critical either way (FR 3.2); JBD2's JD and JC
    // wait for a token unless JBD2 is critical (FR 4.4).
    assert_eq!(plain.d1_us, critical.d1_us);
    let journal = |b: &FsyncBreakdown| b.jd_us + b.jc_us;
    assert!(
        journal(&critical) < 0.95 * journal(&plain),
        "critical {critical:?} plain {plain:?}"
    );
}

#[test]
fn a_cpu_hog_on_the_callers_core_raises_t_sched() {
    // FR 2.2 "Root Cause 3": the caller and JBD2 wait for a CPU shared
    // with a busy thread. The hog shares core 0 with them and always has
    // CPU work (20 us of user work per I/O, as tests/wakeup.rs).
    let hog = HOG_IO
        .replace("cpus_allowed=1", "cpus_allowed=0")
        .replace("bs=128k", "bs=4k");
    let busy = |h: &mut sim::HostProfile| h.user_per_io = 20_000;
    let idle = breakdown(LS, busy);
    let shared = breakdown(&format!("{LS}{hog}"), busy);
    // The waits for the CPU after each wake-up: after an I/O's completion
    // they count in the I/O's part, after a hand-off in T_Sched (FR 2.2,
    // 4.4), so the parts' sum is where the hog shows (the device's share
    // of it is the same either way: nothing else uses the device).
    let waits = |b: &FsyncBreakdown| b.d1_us + b.d2_us + b.jd_us + b.jc_us + b.sched_us;
    assert!(
        waits(&shared) > 1.5 * waits(&idle),
        "shared {shared:?} idle {idle:?}"
    );
    // A woken JBD2 or caller, placed behind min_vruntime after its sleep,
    // preempts the hog at once but for its kernel paths, which run to
    // their end under voluntary preemption: full preemption cuts the wait.
    let full = breakdown(&format!("{LS}{hog}"), |h| {
        busy(h);
        h.preemption = sim::Preemption::Full;
    });
    assert!(
        waits(&full) < waits(&shared),
        "full {full:?} shared {shared:?}"
    );
}

fn select_isr(text: &str, policy: &str, polls: bool) -> (RunReport, Audit) {
    let jobs = jobs::parse_str(text, "t.fio", &|_| None).unwrap().jobs;
    let mut cfg = config("optane", PolicySpec::named(policy), 300 * MS, 1);
    cfg.host.completion = host::poll::Mode::SelectIsr;
    cfg.host.jbd2_critical = true;
    cfg.host.fsync_io_polls = polls;
    let (r, a) = sim::simulate_audited(&jobs, &cfg, &mut |_, _| {}).unwrap();
    check_exactly_once(&a);
    (r, a)
}

/// A coalescing policy: an interrupt waits for its aggregation timeout, so
/// the polled I/O is found sooner. (Under `default`, which interrupts at
/// once, polling's gain is the wake-ups' waits, counted in each I/O's part
/// since issue 36, and the switches, 6 -> 2.)
const POLICY: &str = "adaptive";

#[test]
fn select_isr_polls_a_critical_callers_fsync_ios_with_fsync_io_polls() {
    // FR 4.4: SelectISR "polls the I/O completions for those I/Os" (D1,
    // D2, JD, JC). The caller is critical and so is JBD2: every device
    // I/O is the fsync path's (the writes are buffered), and polled.
    let text = format!("{LS}{DIRT}");
    let (irq, _) = select_isr(&text, POLICY, false);
    let (polled, a) = select_isr(&text, POLICY, true);
    let (bi, bp) = (fsyncs(&irq), fsyncs(&polled));
    assert!(irq.interrupts > 0, "{bi:?}");
    assert_eq!(polled.interrupts, 0, "{bp:?}");
    assert!(a.submitted > a.buffered);
    // The same I/Os per fsync; each found at once by its spinning thread
    // instead of the interrupt handler (and no wake-up of its own).
    assert_eq!(bi.ios_per_fsync, bp.ios_per_fsync);
    let ratio = bp.d1_us / bi.d1_us;
    eprintln!(
        "T_D1 polled/interrupt {:.3} us / {:.3} us = {ratio:.3}; \
         T_D2 {:.3}/{:.3}, T_JD {:.3}/{:.3}, T_JC {:.3}/{:.3}, sched {:.3}/{:.3}, \
         switches {}/{}; sync {:.3}/{:.3} us",
        bp.d1_us,
        bi.d1_us,
        bp.d2_us,
        bi.d2_us,
        bp.jd_us,
        bi.jd_us,
        bp.jc_us,
        bi.jc_us,
        bp.sched_us,
        bi.sched_us,
        bp.switches_per_fsync,
        bi.switches_per_fsync,
        sync_mean(&polled),
        sync_mean(&irq)
    );
    assert!(ratio < 0.95, "T_D1 ratio {ratio}: {bp:?} {bi:?}");
    assert!(bp.jc_us < bi.jc_us, "{bp:?} {bi:?}");
    assert!(bp.switches_per_fsync < bi.switches_per_fsync);
}

#[test]
fn without_fsync_io_polls_select_isr_fsync_ios_take_interrupts() {
    // The default: Linux waits in wait_on_buffer, by interrupt, whatever
    // the completion mode; select-isr's run is the interrupt one's.
    let (irq, a) = select_isr(&format!("{LS}{DIRT}"), "default", false);
    assert!(irq.interrupts > 0);
    assert_eq!(
        irq.interrupts,
        a.submitted - a.buffered,
        "one interrupt per fsync I/O under the default policy"
    );
    let jobs = jobs::parse_str(&format!("{LS}{DIRT}"), "t.fio", &|_| None)
        .unwrap()
        .jobs;
    let mut cfg = config("optane", PolicySpec::named("default"), 300 * MS, 1);
    cfg.host.jbd2_critical = true;
    let (plain, _) = sim::simulate_audited(&jobs, &cfg, &mut |_, _| {}).unwrap();
    assert_eq!(fsyncs(&plain).d1_us, fsyncs(&irq).d1_us);
    assert_eq!(sync_mean(&plain), sync_mean(&irq));
}
