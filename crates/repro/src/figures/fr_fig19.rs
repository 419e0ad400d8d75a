use super::fastresponse::{self as fr, CORUN_RUNTIME, LS, SHARED_CORE};
use crate::experiment::{Experiment, HostSettings, PanelSpec, RunSpec};
use crate::provenance::Origin;

pub const TOKENS: &[u32] = &[1, 2, 4, 8, 16, 32];

/// FR 4.5, Fig 19a: FastResponse's tokens, readrandom beside TeraSort.
pub fn experiment() -> Experiment {
    let runs = TOKENS
        .iter()
        .map(|&n| {
            let settings = HostSettings {
                block_scheduler: Some(format!("ld,tokens={n}").parse().expect("ld parses")),
                ..crate::experiment::fastresponse("bs-opt").expect("bs-opt")
            };
            RunSpec::fastresponse("bs-opt", "readrandom+terasort", "default")
                .with_host(settings)
                .with_fio(&[SHARED_CORE])
                .at_least(CORUN_RUNTIME)
                .in_group(n.to_string())
        })
        .collect();
    Experiment {
        id: "fr-fig19",
        title: "FR Fig 19a: readrandom beside TeraSort against LD's tokens (BS-Opt)",
        paper: "FR 4.5: readrandom's mean and p99 grow markedly with the number of tokens: \
                more non-critical requests reach the device at once.",
        provenance: fr::provenance("FR 4.5, Fig 19a").with(
            "tokens",
            "1, 2, 4, 8, 16, 32",
            Origin::Ours("FR's axis values are not in its text"),
        ),
        workloads: fr::coruns()
            .into_iter()
            .filter(|w| w.name == "readrandom+terasort")
            .collect(),
        runs,
        panels: vec![
            PanelSpec::lines(
                "(a) mean latency [us]",
                &format!("lat_us:{LS}"),
                "tokens",
                true,
            ),
            PanelSpec::lines(
                "(b) p99 latency [us]",
                &format!("p99_us:{LS}"),
                "tokens",
                true,
            ),
        ],
    }
}
