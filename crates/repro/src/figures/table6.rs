use super::app;
use super::macro_systems::{common, with_app_cint};
use crate::experiment::{Experiment, PanelSpec};
use crate::provenance::{Origin, Provenance};

/// TOS 5.5.1, Table 6: RocksDB readrandom beside RocksDB's dump tool on a
/// second database, the dump's I/O Urgent (pread/pwrite) or not
/// (app-cint), in the simulator.
pub fn experiment() -> Experiment {
    let runs = with_app_cint("rocksdb-dump", "dump");
    Experiment {
        id: "table6",
        title: "Table 6: RocksDB readrandom beside the dump tool",
        paper: "TOS 5.5.1: with the dump tool's I/O non-Urgent (app-cint) the gets gain 37% \
                throughput, 32% lower average and 86% lower p99 latency than under cint, \
                while the dump loses 11%. Default is cint's; adaptive tames the p99 (0.15) at \
                the cost of IOPS and a 1.44x average.",
        provenance: common(
            Provenance::new(Origin::Paper("TOS 5.5.1, Table 6"))
            .with(
                "instances",
                "readrandom (4 threads) on one 10 M-key database, the dump tool on another",
                Origin::Paper("TOS 5.5.1"),
            )
            .with(
                "cores",
                "both on the same 2 cores",
                Origin::Ours("TOS 5.5 runs colocated instances 'on the same cores'; the artifact's numactl -C 1,5"),
            )
            .with(
                "app-cint",
                "the dump tool's reads and writes unmarked",
                Origin::Paper("TOS 4.1.2, RocksDB Dump"),
            )
            .with(
                "systems",
                "default (delay 0), adaptive 6 us / 32, cint and app-cint 15 us / 32",
                Origin::Artifact("artifact-configs.md: RocksDB module parameters"),
            ),
            "examples/apps/rocksdb-dump.toml",
        ),
        workloads: vec![app!("rocksdb-dump")],
        runs,
        panels: vec![
            PanelSpec::bars("(a) get throughput [ops/s]", "ops_per_s:rocks/read", "cint"),
            PanelSpec::bars("(b) get latency [us]", "op_lat_us:rocks/read", "cint"),
            PanelSpec::bars("(c) p99 get latency [us]", "op_p99_us:rocks/read", "cint"),
            PanelSpec::bars("(d) dump [items/s]", "items_per_s:dump/background", "cint"),
        ],
    }
}
