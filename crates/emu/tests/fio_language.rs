//! fio's options that change what is measured, on the emulator (issue 13
//! item 1): serial groups, the null engine, drawn block sizes, skewed
//! offsets over several files. Every request still completes once.

use emu::backend::BackendSpec;
use emu::{Audit, EmuConfig};
use policy::PolicySpec;
use report::RunReport;

const MS: u64 = 1_000_000;

/// One emulation at a time (each has a device thread spinning on a CPU).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn run(text: &str, backend: Option<&str>) -> (RunReport, Audit) {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let jobs = jobs::parse_str(text, "t.fio", &|_| None).unwrap().jobs;
    let cfg = EmuConfig {
        backend: backend.map(|b| BackendSpec::parse(b).unwrap()),
        policy: PolicySpec::named("default"),
        ..EmuConfig::default()
    };
    let (r, a) = emu::run_audited(&jobs, &cfg).unwrap_or_else(|e| panic!("{e}"));
    assert!(a.submitted > 0, "{a:?}");
    assert_eq!(a.consumed, a.submitted, "every completion consumed: {a:?}");
    assert_eq!(a.handlers.duplicates, 0, "{a:?}");
    (r, a)
}

#[test]
fn a_stonewall_group_runs_after_the_first_each_for_its_own_runtime() {
    let text = "[global]\nioengine=libaio\niodepth=4\nrw=randread\nruntime=40ms\ntime_based\n[a]\n[b]\nstonewall\n";
    let (r, _) = run(text, Some("null:10us"));
    // Side by side they would take 40 ms; one after the other about 80 (the
    // window is read on a 1 ms poll).
    assert!(r.duration_ns >= 75 * MS, "{}", r.duration_ns);
    for j in &r.jobs {
        let run = j.read.run_ns.expect("each job's own run time");
        // Its own 40 ms, not the two groups' 80: the last completion can
        // come late on a loaded 2-vCPU machine (48-54 ms seen under other
        // builds), so the bound sits between the two.
        assert!((35 * MS..=65 * MS).contains(&run), "{}: {run}", j.name);
        assert!(j.read.io_ops > 0, "{}", j.name);
    }
}

#[test]
fn the_null_engine_runs_on_a_null_device_that_completes_at_once() {
    // engines/null.c: no device; here a null backend with no latency.
    let (r, _) = run(
        "[n]\nioengine=null\niodepth=8\niodepth_batch_submit=8\nrw=randread\nruntime=30ms\ntime_based\n",
        None,
    );
    assert!(r.device.starts_with("null:0,"), "{}", r.device);
}

#[test]
fn drawn_sizes_and_skewed_offsets_over_several_files_complete_once() {
    let (r, _) = run(
        "[z]\nioengine=libaio\niodepth=8\nrw=randrw\nbssplit=4k/50:64k/50\nrandom_distribution=zipf:1.2\nnrfiles=4\nsize=64m\nruntime=30ms\ntime_based\n",
        Some("null:10us"),
    );
    let j = &r.jobs[0];
    for d in [&j.read, &j.write] {
        assert!(d.io_ops > 0);
        let mean = d.io_bytes / d.io_ops;
        assert!((4096..65536).contains(&mean), "{mean}");
    }
}
