use super::fastresponse::{self as fr, CORUN_RUNTIME, LS, SHARED_CORE, SYSTEMS, TO};
use crate::experiment::{Experiment, PanelSpec, RunSpec};

/// Each FR system on readrandom beside each TO workload, in a group per TO
/// workload (`vanilla/bayes`): the runs Figs 12, 14a, 15a and 16 draw.
pub fn runs(systems: &[&str], groups: &[&str]) -> Vec<RunSpec> {
    let mut out = Vec::new();
    for &(group, _) in TO.iter().filter(|(g, _)| groups.contains(g)) {
        for s in systems {
            out.push(
                RunSpec::fastresponse(s, fr::corun_name(group), "default")
                    .with_fio(&[SHARED_CORE])
                    .at_least(CORUN_RUNTIME)
                    .in_group(group),
            );
        }
    }
    out
}

pub const ALL: &[&str] = &["terasort", "bayes", "kmeans", "pagerank", "index"];

/// FR 4.2, Fig 12: readrandom's mean, p99 and p99.9 beside each TO
/// workload under Vanilla, SelectISR, B-Opt and BS-Opt.
pub fn experiment() -> Experiment {
    Experiment {
        id: "fr-fig12",
        title: "FR Fig 12: readrandom beside each TO workload (Vanilla, SelectISR, B-Opt, BS-Opt)",
        paper: "FR 4.2: against Vanilla, BS-Opt cuts readrandom's mean by 36% and p99.9 by 77% \
                on average over the five TO workloads; SelectISR cuts mean, p99, p99.9 by 21%, \
                19%, 28%; B-Opt's p99 is 49% below SelectISR's; BS-Opt is 16%, 40%, 59% below \
                B-Opt.",
        provenance: fr::provenance("FR 4.2, Fig 12"),
        workloads: fr::coruns(),
        runs: runs(SYSTEMS, ALL),
        panels: vec![
            PanelSpec::bars("(a) mean latency [us]", &format!("lat_us:{LS}"), "vanilla"),
            PanelSpec::bars("(b) p99 latency [us]", &format!("p99_us:{LS}"), "vanilla"),
            PanelSpec::bars(
                "(c) p99.9 latency [us]",
                &format!("p999_us:{LS}"),
                "vanilla",
            ),
        ],
    }
}
