use super::fastresponse::{self as fr, LS, SYSTEMS};
use super::fr_fig12::runs;
use crate::experiment::{Experiment, PanelSpec};

/// FR 4.4, Fig 15a: readrandom's read path beside Bayes, per system.
pub fn experiment() -> Experiment {
    Experiment {
        id: "fr-fig15",
        title: "FR Fig 15a: readrandom's read path beside Bayes (T_Dev, T_Sched)",
        paper: "FR 4.4: SelectISR has no T_Sched (it polls); B-Opt cuts T_Dev from 26 us to \
                17 us (throttled, split TO requests); BS-Opt cuts T_Sched from 22 us to 7 us \
                (the critical wake-up boost).",
        provenance: fr::provenance("FR 4.4, Fig 15a"),
        workloads: fr::coruns(),
        runs: runs(SYSTEMS, &["bayes"]),
        panels: vec![
            PanelSpec::bars("(a) T_Dev [us]", &format!("t_dev_us:{LS}"), "vanilla"),
            PanelSpec::bars("(b) T_Sched [us]", &format!("t_sched_us:{LS}"), "vanilla"),
            PanelSpec::bars("(c) mean latency [us]", &format!("lat_us:{LS}"), "vanilla"),
        ],
    }
}
