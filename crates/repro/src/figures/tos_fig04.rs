use super::example;
use crate::experiment::{Experiment, PanelSpec, RunSpec, Workload};
use crate::provenance::{Origin, Provenance, RUN_LENGTH};

/// TOS 2, Fig 4: the latency of an interrupt in a device-bound workload.
/// Its ~740 ns is a target of the host's calibration (`cinterrupts
/// calibrate --fit`), which runs this very configuration: fitted.
pub fn experiment() -> Experiment {
    Experiment {
        id: "tos-fig4",
        title: "TOS Fig 4: the latency of an interrupt, one 4 KiB read at a time (Optane)",
        paper: "TOS 2: \"a single process submits a single 4K block read at a time\"; handling \
                the interrupt takes around 740 ns on every device.",
        provenance: Provenance::new(Origin::Paper("TOS 2, Fig 4 (not in the artifact)"))
            .with(
                "workload",
                "examples/sync-read.fio: one psync process, 4 KiB random reads",
                Origin::Paper("TOS 2: \"a single 4K block read at a time\""),
            )
            .with(
                "device, host",
                "optane, xeon-e5-2660v4",
                Origin::Paper("TOS 5.1"),
            )
            .with(
                "system",
                "default: an interrupt per completion",
                Origin::Paper("TOS 2"),
            )
            .with("runtime, runs", "scaled", RUN_LENGTH),
        workloads: vec![example!("sync-read")],
        runs: ["optane", "p3700"]
            .iter()
            .map(|d| RunSpec::new("default", "sync-read", d).in_group(*d))
            .collect(),
        panels: vec![
            PanelSpec::bars("(a) interrupt CPU per interrupt [ns]", "irq_ns", "default"),
            PanelSpec::bars("(b) read latency [us]", "lat_us:sync-read", "default"),
        ],
    }
}
