use super::example;
use crate::experiment::{systems_in, Experiment, PanelSpec, Workload};

const SYSTEMS: &[&str] = &["cint", "cint+ooo", "default", "adaptive"];

/// TOS 5.3, Fig 20: sync-only and async-only workloads on both devices.
pub fn experiment() -> Experiment {
    let mut runs = Vec::new();
    for (device, sync, asynch) in [
        ("optane", "optane sync", "optane async"),
        ("p3700", "p3700 sync", "p3700 async"),
    ] {
        runs.extend(systems_in(SYSTEMS, "sync-read", device, sync));
        runs.extend(systems_in(SYSTEMS, "async-256", device, asynch));
    }
    Experiment {
        id: "fig20",
        title: "Fig 20: sync-only and async-only, Optane and P3700",
        paper: "TOS 5.3: blocking 4 KiB reads (a); libaio at iodepth 256 in batches of 16 \
                (b-d). Adaptive adds exactly delta to a sync read (+6 us Optane, +15 us \
                P3700) and cint matches default; on async, default fires 12-15x cint's \
                interrupts and cint has up to 35% more IOPS. OOO costs nothing when no \
                request is Urgent. Labels relative to cint.",
        workloads: vec![example!("sync-read"), example!("async-256")],
        runs,
        panels: vec![
            PanelSpec::bars("(a) sync latency [us]", "lat_us:sync-read", "cint")
                .only(&["optane sync", "p3700 sync"]),
            PanelSpec::bars("(b) async IOPS", "iops:async-256", "cint")
                .only(&["optane async", "p3700 async"]),
            PanelSpec::bars("(c) async CPU [%]", "cpu", "cint")
                .only(&["optane async", "p3700 async"]),
            PanelSpec::bars("(d) async interrupts/s", "irq_rate", "cint")
                .only(&["optane async", "p3700 async"]),
        ],
    }
}
