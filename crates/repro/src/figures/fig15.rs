use super::example;
use crate::experiment::{systems_in, Experiment, PanelSpec, Throttle, Workload};

const SYSTEMS: &[&str] = &["cint", "cint+ooo", "default", "adaptive"];
pub const FREE: &str = "async free";
pub const THROTTLED: &str = "async throttled";

/// TOS 3.5, Fig 15: out-of-order Urgent processing in the mixed workload
/// (iodepth 256); bottom row, the async job capped at its IOPS under
/// default (the paper used the blkio cgroup; here fio's `rate_iops`).
pub fn experiment() -> Experiment {
    let mut runs = systems_in(SYSTEMS, "mixed-256", "optane", FREE);
    let mut throttled = systems_in(SYSTEMS, "mixed-256", "optane", THROTTLED);
    for r in &mut throttled {
        r.throttle = Some(Throttle {
            job: "async",
            like: format!("default/{FREE}"),
        });
    }
    runs.extend(throttled);
    Experiment {
        id: "fig15",
        title: "Fig 15: out-of-order Urgent (mixed, iodepth 256), free and throttled",
        paper: "TOS 3.5: OOO reaps Urgent completions alone. It fires 2.4x cint's \
                interrupts and nearly halves sync latency. With the async thread throttled \
                to its IOPS under default, OOO fires 23% more interrupts than cint and \
                matches default's sync latency with 30% less CPU. Labels relative to cint.",
        workloads: vec![example!("mixed-256")],
        runs,
        panels: vec![
            PanelSpec::bars("(a) async IOPS", "iops:async", "cint"),
            PanelSpec::bars("(b) sync latency [us]", "lat_us:sync", "cint"),
            PanelSpec::bars("(c) interrupts/s", "irq_rate", "cint"),
            PanelSpec::bars("(d) CPU [%]", "cpu", "cint"),
        ],
    }
}
