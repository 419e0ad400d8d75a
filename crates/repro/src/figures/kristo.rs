//! Tero Kristo's maximum-latency figures (issue 37 item 2): what C6 does
//! to fio randread's largest completion latency on an Ice Lake Xeon, and
//! what his per-device CPU latency limit (a proposal, not merged) takes
//! back. Sources: "[RFC PATCH 0/2] block: CPU latency PM QoS tuning"
//! (linux-block, 2024-08-29, Message-ID
//! 20240829075423.1345042-1-tero.kristo@linux.intel.com) and "[PATCHv2
//! 0/2] blk-mq: add CPU latency limit control" (2024-10-18, Message-ID
//! 20241018075416.436916-1-tero.kristo@linux.intel.com).

use host::cpuidle::{GovernorKind, Table};
use policy::US;
use sim::IdleSettings;

use super::own;
use crate::experiment::{Experiment, PanelSpec, RunSpec, Workload};
use crate::provenance::{Origin, Provenance, RUN_LENGTH};

const RFC: Origin = Origin::Paper(
    "Kristo, [RFC PATCH 0/2] block: CPU latency PM QoS tuning, linux-block 2024-08-29 (a proposal, not merged)",
);
const V2: Origin = Origin::Paper(
    "Kristo, [PATCHv2 0/2] blk-mq: add CPU latency limit control, linux-block 2024-10-18 (a proposal, not merged)",
);

/// The letter's host: "an Intel Icelake Xeon system" (intel_idle's
/// `icx_cstates`), the `menu` governor (ours: the letters do not name it;
/// menu is what a tickless distribution kernel runs).
fn icx(disabled: &[&str], device_limit: Option<u64>) -> IdleSettings {
    IdleSettings {
        states: Table::Icx,
        governor: GovernorKind::Menu,
        disabled: disabled.iter().map(|s| s.to_string()).collect(),
        cpu_latency_limit: None,
        device_latency_limit: device_limit,
    }
}

pub fn experiment() -> Experiment {
    let run = |key: &str, idle: IdleSettings| {
        RunSpec::new("default", "kristo-randread", "optane")
            .shown_as(key, key)
            .with_idle(idle)
    };
    Experiment {
        id: "kristo",
        title: "Kristo's CPU latency limit: C6 and fio randread's maximum latency (Ice Lake-SP)",
        paper: "Kristo's blk-mq CPU latency proposal (a proposal, not merged; RFC 2024-08-29, \
                v2 2024-10-18): fio random reads on an Ice Lake Xeon with an NVMe device. \
                RFC: clat max 242.7 and 241.9 us with C6 enabled, 98.3 and 93.4 us with C6 \
                disabled (\"about 2.5x\"), 103.6 and 115.7 us with C6 enabled under a 10 us \
                per-device limit (cpu_lat_limit_us=10, cpu_lat_timeout_ms=3: \"cut by approx \
                100us and quite close to the levels seen with C6 disabled\"); clat means 23.8 \
                and 23.5 us against 22.2 and 22.6 us. v2: clat max 101-135 us under the 10 us \
                limit against 247-281 us without (a different job: 1.2-1.4 GB/s). Ours: his \
                job as the letter lets us guess it (kristo-randread.fio: libaio, iodepth 1, \
                4 KiB), on the TOS host's costs with intel_idle's Ice Lake-SP table and the \
                menu governor, on the Optane profile (his device is not named).",
        provenance: Provenance::new(RFC)
            .with("job file", "kristo-randread.fio: one libaio thread of 4 KiB random reads at iodepth 1, direct", Origin::Ours("the RFC shows fio's slat (async engines only) and clat 23 us beside lat 30 us (one request at a time); bs is fio's default"))
            .with("host CPU", "Ice Lake-SP idle states (intel_idle.c icx_cstates: C1 1/1, C1E 4/4, C6 170/600 us), menu governor, on the TOS host's calibrated costs", Origin::Ours("the RFC's \"Intel Icelake Xeon system\"; its governor and costs are not given"))
            .with("C6 disabled", "C6 removed from the table (sysfs stateN/disable)", RFC)
            .with("latency limit", "per-device cpu_lat_limit_us=10, cpu_lat_timeout_ms=3", RFC)
            .with("v2's runs", "the same job (v2's is another: 1.2-1.4 GB/s; not given)", V2)
            .with("device", "optane (P4800X profile; his \"extra NVMe card\" is not named, his clat mean ~23 us)", Origin::Ours("the shipped profile nearest his mean latency"))
            .with("runtime, runs", "scaled (his: 2 x 2 min; a maximum grows with the samples)", RUN_LENGTH),
        workloads: vec![own!("kristo-randread")],
        runs: vec![
            run("c6-disabled", icx(&["C6"], None)),
            run("c6-enabled", icx(&[], None)),
            run("limit-10us", icx(&[], Some(10 * US))),
        ],
        panels: vec![
            PanelSpec::bars("(a) clat max [us]", "max_us:randread", "c6-disabled"),
            PanelSpec::bars("(b) clat mean [us]", "lat_us:randread", "c6-disabled"),
            PanelSpec::bars("(c) idle exit per I/O [us]", "idle_exit_us_per_io", "c6-disabled"),
        ],
    }
}
