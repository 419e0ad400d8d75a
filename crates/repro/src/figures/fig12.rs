use super::example;
use crate::experiment::{systems_in, Experiment, PanelSpec, Workload};

const SYSTEMS: &[&str] = &["cint", "default", "adaptive"];

/// TOS 3.4, Fig 12: the effect of Barrier, 1, 2 and 4 threads on one core.
pub fn experiment() -> Experiment {
    let mut runs = systems_in(SYSTEMS, "barrier-1", "optane", "1 thread");
    runs.extend(systems_in(SYSTEMS, "barrier-2", "optane", "2 threads"));
    runs.extend(systems_in(SYSTEMS, "barrier-4", "optane", "4 threads"));
    Experiment {
        id: "fig12",
        title: "Fig 12: Barrier, batches of 4 from 1, 2 and 4 threads",
        paper: "TOS 3.4: each thread submits 4 KiB libaio reads in batches of 4, the last \
                marked Barrier, and waits for the batch. With one thread default has the \
                lowest latency but 4.4x the interrupts; adaptive pays delta (29 against \
                22 us); with 4 threads adaptive catches up. Labels relative to cint.",
        workloads: vec![
            example!("barrier-1"),
            example!("barrier-2"),
            example!("barrier-4"),
        ],
        runs,
        panels: vec![
            PanelSpec::bars("(a) IOPS", "total_iops", "cint"),
            PanelSpec::bars("(b) latency [us]", "lat_us:barrier", "cint"),
            PanelSpec::bars("(c) CPU [%]", "cpu", "cint"),
            PanelSpec::bars("(d) interrupts/s", "irq_rate", "cint"),
        ],
    }
}
