use super::app;
use super::macro_systems::{run, Scripts};
use crate::experiment::{Experiment, PanelSpec, Workload};
use crate::provenance::{Origin, Provenance, RUN_LENGTH};

const SYSTEMS: [&str; 3] = ["cint", "default", "adaptive"];

/// TOS 5.4.2, Fig 23: KVell on YCSB A, B, C, D and F, two worker cores and
/// four client cores, in the simulator (issue 16).
pub fn experiment() -> Experiment {
    let workloads: Vec<Workload> = vec![
        app!("kvell-ycsb-a"),
        app!("kvell-ycsb-b"),
        app!("kvell-ycsb-c"),
        app!("kvell-ycsb-d"),
        app!("kvell-ycsb-f"),
    ];
    let mut runs = Vec::new();
    for w in &workloads {
        let group = w.name.trim_start_matches("kvell-ycsb-");
        for s in SYSTEMS {
            runs.push(run(s, Scripts::Kvell, w.name, group, &[]));
        }
    }
    Experiment {
        id: "fig23",
        title: "Fig 23: KVell on YCSB A-D, F (2 worker cores, 4 client cores)",
        paper: "TOS 5.4.2: KVell (Linux AIO, Barrier on each io_submit's last request by \
                default) on YCSB with 80 M 1 KB items. cint beats default on throughput, most \
                on the write-heavy A and D; reads are cheap, so the CPU idles 3% under default \
                and 14% under cint on B, C, F. Adaptive nearly matches cint's throughput but \
                has 5-8% higher average and p99 latency on every workload.",
        provenance: Provenance::new(Origin::Paper("TOS 5.4.2, Fig 23; Table 4"))
            .with(
                "application",
                "KVell-like engine (crates/apps/src/kvell.rs): 2 workers, 4 injectors",
                Origin::Artifact("kvell/main 0 2 4 a (artifact-configs.md, Macrobenchmarks)"),
            )
            .with(
                "data",
                "80 M items of 1 KB, 4 KiB pages",
                Origin::Paper("TOS 5.4.2"),
            )
            .with(
                "key choice",
                "uniform (A-C, F), latest (D)",
                Origin::Artifact("kvell/main.c YCSB_ALL_WORKLOAD: ycsb_*_uniform"),
            )
            .with(
                "systems",
                "default (delay 0), adaptive 15 us / 32, cint 15 us / 32",
                Origin::Artifact(
                    "artifact-configs.md: KVell, irq_poller_delay=15 irq_poller_max_thr=32",
                ),
            )
            .with(
                "kernel marks",
                "table1 (rocks-addon kernel: Barrier on each io_submit's last iocb)",
                Origin::Artifact("linux-kernel rocks-addon patch (artifact-configs.md)"),
            )
            .with(
                "device, host",
                "optane, xeon-e5-2660v4",
                Origin::Paper("TOS 5.1, 5.4: Optane"),
            )
            .with(
                "operations",
                "time-bounded (the paper's 20 M operations are not run)",
                RUN_LENGTH,
            ),
        workloads,
        runs,
        panels: vec![
            PanelSpec::bars("(a) throughput [ops/s]", "ops_per_s:kvell", "cint"),
            PanelSpec::bars("(b) average latency [us]", "op_lat_us:kvell", "cint"),
            PanelSpec::bars("(c) p99 latency [us]", "op_p99_us:kvell", "cint"),
            PanelSpec::bars("(d) worker cores idle [%]", "idle:0-1", "cint"),
        ],
    }
}
