use super::own;
use crate::experiment::{systems_in, Experiment, PanelSpec, Workload};
use crate::provenance::{Origin, Provenance, RUN_LENGTH};

/// Gyawali and Aryal, Fig 8: cint with a dynamic delta (delta = e^(a (thr -
/// coalesced)) - 1, a = 0.1) against cint's static delta and NVMe
/// coalescing, on a variable workload.
pub fn experiment() -> Experiment {
    Experiment {
        id: "gyawali",
        title: "Gyawali and Aryal: dynamic timeout against cint (variable workload)",
        paper: "Gyawali and Aryal, Fig 8 (text only, no numbers but one): on a variable \
                workload, cint with their correction factor gets about 13% more IOPS than \
                NVMe's coalescing, lower latency than cint's static delta, and slightly \
                more interrupts. The paper gives no workload parameters; ours is a \
                bursty libaio thread beside sparse blocking reads. Labels relative to cint.",
        provenance: Provenance::new(Origin::Paper("Gyawali and Aryal, Fig 8"))
            .with(
                "workload",
                "variable.fio: a bursty libaio thread beside sparse blocking reads",
                Origin::Ours("the paper gives no workload parameters"),
            )
            .with(
                "systems",
                "cint, dynamic (a = 0.1), adaptive, nvme100",
                Origin::Paper("Gyawali and Aryal, Section 4"),
            )
            .with(
                "device",
                "optane",
                Origin::Ours("the paper emulates one device; the Optane is TOS's main one"),
            )
            .with("runtime, runs", "scaled", RUN_LENGTH),
        workloads: vec![own!("variable")],
        runs: systems_in(
            &["cint", "dynamic", "adaptive", "nvme100"],
            "variable",
            "optane",
            "",
        ),
        panels: vec![
            PanelSpec::bars("(a) total IOPS", "total_iops", "cint"),
            PanelSpec::bars("(b) burst latency [us]", "lat_us:burst", "cint"),
            PanelSpec::bars("(c) sparse latency [us]", "lat_us:sparse", "cint"),
            PanelSpec::bars("(d) interrupts/s", "irq_rate", "cint"),
        ],
    }
}
