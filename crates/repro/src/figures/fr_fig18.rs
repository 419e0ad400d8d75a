use super::{fastresponse as fr, own};
use crate::experiment::{Experiment, PanelSpec, RunSpec, Workload};
use crate::provenance::{Origin, RUN_LENGTH};

/// FR 4.4, Fig 18: readrandom's CPU with no rate limit, SelectISR (its
/// critical requests polled) against FastResponse (BS-Opt on the read path).
pub fn experiment() -> Experiment {
    let run = |system: &str, shown: &str| {
        RunSpec::fastresponse(system, "fr-readrandom-unlimited", "default").shown_as(shown, shown)
    };
    Experiment {
        id: "fr-fig18",
        title: "FR Fig 18: readrandom's CPU with no rate limit (SelectISR, FastResponse)",
        paper: "FR 4.4: with no limit on the request rate (about 50K requests/s), SelectISR's \
                polling takes almost 100% of a CPU; FastResponse 73.47% for readrandom.",
        provenance: fr::provenance("FR 4.4, Fig 18")
            .with(
                "workload",
                "jobs/fr-readrandom-unlimited.fio: ls-readrandom.fio without its rate",
                Origin::Paper("FR 4.4: \"not limited\""),
            )
            .with(
                "co-run",
                "none: readrandom alone, on its own core",
                Origin::Ours("FR 4.4 gives readrandom's CPU and names no TO workload for Fig 18"),
            )
            .with(
                "FastResponse",
                "bs-opt (BSJ-Opt's fjournaling has no part in the read path)",
                Origin::Paper("FR 4.1, 4.2"),
            )
            .with("runtime, runs", "the plan's", RUN_LENGTH),
        workloads: vec![own!("fr-readrandom-unlimited")],
        runs: vec![run("selectisr", "selectisr"), run("bs-opt", "fastresponse")],
        panels: vec![
            PanelSpec::bars(
                "(a) readrandom's CPU [% of a core]",
                &format!("cpu_share:{}", fr::LS),
                "selectisr",
            ),
            PanelSpec::bars(
                "(b) readrandom's IOPS",
                &format!("iops:{}", fr::LS),
                "selectisr",
            ),
        ],
    }
}
