use super::{example, own};
use crate::experiment::{systems_in, Experiment, PanelSpec, Workload};
use crate::provenance::{Origin, Provenance, RUN_LENGTH};

const SYSTEMS: &[&str] = &["default", "nvme100", "nvme20", "nvme6", "adaptive"];

/// TOS 3.2, Fig 8: adaptive coalescing against NVMe's aggregation with
/// 100/20/6 us timeouts (threshold 32) and no coalescing.
pub fn experiment() -> Experiment {
    let mut runs = systems_in(SYSTEMS, "sync-read", "optane", "sync");
    runs.extend(systems_in(SYSTEMS, "fig8-async", "optane", "async"));
    Experiment {
        id: "fig8",
        title: "Fig 8: adaptive against NVMe coalescing (Optane, one core)",
        paper: "TOS 3.2: one thread of blocking 4 KiB reads (a), and one thread of libaio \
                reads in batches of 16 at iodepth 512 (b, c). Every coalescing scheme adds \
                its timeout to a sync read; on async, the short fixed timeouts fire needless \
                interrupts. Labels relative to default.",
        provenance: Provenance::new(Origin::Paper("TOS 3.2, Fig 8 (not in the artifact)"))
            .with("sync workload", "sync-read.fio: one psync thread of 4 KiB random reads, cpus_allowed=1", Origin::Paper("TOS 3.2: \"a synchronous read workload\"; the same options as the artifact's fig14/rand_read_psync.fio"))
            .with("async workload", "fig8-async.fio: one libaio thread of 4 KiB random reads, iodepth 512, submitted in batches of 16", Origin::Paper("TOS 3.2: \"the thread submits 4-KB read requests via libaio in batches of 16, with iodepth=512\" (Fig 8's caption says only \"high iodepth\")"))
            .with("async completion batch", "iodepth_batch_complete_min=16, as the artifact's Fig 20 async thread (iodepth_batch_complete=16 beside batch submit 16); TOS 3.2 names the submission batch only", Origin::Artifact("fig14/rand_read_libaio.fio"))
            .with("systems", "default; nvme100, nvme20, nvme6 (threshold 32); adaptive (6 us, 32)", Origin::Paper("TOS 3.2"))
            .with("default marks", "table1 (no system here reads marks)", Origin::Ours("marks do not change these systems"))
            .with("device", "optane", Origin::Paper("TOS 3.2, Fig 8a: 10 us default latency"))
            .with("runtime, runs", "scaled", RUN_LENGTH),
        workloads: vec![example!("sync-read"), own!("fig8-async")],
        runs,
        panels: vec![
            PanelSpec::bars("(a) sync latency [us]", "lat_us:sync-read", "default").only(&["sync"]),
            PanelSpec::bars("(b) async IOPS", "iops:async", "default").only(&["async"]),
            PanelSpec::bars("(c) async interrupts/s", "irq_rate", "default").only(&["async"]),
        ],
    }
}
