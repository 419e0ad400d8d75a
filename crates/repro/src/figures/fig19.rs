use super::example;
use crate::experiment::{Experiment, PanelSpec, RunSpec, Workload};
use crate::provenance::{Origin, Provenance, RUN_LENGTH};

pub const THRS: &[u32] = &[1, 2, 4, 8, 16, 24, 32, 48, 64, 128, 255];

/// TOS 5.2, Fig 19: thr swept over [1, 256) at each device's delta (6 us
/// Optane, 15 us P3700); throughput plateaus between 16 and 32.
pub fn experiment() -> Experiment {
    let mut runs = Vec::new();
    for device in ["optane", "p3700"] {
        for &thr in THRS {
            let mut r = RunSpec::new("adaptive", "tune-libaio", device)
                .in_group(thr.to_string())
                .shown_as(device, format!("{device}/{thr}"));
            r.policy.thr = Some(thr);
            runs.push(r);
        }
    }
    Experiment {
        id: "fig19",
        title: "Fig 19: choosing thr at a fixed delta (both devices)",
        paper: "TOS 5.2: with delta fixed (6 us Optane, 15 us P3700), thr is swept over \
                [0, 256); throughput plateaus between 16 and 32, so thr = 32 for both; \
                the P3700 runs about 15K IOPS lower. The paper does not name the workload; \
                we use Fig 18's unbatched libaio workload at iodepth 256 under \
                adaptive.",
        provenance: Provenance::new(Origin::Paper("TOS 5.2, Fig 19 (not in the artifact)"))
            .with(
                "workload",
                "tune-libaio.fio (Fig 18's unbatched libaio, iodepth 256)",
                Origin::Ours("TOS 5.2 does not name Fig 19's workload"),
            )
            .with(
                "system",
                "adaptive at each device's delta (6 us, 15 us), thr swept",
                Origin::Paper("TOS 5.2"),
            )
            .with("devices", "optane, p3700", Origin::Paper("TOS 5.2, Fig 19"))
            .with("runtime, runs", "scaled", RUN_LENGTH),
        workloads: vec![example!("tune-libaio")],
        runs,
        panels: vec![
            PanelSpec::lines("(a) IOPS", "total_iops", "thr", true),
            PanelSpec::lines("(b) interrupts/s", "irq_rate", "thr", true),
        ],
    }
}
