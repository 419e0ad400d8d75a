use super::example;
use crate::experiment::{systems_in, Experiment, PanelSpec, Workload};
use crate::provenance::{Origin, Provenance, RUN_LENGTH};

/// Ours: Fig 10 on our own mixed workload, batches of 16 under TOS Table 1
/// (Barrier on the last iocb of each io_submit), to show what Table 1's
/// Barrier does to the mixed workload. Not the paper's configuration.
pub fn experiment() -> Experiment {
    Experiment {
        id: "ours-mixed16",
        title: "Ours: the mixed workload in batches of 16 under Table 1",
        paper: "Ours, beside Fig 10: two threads on one core, blocking 4 KiB reads (Urgent under cint) \
                beside libaio reads at iodepth 16. cint keeps default's sync latency with \
                fewer interrupts; adaptive has more total IOPS but far worse sync latency. \
                Here the async thread submits and reaps 16 at a time and Table 1 marks \
                the last of each io_submit Barrier, so cint also fires on batches. \
                Labels relative to cint.",
        provenance: Provenance::new(Origin::Ours("our workload beside Fig 10, to show Table 1's Barrier"))
            .with("workload", "mixed-16.fio: psync beside libaio iodepth 16, batches of 16", Origin::Ours("examples/mixed-16.fio"))
            .with("default marks", "table1", Origin::Paper("TOS Table 1"))
            .with("systems", "cint (6 us, 32, no OOO), default, adaptive (6 us, 32)", Origin::Paper("TOS 5.2"))
            .with("device", "optane", Origin::Paper("TOS 5.2"))
            .with("runtime, runs", "scaled", RUN_LENGTH),
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
