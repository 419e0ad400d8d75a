use super::{artifact, BASIS, SYNC};
use crate::experiment::{Experiment, PanelSpec, PaperValue::Relative, RunSpec};
use crate::provenance::{Origin, Provenance, RUN_LENGTH};

const SCRIPT: Origin = Origin::Artifact("fig5/test.sh");
const JOB_FILE: Origin = Origin::Artifact("fig5/rand_mix.fio");
/// The paper's bar labels, relative to cint (OSDI'21 Fig 7 = TOS Fig 10;
/// shared/papers/digest-cinterrupts.md 5.4).
const LABELS: &str = "TOS 3.3, Fig 10 (OSDI'21 Fig 7's bar labels, relative to cint)";

/// fio's command line in the artifact's fig5/test.sh (k = 16).
pub const FIO_ARGS: &[&str] = &[
    "--blocksize=4K",
    "--iodepth=16",
    "--iodepth_batch_submit=1",
    "--iodepth_batch_complete_min=1",
    "--iodepth_batch_complete_max=16",
    BASIS,
];

/// The systems of fig5/test.sh: shown as, artifact name.
pub const SYSTEMS: &[(&str, &str)] = &[
    ("cint", "cint-1000000-65535"),
    ("default", "alpha-0-0"),
    ("adaptive", "alpha-6-32"),
];

/// TOS 3.3, Fig 10: the effect of Urgent in the mixed workload, as the
/// artifact's fig5/test.sh runs it.
pub fn experiment() -> Experiment {
    Experiment {
        id: "fig10",
        title: "Fig 10: Urgent in the mixed workload (iodepth 16)",
        paper: "TOS 3.3: two threads on one core, blocking 4 KiB reads (Urgent under cint) \
                beside libaio reads at iodepth 16. cint keeps default's sync latency with \
                fewer interrupts; adaptive has more total IOPS but far worse sync latency. \
                Run as the artifact's fig5/test.sh: one request per io_submit, 1 to 16 \
                reaped at a time, no Barrier (basis kernel), and cint Urgent only (delta \
                1 s, thr 65535, no OOO). Labels relative to cint.",
        provenance: mixed_provenance(SCRIPT, JOB_FILE, FIO_ARGS, SYSTEMS),
        workloads: vec![artifact!("rand_mix", "fig5/rand_mix.fio")],
        runs: SYSTEMS
            .iter()
            .map(|(shown, name)| {
                RunSpec::artifact(shown, name, "rand_mix", "optane").with_fio(FIO_ARGS)
            })
            .collect(),
        panels: vec![
            PanelSpec::bars("(a) total IOPS", "total_iops", "cint").with_paper(
                LABELS,
                &[
                    ("default", "", Relative(0.83)),
                    ("adaptive", "", Relative(1.15)),
                ],
            ),
            PanelSpec::bars("(b) sync IOPS", &format!("iops:{SYNC}"), "cint").with_paper(
                LABELS,
                &[
                    ("default", "", Relative(0.93)),
                    ("adaptive", "", Relative(0.24)),
                ],
            ),
            PanelSpec::bars("(c) sync latency [us]", &format!("lat_us:{SYNC}"), "cint").with_paper(
                LABELS,
                &[
                    ("default", "", Relative(1.06)),
                    ("adaptive", "", Relative(4.39)),
                ],
            ),
            PanelSpec::bars("(d) interrupts/s", "irq_rate", "cint").with_paper(
                LABELS,
                &[
                    ("default", "", Relative(2.74)),
                    ("adaptive", "", Relative(0.25)),
                ],
            ),
        ],
    }
}

/// The provenance of an experiment on the artifact's mixed job file.
pub fn mixed_provenance(
    script: Origin,
    job_file: Origin,
    fio_args: &[&str],
    systems: &[(&str, &str)],
) -> Provenance {
    let mut p = Provenance::new(script)
        .with("job file", "rand_mix.fio: [libaio] libaio randread, [psync] psync randread iodepth=1, cpus_allowed=1, direct=1", job_file)
        .with("fio command line", fio_args.join(" "), script)
        .with("default marks", "basis: pread Urgent, io_submit unmarked", Origin::Artifact("linux-kernel/cinterrupts-01-basis.patch (fs/aio.c loop commented out)"))
        .with("device", "optane (Intel Optane DC P4800X profile)", Origin::Artifact("fig5/env-dante733: \"for Optane delay is 6\""))
        .with("runtime, runs", "60 s x 10 in the artifact", RUN_LENGTH)
        .with("interrupt delivery", "one IPI per fire (smp_call_function_single), counted on the target's CAL line", Origin::Artifact("linux-kernel/cinterrupts-01-basis.patch"));
    for (shown, name) in systems {
        p = p.with("system", format!("{shown} = {name}"), script);
    }
    p
}
