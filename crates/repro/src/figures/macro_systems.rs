//! The systems of the paper's application experiments (TOS 5.4-5.5), with
//! the artifact's module parameters (`shared/papers/artifact-configs.md`,
//! "Macrobenchmarks"): one place for the runs of Figs 22-24 and Tables
//! 3, 5-8.

use policy::{PolicySpec, US};

use crate::experiment::RunSpec;
use crate::provenance::{Origin, Provenance, RUN_LENGTH};

/// What every application experiment runs on and for how long: the
/// paper's Optane on its host (TOS 5.1, 5.4: "we run three application
/// setups on Optane"), the application files, time-bounded runs.
pub fn common(p: Provenance, files: &'static str) -> Provenance {
    p.with(
        "device, host",
        "optane, xeon-e5-2660v4",
        Origin::Paper("TOS 5.1; 5.4: the application setups run on Optane"),
    )
    .with(
        "workload",
        files,
        Origin::Ours("application files (crates/apps), every key cited in the file"),
    )
    .with(
        "runtime",
        "time-bounded: the paper's operation counts (20 M, 100,000 reads per thread) are not run",
        RUN_LENGTH,
    )
}

/// Which application's scripts set the module parameters: the artifact
/// runs RocksDB's adaptive at 6 us (`irq_poller_delay=6
/// irq_poller_max_thr=32 empathetic=N`) and KVell's at 15 us
/// (`irq_poller_delay=15 irq_poller_max_thr=32`); cint is 15 us, 32 in both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scripts {
    Rocksdb,
    Kvell,
}

/// `default` (`irq_poller_delay=0`: an interrupt per completion),
/// `adaptive`, `cint`, and `app-cint` (cint's parameters; the application
/// marks its background I/O itself, set in the run's app file).
pub fn policy(system: &str, scripts: Scripts) -> PolicySpec {
    let with = |name: &str, delta_us: u64, thr: u32| PolicySpec {
        delta: Some(delta_us * US),
        thr: Some(thr),
        // The micro experiments' cint: out-of-order processing off (the
        // artifact's module default, `urgent_ooo=0`).
        ooo: (name == "cint").then_some(false),
        ..PolicySpec::named(name)
    };
    match system {
        "default" => PolicySpec::named("default"),
        "adaptive" if scripts == Scripts::Rocksdb => with("adaptive", 6, 32),
        "adaptive" => with("adaptive", 15, 32),
        "cint" | "app-cint" => with("cint", 15, 32),
        other => panic!("no macrobenchmark system '{other}'"),
    }
}

/// One run of `system` on an app workload, in `group`, with the app file
/// overrides `sets` (`INSTANCE.KEY=VALUE`).
pub fn run(
    system: &str,
    scripts: Scripts,
    workload: &'static str,
    group: &str,
    sets: &[&str],
) -> RunSpec {
    let mut r = RunSpec::new(system, workload, "optane");
    r.policy = policy(system, scripts);
    let r = if group.is_empty() {
        r
    } else {
        r.in_group(group)
    };
    r.with_fio(sets)
}

/// TOS Tables 3 and 6's four systems on one app workload: cint, default,
/// adaptive with RocksDB's parameters, and app-cint, cint with
/// `INSTANCE.app_cint=true` (the application unmarks its background I/O).
pub fn with_app_cint(workload: &'static str, instance: &str) -> Vec<RunSpec> {
    let unmarked = format!("{instance}.app_cint=true");
    ["cint", "default", "adaptive", "app-cint"]
        .into_iter()
        .map(|s| {
            let sets: &[&str] = if s == "app-cint" { &[&unmarked] } else { &[] };
            run(s, Scripts::Rocksdb, workload, "", sets)
        })
        .collect()
}
