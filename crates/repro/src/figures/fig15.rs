use super::{artifact, ASYNC, BASIS, SYNC};
use crate::experiment::{Experiment, PanelSpec, PaperValue, RunSpec, Throttle};
use crate::provenance::{Origin, Provenance, RUN_LENGTH};

pub const FREE: &str = "async free";
pub const THROTTLED: &str = "async throttled";

const FREE_SCRIPT: Origin = Origin::Artifact("fig10/test_nortlm.sh");
const THROTTLED_SCRIPT: Origin = Origin::Artifact("fig10/test_rtlm.sh");

/// The systems of fig10/test_nortlm.sh and test_rtlm.sh: shown as,
/// artifact name. Their `baseline-0-0` (nvme-emul with no aggregation) is
/// an interrupt per completion, the same policy as `alpha-0-0` here, so it
/// is run once, as default.
pub const SYSTEMS: &[(&str, &str)] = &[
    ("cint", "cint-6-32"),
    ("cint+ooo", "cint-6-32-ooo"),
    ("default", "alpha-0-0"),
    ("adaptive", "alpha-6-32"),
    ("nvme100", "baseline-100-32"),
];

const FIO_ARGS: &[&str] = &["--blocksize=4K", BASIS];

/// TOS 3.5, Fig 15: out-of-order Urgent processing in the mixed workload
/// (iodepth 256, batches of 16, 512 B sync reads), free and with the async
/// job throttled to its IOPS under default, as the artifact's fig10
/// scripts run it.
pub fn experiment() -> Experiment {
    let mut runs = Vec::new();
    for (shown, name) in SYSTEMS {
        runs.push(
            RunSpec::artifact(shown, name, "rand_mix_batched", "optane")
                .with_fio(FIO_ARGS)
                .in_group(FREE),
        );
    }
    for (shown, name) in SYSTEMS {
        let mut r = RunSpec::artifact(shown, name, "rand_mix_batched", "optane")
            .with_fio(FIO_ARGS)
            .in_group(THROTTLED);
        r.throttle = Some(Throttle {
            job: ASYNC,
            like: format!("default/{FREE}"),
        });
        runs.push(r);
    }
    let mut provenance = Provenance::new(FREE_SCRIPT)
        .with(
            "job file",
            "rand_mix_batched.fio: [job1] libaio randread iodepth 256, iodepth_batch_submit=16, iodepth_batch_complete=16; [job2] psync randread with blocksize=512 in its own section; cpus_allowed=1",
            Origin::Artifact("fig10/rand_mix_batched.fio"),
        )
        .with(
            "fio command line",
            "--blocksize=4K (job2's own blocksize=512 wins, fio's precedence)",
            FREE_SCRIPT,
        )
        .with("default marks", "basis: the 512 B pread Urgent, io_submit unmarked", Origin::Artifact("linux-kernel/cinterrupts-01-basis.patch"))
        .with("device", "optane", Origin::Artifact("fig10/env-dante733"))
        .with("runtime, runs", "60 s x 10 in the artifact", RUN_LENGTH)
        .with(
            "throttle",
            "job1 capped at its mean IOPS under alpha-0-0 (blkio.throttle.read_iops_device); we cap it with fio's rate_iops",
            THROTTLED_SCRIPT,
        )
        .with(
            "processes",
            "the throttled runs start job1 and job2 as two fio processes (--section); we run both jobs in one simulated host, as the free runs do",
            Origin::Ours("one process or two changes only which cgroup job1 is in; the cap is what matters"),
        );
    for (shown, name) in SYSTEMS {
        provenance = provenance.with("system", format!("{shown} = {name}"), FREE_SCRIPT);
    }
    Experiment {
        id: "fig15",
        title: "Fig 15: out-of-order Urgent (mixed, iodepth 256), free and throttled",
        paper: "TOS 3.5: OOO reaps Urgent completions alone. It fires 2.4x cint's \
                interrupts and nearly halves sync latency. With the async thread throttled \
                to its IOPS under default, OOO fires 23% more interrupts than cint and \
                matches default's sync latency with 30% less CPU. Labels relative to cint.",
        provenance,
        workloads: vec![artifact!("rand_mix_batched", "fig10/rand_mix_batched.fio")],
        runs,
        panels: vec![
            PanelSpec::bars("(a) async IOPS", &format!("iops:{ASYNC}"), "cint"),
            PanelSpec::bars("(b) sync latency [us]", &format!("lat_us:{SYNC}"), "cint"),
            PanelSpec::bars("(c) interrupts/s", "irq_rate", "cint").with_paper(
                "TOS 3.5, Fig 15 (text: OOO fires 2.4x cint's interrupts; throttled, 23% more)",
                &[
                    ("cint+ooo", FREE, PaperValue::Relative(2.4)),
                    ("cint+ooo", THROTTLED, PaperValue::Relative(1.23)),
                ],
            ),
            PanelSpec::bars("(d) CPU [%]", "cpu", "cint"),
        ],
    }
}
