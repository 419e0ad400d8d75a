use super::gyawali::{self, FIG6_SYSTEMS};
use crate::experiment::{systems_in, Experiment, PanelSpec};
use crate::provenance::Origin;

/// Gyawali and Aryal, Sec 4, Fig 6: adaptive against no coalescing and
/// NVMe's aggregation at 100, 20 and 6 us on the uniform workload.
pub fn experiment() -> Experiment {
    Experiment {
        id: "gyawali-fig6",
        title: "Gyawali and Aryal Fig 6: adaptive against NVMe coalescing (uniform workload)",
        paper: "Gyawali and Aryal, Sec 4, Fig 6 (text only, no numbers): on the uniform \
                workload, default has the lowest latency but the most interrupts and low IOPS; \
                nvme100, nvme20 and nvme6 add latency; adaptive keeps latency near default's \
                with fewer interrupts, and beats every NVMe configuration on sync latency, \
                async IOPS and interrupts. Labels relative to default, as the paper's.",
        provenance: gyawali::provenance("Gyawali and Aryal, Sec 4, Fig 6").with(
            "systems",
            "default; nvme100, nvme20, nvme6 (threshold 32); adaptive (6 us, 32)",
            Origin::Paper("Gyawali and Aryal, Sec 4 (Fig 6's text)"),
        ),
        workloads: vec![gyawali::uniform()],
        runs: systems_in(FIG6_SYSTEMS, "gyawali-uniform", "optane", ""),
        panels: vec![
            PanelSpec::bars("(a) sync latency [us]", "lat_us:sync", "default"),
            PanelSpec::bars("(b) async IOPS", "iops:async", "default"),
            PanelSpec::bars("(c) interrupts/s", "irq_rate", "default"),
        ],
    }
}
