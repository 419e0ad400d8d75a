use super::fastresponse::{self as fr, CORUN_RUNTIME, LS, SHARED_CORE};
use crate::experiment::{Experiment, PanelSpec, RunSpec, Workload};
use crate::provenance::Origin;

/// readrandom beside TeraSort with readrandom's `rate_iops` set to `$rate`:
/// the line closes `ls-readrandom.fio`'s one section, so it replaces the
/// file's 2,000/s there (fio takes an option's last value in a section).
macro_rules! at_rate {
    ($name:literal, $rate:literal) => {
        Workload {
            name: $name,
            text: concat!(
                include_str!("../../../../examples/fastresponse/ls-readrandom.fio"),
                "rate_iops=",
                $rate,
                "\n\n",
                include_str!("../../../../examples/fastresponse/to-terasort.fio")
            ),
            app: false,
        }
    };
}

/// readrandom's issue rates, requests/s: FR 4.1's 2,000 in the middle,
/// doubling each way (FR gives no axis values).
pub const RATES: &[&str] = &["500", "1000", "2000", "4000", "8000"];

fn workloads() -> Vec<Workload> {
    vec![
        at_rate!("readrandom@500+terasort", "500"),
        at_rate!("readrandom@1000+terasort", "1000"),
        at_rate!("readrandom@2000+terasort", "2000"),
        at_rate!("readrandom@4000+terasort", "4000"),
        at_rate!("readrandom@8000+terasort", "8000"),
    ]
}

/// FR 4.5, Fig 19b: FastResponse (BS-Opt, 8 tokens), readrandom beside
/// TeraSort at readrandom issue rates from 500 to 8,000 requests/s.
pub fn experiment() -> Experiment {
    let workloads = workloads();
    let runs = workloads
        .iter()
        .zip(RATES)
        .map(|(w, rate)| {
            RunSpec::fastresponse("bs-opt", w.name, "default")
                .with_fio(&[SHARED_CORE])
                .at_least(CORUN_RUNTIME)
                .in_group(*rate)
        })
        .collect();
    Experiment {
        id: "fr-fig19b",
        title: "FR Fig 19b: readrandom beside TeraSort against readrandom's issue rate (BS-Opt)",
        paper: "FR 4.5: as readrandom's request issue rate rises, its average response time \
                falls a little while its p99 stays roughly stable: TeraSort's bursts reach a \
                smaller share of the critical requests.",
        provenance: fr::provenance("FR 4.5, Fig 19b")
            .set(
                "workload (LS)",
                "examples/fastresponse/ls-readrandom.fio with its rate_iops set per run: psync 4 \
                 KiB random reads, critical, Poisson at the run's rate; beside \
                 examples/fastresponse/to-terasort.fio",
                Origin::Paper(
                    "FR 4.5 (readrandom beside TeraSort, its issue rate varied), Table 1; engine, \
                     arrivals and misses are ours (the file's header)",
                ),
            )
            .with(
                "issue rates",
                "500, 1000, 2000, 4000, 8000 requests/s (readrandom's rate_iops)",
                Origin::Ours(
                    "FR's axis values are not in its text; 2,000/s is FR 4.1's rate, and the \
                     unlimited rate (about 50K/s, FR 4.4) is above them all",
                ),
            )
            .with(
                "FastResponse",
                "bs-opt with LD's 8 tokens (the read path's FastResponse; BSJ-Opt's \
                 fjournaling has no part in it)",
                Origin::Paper("FR 4.1, 4.2; 8 tokens as every other FR experiment here"),
            ),
        workloads,
        runs,
        panels: vec![
            PanelSpec::lines(
                "(a) mean latency [us]",
                &format!("lat_us:{LS}"),
                "readrandom requests/s",
                true,
            ),
            PanelSpec::lines(
                "(b) p99 latency [us]",
                &format!("p99_us:{LS}"),
                "readrandom requests/s",
                true,
            ),
        ],
    }
}
