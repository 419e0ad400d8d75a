//! What an experiment is: the runs it makes (workload, device, policy) and
//! the panels it draws from them, as the paper's figure does.

use policy::PolicySpec;

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

/// A fio job file the experiment runs, shown in the report as run.
#[derive(Clone, Copy, Debug)]
pub struct Workload {
    pub name: &'static str,
    pub text: &'static str,
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
}

impl PanelSpec {
    pub fn bars(title: &'static str, metric: &str, relative_to: &'static str) -> PanelSpec {
        PanelSpec {
            title,
            metric: Metric::parse(metric).expect("a metric the experiments name"),
            kind: PanelKind::Bars { relative_to },
            groups: Vec::new(),
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
        }
    }

    pub fn only(mut self, groups: &[&'static str]) -> PanelSpec {
        self.groups = groups.to_vec();
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
        }
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
