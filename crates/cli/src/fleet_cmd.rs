//! `sim --trace` over volumes and queues (issue 41 item 4; the logic is
//! `sim::fleet`): `--queues-by` names the rule taking requests to the
//! replay's threads and so to the cores' NVMe queues, `--per-volume`
//! replays each volume on a device of its own, in parallel, with the
//! per-volume table and the fleet summary.

use sim::trace_marks::Marker;
use std::path::Path;

use anyhow::{anyhow, bail, Result};
use clap::Args;
use sim::fleet::{QueuesBy, Strategy};

use crate::args::{OutputFormat, PolicyArgs, RunOutput};
use crate::output::emit;
use crate::trace_shape::ShapeArgs;
use host::mechanism::KernelEra;
use policy::PolicySpec;
use sim::replay::Loop;
use sim::SimConfig;

#[derive(Args, Debug, Clone, Default)]
pub struct FleetArgs {
    /// Replay each volume (the trace's device or volume id) on a device of
    /// its own, the volumes in parallel, the trace read once and each
    /// volume's requests spilled to a temporary file: a per-volume table
    /// (requests, IOPS, interrupts and p99 per strategy) and the fleet
    /// summary (over volumes: min, p50, p90, max of the interrupts saved
    /// and the p99 added against default), for default and --policy's
    /// strategies (a comma-separated list, or all)
    #[arg(long, requires = "trace")]
    pub per_volume: bool,
    /// Which requests share a replay thread, so a core and its NVMe queue
    /// pair: `process` (each trace process; the default), `cpu` (each CPU
    /// the trace recorded: blkparse, blktrace) or `volume` (each volume)
    #[arg(long, value_name = "cpu|process|volume", requires = "trace")]
    pub queues_by: Option<QueuesBy>,
}

/// Whether `sim --trace` goes through the transforms and the queue rule
/// (else the replay reads the file as it always has).
pub fn shaped(shape: &ShapeArgs, fleet: &FleetArgs) -> bool {
    fleet.queues_by.is_some() || !shape.shape().is_empty()
}

/// A trace's replay over volumes, as `sim --trace` was asked for it.
pub struct Replay<'a> {
    pub trace: &'a Path,
    pub format: Option<traces::Format>,
    /// Whether the trace's times are checked or sorted (`--sort`).
    pub order: traces::Order,
    pub comm: Option<&'a str>,
    pub shape: &'a ShapeArgs,
    pub fleet: &'a FleetArgs,
    pub replay_loop: Loop,
    pub policy: &'a PolicyArgs,
    pub out: &'a RunOutput,
}

/// A strategy's configuration and the kernel it models (`sim`'s).
pub type Configure<'a> = &'a dyn Fn(PolicySpec) -> Result<(SimConfig, KernelEra)>;

/// The strategies compared: default first, then --policy's.
fn strategies(policy: &PolicyArgs) -> Result<Vec<String>> {
    let given = &policy.policy;
    let names: Vec<String> = if given == "all" {
        if policy.has_parameters() {
            bail!("--policy all compares every strategy on its defaults; it takes no strategy options");
        }
        sim::coalesce::every_strategy()
            .into_iter()
            .map(|s| s.name)
            .collect()
    } else {
        given.split(',').map(|s| s.trim().to_string()).collect()
    };
    let mut out = vec!["default".to_string()];
    out.extend(names.into_iter().filter(|n| n != "default"));
    Ok(out)
}

/// `--per-volume`: every volume replayed under every strategy.
pub fn per_volume(r: &Replay, marker: &mut Marker, configure: Configure) -> Result<()> {
    let by = r.fleet.queues_by.unwrap_or_default();
    let mut runs = Vec::new();
    let mut notes = Vec::new();
    for name in strategies(r.policy)? {
        let (config, era) = configure(r.policy.spec_named(&name))?;
        notes.extend(era.notes);
        runs.push(Strategy { name, config });
    }
    let (requests, outcome) =
        crate::trace_shape::open(r.trace, r.format, r.order, &r.shape.shape())?;
    let spilled = sim::fleet::spill(requests, r.comm, by, marker).map_err(|e| anyhow!(e))?;
    if spilled.volumes.is_empty() {
        bail!("{}: no requests to replay", r.trace.display());
    }
    if !r.out.quiet {
        notes.dedup();
        for n in &notes {
            eprintln!("note: {n}");
        }
    }
    let fleet = sim::fleet::replay_volumes(&spilled, &runs, r.replay_loop, by)
        .map_err(|e| anyhow!("{}: {e}", r.trace.display()))?;
    let out = match r.out.format {
        OutputFormat::Normal => fleet.render() + &outcome.render(),
        OutputFormat::Json => {
            let doc = serde_json::json!({
                "trace": r.trace.display().to_string(),
                "loop": r.replay_loop.name(),
                "fleet": fleet,
                "transforms": crate::trace_shape::json(&outcome),
            });
            serde_json::to_string_pretty(&doc)? + "\n"
        }
    };
    emit(&out, r.out.file.as_deref())
}
