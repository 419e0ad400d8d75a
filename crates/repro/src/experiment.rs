//! What an experiment is: the runs it makes (workload, device, policy) and
//! the panels it draws from them, as the paper's figure does.

use policy::{Nanos, PolicySpec};

use crate::metric::Metric;
use crate::provenance::Provenance;

/// One of the paper's figures, as runs plus panels.
#[derive(Clone, Debug)]
pub struct Experiment {
    /// `fig10`: what `--only` and the claims file name it by.
    pub id: &'static str,
    pub title: &'static str,
    /// What the paper ran and what it showed, with its section.
    pub paper: &'static str,
    /// Where the workload, the fio command line, the kernel and each
    /// system's parameters come from.
    pub provenance: Provenance,
    pub workloads: Vec<Workload>,
    pub runs: Vec<RunSpec>,
    pub panels: Vec<PanelSpec>,
}

/// A fio job file the experiment runs, shown in the report as run; or an
/// application file (`examples/apps/*.toml`, issue 16) when `app` is set.
#[derive(Clone, Copy, Debug)]
pub struct Workload {
    pub name: &'static str,
    pub text: &'static str,
    /// An application file ([`apps::file`]): the run goes through
    /// `sim::simulate_app`, its `fio_args` are `INSTANCE.KEY=VALUE`
    /// overrides ([`crate::appwork`]), and it is the simulator's only.
    pub app: bool,
}

/// One configuration to run (once per seed).
#[derive(Clone, Debug)]
pub struct RunSpec {
    /// Unique in the experiment; the claims file names runs by it.
    pub key: String,
    /// The system, drawn as a series (`cint`, `default`, `adaptive`).
    pub system: String,
    /// Where on the x axis: a group of bars (`2 threads`) or, for line
    /// panels, a number (`16`). Empty for a single group.
    pub group: String,
    pub workload: &'static str,
    /// A device profile name (`optane`, `p3700`).
    pub device: &'static str,
    pub policy: PolicySpec,
    /// Job options given as on fio's command line (`--iodepth=16`): the
    /// defaults every job starts from, below the job file's own (fio's
    /// precedence), as the artifact's scripts pass them.
    pub fio_args: Vec<String>,
    /// Cap a job at the IOPS another run measured for it (TOS 5.3, Fig 15
    /// bottom row: the async job throttled to its IOPS under default).
    pub throttle: Option<Throttle>,
    /// A host profile name (`xeon-e5-2660v4`, TOS's; `xeon-e5-2630v3`,
    /// FastResponse's).
    pub host: &'static str,
    /// The host-side mechanisms this run turns on over the profile's.
    pub host_settings: HostSettings,
    /// The cores' idle states over the profile's (issue 37 item 2); `None`
    /// keeps the profile's, C-states off in every shipped one.
    pub idle: Option<sim::IdleSettings>,
    /// The least virtual time this run needs, above the plan's (co-runs at
    /// 2,000 requests/s need seconds for a p99.9).
    pub min_runtime: Option<Nanos>,
}

/// The host-side mechanisms of FastResponse and polling (issue 15), each
/// `None` for the host profile's own (all off in the shipped profiles):
/// `host::mechanism`'s settings, declared there once.
pub use sim::HostSettings;

/// FastResponse's systems (FR 4.1): `vanilla` (Linux's CFS with its
/// `next` buddy and 4 ms granularity; no LD; interrupts), `selectisr`
/// (critical requests poll, FLASHSHARE's SelectISR), `b-opt` (LD, 8
/// tokens, 32 KB pieces), `bs-opt` (LD and the critical wake-up boost as
/// the authors' kernel has it, `--wakeup boost-code`). `None` for another
/// name.
///
/// Why the authors' patch and not Algorithm 1 as printed (issue 36 item
/// 5): FR's numbers were measured on their kernel, "based on Linux kernel
/// 5.3.7, and the source code is available at Github \[19\]" (FR 1), and
/// that code (CGCL-codes/FastResponse, commit e78438aa7 "schedopt",
/// kernel/sched/fair.c) makes a critical wakee preempt always
/// (`check_preempt_wakeup`: `if (p->critical == 1) { set_next_buddy(pse);
/// goto preempt; }`) and `pick_next_entity` take a critical `next`
/// without the `wakeup_preempt_entity(next, left) < 1` fairness check the
/// prose keeps (digest A.2.3, A.6 item 5). `--wakeup boost` (the prose)
/// stays in the simulator.
pub fn fastresponse(system: &str) -> Option<HostSettings> {
    let ld = || Some("ld".parse().expect("ld parses"));
    let vanilla = Some(sim::Wakeup::Vanilla);
    Some(match system {
        "vanilla" => HostSettings {
            wakeup: vanilla,
            ..HostSettings::default()
        },
        "selectisr" => HostSettings {
            completion: Some(host::poll::Mode::SelectIsr),
            wakeup: vanilla,
            ..HostSettings::default()
        },
        "b-opt" => HostSettings {
            block_scheduler: ld(),
            wakeup: vanilla,
            ..HostSettings::default()
        },
        "bs-opt" => HostSettings {
            block_scheduler: ld(),
            wakeup: Some(sim::Wakeup::BoostCode),
            ..HostSettings::default()
        },
        _ => return None,
    })
}

/// FastResponse's systems on the synchronous-write path (FR 4.1, 4.4):
/// the read path's, each with ext4's `data=ordered` journal, JBD2
/// critical in SelectISR, B-Opt and BS-Opt ("we configure JBD2 as a
/// critical process in B-Opt, BS-Opt, and SelectISR"), and `bsj-opt`:
/// BS-Opt with fjournaling (FR 3.4), JBD2 critical as in BS-Opt (ours:
/// FR does not say; only the compound transactions' commits reach
/// JBD2 then). `None` for another name.
pub fn fastresponse_fsync(system: &str) -> Option<HostSettings> {
    let (base, journal) = match system {
        "bsj-opt" => ("bs-opt", sim::Journal::Fjournal),
        s => (s, sim::Journal::Ordered),
    };
    Some(HostSettings {
        journal: Some(journal),
        jbd2_critical: Some(base != "vanilla"),
        fsync_io_polls: (base == "selectisr").then_some(true),
        ..fastresponse(base)?
    })
}

#[derive(Clone, Debug)]
pub struct Throttle {
    pub job: &'static str,
    /// The run (same experiment, same mode) whose IOPS for `job` is the cap.
    pub like: String,
}

#[derive(Clone, Debug)]
pub struct PanelSpec {
    pub title: &'static str,
    pub metric: Metric,
    pub kind: PanelKind,
    /// Only these groups (all when empty): Fig 8's latency panel shows the
    /// sync runs only.
    pub groups: Vec<&'static str>,
    /// The paper's values for some of the bars, drawn beside ours (issue 36
    /// item 8); only where the paper prints the number.
    pub paper: Vec<PaperMark>,
}

/// A number the paper gives for one bar: its bar label or its text.
#[derive(Clone, Debug, PartialEq)]
pub struct PaperMark {
    pub system: &'static str,
    pub group: &'static str,
    pub value: PaperValue,
    /// Where the paper gives it (section, figure, panel).
    pub source: &'static str,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PaperValue {
    /// A ratio to the panel's reference system in the same group, as the
    /// paper labels its bars; drawn on our reference bar (where our bar
    /// would stand if our reference were the paper's and the ratio held).
    Relative(f64),
    /// In the panel's unit (`29 us`, `150K/s`).
    Absolute(f64),
}

impl PanelSpec {
    pub fn bars(title: &'static str, metric: &str, relative_to: &'static str) -> PanelSpec {
        PanelSpec {
            title,
            metric: Metric::parse(metric).expect("a metric the experiments name"),
            kind: PanelKind::Bars { relative_to },
            groups: Vec::new(),
            paper: Vec::new(),
        }
    }

    pub fn lines(
        title: &'static str,
        metric: &str,
        x_label: &'static str,
        x_log2: bool,
    ) -> PanelSpec {
        PanelSpec {
            title,
            metric: Metric::parse(metric).expect("a metric the experiments name"),
            kind: PanelKind::Lines { x_label, x_log2 },
            groups: Vec::new(),
            paper: Vec::new(),
        }
    }

    pub fn only(mut self, groups: &[&'static str]) -> PanelSpec {
        self.groups = groups.to_vec();
        self
    }

    /// The paper's values for bars of this panel, all from `source`:
    /// `(system, group, value)`.
    pub fn with_paper(
        mut self,
        source: &'static str,
        marks: &[(&'static str, &'static str, PaperValue)],
    ) -> PanelSpec {
        self.paper
            .extend(marks.iter().map(|&(system, group, value)| PaperMark {
                system,
                group,
                value,
                source,
            }));
        self
    }

    pub fn shows(&self, group: &str) -> bool {
        self.groups.is_empty() || self.groups.contains(&group)
    }
}

#[derive(Clone, Debug)]
pub enum PanelKind {
    /// Grouped bars, labelled with their value relative to this system in
    /// the same group (the paper labels relative to cint).
    Bars { relative_to: &'static str },
    /// One line per system over the numeric groups.
    Lines { x_label: &'static str, x_log2: bool },
    /// The completion inter-arrival CDF of each run (TOS Fig 18).
    GapCdf,
}

impl RunSpec {
    pub fn new(system: &str, workload: &'static str, device: &'static str) -> RunSpec {
        RunSpec {
            key: system.to_string(),
            system: system.to_string(),
            group: String::new(),
            workload,
            device,
            policy: system_policy(system),
            fio_args: Vec::new(),
            throttle: None,
            host: TOS_HOST,
            host_settings: HostSettings::default(),
            idle: None,
            min_runtime: None,
        }
    }

    /// A FastResponse run (FR 4.1): `system` one of FR's (`vanilla`,
    /// `selectisr`, `b-opt`, `bs-opt`) on its host and device, under the
    /// device policy `policy` (`default`: an interrupt per completion, as
    /// FR's stock NVMe driver).
    pub fn fastresponse(system: &str, workload: &'static str, policy: &str) -> RunSpec {
        RunSpec {
            host: FR_HOST,
            host_settings: crate::experiment::fastresponse(system)
                .expect("the experiments name FastResponse's systems"),
            ..RunSpec::new(policy, workload, FR_DEVICE).shown_as(system, system)
        }
    }

    /// A FastResponse run of the synchronous-write path (FR 4.4): `system`
    /// one of `vanilla`, `selectisr`, `b-opt`, `bs-opt`, `bsj-opt`
    /// ([`fastresponse_fsync`]).
    pub fn fastresponse_fsync(system: &str, workload: &'static str, policy: &str) -> RunSpec {
        RunSpec {
            host_settings: crate::experiment::fastresponse_fsync(system)
                .expect("the experiments name FastResponse's systems"),
            ..RunSpec::fastresponse("vanilla", workload, policy).shown_as(system, system)
        }
    }

    /// Whether the emulator can run it: the TOS host with no host-side
    /// mechanism turned on but an io_uring wait the emulator applies
    /// (`run --uring`: min-complete, min-wait, iopoll; issue 25 item 5).
    pub fn emulated(&self) -> bool {
        let others = HostSettings {
            uring: None,
            ..self.host_settings.clone()
        };
        self.host == TOS_HOST
            && self.idle.is_none()
            && others == HostSettings::default()
            && self.host_settings.uring.map_or(true, emu::uring_emulated)
    }

    /// The same run with these host settings.
    pub fn with_host(mut self, settings: HostSettings) -> RunSpec {
        self.host_settings = settings;
        self
    }

    /// The same run with these idle states (the emulator's cores are the
    /// machine's: it does not run them).
    pub fn with_idle(mut self, idle: sim::IdleSettings) -> RunSpec {
        self.idle = Some(idle);
        self
    }

    /// The same run, at least `runtime` long.
    pub fn at_least(mut self, runtime: Nanos) -> RunSpec {
        self.min_runtime = Some(runtime);
        self
    }

    /// A run of one of the artifact's systems (`cint-1000000-65535`,
    /// `alpha-6-32`), drawn as the paper's series `system`.
    pub fn artifact(
        system: &str,
        artifact_system: &str,
        workload: &'static str,
        device: &'static str,
    ) -> RunSpec {
        RunSpec {
            policy: PolicySpec::from_artifact_name(artifact_system)
                .expect("the experiments name the artifact's systems"),
            ..RunSpec::new(system, workload, device)
        }
    }

    /// The same run with these fio command-line options.
    pub fn with_fio(mut self, args: &[&str]) -> RunSpec {
        self.fio_args.extend(args.iter().map(|a| a.to_string()));
        self
    }

    /// The same policy drawn as another series and keyed `key` (Fig 17's
    /// capped cint, Fig 19's series per device).
    pub fn shown_as(mut self, system: impl Into<String>, key: impl Into<String>) -> RunSpec {
        self.system = system.into();
        self.key = key.into();
        self
    }

    /// The same run in group `group`, keyed `system/group`.
    pub fn in_group(mut self, group: impl Into<String>) -> RunSpec {
        self.group = group.into();
        self.key = format!("{}/{}", self.system, self.group);
        self
    }
}

/// The host the TOS experiments ran on (TOS 5.1), calibrated.
pub const TOS_HOST: &str = "xeon-e5-2660v4";
/// FastResponse's host (FR 4.1), its costs carried over from [`TOS_HOST`].
pub const FR_HOST: &str = "xeon-e5-2630v3";
/// FastResponse's device (FR 4.1): the Optane 900P.
pub const FR_DEVICE: &str = "optane-900p";

/// The policy a system name stands for in the experiments.
///
/// `cint` is Algorithm 2 without out-of-order processing: the paper brings
/// OOO in only in TOS 3.5 and compares `cint` with `cint+ooo` in Fig 15, so
/// its earlier figures are read as without it. `cint+ooo` turns it on.
pub fn system_policy(system: &str) -> PolicySpec {
    match system {
        "cint" => PolicySpec {
            ooo: Some(false),
            ..PolicySpec::named("cint")
        },
        "cint+ooo" => PolicySpec {
            ooo: Some(true),
            ..PolicySpec::named("cint")
        },
        // Gyawali and Aryal's Algorithm 1 is Algorithm 2 with delta
        // computed (Sec 3.1); their Fig 8 adds the correction factor to
        // cint, so `dynamic` is `cint` with that delta and nothing else:
        // OOO off as in `cint` (the paper's Algorithm 1 has both branches
        // and does not say which it ran).
        "dynamic" => PolicySpec {
            ooo: Some(false),
            ..PolicySpec::named("dynamic")
        },
        // NVMe Feature 09h as uGDS PR #39 deploys it ("Urgent by queue"):
        // Coalescing Disable on the vectors of the queues a blocking thread
        // submits on, 08h aggregation (100 us, 32) on the rest; `--cd sync`
        // derives that plan from the workload's threads before the run
        // (sim/src/vectors.rs), not from its outcome.
        "feature09" => PolicySpec {
            cd: Some(policy::feature09::CdVectors::Sync),
            ..PolicySpec::named("feature09")
        },
        name => PolicySpec::named(name),
    }
}

/// Each system in `systems` on one workload and device, in one group.
pub fn systems_in(
    systems: &[&str],
    workload: &'static str,
    device: &'static str,
    group: &str,
) -> Vec<RunSpec> {
    systems
        .iter()
        .map(|s| {
            let r = RunSpec::new(s, workload, device);
            if group.is_empty() {
                r
            } else {
                r.in_group(group)
            }
        })
        .collect()
}

impl Experiment {
    pub fn run(&self, key: &str) -> Option<&RunSpec> {
        self.runs.iter().find(|r| r.key == key)
    }

    pub fn workload(&self, name: &str) -> Option<&Workload> {
        self.workloads.iter().find(|w| w.name == name)
    }

    /// The groups in the order the runs name them.
    pub fn groups(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in &self.runs {
            if !out.contains(&r.group) {
                out.push(r.group.clone());
            }
        }
        out
    }

    /// The systems in the order the runs name them.
    pub fn systems(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in &self.runs {
            if !out.contains(&r.system) {
                out.push(r.system.clone());
            }
        }
        out
    }
}
