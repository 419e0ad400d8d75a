use super::fastresponse::{self as fr, CORUN_RUNTIME, LS, SHARED_CORE};
use super::BASIS;
use crate::experiment::{Experiment, PanelSpec, RunSpec};
use crate::provenance::Origin;

/// Ours: FastResponse (BS-Opt) and calibrated interrupts together, against
/// each alone, on readrandom beside TeraSort.
pub fn experiment() -> Experiment {
    let run = |system: &str, policy: &str, shown: &str| {
        RunSpec::fastresponse(system, "readrandom+terasort", policy)
            .with_fio(&[SHARED_CORE, BASIS])
            .at_least(CORUN_RUNTIME)
            .shown_as(shown, shown)
    };
    Experiment {
        id: "ours-fr-cint",
        title: "Ours: FastResponse and calibrated interrupts together (readrandom + TeraSort)",
        paper: "Ours, not a paper's: readrandom's gets are Urgent (blocking reads), TeraSort's \
                libaio requests unmarked (the basis kernel's marks), so under cint the \
                critical gets interrupt at once and the TO completions are coalesced \
                (delta 6 us, thr 32). We run Vanilla and BS-Opt, each with the device policy \
                default (an interrupt per completion) and cint.",
        provenance: fr::provenance("ours, after FR 4.1 and TOS 3")
            .with(
                "marks",
                "--default_marks=basis: blocking reads Urgent, io_submit unmarked",
                Origin::Ours("the critical/non-critical split of FR is Urgent/unmarked here"),
            )
            .with(
                "device policies",
                "default; cint with the optane-900p profile's delta 6 us, thr 32",
                Origin::Ours("the profile's values (TOS 5.2's Optane tuning)"),
            )
            .with(
                "TO workload",
                "TeraSort (the most I/O-intensive of Table 1)",
                Origin::Ours("one TO workload keeps the experiment small"),
            ),
        workloads: fr::coruns()
            .into_iter()
            .filter(|w| w.name == "readrandom+terasort")
            .collect(),
        runs: vec![
            run("vanilla", "default", "vanilla"),
            run("vanilla", "cint", "cint"),
            run("bs-opt", "default", "bs-opt"),
            run("bs-opt", "cint", "bs-opt+cint"),
        ],
        panels: vec![
            PanelSpec::bars("(a) mean latency [us]", &format!("lat_us:{LS}"), "vanilla"),
            PanelSpec::bars(
                "(b) p99.9 latency [us]",
                &format!("p999_us:{LS}"),
                "vanilla",
            ),
            PanelSpec::bars("(c) interrupts/s", "irq_rate", "vanilla"),
            PanelSpec::bars("(d) CPU [%]", "cpu", "vanilla"),
            PanelSpec::bars("(e) throughput [MB/s]", "total_mbs", "vanilla"),
        ],
    }
}
