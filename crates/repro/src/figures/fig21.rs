use super::{artifact, ASYNC, SYNC};
use crate::experiment::{Experiment, PanelSpec, RunSpec};
use crate::provenance::Origin;

use super::fig10::{mixed_provenance, FIO_ARGS};

/// TOS 5.3 configures cint and adaptive "with the same delta and thr"
/// (6 us and 32 on the Optane); Fig 21 is not in the artifact.
pub const SYSTEMS: &[(&str, &str)] = &[
    ("default", "alpha-0-0"),
    ("adaptive", "alpha-6-32"),
    ("cint", "cint-6-32"),
    ("cint+ooo", "cint-6-32-ooo"),
];

/// TOS 5.3, Fig 21: how each strategy splits the core between the sync and
/// the async thread of "the mixed workload originally described in Section
/// 3.3" (Fig 10's: iodepth 16, one request per io_submit).
pub fn experiment() -> Experiment {
    Experiment {
        id: "fig21",
        title: "Fig 21: CPU fairness in the mixed workload (iodepth 16)",
        paper: "TOS 5.3: under default each thread gets about 50% of the core; under \
                adaptive the sync thread gets only 23%, since its interrupts are withheld \
                and it sits blocked; cint comes closer to fair and cint+OOO matches \
                default. The workload is Section 3.3's (Fig 10's). Labels relative to \
                default.",
        provenance: mixed_provenance(
            Origin::Paper("TOS 5.3, Fig 21 (not in the artifact)"),
            Origin::Artifact("fig5/rand_mix.fio, as TOS 5.3 names \"the mixed workload originally described in Section 3.3\""),
            FIO_ARGS,
            SYSTEMS,
        )
        .with(
            "systems' delta and thr",
            "6 us and 32 for cint, cint+ooo and adaptive",
            Origin::Paper("TOS 5.3: \"cinterrupts and the adaptive strategy are configured with the same delta and thr\"; 5.2: 6 us, 32 on the Optane"),
        ),
        workloads: vec![artifact!("rand_mix", "fig5/rand_mix.fio")],
        runs: SYSTEMS
            .iter()
            .map(|(shown, name)| RunSpec::artifact(shown, name, "rand_mix", "optane").with_fio(FIO_ARGS))
            .collect(),
        panels: vec![
            // The processes' split of their CPU time: the authors' kernel
            // leaves interrupt time out of a process's
            // (CONFIG_IRQ_TIME_ACCOUNTING=y, artifact linux-kernel/config-file).
            PanelSpec::bars("(a) sync process's part of the CPU [%]", &format!("cpu_split:{SYNC}"), "default"),
            PanelSpec::bars("(b) async process's part of the CPU [%]", &format!("cpu_split:{ASYNC}"), "default"),
        ],
    }
}
