use super::example;
use crate::experiment::{Experiment, PanelSpec, PaperValue, RunSpec, Workload};
use crate::provenance::{Origin, Provenance, RUN_LENGTH};

pub const CAP: u64 = 100_000;

/// TOS 4.3, Fig 17: Urgent-storm protection. Four processes of blocking
/// reads (all Urgent) on one core, with and without a 100K/s cap.
pub fn experiment() -> Experiment {
    let free = RunSpec::new("cint", "storm", "optane");
    let mut capped = RunSpec::new("cint", "storm", "optane").shown_as("cint+cap", "cint+cap");
    capped.policy.max_irq_rate = Some(CAP);
    Experiment {
        id: "fig17",
        title: "Fig 17: Urgent-storm protection (4 pread processes, cap 100K/s)",
        paper: "TOS 4.3: four processes of 4 KiB pread, every request Urgent, make 150K \
                interrupts/s and saturate the core. With the maximum rate at 100K/s (EWMA, \
                lambda 1/128) the rate never exceeds it, CPU falls from 100% to 94%, \
                throughput rises and latency falls slightly. Labels relative to cint.",
        provenance: Provenance::new(Origin::Paper("TOS 4.3, Fig 17 (not in the artifact)"))
            .with(
                "workload",
                "storm.fio: 4 psync processes of 4 KiB random reads on one core",
                Origin::Paper("TOS 4.3: \"four processes ... pread\""),
            )
            .with(
                "cap",
                "100K interrupts/s, EWMA lambda 1/128",
                Origin::Paper("TOS 4.3"),
            )
            .with(
                "system",
                "cint (6 us, 32), every request Urgent",
                Origin::Paper("TOS 4.3, 5.2"),
            )
            .with(
                "default marks",
                "table1 (pread is Urgent under both kernels)",
                Origin::Paper("TOS Table 1"),
            )
            .with(
                "device",
                "optane",
                Origin::Ours("TOS 4.3 names no device; the Optane is the paper's main one"),
            )
            .with("runtime, runs", "scaled", RUN_LENGTH),
        workloads: vec![example!("storm")],
        runs: vec![free, capped],
        panels: vec![
            PanelSpec::bars("(a) IOPS", "total_iops", "cint"),
            PanelSpec::bars("(b) latency [us]", "lat_us:storm", "cint"),
            PanelSpec::bars("(c) interrupts/s", "irq_rate", "cint").with_paper(
                "TOS 4.3, Fig 17 (text: about 150K interrupts/s unprotected)",
                &[("cint", "", PaperValue::Absolute(150_000.0))],
            ),
            PanelSpec::bars("(d) CPU [%]", "cpu", "cint").with_paper(
                "TOS 4.3, Fig 17 (text: CPU falls from 100% to 94% with the cap)",
                &[
                    ("cint", "", PaperValue::Absolute(100.0)),
                    ("cint+cap", "", PaperValue::Absolute(94.0)),
                ],
            ),
        ],
    }
}
