use super::fastresponse::{self as fr, LS_W, SYSTEMS_W};
use super::fr_fig12::ALL;
use crate::experiment::{Experiment, PanelSpec};

/// FR 4.2, Fig 13: fillsync's response time beside each TO workload under
/// Vanilla, SelectISR, B-Opt, BS-Opt and BSJ-Opt.
pub fn experiment() -> Experiment {
    let bars = |title, metric: &str| PanelSpec::bars(title, &format!("{metric}:{LS_W}"), "vanilla");
    Experiment {
        id: "fr-fig13",
        title: "FR Fig 13: fillsync beside each TO workload (Vanilla .. BSJ-Opt)",
        paper: "FR 4.2: against Vanilla, SelectISR, B-Opt and BS-Opt cut fillsync's average \
                response time by 10%, 6% and 18%; BSJ-Opt cuts the average by 58%, the p99 by \
                83% and the p99.9 by 74% on average over the five TO workloads, and against \
                BS-Opt by up to 48%, 78% and 64%.",
        provenance: fr::provenance_w("FR 4.2, Fig 13"),
        workloads: fr::coruns_w(),
        runs: fr::runs_w(SYSTEMS_W, ALL),
        panels: vec![
            bars("(a) mean put response time (write + fsync) [us]", "put_us"),
            bars("(b) fsync p99 [us]", "sync_p99_us"),
            bars("(c) fsync p99.9 [us]", "sync_p999_us"),
        ],
    }
}
