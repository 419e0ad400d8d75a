use host::uring::{MinWait, Strategy};
use policy::US;

use super::example;
use super::fig10::{FIO_ARGS, SYSTEMS};
use crate::experiment::{Experiment, HostSettings, PanelSpec, RunSpec, Workload};
use crate::provenance::{Origin, Provenance, RUN_LENGTH};

/// The job file's two jobs: the blocking reader and the io_uring reader.
const SYNC: &str = "psync";
const ASYNC: &str = "io_uring";

/// min-wait's settings (`min_wait_usec`; `wait_nr` the caller's most,
/// fio's `iodepth_batch_complete_max`, 16; no overall timeout): the three
/// the first measurement (README, issue 25 items 2-4) ran, chosen then
/// around the device's ~10 us reads and a batch of 16 (~50 us at ~300K
/// IOPS), not tuned here.
const MIN_WAITS: [u64; 3] = [20, 50, 100];

/// Ours (issue 25, item 5): TOS Fig 10's mixed workload as the authors ran
/// it, with fio's io_uring engine in place of libaio, under the device's
/// strategies (default, adaptive, cint; io_uring's plain wait) and under
/// io_uring's own host-side strategies (on the default device).
pub fn experiment() -> Experiment {
    let on_default = |shown: &str, s: Strategy| {
        RunSpec::artifact(shown, "alpha-0-0", "uring-mixed-16", "optane")
            .with_fio(FIO_ARGS)
            .with_host(HostSettings {
                uring: Some(s),
                ..HostSettings::default()
            })
    };
    let mut runs: Vec<RunSpec> = SYSTEMS
        .iter()
        .map(|(shown, name)| {
            RunSpec::artifact(shown, name, "uring-mixed-16", "optane").with_fio(FIO_ARGS)
        })
        .collect();
    runs.push(on_default("task-work", Strategy::TaskWork));
    runs.push(on_default("defer-taskrun", Strategy::DeferTaskrun));
    for us in MIN_WAITS {
        let s = Strategy::MinWait(MinWait {
            min_wait: us * US,
            nr: None,
            timeout: None,
        });
        runs.push(on_default(&format!("min-wait={us}us"), s));
    }
    runs.push(on_default("iopoll", Strategy::IoPoll));
    let mut provenance = Provenance::new(Origin::Ours(
        "issue 25 item 5: io_uring's host-side batching beside device-side calibration, on Fig 10's workload",
    ))
    .with("job file", "uring-mixed-16.fio: [psync] psync randread, [io_uring] io_uring randread, cpus_allowed=1, direct=1 (Fig 10's rand_mix.fio, io_uring for libaio)", Origin::Ours("examples/uring-mixed-16.fio"))
    .with("fio command line", FIO_ARGS.join(" "), Origin::Artifact("fig5/test.sh"))
    .with("default marks", "basis: pread Urgent; every io_uring SQE unmarked (the basis patch touches neither fs/io_uring.c nor the ring)", Origin::Ours("jobs::marks, DefaultMarks::Basis; TOS Table 1 has no io_uring row (issue 25 item 2)"))
    .with("device", "optane (Intel Optane DC P4800X profile)", Origin::Artifact("fig5/env-dante733: \"for Optane delay is 6\""))
    .with("runtime, runs", "scaled", RUN_LENGTH)
    .with("io_uring's wait", "min-complete (the simulator's default) under the device strategies; the host strategies on the default device", Origin::Ours("one axis at a time: the device's strategy or io_uring's"))
    .with("min-wait", "20, 50, 100 us; wait_nr 16 (fio's iodepth_batch_complete_max); no overall timeout", Origin::Ours("the settings of the first measurement (README), not tuned"))
    .with("emulator", "every run but task-work and defer-taskrun: `run --uring` applies min-complete, min-wait and iopoll (the job's hipri, the emulator's poll queue); the emulator's handler delivers each completion to the waiting thread itself, so where the kernel runs task work is not emulated", Origin::Ours("emu::uring_emulated, emu/src/run/target.rs"));
    for (shown, name) in SYSTEMS {
        provenance = provenance.with(
            "system",
            format!("{shown} = {name}"),
            Origin::Artifact("fig5/test.sh"),
        );
    }
    Experiment {
        id: "ours-uring",
        title:
            "Ours: the mixed workload on io_uring, device calibration against io_uring's batching",
        paper: "Ours (issue 25 item 5), not a paper's figure: Fig 10's mixed workload as \
                the artifact's fig5/test.sh ran it (blocking 4 KiB reads beside an async \
                reader at iodepth 16, one core, one request per submit, 1 to 16 reaped at \
                a time, the basis kernel, cint Urgent only) with fio's io_uring engine for \
                libaio. Device side: default, adaptive, cint with io_uring's plain wait \
                (min-complete). Host side, on the default device: task-work (Linux 5.11+), \
                DEFER_TASKRUN, min-wait (Linux 6.12) at 20, 50 and 100 us, IOPOLL. The \
                claims are hypotheses stated before the runs (the liburing and kernel \
                documentation, TOS Fig 10). Emulator: every run but task-work and \
                DEFER_TASKRUN, which differ from the plain wait only in where the kernel \
                runs task work, not emulated. Labels relative to default.",
        provenance,
        workloads: vec![example!("uring-mixed-16")],
        runs,
        panels: vec![
            PanelSpec::bars(
                "(a) sync p50 latency [us]",
                &format!("p50_us:{SYNC}"),
                "default",
            ),
            PanelSpec::bars(
                "(b) sync p99 latency [us]",
                &format!("p99_us:{SYNC}"),
                "default",
            ),
            PanelSpec::bars("(c) async IOPS", &format!("iops:{ASYNC}"), "default"),
            PanelSpec::bars("(d) interrupts/s", "irq_rate", "default"),
            PanelSpec::bars(
                "(e) async wake-ups per I/O",
                &format!("wakeups_per_io:{ASYNC}"),
                "default",
            ),
            PanelSpec::bars(
                "(f) async CPU per I/O [us]",
                &format!("cpu_us_per_io:{ASYNC}"),
                "default",
            ),
        ],
    }
}
