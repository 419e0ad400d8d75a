//! Ours (issue 37 item 2): each interrupt strategy with C-states off, on,
//! and on under a 10 us CPU latency limit, on the Optane and the P3700:
//! the interrupts a strategy saves against the wake-up latency the idle
//! states add.

use host::cpuidle::{GovernorKind, Table};
use policy::US;
use sim::IdleSettings;

use super::fig10::FIO_ARGS;
use super::{artifact, SYNC};
use crate::experiment::{Experiment, PanelSpec, RunSpec};
use crate::provenance::{Origin, Provenance, RUN_LENGTH};

/// The strategies: shown as, system (the artifact's names for Fig 10's;
/// `nvme100` is TOS 3.2's NVMe aggregation, 100 us and threshold 32).
const SYSTEMS: &[(&str, &str)] = &[
    ("default", "alpha-0-0"),
    ("nvme-coalescing", "nvme100"),
    ("adaptive", "alpha-6-32"),
    ("cint", "cint-1000000-65535"),
];

/// The idle configurations: group suffix, settings (`None`: C-states off).
fn configs() -> Vec<(&'static str, Option<IdleSettings>)> {
    let icx = |limit: Option<u64>| IdleSettings {
        states: Table::Icx,
        governor: GovernorKind::Menu,
        disabled: Vec::new(),
        cpu_latency_limit: limit,
        device_latency_limit: None,
    };
    vec![
        ("off", None),
        ("icx", Some(icx(None))),
        ("icx-10us", Some(icx(Some(10 * US)))),
    ]
}

pub fn experiment() -> Experiment {
    let mut runs = Vec::new();
    for device in ["optane", "p3700"] {
        for (suffix, idle) in configs() {
            for (shown, name) in SYSTEMS {
                let r = if name.starts_with("nvme") {
                    RunSpec::new(name, "rand_mix", device).shown_as(*shown, *shown)
                } else {
                    RunSpec::artifact(shown, name, "rand_mix", device)
                };
                let r = r.with_fio(FIO_ARGS).in_group(format!("{device} {suffix}"));
                runs.push(match &idle {
                    Some(i) => r.with_idle(i.clone()),
                    None => r,
                });
            }
        }
    }
    Experiment {
        id: "ours-cstates",
        title: "Ours: interrupt strategies with C-states off, on, and under a 10 us latency limit",
        paper: "Ours (issue 37 item 2), not a paper's figure: TOS Fig 10's mixed workload as \
                the artifact's fig5/test.sh ran it (blocking 4 KiB reads beside libaio reads \
                at iodepth 16 on one core) under default, NVMe coalescing (100 us, 32), \
                adaptive and cint (Urgent only), with C-states off (both papers), on \
                (intel_idle's Ice Lake-SP table, menu), and on under a 10 us \
                /dev/cpu_dma_latency limit, on the Optane and the P3700. A strategy that \
                saves interrupts leaves longer idle gaps; the question is what the next \
                wake-up then costs. The claims are hypotheses stated before the runs. \
                Labels relative to default.",
        provenance: Provenance::new(Origin::Ours("issue 37 item 2: interrupts saved against wake-up latency added"))
            .with("job file, fio command line", "TOS Fig 10's (fig5/rand_mix.fio, fig5/test.sh)", Origin::Artifact("fig5/test.sh"))
            .with("systems", "default = alpha-0-0, nvme-coalescing = nvme100 (TOS 3.2: 100 us, threshold 32), adaptive = alpha-6-32, cint = cint-1000000-65535", Origin::Artifact("fig5/test.sh"))
            .with("idle states", "off; icx (intel_idle.c icx_cstates), menu; icx, menu, cpu_dma_latency 10 us", Origin::Ours("the table of Kristo's host; his limit's value"))
            .with("devices", "optane, p3700", Origin::Ours("the two devices the TOS microbenchmarks ran on"))
            .with("runtime, runs", "scaled", RUN_LENGTH),
        workloads: vec![artifact!("rand_mix", "fig5/rand_mix.fio")],
        runs,
        panels: vec![
            PanelSpec::bars("(a) sync mean latency [us]", &format!("lat_us:{SYNC}"), "default"),
            PanelSpec::bars("(b) sync max latency [us]", &format!("max_us:{SYNC}"), "default"),
            PanelSpec::bars("(c) interrupts/s", "irq_rate", "default"),
            PanelSpec::bars("(d) idle exit per I/O [us]", "idle_exit_us_per_io", "default"),
            PanelSpec::bars("(e) idle exit per wake-up [us]", "idle_exit_us_per_wakeup", "default"),
        ],
    }
}
