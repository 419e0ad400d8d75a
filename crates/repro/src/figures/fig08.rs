use super::{example, own};
use crate::experiment::{systems_in, Experiment, PanelSpec, Workload};

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
        workloads: vec![example!("sync-read"), own!("fig8-async")],
        runs,
        panels: vec![
            PanelSpec::bars("(a) sync latency [us]", "lat_us:sync-read", "default").only(&["sync"]),
            PanelSpec::bars("(b) async IOPS", "iops:async", "default").only(&["async"]),
            PanelSpec::bars("(c) async interrupts/s", "irq_rate", "default").only(&["async"]),
        ],
    }
}
