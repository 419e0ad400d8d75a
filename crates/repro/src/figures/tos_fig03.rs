use super::example;
use crate::experiment::{Experiment, PanelSpec, RunSpec, Workload};
use crate::provenance::{Origin, Provenance, RUN_LENGTH};

/// TOS 2, Fig 3: the cost of an interrupt in a CPU-bound workload. Its
/// numbers are targets of the host's calibration (`cinterrupts calibrate
/// --fit`), which runs this very configuration (`sim::calibrate::fit_runs`):
/// its claims are fitted, shown so that the fit's outcome is in the report.
pub fn experiment() -> Experiment {
    Experiment {
        id: "tos-fig3",
        title: "TOS Fig 3: the cost of an interrupt, libaio at iodepth 256 (Optane)",
        paper: "TOS 2: \"a single process submits 4K block reads to the device via libaio at an \
                I/O depth of 256\"; an interrupt costs about 1,500 cycles on every device, up to \
                24% of the I/O's cost on the Optane.",
        provenance: Provenance::new(Origin::Paper("TOS 2, Fig 3 (not in the artifact)"))
            .with(
                "workload",
                "examples/tune-libaio.fio: one libaio process, 4 KiB random reads, iodepth 256",
                Origin::Paper("TOS 2: \"a single process ... libaio at an I/O depth of 256\"; fio's defaults for the rest"),
            )
            .with("device, host", "optane and p3700 (NVMe NAND), xeon-e5-2660v4 (2.0 GHz)", Origin::Paper("TOS 2, Fig 3 compares SATA, NVMe NAND and Optane devices; TOS 5.1 names the P3700 and the Optane"))
            .with("system", "default: an interrupt per completion", Origin::Paper("TOS 2"))
            .with("runtime, runs", "scaled", RUN_LENGTH),
        workloads: vec![example!("tune-libaio")],
        runs: ["optane", "p3700"]
            .iter()
            .map(|d| RunSpec::new("default", "tune-libaio", d).in_group(*d))
            .collect(),
        panels: vec![
            PanelSpec::bars("(a) interrupt CPU per interrupt [ns]", "irq_ns", "default"),
            PanelSpec::bars("(b) interrupts' share of the core [%]", "irq_share", "default"),
        ],
    }
}
