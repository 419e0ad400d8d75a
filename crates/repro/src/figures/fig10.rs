use super::example;
use crate::experiment::{systems_in, Experiment, PanelSpec, Workload};

/// TOS 3.3, Fig 10: the effect of Urgent in the mixed workload.
pub fn experiment() -> Experiment {
    Experiment {
        id: "fig10",
        title: "Fig 10: Urgent in the mixed workload (iodepth 16)",
        paper: "TOS 3.3: two threads on one core, blocking 4 KiB reads (Urgent under cint) \
                beside libaio reads at iodepth 16. cint keeps default's sync latency with \
                fewer interrupts; adaptive has more total IOPS but far worse sync latency. \
                Labels relative to cint.",
        workloads: vec![example!("mixed-16")],
        runs: systems_in(&["cint", "default", "adaptive"], "mixed-16", "optane", ""),
        panels: vec![
            PanelSpec::bars("(a) total IOPS", "total_iops", "cint"),
            PanelSpec::bars("(b) sync IOPS", "iops:sync", "cint"),
            PanelSpec::bars("(c) sync latency [us]", "lat_us:sync", "cint"),
            PanelSpec::bars("(d) interrupts/s", "irq_rate", "cint"),
        ],
    }
}
