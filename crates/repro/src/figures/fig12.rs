use super::{artifact, BASIS};
use crate::experiment::{Experiment, PanelSpec, PaperValue, RunSpec};
use crate::provenance::{Origin, Provenance, RUN_LENGTH};

const SCRIPT: Origin = Origin::Artifact("fig7/test.sh");

/// The job's name in fig7/rand_read_libaio.fio.
pub const JOB: &str = "raw=random-read";

/// The systems of fig7/test.sh: shown as, artifact name.
pub const SYSTEMS: &[(&str, &str)] = &[
    ("cint", "cint-6-65535"),
    ("default", "alpha-0-0"),
    ("adaptive", "alpha-6-32"),
];

/// TOS 3.4, Fig 12: the effect of Barrier, 1, 2 and 4 processes on one
/// core, as the artifact's fig7/test.sh runs it.
pub fn experiment() -> Experiment {
    let mut runs = Vec::new();
    for (n, group) in [(1, "1 thread"), (2, "2 threads"), (4, "4 threads")] {
        let numjobs = format!("--numjobs={n}");
        let args = [
            "--blocksize=4K",
            numjobs.as_str(),
            "--iodepth=4",
            "--iodepth_batch_submit=4",
            "--iodepth_batch_complete=4",
            BASIS,
        ];
        for (shown, name) in SYSTEMS {
            runs.push(
                RunSpec::artifact(shown, name, "rand_read_libaio", "optane")
                    .with_fio(&args)
                    .in_group(group),
            );
        }
    }
    let mut provenance = Provenance::new(SCRIPT)
        .with(
            "job file",
            "rand_read_libaio.fio: libaio randread, barrier=1 (their patched fio: Barrier on the last iocb of each io_submit), cpus_allowed=1",
            Origin::Artifact("fig7/rand_read_libaio.fio"),
        )
        .with(
            "fio command line",
            "--blocksize=4K --numjobs=N --iodepth=4 --iodepth_batch_submit=4 --iodepth_batch_complete=4, N in 1 2 4",
            SCRIPT,
        )
        .with("default marks", "basis (barrier=1 marks the batches)", Origin::Artifact("linux-kernel/cinterrupts-01-basis.patch"))
        .with("device", "optane", Origin::Artifact("fig7/env-dante733: delay=6, \"for Optane\""))
        .with("runtime, runs", "60 s x 10 in the artifact", RUN_LENGTH)
        .with(
            "cint's delta",
            "6 us with thr 65535: only Barrier fires, delta cleans up out-of-order stragglers",
            SCRIPT,
        );
    for (shown, name) in SYSTEMS {
        provenance = provenance.with("system", format!("{shown} = {name}"), SCRIPT);
    }
    Experiment {
        id: "fig12",
        title: "Fig 12: Barrier, batches of 4 from 1, 2 and 4 processes",
        paper: "TOS 3.4: each process submits 4 KiB libaio reads in batches of 4, the last \
                marked Barrier, and waits for the batch. With one process default has the \
                lowest latency but 4.4x the interrupts; adaptive pays delta (29 against \
                22 us); with 4 processes adaptive catches up. Labels relative to cint.",
        provenance,
        workloads: vec![artifact!("rand_read_libaio", "fig7/rand_read_libaio.fio")],
        runs,
        panels: vec![
            PanelSpec::bars("(a) IOPS", "total_iops", "cint"),
            // TOS 3.4: "29 us ... against 22 us" with one thread.
            PanelSpec::bars("(b) latency [us]", &format!("lat_us:{JOB}"), "cint").with_paper(
                "TOS 3.4, Fig 12 (text: one thread, 29 us against 22 us)",
                &[
                    ("cint", "1 thread", PaperValue::Absolute(22.0)),
                    ("adaptive", "1 thread", PaperValue::Absolute(29.0)),
                ],
            ),
            PanelSpec::bars("(c) CPU [%]", "cpu", "cint").with_paper(
                "TOS 3.4, Fig 12 (text: default's 1.32x the CPU with one thread)",
                &[("default", "1 thread", PaperValue::Relative(1.32))],
            ),
            PanelSpec::bars("(d) interrupts/s", "irq_rate", "cint").with_paper(
                "TOS 3.4, Fig 12 (text: default fires 4.4x, 3.4x cint's interrupts with 1, 2 threads)",
                &[
                    ("default", "1 thread", PaperValue::Relative(4.4)),
                    ("default", "2 threads", PaperValue::Relative(3.4)),
                ],
            ),
        ],
    }
}
