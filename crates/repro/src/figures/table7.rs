use super::app;
use super::macro_systems::{run, Scripts};
use crate::experiment::{Experiment, PanelSpec};
use crate::provenance::{Origin, Provenance, RUN_LENGTH};

const SYSTEMS: [&str; 3] = ["cint", "default", "adaptive"];

fn colocated(id: &'static str, threads: u32, paper: &'static str) -> Experiment {
    let sets = [format!("rocks.threads={threads}")];
    let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
    let runs = SYSTEMS
        .iter()
        .map(|&s| run(s, Scripts::Rocksdb, "colocated-rocksdb-kvell", "", &sets))
        .collect();
    Experiment {
        id,
        title: if threads == 4 {
            "Table 7: RocksDB readrandom (4 threads) and KVell YCSB-C on the same cores"
        } else {
            "Table 8: RocksDB readrandom (8 threads) and KVell YCSB-C on the same cores"
        },
        paper,
        provenance: Provenance::new(Origin::Paper("TOS 5.5.2, Tables 7 and 8"))
            .with(
                "instances",
                "RocksDB readrandom and KVell YCSB-C, KVell's workers on RocksDB's two cores, \
                 its four clients on cores of their own",
                Origin::Paper("TOS 5.5.2: 'RocksDB and KVell on the same cores'"),
            )
            .with(
                "RocksDB threads",
                threads.to_string(),
                Origin::Paper("TOS 5.5.2"),
            )
            .with(
                "systems",
                "default (delay 0), adaptive 6 us / 32, cint 15 us / 32",
                Origin::Ours(
                    "the artifact has no script for the colocated runs; RocksDB's module \
                     parameters (its adaptive is 6 us, KVell's 15 us), as the table's first \
                     column is RocksDB's latency",
                ),
            )
            .with("operations", "time-bounded", RUN_LENGTH),
        workloads: vec![app!("colocated-rocksdb-kvell")],
        runs,
        panels: vec![
            PanelSpec::bars(
                "(a) RocksDB get latency [us]",
                "op_lat_us:rocks/read",
                "cint",
            ),
            PanelSpec::bars("(b) KVell [ops/s]", "ops_per_s:kvell", "cint"),
        ],
    }
}

/// TOS 5.5.2, Table 7: 4 RocksDB threads beside KVell, in the simulator.
pub fn experiment() -> Experiment {
    colocated(
        "table7",
        4,
        "TOS 5.5.2, Table 7: default matches cint's RocksDB latency (115 vs 116 us) but has 12% \
         less KVell throughput (0.89); adaptive matches KVell's throughput but has 11% worse \
         RocksDB latency (1.11).",
    )
}

/// TOS 5.5.2, Table 8: the same with 8 RocksDB threads.
pub fn experiment8() -> Experiment {
    colocated(
        "table8",
        8,
        "TOS 5.5.2, Table 8: with 8 RocksDB threads cint's gains shrink: KVell 0.94 under \
         default and 0.95 under adaptive; RocksDB latency 0.99 and 1.06.",
    )
}
