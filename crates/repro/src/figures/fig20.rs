use super::{artifact, BASIS};
use crate::experiment::{Experiment, PanelSpec, RunSpec};
use crate::provenance::{Origin, Provenance, RUN_LENGTH};

const SCRIPT: Origin = Origin::Artifact("fig14/test.sh");

/// The job's name in both of fig14's job files.
pub const JOB: &str = "raw=random-read";

/// fig14/test.sh's systems for each device (delta 6 us on the Optane, 15
/// us on the P3700: env-dante733, env-dante734): shown as, artifact name.
/// Its `baseline-0-0` is default's policy here and is run once, as default.
fn systems(device: &str) -> [(&'static str, &'static str); 5] {
    match device {
        "p3700" => [
            ("cint", "cint-15-32"),
            ("cint+ooo", "cint-15-32-ooo"),
            ("default", "alpha-0-0"),
            ("adaptive", "alpha-15-32"),
            ("nvme100", "baseline-100-32"),
        ],
        _ => [
            ("cint", "cint-6-32"),
            ("cint+ooo", "cint-6-32-ooo"),
            ("default", "alpha-0-0"),
            ("adaptive", "alpha-6-32"),
            ("nvme100", "baseline-100-32"),
        ],
    }
}

const FIO_ARGS: &[&str] = &["--blocksize=4K", BASIS];

/// TOS 5.3, Fig 20: sync-only and async-only workloads on both devices, as
/// the artifact's fig14/test.sh runs them.
pub fn experiment() -> Experiment {
    let mut runs = Vec::new();
    for (device, sync, asynch) in [
        ("optane", "optane sync", "optane async"),
        ("p3700", "p3700 sync", "p3700 async"),
    ] {
        for (shown, name) in systems(device) {
            runs.push(
                RunSpec::artifact(shown, name, "rand_read_psync", device)
                    .with_fio(FIO_ARGS)
                    .in_group(sync),
            );
            runs.push(
                RunSpec::artifact(shown, name, "rand_read_libaio", device)
                    .with_fio(FIO_ARGS)
                    .in_group(asynch),
            );
        }
    }
    let mut provenance = Provenance::new(SCRIPT)
        .with("job file (sync)", "rand_read_psync.fio: psync randread iodepth 1, cpus_allowed=1", Origin::Artifact("fig14/rand_read_psync.fio"))
        .with("job file (async)", "rand_read_libaio.fio: libaio randread iodepth 256, iodepth_batch_submit=16, iodepth_batch_complete=16, no barrier", Origin::Artifact("fig14/rand_read_libaio.fio"))
        .with("fio command line", "--blocksize=4K", SCRIPT)
        .with("default marks", "basis: pread Urgent, io_submit unmarked (so cint coalesces the async-only load as adaptive does)", Origin::Artifact("linux-kernel/cinterrupts-01-basis.patch"))
        .with("devices", "optane (delay 6 us), p3700 (delay 15 us)", Origin::Artifact("fig14/env-dante733, fig14/env-dante734"))
        .with("runtime, runs", "60 s x 10 in the artifact", RUN_LENGTH);
    for device in ["optane", "p3700"] {
        for (shown, name) in systems(device) {
            provenance = provenance.with("system", format!("{device}: {shown} = {name}"), SCRIPT);
        }
    }
    Experiment {
        id: "fig20",
        title: "Fig 20: sync-only and async-only, Optane and P3700",
        paper: "TOS 5.3: blocking 4 KiB reads (a); libaio at iodepth 256 in batches of 16 \
                (b-d). Adaptive adds exactly delta to a sync read (+6 us Optane, +15 us \
                P3700) and cint matches default; on async, default fires 12-15x cint's \
                interrupts and cint has up to 35% more IOPS. OOO costs nothing when no \
                request is Urgent. Labels relative to cint.",
        provenance,
        workloads: vec![
            artifact!("rand_read_psync", "fig14/rand_read_psync.fio"),
            artifact!("rand_read_libaio", "fig14/rand_read_libaio.fio"),
        ],
        runs,
        panels: vec![
            PanelSpec::bars("(a) sync latency [us]", &format!("lat_us:{JOB}"), "cint")
                .only(&["optane sync", "p3700 sync"]),
            PanelSpec::bars("(b) async IOPS", &format!("iops:{JOB}"), "cint")
                .only(&["optane async", "p3700 async"]),
            PanelSpec::bars("(c) async CPU [%]", "cpu", "cint")
                .only(&["optane async", "p3700 async"]),
            PanelSpec::bars("(d) async interrupts/s", "irq_rate", "cint")
                .only(&["optane async", "p3700 async"]),
        ],
    }
}
