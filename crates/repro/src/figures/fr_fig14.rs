use super::fastresponse as fr;
use super::fr_fig12::{runs, ALL};
use crate::experiment::{Experiment, PanelSpec};
use crate::provenance::Origin;

/// FR 4.3, Fig 14a: the TO workloads' throughput beside readrandom,
/// normalized to Vanilla (the same runs as fr-fig12, simulated once).
pub fn experiment() -> Experiment {
    Experiment {
        id: "fr-fig14",
        title: "FR Fig 14a: throughput of the mixed workloads, relative to Vanilla",
        paper: "FR 4.3: the TO workloads lose at most 6% under any system; SelectISR takes \
                1.6% off the total throughput of the mixed workloads, B-Opt 1.9%, and BS-Opt \
                a further 1.2%.",
        provenance: fr::provenance("FR 4.3, Fig 14a").with(
            "throughput",
            "all jobs' MB/s (total_mbs): the TO job's 128 KiB I/O dominates it",
            Origin::Ours("FR does not say how it adds the applications' throughputs"),
        ),
        workloads: fr::coruns(),
        runs: runs(fr::SYSTEMS, ALL),
        panels: vec![PanelSpec::bars(
            "(a) throughput [MB/s]",
            "total_mbs",
            "vanilla",
        )],
    }
}
