use super::fastresponse::{self as fr, SYSTEMS_W};
use super::fr_fig12::ALL;
use crate::experiment::{Experiment, PanelSpec};
use crate::provenance::Origin;

/// FR 4.3, Fig 14b: the TO workloads' throughput beside fillsync,
/// normalized to Vanilla (the same runs as fr-fig13, simulated once).
pub fn experiment() -> Experiment {
    Experiment {
        id: "fr-fig14b",
        title: "FR Fig 14b: throughput of the TO workloads beside fillsync, relative to Vanilla",
        paper: "FR 4.3: the TO workloads lose at most 6% under any system; beside fillsync \
                BSJ-Opt improves their throughput by 4% on average against BS-Opt (JBD2 \
                commits less often, so less CPU goes to its lock contention).",
        provenance: fr::provenance_w("FR 4.3, Fig 14b").with(
            "throughput",
            "all jobs' MB/s (total_mbs), buffered writes counted as they complete in the page \
             cache: the TO job's 128 KiB I/O dominates it",
            Origin::Ours("FR does not say how it adds the applications' throughputs"),
        ),
        workloads: fr::coruns_w(),
        runs: fr::runs_w(SYSTEMS_W, ALL),
        panels: vec![PanelSpec::bars(
            "(b) throughput [MB/s]",
            "total_mbs",
            "vanilla",
        )],
    }
}
