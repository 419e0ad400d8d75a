use super::gyawali;
use crate::experiment::{systems_in, Experiment, PanelSpec};
use crate::provenance::Origin;

/// Gyawali and Aryal, Sec 4, Fig 8: calibrated interrupts (Urgent and
/// Barrier, static delta) and their correction factor (delta = e^(a (thr -
/// coalesced)) - 1, a = 0.1) against adaptive and NVMe's coalescing, on
/// the variable workload.
pub fn experiment() -> Experiment {
    Experiment {
        id: "gyawali-fig8",
        title: "Gyawali and Aryal Fig 8: cint and the correction factor (variable workload)",
        paper: "Gyawali and Aryal, Sec 4, Fig 8 (text only; one number, in the abstract): \
                Urgent and Barrier raise IOPS (a, b), lower latency (c) and interrupts (d); \
                the correction factor raises IOPS further and lowers latency more, with \
                slightly more interrupts; with it, +13% IOPS against NVMe's coalescing. \
                Labels relative to cint.",
        provenance: gyawali::provenance("Gyawali and Aryal, Sec 4, Fig 8")
            .with(
                "systems",
                "nvme100 (threshold 32); adaptive (6 us, 32); cint (6 us, 32, no OOO); \
                 dynamic: cint with delta = e^(0.1 (32 - coalesced)) - 1 us (a = 0.1, no OOO)",
                Origin::Paper(
                    "Gyawali and Aryal, Sec 3.1 (Algorithm 1, a = 0.1), Sec 4, abstract (NVMe \
                     coalescing); the unit of delta (us) and OOO off in both cint systems are \
                     ours (crates/policy/src/dynamic.rs; the paper states neither)",
                ),
            )
            .with(
                "panels",
                "(a) the sync thread's IOPS, (b) the async thread's, (c) the sync thread's \
                 latency, (d) interrupts/s",
                Origin::Ours(
                    "Fig 8's text does not name the threads; Figs 6 and 7 draw the sync \
                     thread's latency and the async thread's IOPS, so (c) is the sync \
                     thread's latency and (a), (b) the two threads' IOPS",
                ),
            ),
        workloads: vec![gyawali::variable()],
        runs: systems_in(
            &["nvme100", "adaptive", "cint", "dynamic"],
            "gyawali-variable",
            "optane",
            "",
        ),
        panels: vec![
            PanelSpec::bars("(a) sync IOPS", "iops:sync", "cint"),
            PanelSpec::bars("(b) async IOPS", "iops:async", "cint"),
            PanelSpec::bars("(c) sync latency [us]", "lat_us:sync", "cint"),
            PanelSpec::bars("(d) interrupts/s", "irq_rate", "cint"),
            PanelSpec::bars("total IOPS (the abstract's +13%)", "total_iops", "cint"),
            // Not a panel of the paper's: the bursty thread's latency, which
            // the correction factor's delta governs (its requests are
            // unmarked but the last of each io_submit).
            PanelSpec::bars("async latency [us] (ours)", "lat_us:async", "cint"),
        ],
    }
}
