//! Ours (issue 40 item 5): the completion field of 2026 on one harness.
//! Every device-side strategy (the device decides when to interrupt) and
//! every host completion mode (the host decides how to wait), and the
//! combinations worth trying, on fio's blocking QD1 reads, TOS Fig 10's
//! mixed workload and batched libaio reads, on the Optane, the P3700 and
//! a current low-latency drive (KIOXIA FL6), and on RocksDB through the
//! application model, in DPAS's metric: operations per second per CPU.
//!
//! Each strategy is a row of a list ([`DEVICE`], [`HOST`], [`COMBOS`]): a
//! row whose strategy, completion word or host option this build does not
//! have is left out (and said so in the provenance), so that the modes
//! other branches add (PAS, DPAS, EHP, HYBRID_IOPOLL, a central poller,
//! IRQ suspension, a Feature 09h plan) join the experiment, and the claims
//! that name them (`field-claims.toml`), as they land.

use host::mechanism::{self, Settings};

use super::fig10::FIO_ARGS;
use super::{app, artifact, example, SYNC};
use crate::experiment::{Experiment, PanelSpec, RunSpec, Workload};
use crate::provenance::{Origin, Provenance, RUN_LENGTH};

/// The experiment's id (`--only field`, the claims' `experiment`).
pub const ID: &str = "field";

/// The claims on runs that only some builds have (the modes other
/// branches add): checked where the runs exist, listed as pending where
/// they do not ([`crate::claims::load_available`]).
pub const CLAIMS: &str = include_str!("../../field-claims.toml");

/// Device-side strategies, each with interrupts on the host: shown as,
/// system (the artifact's names for TOS Fig 10's; `nvme100` TOS 3.2's
/// NVMe aggregation at 100 us and 32; `feature09` NVMe Feature 09h's
/// per-vector plan, when this build has it).
pub const DEVICE: &[(&str, &str)] = &[
    ("default", "alpha-0-0"),
    ("nvme100", "nvme100"),
    ("adaptive", "alpha-6-32"),
    ("cint", "cint-1000000-65535"),
    ("feature09", "feature09"),
];

/// Host-side modes, each on the default device (an interrupt per
/// completion where the host takes one): shown as, the host options that
/// turn it on (`mechanism` flag, value). `poll` and `hybrid` are blk-mq's
/// classic and hybrid polling (Linux 4.4-6.3: DPAS's CP and LHP); the rest
/// are the 2026 modes (issue 40 item 1).
pub const HOST: &[(&str, &[(&str, &str)])] = &[
    ("poll", &[("completion", "poll")]),
    ("hybrid", &[("completion", "hybrid")]),
    ("pas", &[("completion", "pas")]),
    ("dpas", &[("completion", "dpas")]),
    ("ehp", &[("completion", "ehp")]),
    ("hybrid-iopoll", &[("completion", "hybrid-iopoll")]),
    ("central", &[("completion", "central")]),
    // The timer bound: the suspend helper's example value (not tuned
    // here; Linux's irq_suspend_timeout has no default, the user sets it).
    ("irq-suspend", &[("irq-suspend", "200us")]),
];

/// The combinations (issue 40 item 3): a device strategy with a host mode
/// that coexists with it. Ours: the pairs the issue names (cint with DPAS,
/// adaptive with a central poller, Feature 09h with IRQ suspension) and
/// the two the 2016-2022 field would have tried first (cint or adaptive
/// coalescing for the async reads while the blocking reads poll).
pub const COMBOS: &[(&str, &str)] = &[
    ("cint", "hybrid"),
    ("adaptive", "poll"),
    ("cint", "dpas"),
    ("adaptive", "central"),
    ("feature09", "irq-suspend"),
];

/// The workloads (group prefixes) on which a combination cannot coexist,
/// declared from its inputs before any run: under `central` every
/// blocking thread's queue raises no interrupt (UnICom's `alloc_cq`), so a
/// device policy other than `default` has nothing to act on where every
/// I/O blocks (qd1's psync thread, the RocksDB model's readers) and the
/// simulator refuses the pair in one line. It acts on the libaio queues
/// of `mixed` and `batched`.
pub const REFUSED: &[(&str, &[&str])] = &[("adaptive+central", &["qd1", "rocksdb"])];

/// Whether the row shown as `shown` runs on the workload `prefix`.
fn coexists(shown: &str, prefix: &str) -> bool {
    !REFUSED
        .iter()
        .any(|(row, on)| *row == shown && on.contains(&prefix))
}

/// The workloads: group prefix, workload name, fio command-line options.
const FIO_WORKLOADS: &[(&str, &str)] = &[
    ("qd1", "sync-read"),
    ("mixed", "rand_mix"),
    ("batched", "tune-libaio-batch"),
];

/// The devices.
const DEVICES: &[&str] = &["optane", "p3700", "kioxia-fl6"];

/// RocksDB (db_bench readrandom through the application model) runs on
/// this device only: DPAS's RocksDB/YCSB sheet is its Optane's, and the
/// application runs are the dearest (issue 40: `--quick` stays cheap).
const APP_DEVICE: &str = "optane";

/// The p99 budget of the ranked table: a run ranks only if its p99 (the
/// latency-critical operations': the blocking reads, the application's
/// operations) is at most this factor of the default strategy's on the
/// same workload and device: Linux's stock completion path within the
/// claims' "equal" tolerance (`rule::EQUAL`'s upper end, 1.1).
pub const P99_BUDGET: f64 = crate::rule::EQUAL.1;

/// The host settings a row's options give, or why this build lacks them.
pub fn host_settings(options: &[(&str, &str)]) -> Result<Settings, String> {
    let mut s = Settings::default();
    for (flag, value) in options {
        let m = mechanism::mechanism(flag).ok_or_else(|| format!("no host option --{flag}"))?;
        (m.set)(&mut s, value).map_err(|e| format!("--{flag} {value}: {e}"))?;
    }
    Ok(s)
}

/// Whether this build has the device strategy `system`.
fn has_device(system: &str) -> bool {
    policy::PolicySpec::from_artifact_name(system).is_ok()
        || policy::catalogue::strategy(system).is_some()
}

/// A device strategy's run.
fn device_run(shown: &str, system: &str, workload: &'static str, device: &'static str) -> RunSpec {
    if policy::PolicySpec::from_artifact_name(system).is_ok() {
        RunSpec::artifact(shown, system, workload, device)
    } else {
        RunSpec::new(system, workload, device).shown_as(shown, shown)
    }
}

/// Every row this build has, and the rows it lacks with why: (shown as,
/// device system, host settings).
pub fn rows() -> (Vec<(String, &'static str, Settings)>, Vec<String>) {
    let mut have = Vec::new();
    let mut lack = Vec::new();
    for (shown, system) in DEVICE {
        if has_device(system) {
            have.push((shown.to_string(), *system, Settings::default()));
        } else {
            lack.push(format!(
                "{shown}: no device strategy '{system}' in this build"
            ));
        }
    }
    let default = DEVICE[0].1;
    let host = |name: &str| HOST.iter().find(|(n, _)| *n == name).map(|h| h.1);
    for (shown, options) in HOST {
        match host_settings(options) {
            Ok(s) => have.push((shown.to_string(), default, s)),
            Err(e) => lack.push(format!("{shown}: {e}")),
        }
    }
    for (dev, mode) in COMBOS {
        let system = DEVICE.iter().find(|(n, _)| n == dev).map(|d| d.1);
        let shown = format!("{dev}+{mode}");
        match (system, host(mode).map(host_settings)) {
            (Some(system), Some(Ok(s))) if has_device(system) => have.push((shown, system, s)),
            (_, Some(Err(e))) => lack.push(format!("{shown}: {e}")),
            _ => lack.push(format!("{shown}: a part is not in this build")),
        }
    }
    (have, lack)
}

/// The run of one row on one workload and device, in `group`.
fn run(
    row: &(String, &'static str, Settings),
    workload: &'static str,
    device: &'static str,
    group: &str,
    fio: &[&str],
) -> RunSpec {
    let (shown, system, settings) = row;
    device_run(shown, system, workload, device)
        .shown_as(shown.clone(), shown.clone())
        .with_fio(fio)
        .with_host(settings.clone())
        .in_group(group)
}

pub fn experiment() -> Experiment {
    let (rows, lack) = rows();
    let mut runs = Vec::new();
    for (prefix, workload) in FIO_WORKLOADS {
        // TOS Fig 10's command line for its mixed workload (fig5/test.sh);
        // the others' job files carry their own options.
        let fio: &[&str] = if *workload == "rand_mix" {
            FIO_ARGS
        } else {
            &[]
        };
        for device in DEVICES {
            let group = format!("{prefix} {device}");
            for r in rows.iter().filter(|r| coexists(&r.0, prefix)) {
                runs.push(run(r, workload, device, &group, fio));
            }
        }
    }
    let group = format!("rocksdb {APP_DEVICE}");
    for r in rows.iter().filter(|r| coexists(&r.0, "rocksdb")) {
        let mut spec = run(r, "rocksdb-readrandom", APP_DEVICE, &group, &[]);
        // The macro systems' parameters (TOS 5.4, RocksDB scripts): cint's
        // and adaptive's delta and thr as the artifact's fig15 scripts.
        let macro_name = match r.1 {
            "alpha-6-32" => Some("adaptive"),
            "cint-1000000-65535" => Some("cint"),
            _ => None,
        };
        if let Some(name) = macro_name {
            spec.policy =
                super::macro_systems::policy(name, super::macro_systems::Scripts::Rocksdb);
        }
        runs.push(spec);
    }
    let mut provenance = Provenance::new(Origin::Ours(
        "issue 40 item 5: device-side and host-side completion strategies on one harness, in ops/s per CPU",
    ))
    .with("workload qd1", "examples/sync-read.fio: one psync thread of 4 KiB random reads at QD1 (TOS Fig 8a; DPAS's micro_4krr at 1 job, pvsync2)", Origin::Ours("examples/sync-read.fio; DPAS_FAST26 scripts/micro_4krr/run.sh"))
    .with("workload mixed", "TOS Fig 10's rand_mix.fio with fig5/test.sh's command line (blocking reads beside libaio at iodepth 16, one core, basis marks)", Origin::Artifact("fig5/test.sh"))
    .with("workload batched", "examples/tune-libaio-batch.fio: libaio 4 KiB random reads at iodepth 256, submitted and reaped 16 at a time (TOS 5.2's batched workload)", Origin::Ours("examples/tune-libaio-batch.fio"))
    .with("workload rocksdb", "examples/apps/rocksdb-readrandom.toml: db_bench readrandom, 4 threads on 2 cores, through the RocksDB model, on the Optane only; DPAS ran YCSB A-F on RocksDB, which the model does not run (readrandom's uniform point reads are YCSB C's operations)", Origin::Ours("crates/apps/src/rocks; DPAS_FAST26 scripts/bgio_noaffinity.sh"))
    .with("devices", "optane (P4800X, TOS Table 2), p3700 (TOS Table 2), kioxia-fl6 (KIOXIA FL6's quoted specifications, profiles/devices/kioxia-fl6.toml)", Origin::Ours("issue 40 item 5: a current low-latency drive beside the paper's two"))
    .with("device strategies", DEVICE.iter().map(|(s, n)| format!("{s} = {n}")).collect::<Vec<_>>().join(", "), Origin::Artifact("fig5/test.sh; TOS 3.2 for nvme100"))
    .with("host", "the TOS host profile (xeon-e5-2660v4: the paper's costs, Linux 5.0.8) for every run: one host's costs across eras; the 2026 mechanisms run there as ports (io_uring's HYBRID_IOPOLL and IRQ suspension are Linux 6.13's; PAS, DPAS and EHP patch 5.18-rc6; UnICom's poller 6.5.1), each run's kernel note says so", Origin::Ours("issue 40 item 5: one harness; host::era for each mechanism's kernels"))
    .with("host modes", HOST.iter().map(|(s, o)| format!("{s} = {}", o.iter().map(|(f, v)| format!("--{f} {v}")).collect::<Vec<_>>().join(" "))).collect::<Vec<_>>().join(", "), Origin::Ours("issue 40 item 1's modes, each on the default device"))
    .with("combinations", COMBOS.iter().map(|(d, m)| format!("{d}+{m}")).collect::<Vec<_>>().join(", "), Origin::Ours("issue 40 item 3's pairs and the two the field would try first"))
    .with("not run", REFUSED.iter().map(|(r, on)| format!("{r} on {} (refused: cannot coexist)", on.join(", "))).collect::<Vec<_>>().join("; "), Origin::Ours("the simulator's refusal of a device policy under `central` where every I/O blocks (crates/sim, issue 40 item 3)"))
    .with("ops/s per CPU", "operations per second over the workload cores' busy time (user + kernel + irq) in cores: report::field", Origin::Ours("DPAS_FAST26's CPU: fio's usr+sys (scripts/micro_4krr/parse.py getCPU), ps %cpu of the YCSB process (utils/track_cpu.sh)"))
    .with("p99 budget", format!("a run ranks if its latency-critical p99 is at most {P99_BUDGET}x the default strategy's on the same workload and device"), Origin::Ours("the claims' 'equal' band, rule::EQUAL: Linux's stock completion path within tolerance"))
    .with("runtime, runs", "scaled", RUN_LENGTH);
    for l in &lack {
        provenance = provenance.with(
            "not in this build",
            l.clone(),
            Origin::Ours("a row joins when its branch lands"),
        );
    }
    Experiment {
        id: ID,
        title:
            "Ours: the completion field, device-side against host-side strategies in ops/s per CPU",
        paper: "Ours (issue 40 item 5), not a paper's figure: the device-side strategies \
                (default, NVMe aggregation at 100 us, adaptive, cint; Feature 09h's plan where \
                built) with interrupts, and the host-side completion modes (classic and hybrid \
                polling; PAS, DPAS, EHP, io_uring's HYBRID_IOPOLL, a central poller and IRQ \
                suspension where built) on the default device, and combinations of the two, on \
                blocking QD1 reads, TOS Fig 10's mixed workload and batched libaio reads on the \
                Optane, the P3700 and a KIOXIA FL6, and on RocksDB readrandom through the \
                application model on the Optane. Read in DPAS's metric, operations per second \
                per CPU busy, beside p99 and interrupts/s; the ranked table keeps the runs \
                whose p99 stays within 1.1x the default's. The claims are the published \
                numbers that transfer (Axboe's hybrid polling table, LKML 2016-11-03; the DPAS \
                artifact's Optane sheets; EHP's ranges; IRQ suspension's shape) as ratios, \
                stated before the runs. Labels relative to default.",
        provenance,
        workloads: vec![
            example!("sync-read"),
            artifact!("rand_mix", "fig5/rand_mix.fio"),
            example!("tune-libaio-batch"),
            app!("rocksdb-readrandom"),
        ],
        runs,
        panels: vec![
            PanelSpec::bars("(a) ops/s per CPU", "field_ops_per_cpu", "default"),
            PanelSpec::bars("(b) ops/s", "field_ops_per_s", "default"),
            PanelSpec::bars("(c) CPUs busy", "field_cpus", "default"),
            PanelSpec::bars("(d) p99 latency, all I/Os [us]", "field_p99_us", "default"),
            PanelSpec::bars(
                "(e) blocking reads' p99 (mixed) [us]",
                &format!("p99_us:{SYNC}"),
                "default",
            )
            .only(&["mixed optane", "mixed p3700", "mixed kioxia-fl6"]),
            PanelSpec::bars("(f) interrupts/s", "irq_rate", "default"),
            PanelSpec::bars("(g) cycles per I/O", "field_cycles_per_io", "default"),
            PanelSpec::bars("(h) wake-ups per I/O", "field_wakeups_per_io", "default"),
        ],
    }
}

/// The latency-critical p99 of a group's runs: the blocking reads' in the
/// mixed workload, else every I/O's (an application's: its operations').
pub fn p99_metric(group: &str) -> &'static str {
    if group.starts_with("mixed") {
        "p99_us:raw=random-read-psync"
    } else {
        "field_p99_us"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_this_build_has_is_a_run_in_every_group() {
        let e = experiment();
        let (rows, _) = rows();
        let groups = e.groups();
        assert_eq!(groups.len(), FIO_WORKLOADS.len() * DEVICES.len() + 1);
        for g in &groups {
            let prefix = g.split(' ').next().unwrap();
            for (shown, _, _) in &rows {
                let run = e.run(&format!("{shown}/{g}"));
                // A pair that cannot coexist there is declared, not run.
                assert_eq!(run.is_some(), coexists(shown, prefix), "{shown}/{g}");
            }
        }
        assert!(e.run("adaptive+central/qd1 optane").is_none());
        assert!(e.run("adaptive+central/mixed optane").is_some());
        // The modes main has: the device strategies, blk-mq's polling, a
        // combination.
        for key in [
            "default",
            "nvme100",
            "adaptive",
            "cint",
            "poll",
            "hybrid",
            "cint+hybrid",
        ] {
            assert!(rows.iter().any(|r| r.0 == key), "{key}");
        }
    }

    #[test]
    fn a_mode_this_build_lacks_is_named_not_run() {
        assert!(host_settings(&[("completion", "no-such-mode")]).is_err());
        assert!(host_settings(&[("no-such-option", "on")]).is_err());
        let poll = host_settings(&[("completion", "poll")]).unwrap();
        assert_eq!(poll.completion, Some(host::poll::Mode::Poll));
    }
}

/// One run's place in its group's ranking.
#[derive(Clone, Debug, PartialEq)]
pub struct Ranked {
    pub group: String,
    pub run: String,
    pub ops_per_cpu: f64,
    pub ops_per_s: f64,
    pub cpus: f64,
    /// The latency-critical p99 ([`p99_metric`]), and the budget:
    /// [`P99_BUDGET`] times the default's.
    pub p99_us: f64,
    pub budget_us: f64,
    pub irq_rate: f64,
    /// Its rank among the group's runs within the budget (1: the most
    /// ops/s per CPU); `None` over it.
    pub rank: Option<usize>,
}

/// The runs of each group ranked by ops/s per CPU, those within the p99
/// budget first (means over seeds); runs without a figure are left out.
pub fn ranking(e: &Experiment, results: &crate::run::Results, mode: report::Mode) -> Vec<Ranked> {
    use crate::metric::Metric;
    let stat = |key: &str, m: &str| {
        let m = Metric::parse(m).expect("the field's metrics parse");
        results.stat(e.id, key, mode, &m).map(|s| s.mean)
    };
    let mut out = Vec::new();
    for group in e.groups() {
        let p99 = p99_metric(&group);
        let Some(base) = stat(&format!("default/{group}"), p99) else {
            continue;
        };
        let mut rows: Vec<Ranked> = e
            .runs
            .iter()
            .filter(|r| r.group == group)
            .filter_map(|r| {
                Some(Ranked {
                    group: group.clone(),
                    run: r.system.clone(),
                    ops_per_cpu: stat(&r.key, "field_ops_per_cpu")?,
                    ops_per_s: stat(&r.key, "field_ops_per_s")?,
                    cpus: stat(&r.key, "field_cpus")?,
                    p99_us: stat(&r.key, p99)?,
                    budget_us: P99_BUDGET * base,
                    irq_rate: stat(&r.key, "irq_rate").unwrap_or(0.0),
                    rank: None,
                })
            })
            .collect();
        rows.sort_by(|a, b| {
            let over = |r: &Ranked| r.p99_us > r.budget_us;
            over(a)
                .cmp(&over(b))
                .then(b.ops_per_cpu.total_cmp(&a.ops_per_cpu))
        });
        let mut n = 0;
        for r in &mut rows {
            if r.p99_us <= r.budget_us {
                n += 1;
                r.rank = Some(n);
            }
        }
        out.extend(rows);
    }
    out
}

/// The report's blocks after the experiment's values: the best run of
/// each group within the budget, the whole ranking, and the claims
/// waiting for modes this build lacks.
pub fn blocks(
    e: &Experiment,
    results: &crate::run::Results,
    mode: report::Mode,
) -> Vec<report::doc::Block> {
    use report::doc::Block;
    let ranked = ranking(e, results, mode);
    let n = crate::tables::number;
    let head = |cols: &[&str]| cols.iter().map(|c| c.to_string()).collect::<Vec<_>>();
    let row = |r: &Ranked| {
        vec![
            r.group.clone(),
            r.rank.map_or("over budget".into(), |k| k.to_string()),
            r.run.clone(),
            n(r.ops_per_cpu),
            n(r.ops_per_s),
            format!("{:.2}", r.cpus),
            n(r.p99_us),
            n(r.budget_us),
            n(r.irq_rate),
        ]
    };
    let cols = [
        "workload, device",
        "rank",
        "run",
        "ops/s per CPU",
        "ops/s",
        "CPUs busy",
        "p99 [us]",
        "p99 budget [us]",
        "interrupts/s",
    ];
    let mut out = vec![
        Block::Para(format!(
            "Ranked by ops/s per CPU (DPAS's metric: operations per second over the workload \
             cores' busy time in cores) among the runs whose latency-critical p99 (the blocking \
             reads' in the mixed workload, else every I/O's or operation's) is at most {P99_BUDGET}x \
             the default strategy's on the same workload and device (the claims' 'equal' band, \
             rule::EQUAL: Linux's stock completion path within tolerance). Means over seeds."
        )),
        Block::Table {
            head: head(&cols),
            rows: ranked.iter().filter(|r| r.rank == Some(1)).map(row).collect(),
        },
        Block::Table {
            head: head(&cols),
            rows: ranked.iter().map(row).collect(),
        },
    ];
    let catalogue = crate::figures::all();
    if let Ok((_, pending)) =
        crate::claims::load_available(CLAIMS, "field-claims.toml", catalogue.as_slice())
    {
        if !pending.is_empty() {
            out.push(Block::Para(format!(
                "{} claim(s) wait for modes this build lacks: {}.",
                pending.len(),
                pending
                    .iter()
                    .map(|(c, why)| format!("{c} ({why})"))
                    .collect::<Vec<_>>()
                    .join("; ")
            )));
        }
    }
    out
}
