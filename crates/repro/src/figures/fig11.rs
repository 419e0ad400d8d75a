use super::{artifact, BASIS, SYNC};
use crate::experiment::{Experiment, PanelSpec, PaperValue, RunSpec};
use crate::provenance::Origin;

use super::fig10::mixed_provenance;

const SCRIPT: Origin = Origin::Artifact("fig6/test.sh");
const JOB_FILE: Origin = Origin::Artifact("fig6/rand_mix.fio");

/// fig6/test.sh's `thrs`.
pub const THRS: &[u32] = &[4, 8, 16, 32, 64, 128, 256];

/// The paper's bar labels, adaptive / cint at thr 4, 8, 16, 32, 64 (OSDI'21
/// Fig 8 = TOS Fig 11; shared/papers/digest-cinterrupts.md 5.5); the paper
/// has no thr 128 or 256.
const LABELS: &str = "TOS 3.3, Fig 11 (OSDI'21 Fig 8's bar labels, adaptive / cint)";
const PAPER_THRS: [&str; 5] = ["4", "8", "16", "32", "64"];
const PAPER_TOTAL_IOPS: [f64; 5] = [1.04, 1.11, 1.16, 1.19, 1.20];
const PAPER_SYNC_IOPS: [f64; 5] = [0.59, 0.44, 0.32, 0.25, 0.15];
const PAPER_SYNC_LATENCY: [f64; 5] = [1.7, 2.3, 3.2, 4.0, 6.8];
const PAPER_INTERRUPTS: [f64; 5] = [2.11, 1.12, 0.59, 0.30, 0.15];

/// One panel's labels as marks on adaptive's bars.
fn adaptive(ratios: [f64; 5]) -> Vec<(&'static str, &'static str, PaperValue)> {
    PAPER_THRS
        .iter()
        .zip(ratios)
        .map(|(&thr, r)| ("adaptive", thr, PaperValue::Relative(r)))
        .collect()
}

/// fig6/test.sh: iodepth 512, 1024 when thr is 256; everything in flight
/// submitted at once, 1 to iodepth reaped at a time.
fn fio_args(thr: u32) -> Vec<String> {
    let iodepth = if thr == 256 { 1024 } else { 512 };
    vec![
        "--blocksize=4K".to_string(),
        format!("--iodepth={iodepth}"),
        format!("--iodepth_batch_submit={iodepth}"),
        "--iodepth_batch_complete_min=1".to_string(),
        format!("--iodepth_batch_complete_max={iodepth}"),
        BASIS.to_string(),
    ]
}

/// TOS 3.3, Fig 11: adaptive's threshold swept in the mixed workload, as
/// the artifact's fig6/test.sh runs it.
pub fn experiment() -> Experiment {
    let mut runs = Vec::new();
    for &thr in THRS {
        let group = thr.to_string();
        // fig6.gp draws cint as one line; its values (42,887 sync IOPS,
        // 42,890 interrupts/s) are one interrupt per sync read: the
        // Urgent-only cint-1000000-65535, run at iodepth 512.
        let cint = RunSpec::artifact("cint", "cint-1000000-65535", "rand_mix", "optane")
            .with_fio(&refs(&fio_args(0)))
            .in_group(&group);
        let adaptive = RunSpec::artifact(
            "adaptive",
            &format!("alpha-1000000-{thr}"),
            "rand_mix",
            "optane",
        )
        .with_fio(&refs(&fio_args(thr)))
        .in_group(&group);
        runs.extend([cint, adaptive]);
    }
    let args = fio_args(32);
    Experiment {
        id: "fig11",
        title: "Fig 11: adaptive's thr swept in the mixed workload (iodepth 512)",
        paper: "TOS 3.3: as Fig 10 with more requests in flight; x is adaptive's threshold \
                (delta 1 s, so only thr fires). Sync latency grows with the coalescing rate, \
                while Urgent keeps cint's low. The paper's text says iodepth 256; the \
                artifact's fig6/test.sh runs 512 (1024 at thr 256), which we follow. \
                Labels adaptive / cint.",
        provenance: mixed_provenance(
            SCRIPT,
            JOB_FILE,
            &refs(&args),
            &[
                ("cint", "cint-1000000-65535"),
                ("adaptive", "alpha-1000000-T, T in 4 8 16 32 64 128 256"),
            ],
        )
        .with(
            "iodepth",
            "512, 1024 at thr 256 (the paper's text: 256)",
            SCRIPT,
        ),
        workloads: vec![artifact!("rand_mix", "fig5/rand_mix.fio")],
        runs,
        panels: vec![
            PanelSpec::bars("(a) total IOPS", "total_iops", "cint")
                .with_paper(LABELS, &adaptive(PAPER_TOTAL_IOPS)),
            PanelSpec::bars("(b) sync IOPS", &format!("iops:{SYNC}"), "cint")
                .with_paper(LABELS, &adaptive(PAPER_SYNC_IOPS)),
            PanelSpec::bars("(c) sync latency [us]", &format!("lat_us:{SYNC}"), "cint")
                .with_paper(LABELS, &adaptive(PAPER_SYNC_LATENCY)),
            PanelSpec::bars("(d) interrupts/s", "irq_rate", "cint")
                .with_paper(LABELS, &adaptive(PAPER_INTERRUPTS)),
        ],
    }
}

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}
