use super::{fastresponse as fr, own};
use crate::experiment::{Experiment, PanelSpec, RunSpec, Workload, FR_DEVICE, FR_HOST};
use crate::provenance::{Origin, RUN_LENGTH};

pub const DEPTHS: &[u32] = &[1, 2, 4, 8, 16, 32];
pub const SIZES_K: &[u32] = &[1, 2, 4, 8, 16, 32, 64, 128];

/// FR 2.2, Fig 6: the Optane 900P alone, random reads against queue depth
/// (4 KiB) and request size (queue depth 8).
pub fn experiment() -> Experiment {
    let mut runs = Vec::new();
    for &qd in DEPTHS {
        let mut r = RunSpec::new("default", "fr-randread", FR_DEVICE)
            .with_fio(&["--blocksize=4K"])
            .shown_as("qd", "qd")
            .in_group(qd.to_string());
        r.fio_args.push(format!("--iodepth={qd}"));
        r.host = FR_HOST;
        runs.push(r);
    }
    for &kib in SIZES_K {
        let mut r = RunSpec::new("default", "fr-randread", FR_DEVICE)
            .with_fio(&["--iodepth=8"])
            .shown_as("size", "size")
            .in_group(kib.to_string());
        r.fio_args.push(format!("--blocksize={kib}K"));
        r.host = FR_HOST;
        runs.push(r);
    }
    Experiment {
        id: "fr-fig6",
        title: "FR Fig 6: the Optane 900P: random reads against queue depth and size",
        paper: "FR 2.2: random-read throughput stops growing past queue depth 8 while latency \
                keeps growing with the depth; 32 KB requests come near the device's maximum \
                bandwidth; latency grows with the request size. (Our optane-900p profile was \
                built to this shape, so these claims check the profile, not a finding.)",
        provenance: fr::provenance("FR 2.2, Fig 6")
            .with(
                "workload",
                "jobs/fr-randread.fio: one libaio job of random reads, O_DIRECT",
                Origin::Ours("FR gives only the two sweeps"),
            )
            .with(
                "sweeps",
                "QD 1..32 at 4 KiB; 1..128 KiB at QD 8",
                Origin::Paper("FR 2.2, Fig 6 (the QD of the size sweep is ours)"),
            )
            .with("runtime, runs", "the plan's", RUN_LENGTH),
        workloads: vec![own!("fr-randread")],
        runs,
        panels: vec![
            PanelSpec::lines(
                "(a) throughput [MB/s]",
                "total_mbs",
                "qd: queue depth (4 KiB); size: KiB (QD 8)",
                true,
            ),
            PanelSpec::lines(
                "(b) latency [us]",
                "lat_us:randread",
                "qd: queue depth (4 KiB); size: KiB (QD 8)",
                true,
            ),
        ],
    }
}
