use super::example;
use crate::experiment::{systems_in, Experiment, PanelSpec, Workload};

/// TOS 5.3, Fig 21: how each strategy splits the core between the sync and
/// the async thread of the mixed workload (iodepth 256).
pub fn experiment() -> Experiment {
    Experiment {
        id: "fig21",
        title: "Fig 21: CPU fairness in the mixed workload (iodepth 256)",
        paper: "TOS 5.3: under default each thread gets about 50% of the core; under \
                adaptive the sync thread gets only 23%, since its interrupts are withheld \
                and it sits blocked; cint comes closer to fair and cint+OOO matches \
                default. Labels relative to default.",
        workloads: vec![example!("mixed-256")],
        runs: systems_in(
            &["default", "adaptive", "cint", "cint+ooo"],
            "mixed-256",
            "optane",
            "",
        ),
        panels: vec![
            PanelSpec::bars("(a) sync thread CPU [%]", "cpu_share:sync", "default"),
            PanelSpec::bars("(b) async thread CPU [%]", "cpu_share:async", "default"),
        ],
    }
}
