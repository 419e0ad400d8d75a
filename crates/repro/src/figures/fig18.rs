use super::example;
use crate::experiment::{Experiment, PanelKind, PanelSpec, RunSpec, Workload};
use crate::metric::Metric;
use crate::provenance::{Origin, Provenance, RUN_LENGTH};

/// TOS 5.2, Fig 18: the completion inter-arrival CDF that delta is read
/// from, for libaio at iodepth 256, unbatched and batched, on both devices.
/// Without coalescing (default), so the gaps are the device's.
pub fn experiment() -> Experiment {
    let mut runs = Vec::new();
    for device in ["optane", "p3700"] {
        for (workload, name) in [("tune-libaio", "libaio"), ("tune-libaio-batch", "batch")] {
            let key = format!("{device}/{name}");
            let mut r = RunSpec::new("default", workload, device).shown_as(&key, key.clone());
            r.group = device.to_string();
            runs.push(r);
        }
    }
    let cdf = |title| PanelSpec {
        title,
        metric: Metric::GapUs(0.9),
        kind: PanelKind::GapCdf,
        groups: Vec::new(),
        paper: Vec::new(),
    };
    Experiment {
        id: "fig18",
        title: "Fig 18: completion inter-arrival CDF, to choose delta",
        paper: "TOS 5.2: one thread of 4 KiB libaio reads at iodepth 256, unbatched and \
                batched. On the Optane the 90th percentile is 6 us unbatched and 1 us \
                batched, so delta = 6 us; on the P3700 both have a 99th percentile of \
                15 us, so delta = 15 us. `cinterrupts tune` automates the choice.",
        provenance: Provenance::new(Origin::Paper("TOS 5.2, Fig 18 (not in the artifact)"))
            .with("workloads", "tune-libaio.fio (iodepth 256, one request per submit) and tune-libaio-batch.fio (batches)", Origin::Paper("TOS 5.2: libaio at iodepth 256, unbatched and batched"))
            .with("batch size", "16", Origin::Ours("TOS 5.2 gives none; 16 as the artifact's batched runs (fig10, fig14)"))
            .with("system", "default (the device's own gaps)", Origin::Paper("TOS 5.2"))
            .with("devices", "optane, p3700", Origin::Paper("TOS 5.2, Fig 18"))
            .with("runtime, runs", "scaled", RUN_LENGTH),
        workloads: vec![example!("tune-libaio"), example!("tune-libaio-batch")],
        runs,
        panels: vec![
            cdf("(a) Optane").only(&["optane"]),
            cdf("(b) P3700").only(&["p3700"]),
        ],
    }
}
