use super::own;
use crate::experiment::{Experiment, HostSettings, PanelSpec, RunSpec, Workload};
use crate::provenance::{Origin, Provenance, RUN_LENGTH};

/// TOS 2, Fig 5: interrupts, classic and hybrid polling on one core.
pub fn experiment() -> Experiment {
    let panels = [
        ("1 thread", &["--section=one"][..]),
        ("2 threads", &["--section=threads"][..]),
        ("4K+64K", &["--section=small", "--section=large"][..]),
    ];
    let mut runs = Vec::new();
    for (group, sections) in panels {
        for (system, mode) in [
            ("irq", host::poll::Mode::Interrupt),
            ("poll", host::poll::Mode::Poll),
            ("hybrid", host::poll::Mode::Hybrid),
        ] {
            runs.push(
                RunSpec::new("default", "tos-fig5", "optane")
                    .with_fio(sections)
                    .with_host(HostSettings {
                        completion: Some(mode),
                        ..HostSettings::default()
                    })
                    .at_least(policy::SEC)
                    .shown_as(system, system)
                    .in_group(group),
            );
        }
    }
    Experiment {
        id: "tos-fig5",
        title: "TOS Fig 5: hybrid polling against polling and interrupts (one core)",
        paper: "TOS 2: polling has the lowest latency at 100% CPU. With one thread of \
                same-sized reads hybrid polling matches polling with less CPU; with more \
                threads or mixed sizes it uses 1.5x-2.7x the CPU of interrupts (2.7x with \
                mixed sizes) without a noticeable gain.",
        provenance: Provenance::new(Origin::Paper("TOS 2, Fig 5 (not in the artifact)"))
            .with(
                "workload",
                "jobs/tos-fig5.fio: psync random reads on core 0; (a) one 4 KiB thread, (b) 2 threads (processes, fio's default), (c) a 4 KiB and a 64 KiB thread",
                Origin::Ours("TOS 2 gives \"a single thread\", \"more threads\", \"variable I/O sizes\", no counts or sizes; (b) takes the fewest above (a)'s one, as many as (c)'s: TOS Fig 17's four pread processes already saturate the core under interrupts"),
            )
            .with("device", "optane (P4800X)", Origin::Paper("TOS 2"))
            .with(
                "systems",
                "--completion interrupt | poll | hybrid (Linux io_poll_delay=0), device policy default",
                Origin::Paper("TOS 2, Fig 5"),
            )
            .with(
                "runtime, runs",
                "at least 1 s: hybrid sleeps only once its first 100 ms window has closed",
                RUN_LENGTH,
            ),
        workloads: vec![own!("tos-fig5")],
        runs,
        panels: vec![
            PanelSpec::bars("(a) IOPS", "total_iops", "irq"),
            PanelSpec::bars("(b) CPU [%]", "cpu", "irq"),
        ],
    }
}
