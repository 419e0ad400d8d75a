use super::fastresponse::{self as fr, CORUN_RUNTIME, LS, SHARED_CORE};
use crate::experiment::{Experiment, PanelSpec, RunSpec};
use crate::provenance::Origin;

/// FR 2.2, Figs 4a and 5a: readrandom alone and co-run with Bayes under
/// Vanilla: latency and the read path's breakdown (T_Dev, T_Sched).
pub fn experiment() -> Experiment {
    let corun = RunSpec::fastresponse("vanilla", "readrandom+bayes", "default")
        .with_fio(&[SHARED_CORE])
        .at_least(CORUN_RUNTIME)
        .in_group("+bayes");
    let alone = RunSpec::fastresponse("vanilla", "readrandom", "default")
        .with_fio(&[SHARED_CORE])
        .at_least(CORUN_RUNTIME)
        .in_group("alone");
    let mut workloads = vec![fr::alone()];
    workloads.extend(
        fr::coruns()
            .into_iter()
            .filter(|w| w.name == "readrandom+bayes"),
    );
    Experiment {
        id: "fr-fig4",
        title: "FR Figs 4a, 5a: readrandom alone and beside Bayes (Vanilla)",
        paper: "FR 2.2: co-run with Bayes, readrandom's average latency grows 1.5x and its \
                p99.9 by dozens of times; in the read path's breakdown (Fig 5a) the dominant \
                T_Dev grows 2.4x and T_Sched 5.5x.",
        provenance: fr::provenance("FR 2.2, Figs 4a, 5a").with(
            "system",
            "vanilla (Linux 5.3.7's CFS, no LD, interrupts)",
            Origin::Paper("FR 2.2, 4.1"),
        ),
        workloads,
        runs: vec![alone, corun],
        panels: vec![
            PanelSpec::bars("(a) mean latency [us]", &format!("lat_us:{LS}"), "vanilla"),
            PanelSpec::bars(
                "(b) p99.9 latency [us]",
                &format!("p999_us:{LS}"),
                "vanilla",
            ),
            PanelSpec::bars("(c) T_Dev [us]", &format!("t_dev_us:{LS}"), "vanilla"),
            PanelSpec::bars("(d) T_Sched [us]", &format!("t_sched_us:{LS}"), "vanilla"),
        ],
    }
}
