use super::fastresponse::{self as fr, CORUN_RUNTIME, LS_W, SHARED_CORE};
use crate::experiment::{Experiment, PanelSpec, RunSpec};
use crate::provenance::Origin;

/// FR 2.2, Figs 4b and 5b: fillsync alone and co-run with Bayes under
/// Vanilla: a put's response time and the fsync path's breakdown (T_D1,
/// T_D2, T_JD, T_JC, T_Sched).
pub fn experiment() -> Experiment {
    let run = |workload: &'static str, group: &str| {
        RunSpec::fastresponse_fsync("vanilla", workload, "default")
            .with_fio(&[SHARED_CORE])
            .at_least(CORUN_RUNTIME)
            .in_group(group)
    };
    let mut workloads = vec![fr::alone_w()];
    workloads.extend(
        fr::coruns_w()
            .into_iter()
            .filter(|w| w.name == "fillsync+bayes"),
    );
    let bars = |title, metric: &str| PanelSpec::bars(title, &format!("{metric}:{LS_W}"), "vanilla");
    Experiment {
        id: "fr-fig4b",
        title: "FR Figs 4b, 5b: fillsync alone and beside Bayes (Vanilla)",
        paper: "FR 2.2: co-run with Bayes, fillsync's average latency grows 2.7x and its p99.9 \
                by dozens of times; in the fsync path's breakdown (Fig 5b) T_D2 and T_Sched, \
                trivial alone, grow 15x and 9.4x, the other portions 2-3x.",
        provenance: fr::provenance_w("FR 2.2, Figs 4b, 5b").with(
            "system",
            "vanilla (Linux 5.3.7's CFS, no LD, interrupts, ext4 data=ordered, JBD2 not critical)",
            Origin::Paper("FR 2.2, 4.1"),
        ),
        workloads,
        runs: vec![run("fillsync", "alone"), run("fillsync+bayes", "+bayes")],
        panels: vec![
            bars("(a) mean put response time (write + fsync) [us]", "put_us"),
            bars("(b) fsync p99.9 [us]", "sync_p999_us"),
            bars("(c) T_D1 [us]", "t_d1_us"),
            bars("(d) T_D2 [us]", "t_d2_us"),
            bars("(e) T_JD [us]", "t_jd_us"),
            bars("(f) T_JC [us]", "t_jc_us"),
            bars("(g) T_Sched [us]", "fsync_sched_us"),
        ],
    }
}
