//! The emulator end to end, on the null backend and on temporary files:
//! every request completes exactly once whatever the policy, the delivery,
//! the queue sizes and the faults; errors reach the job; verify catches
//! corruption; bad jobs are refused with one line.

use emu::backend::BackendSpec;
use emu::{Audit, Delivery, EmuConfig, EmuError};
use policy::PolicySpec;
use report::RunReport;

mod common;
use common::assert_exactly_once;

const MS: u64 = 1_000_000;

/// One emulation at a time: each has a device thread spinning on a CPU,
/// and two at once on two CPUs would measure each other.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn jobs(text: &str) -> Vec<jobs::Job> {
    jobs::parse_str(text, "t.fio", &|_| None).unwrap().jobs
}

fn config(backend: &str, policy: &str) -> EmuConfig {
    EmuConfig {
        backend: Some(BackendSpec::parse(backend).unwrap()),
        policy: PolicySpec::named(policy),
        ..EmuConfig::default()
    }
}

/// Runs and checks the exactly-once invariants every run must keep.
fn run(text: &str, cfg: &EmuConfig) -> (RunReport, Audit) {
    let _one = serial();
    let (r, a) = emu::run_audited(&jobs(text), cfg).unwrap_or_else(|e| panic!("{e}"));
    assert_exactly_once(&a);
    (r, a)
}

fn example(name: &str) -> String {
    let path = format!("{}/../../examples/{name}.fio", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn every_example_runs_exactly_once_under_each_family_of_policy() {
    for name in ["sync-read", "mixed-16", "async-256", "barrier-2", "storm"] {
        for policy in ["default", "cint", "adaptive", "nvme100"] {
            let cfg = EmuConfig {
                runtime: Some(60 * MS),
                ..config("null:10us", policy)
            };
            let (r, _) = run(&example(name), &cfg);
            assert!(r.total_iops() > 0.0, "{name} {policy}");
            assert!(r.interrupts > 0, "{name} {policy}");
        }
    }
}

#[test]
fn wake_delivery_keeps_the_invariants_and_reports_its_cost() {
    let cfg = EmuConfig {
        runtime: Some(100 * MS),
        delivery: Delivery::Wake,
        ..config("null:10us", "cint")
    };
    let (r, _) = run(&example("mixed-16"), &cfg);
    assert!(
        r.notes.iter().any(|n| n.contains("delivery=wake")),
        "{:?}",
        r.notes
    );
    assert!(r.notes.iter().any(|n| n.starts_with("interrupt delivery")));
}

/// The device records the time between consecutive posts to a CQ. With a
/// blocking reader at QD1 the next command is submitted only after the
/// last completion was delivered, and the null device takes 10 us from
/// submission, so no two posts can be closer than 10 us: a bound from the
/// loop's structure, not from this machine's speed.
#[test]
fn completion_gaps_are_recorded_on_the_device_thread() {
    let cfg = EmuConfig {
        runtime: Some(50 * MS),
        ..config("null:10us", "default")
    };
    let (r, a) = run(&example("sync-read"), &cfg);
    let g = r.completion_gaps.expect("gaps recorded in the window");
    assert!(g.count > 0);
    assert!(g.count <= a.device.posted, "{} gaps, {a:?}", g.count);
    assert!(g.min() >= 10_000, "{g:?}");
    assert!(g.value_at(0.5) <= g.value_at(0.99));
}

#[test]
fn cint_fires_urgent_only_interrupts_for_the_blocking_reader() {
    let cfg = EmuConfig {
        runtime: Some(100 * MS),
        ..config("null:10us", "cint")
    };
    let (r, _) = run(&example("mixed-16"), &cfg);
    assert!(r.urgent_only_interrupts > 0, "OOO on by default");
    let cfg = EmuConfig {
        runtime: Some(100 * MS),
        ..config("null:10us", "default")
    };
    let (r, _) = run(&example("mixed-16"), &cfg);
    assert_eq!(r.urgent_only_interrupts, 0);
}

#[test]
fn a_lone_unmarked_request_waits_for_the_timeout_and_an_urgent_one_does_not() {
    // One io_uring request at a time with explicit no-marks: only
    // nvme100's 100 us aggregation time delivers it.
    let text = "[a]\nioengine=io_uring\niodepth=1\nrw=randread\ncint_flags=none\nnumber_ios=200\nsize=1m\n";
    let (r, _) = run(text, &config("null:2us", "nvme100"));
    // Bounds that other load on the machine cannot break (it only adds
    // time: an urgent mean of 319 us was seen beside two spinners): every
    // lone unmarked request waits at least the aggregation time; some
    // urgent ones do not, and the typical one waits less.
    let lone = &r.jobs[0].read.clat;
    assert!(lone.min > 100_000, "unmarked: min {} ns", lone.min);
    let text = text.replace("cint_flags=none", "cint_flags=urgent");
    let (r, _) = run(&text, &config("null:2us", "cint"));
    let urgent = &r.jobs[0].read.clat;
    assert!(urgent.min < 100_000, "urgent: min {} ns", urgent.min);
    let p50 = |l: &report::LatencyStats| l.percentiles.iter().find(|(p, _)| *p == 50.0).unwrap().1;
    assert!(
        p50(urgent) < p50(lone),
        "p50: urgent {} ns, unmarked {} ns",
        p50(urgent),
        p50(lone)
    );
}

#[test]
fn back_pressure_from_few_tags_and_a_small_cq_loses_nothing() {
    // Each job fits the 8 tags (a deeper one is refused), but together
    // the five on CPU 0's queue pair want 33.
    let text = "[a]\nioengine=libaio\niodepth=8\niodepth_batch_submit=8\niodepth_batch_complete_min=4\nrw=randread\nruntime=100ms\ntime_based\nsize=1m\nnumjobs=4\ncpus_allowed=0\n[b]\nioengine=psync\nrw=randread\nnumber_ios=2000\nsize=1m\ncpus_allowed=0\n";
    let cfg = EmuConfig {
        queue_depth: 8,
        cq_entries: Some(4),
        ..config("null:1us", "cint")
    };
    let (_, a) = run(text, &cfg);
    assert!(a.tag_waits > 0, "submitters waited for tags: {a:?}");
    assert!(a.device.held > 0, "the 4-entry CQ filled: {a:?}");
}

#[test]
fn injected_errors_reach_the_job_and_are_counted() {
    let text = "[a]\nioengine=psync\nrw=randread\nnumber_ios=1000\nsize=64m\n[b]\nioengine=libaio\niodepth=16\niodepth_batch_submit=16\niodepth_batch_complete_min=16\nrw=randread\nnumber_ios=1600\nsize=64m\n";
    let (r, a) = run(text, &config("null:5us,error_every=10", "cint"));
    let errors: u64 = r.jobs.iter().map(|j| j.read.errors).sum();
    assert_eq!(errors, 260, "every 10th of 2600");
    assert_eq!(a.device.errors, 260);
    assert_eq!(a.handlers.errors, 260);
    let ok: u64 = r.jobs.iter().map(|j| j.read.io_ops).sum();
    assert_eq!(ok + errors, 2600);
}

#[test]
fn an_error_is_not_held_for_the_coalescing_timer() {
    // Unmarked requests under a 20 ms NVMe aggregation time with a high
    // threshold: an ok one waits for the timer, one in error must not
    // (NVMe: completions in error are not coalesced, TOS 4.2.1).
    //
    // Checked where it acts: the device counts every error its policy
    // walked without firing at once (`errors_held`). A wall-clock check
    // (the run's time beside the ok requests' latencies) cannot tell a
    // held error from the host's scheduling: beside two spinners and ~6
    // builds (load 13) it left 95 to 310 ms over 20 errors with
    // `errors_held` 0 and every error's interrupt raised at its post
    // (2026-12-07, this test with `--nocapture` under
    // `notes/suite-run.sh`'s spinners): the waiter's wake-ups, not the
    // timer. So the host side is held to what the audit counts, and the
    // timing only to the ok requests having waited (the policy coalesces).
    let text =
        "[a]\nioengine=io_uring\niodepth=1\nrw=randread\ncint_flags=none\nnumber_ios=40\nsize=1m\n";
    let mut cfg = config("null:2us,error_every=2", "nvme");
    cfg.policy.aggr_time = Some(20 * MS);
    cfg.policy.thr = Some(64);
    let (r, a) = run(text, &cfg);
    assert_eq!(r.jobs[0].read.errors, 20);
    assert_eq!(r.jobs[0].read.io_ops, 20);
    assert_eq!(a.device.errors, 20, "{a:?}");
    assert_eq!(a.handlers.errors, 20, "{a:?}");
    assert_eq!(a.device.errors_held, 0, "{a:?}");
    // The ok ones did wait for the timer: the policy held what it may.
    let ok = &r.jobs[0].read.clat;
    assert!(ok.mean > 18.0 * MS as f64, "{}", ok.mean);
}

#[test]
fn stress_many_threads_mixed_engines_and_marks_lose_nothing() {
    let mut text =
        String::from("[global]\nrw=randrw\nsize=4m\nruntime=150ms\ntime_based\ncpus_allowed=0\n");
    let engines = ["psync", "pvsync2", "libaio", "io_uring"];
    let flags = ["default", "urgent", "barrier", "none"];
    for i in 0..12 {
        text.push_str(&format!(
            "[j{i}]\nioengine={}\ncint_flags={}\n",
            engines[i % 4],
            flags[(i / 4) % 4]
        ));
        if i % 4 >= 2 {
            text.push_str("iodepth=32\niodepth_batch_submit=8\niodepth_batch_complete_min=4\n");
        }
    }
    for policy in ["cint", "default", "adaptive", "dynamic", "dim"] {
        let cfg = EmuConfig {
            queue_depth: 64,
            cq_entries: Some(16),
            ..config("null:3us,depth=8", policy)
        };
        let (r, _) = run(&text, &cfg);
        assert_eq!(r.jobs.len(), 12, "{policy}");
    }
}

#[test]
fn a_file_backend_reads_and_writes_and_verify_catches_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data");
    let text = format!(
        "[w]\nfilename={}\nrw=randwrite\nbs=4k\nsize=2m\nioengine=io_uring\niodepth=8\nverify=crc32c\n",
        path.display()
    );
    let cfg = EmuConfig {
        policy: PolicySpec::named("cint"),
        ..EmuConfig::default()
    };
    let (r, _) = run(&text, &cfg);
    let v = r.jobs[0].verify.clone().unwrap();
    assert_eq!(r.jobs[0].write.io_ops, 512);
    assert!(v.blocks > 0 && v.blocks <= 512, "{v:?}");
    assert_eq!(v.mismatches, 0, "{v:?}");
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 2 << 20);

    let cfg = config(&format!("file:{},corrupt_every=5", path.display()), "cint");
    let (r, _) = run(&text, &cfg);
    let v = r.jobs[0].verify.clone().unwrap();
    assert!(
        v.mismatches > 0 && v.mismatches <= v.blocks / 5 + 1,
        "{v:?}"
    );
    assert!(v.first_mismatch.unwrap().contains("crc32c"));
}

fn refused(text: &str, cfg: &EmuConfig) -> String {
    let _one = serial();
    let e: EmuError = emu::run(&jobs(text), cfg).unwrap_err();
    let s = e.to_string();
    assert_eq!(s.lines().count(), 1, "{s}");
    s
}

#[test]
fn bad_jobs_are_refused_in_one_line_before_anything_runs() {
    let null = config("null:10us", "cint");
    let s = refused("[a]\nrw=read\nsize=1m\ncpus_allowed=7\n", &null);
    assert!(s.contains("job 'a'") && s.contains("cpus_allowed"), "{s}");
    let one_cpu = EmuConfig {
        device_cpu: Some(0),
        ..null.clone()
    };
    let s = refused("[a]\nrw=read\nsize=1m\ncpus_allowed=0\n", &one_cpu);
    assert!(s.contains("device thread"), "{s}");
    let s = refused("[a]\nrw=write\nsize=1m\nverify=crc32c\n", &null);
    assert!(s.contains("null backend"), "{s}");
    let s = refused("[a]\nrw=read\nsize=1m\n", &EmuConfig::default());
    assert!(s.contains("filename"), "{s}");
    let s = refused("[a]\nrw=read\nsize=1m\nfsync=1\n", &null);
    assert!(s.contains("fsync"), "{s}");
    let s = refused("[a]\nrw=read\n", &null);
    assert!(s.contains("runtime"), "{s}");
    let s = refused(
        "[a]\nrw=read\nsize=1m\nfilename=/nonexistent-dir/x\n",
        &EmuConfig::default(),
    );
    assert!(s.contains("/nonexistent-dir/x"), "{s}");
    // A host profile's `completion = "central"` reaches the emulator
    // without the command line's check: refused, not run as interrupts.
    let central = EmuConfig {
        completion: host::poll::Mode::Central,
        ..null.clone()
    };
    let s = refused("[a]\nrw=read\nsize=1m\n", &central);
    assert!(s.contains("central") && s.contains("simulated only"), "{s}");
}
