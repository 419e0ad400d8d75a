use super::fastresponse::{self as fr, LS_W, SYSTEMS_W};
use crate::experiment::{Experiment, PanelSpec};

/// FR 4.4, Fig 15b: fillsync's fsync path beside Bayes, per system.
pub fn experiment() -> Experiment {
    let bars = |title, metric: &str| PanelSpec::bars(title, &format!("{metric}:{LS_W}"), "vanilla");
    Experiment {
        id: "fr-fig15b",
        title: "FR Fig 15b: fillsync's fsync path beside Bayes (T_D1, T_D2, T_JD, T_JC, T_Sched)",
        paper: "FR 4.4: SelectISR trims T_D1, T_D2 and T_JC (it polls) but not T_Sched; B-Opt \
                trims T_D1, T_JD and T_JC but raises T_D2 from 18 us to 34 us (other files' \
                data is not critical and is throttled); BS-Opt trims all four I/O portions and \
                T_Sched; BSJ-Opt removes T_Sched and T_D2 and shrinks T_JD.",
        provenance: fr::provenance_w("FR 4.4, Fig 15b"),
        workloads: fr::coruns_w(),
        runs: fr::runs_w(SYSTEMS_W, &["bayes"]),
        panels: vec![
            bars("(a) T_D1 [us]", "t_d1_us"),
            bars("(b) T_D2 [us]", "t_d2_us"),
            bars("(c) T_JD [us]", "t_jd_us"),
            bars("(d) T_JC [us]", "t_jc_us"),
            bars("(e) T_Sched [us]", "fsync_sched_us"),
            bars("(f) context switches per fsync", "switches_per_fsync"),
        ],
    }
}
