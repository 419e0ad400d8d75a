use super::gyawali::{self, FIG6_SYSTEMS};
use crate::experiment::{systems_in, Experiment, PanelSpec};
use crate::provenance::Origin;

/// Gyawali and Aryal, Sec 4, Fig 7: Fig 6's systems on the variable
/// workload beside the uniform one.
pub fn experiment() -> Experiment {
    let mut runs = systems_in(FIG6_SYSTEMS, "gyawali-uniform", "optane", "uniform");
    runs.extend(systems_in(
        FIG6_SYSTEMS,
        "gyawali-variable",
        "optane",
        "variable",
    ));
    Experiment {
        id: "gyawali-fig7",
        title: "Gyawali and Aryal Fig 7: adaptive on a variable workload against a uniform one",
        paper: "Gyawali and Aryal, Sec 4, Fig 7 (text only, no numbers): adaptive stays \
                superior on the variable workload, but against the uniform one its latency \
                rises, its async IOPS fall and it fires fewer interrupts: coalescing in the \
                kernel without the application's information fails on variable loads. Labels \
                relative to default.",
        provenance: gyawali::provenance("Gyawali and Aryal, Sec 4, Fig 7").with(
            "systems",
            "default; nvme100, nvme20, nvme6 (threshold 32); adaptive (6 us, 32), on both \
             workloads",
            Origin::Paper(
                "Gyawali and Aryal, Sec 4: Fig 7's caption compares adaptive with Fig 6's \
                 systems (\"superior ... as well\") and with itself on the uniform workload",
            ),
        ),
        workloads: vec![gyawali::uniform(), gyawali::variable()],
        runs,
        panels: vec![
            PanelSpec::bars("(a) sync latency [us]", "lat_us:sync", "default"),
            PanelSpec::bars("(b) async IOPS", "iops:async", "default"),
            PanelSpec::bars("(c) interrupts/s", "irq_rate", "default"),
        ],
    }
}
