use super::app;
use super::macro_systems::{run, Scripts};
use crate::experiment::{Experiment, PanelSpec, Workload};
use crate::provenance::{Origin, Provenance, RUN_LENGTH};

const SYSTEMS: [&str; 3] = ["cint", "default", "adaptive"];

/// TOS 5.4.2, Table 5 and Fig 24: KVell on YCSB-E, scans of 16 and 256,
/// in the simulator (issue 16).
pub fn experiment() -> Experiment {
    let workloads: Vec<Workload> = vec![app!("kvell-ycsb-e-16"), app!("kvell-ycsb-e-256")];
    let mut runs = Vec::new();
    for w in &workloads {
        let group = w.name.trim_start_matches("kvell-ycsb-e-");
        for s in SYSTEMS {
            runs.push(run(s, Scripts::Kvell, w.name, group, &[]));
        }
    }
    Experiment {
        id: "table5",
        title: "Table 5 and Fig 24: KVell YCSB-E, scans of 16 and 256",
        paper: "TOS 5.4.2: scan throughput, default 0.88 and 0.95 of cint's (lengths 16 and \
                256), adaptive 0.95 and 0.97. Fig 24: the p50 scan latency of default is about \
                600 us above cint's at both lengths, also at p99; adaptive's is 400 us above \
                cint's at length 16, and the gap is gone at 256.",
        provenance: Provenance::new(Origin::Paper("TOS 5.4.2, Table 5, Fig 24"))
            .with(
                "application",
                "KVell-like engine: 2 workers, 4 injectors, YCSB-E (95% scans, 5% inserts)",
                Origin::Artifact("kvell/main 0 2 4 (artifact-configs.md)"),
            )
            .with(
                "scan lengths",
                "16, 256",
                Origin::Paper("TOS 5.4.2, Table 5"),
            )
            .with(
                "key choice",
                "uniform",
                Origin::Artifact("kvell/main.c SCAN_WORKLOAD: ycsb_e_uniform"),
            )
            .with(
                "systems",
                "default (delay 0), adaptive 15 us / 32, cint 15 us / 32",
                Origin::Artifact(
                    "artifact-configs.md: KVell, irq_poller_delay=15 irq_poller_max_thr=32",
                ),
            )
            .with("operations", "time-bounded", RUN_LENGTH),
        workloads,
        runs,
        panels: vec![
            PanelSpec::bars("(a) scans/s", "ops_per_s:kvell/scan", "cint"),
            PanelSpec::bars("(b) p50 scan latency [us]", "op_p50_us:kvell/scan", "cint"),
            PanelSpec::bars("(c) p99 scan latency [us]", "op_p99_us:kvell/scan", "cint"),
        ],
    }
}
