use super::example;
use crate::experiment::{Experiment, PanelSpec, RunSpec, Workload};

pub const THRS: &[u32] = &[4, 8, 16, 32, 64];

/// TOS 3.3, Fig 11: adaptive's threshold swept in the mixed workload at
/// iodepth 256, against cint (whose thr stays 32).
pub fn experiment() -> Experiment {
    let mut runs = Vec::new();
    for &thr in THRS {
        let group = thr.to_string();
        runs.push(RunSpec::new("cint", "mixed-256", "optane").in_group(&group));
        let mut adaptive = RunSpec::new("adaptive", "mixed-256", "optane").in_group(&group);
        adaptive.policy.thr = Some(thr);
        runs.push(adaptive);
    }
    Experiment {
        id: "fig11",
        title: "Fig 11: adaptive's thr swept in the mixed workload (iodepth 256)",
        paper: "TOS 3.3: as Fig 10 with the async thread at iodepth 256; x is adaptive's \
                threshold. Sync latency grows with the coalescing rate, while Urgent keeps \
                cint's low. Labels adaptive / cint.",
        workloads: vec![example!("mixed-256")],
        runs,
        panels: vec![
            PanelSpec::bars("(a) total IOPS", "total_iops", "cint"),
            PanelSpec::bars("(b) sync IOPS", "iops:sync", "cint"),
            PanelSpec::bars("(c) sync latency [us]", "lat_us:sync", "cint"),
            PanelSpec::bars("(d) interrupts/s", "irq_rate", "cint"),
        ],
    }
}
