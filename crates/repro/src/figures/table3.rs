use super::app;
use super::macro_systems::{common, with_app_cint};
use crate::experiment::{Experiment, PanelSpec};
use crate::provenance::{Origin, Provenance};
use policy::SEC;

/// TOS 5.4.1, Table 3: RocksDB's load (db_bench fillbatch) with its flush
/// and compaction I/O Urgent (cint) or not (app-cint), in the simulator.
pub fn experiment() -> Experiment {
    // A flush every 64 MiB memtable, about 0.25 s of the load at its rate
    // here: the run must see several for app-cint's unmarked flush writes
    // to matter.
    let runs = with_app_cint("rocksdb-fillbatch", "load")
        .into_iter()
        .map(|r| r.at_least(3 * SEC))
        .collect();
    Experiment {
        id: "table3",
        title: "Table 3: RocksDB load (fillbatch), background I/O marked non-Urgent (app-cint)",
        paper: "TOS 5.4.1: marking flush and compaction non-Urgent gives 4% more throughput \
                (405 vs 388 KIOPS) and 15% lower p99 (12.7 vs 15.0 ms) at the same average \
                latency; cint, default and adaptive are the same within error.",
        provenance: common(
            Provenance::new(Origin::Paper("TOS 5.4.1, Table 3"))
                .with(
                    "db_bench",
                    "fillbatch, 1 thread, 16 B keys, 1 KiB values, no compression, direct I/O for \
                 flush and compaction, auto compactions on",
                    Origin::Artifact("tab3/fillbatch.sh (artifact-configs.md)"),
                )
                .with(
                    "cores",
                    "1",
                    Origin::Artifact("artifact-configs.md: the load on one core"),
                )
                .with(
                    "app-cint",
                    "flush and compaction I/O unmarked (preadv2/pwritev2 without RWF_URGENT)",
                    Origin::Artifact("rocksdb/cint.patch (artifact-configs.md)"),
                )
                .with(
                    "systems",
                    "default (delay 0), adaptive 6 us / 32, cint and app-cint 15 us / 32",
                    Origin::Artifact("artifact-configs.md: RocksDB module parameters"),
                ),
            "examples/apps/rocksdb-fillbatch.toml",
        ),
        workloads: vec![app!("rocksdb-fillbatch")],
        runs,
        panels: vec![
            PanelSpec::bars("(a) keys/s", "items_per_s:load/write-batch", "cint"),
            PanelSpec::bars(
                "(b) batch latency [us]",
                "op_lat_us:load/write-batch",
                "cint",
            ),
            PanelSpec::bars(
                "(c) p99 batch latency [us]",
                "op_p99_us:load/write-batch",
                "cint",
            ),
        ],
    }
}
