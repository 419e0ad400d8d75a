use super::fastresponse as fr;
use super::fr_fig12::runs;
use crate::experiment::{Experiment, PanelSpec};
use crate::provenance::Origin;

/// FR 4.4, Fig 16: the device's queue depth with readrandom beside
/// TeraSort, Vanilla against B-Opt.
pub fn experiment() -> Experiment {
    Experiment {
        id: "fr-fig16",
        title: "FR Fig 16: the device's queue depth beside TeraSort (Vanilla, B-Opt)",
        paper: "FR 4.4: TO bursts drive the device's queue depth over 160 under Vanilla, and \
                device-latency spikes track it; B-Opt holds it at about 10.",
        provenance: fr::provenance("FR 4.4, Fig 16").with(
            "queue depth",
            "requests (pieces) at the device, time-weighted over the window: mean, p99, max",
            Origin::Ours("FR plots a time series; we give its summary"),
        ),
        workloads: fr::coruns(),
        runs: runs(&["vanilla", "b-opt"], &["terasort"]),
        panels: vec![
            PanelSpec::bars("(a) mean queue depth", "qd_mean", "vanilla"),
            PanelSpec::bars("(b) p99 queue depth", "qd_p99", "vanilla"),
            PanelSpec::bars("(c) max queue depth", "qd_max", "vanilla"),
        ],
    }
}
