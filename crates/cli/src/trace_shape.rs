//! The replay transforms' options on `sim --trace` and `coalesce --trace`
//! (issue 41 item 6; the transforms are `traces::transform`): fio's and
//! libCacheSim's spellings where they have one.

use std::path::Path;

use anyhow::{anyhow, Result};
use clap::Args;
use traces::transform::{MergeInput, Outcome, Sample, Shape, Skip, Window};

#[derive(Args, Debug, Clone, Default)]
pub struct ShapeArgs {
    /// Merge another trace with this one by issue time (fio's
    /// merge_blktrace_file), at SCALAR percent of its times (fio's
    /// merge_blktrace_scalars: 50 runs it in half the time) for ITERS runs
    /// end to end (merge_blktrace_iters); repeatable
    #[arg(long, value_name = "FILE[:SCALAR[:ITERS]]", requires = "trace", value_parser = MergeInput::parse)]
    pub merge: Vec<MergeInput>,
    /// Only this volume's requests (the trace's device or volume id, as
    /// `volume=` in a marking rule names it); repeatable
    #[arg(long, value_name = "ID", requires = "trace")]
    pub volume: Vec<String>,
    /// Only the requests issued from FROM to TO (before TO) after the
    /// trace's first issue, as `1s,2s` or `0,500ms`
    #[arg(long, value_name = "FROM,TO", requires = "trace", value_parser = window)]
    pub window: Option<Window>,
    /// Leave out these operations: a comma-separated list of read, write,
    /// trim and flush (fio's replay_skip; its `sync` is our flush)
    #[arg(long, alias = "replay-skip", value_name = "OPS", requires = "trace", value_parser = Skip::parse)]
    pub skip: Option<Skip>,
    /// Keep the requests of about RATIO of the addresses (libCacheSim's
    /// spatial sampling: the 4 KiB block, or BLOCK bytes, hashed with
    /// XXH3; RATIO at most 0.5, or 1)
    #[arg(long, value_name = "RATIO[:BLOCK]", requires = "trace", value_parser = Sample::parse)]
    pub sample: Option<Sample>,
    /// Replay at PCT percent of the trace's I/O rate (fio's
    /// replay_time_scale: 200 halves every gap, 50 doubles it); each
    /// request keeps its latency
    #[arg(long, alias = "replay-time-scale", value_name = "PCT", requires = "trace", value_parser = clap::value_parser!(u32).range(1..))]
    pub time_scale: Option<u32>,
}

/// `FROM,TO`, each a time (`6us`, `100ms`, `2s`; a bare 0).
fn window(s: &str) -> Result<Window, String> {
    let (from, to) = s
        .split_once(',')
        .ok_or_else(|| format!("'{s}' is not FROM,TO (as 1s,2s)"))?;
    Window::new(crate::args::duration(from)?, crate::args::duration(to)?)
}

impl ShapeArgs {
    pub fn shape(&self) -> Shape {
        Shape {
            merge: self.merge.clone(),
            volumes: self.volume.clone(),
            window: self.window,
            skip: self.skip.unwrap_or_default(),
            sample: self.sample,
            time_scale: self.time_scale,
        }
    }
}

/// The trace at `path` opened and shaped, and where the transforms' counts
/// come out (an error names the file).
pub fn open(
    path: &Path,
    format: Option<traces::Format>,
    order: traces::Order,
    shape: &Shape,
) -> Result<(traces::Requests, Outcome)> {
    let requests = traces::open_in_order(path, format, order).map_err(|e| anyhow!(e))?;
    shape
        .apply(requests, &path.display().to_string())
        .map_err(|e| anyhow!(e))
}

/// The transforms' counts as JSON, for a report's `transforms` array.
pub fn json(outcome: &Outcome) -> serde_json::Value {
    outcome
        .steps()
        .iter()
        .map(|s| {
            serde_json::json!({
                "transform": s.name,
                "setting": s.setting,
                "seen": s.seen,
                "kept": s.kept,
                "dropped": s.seen - s.kept,
                "span_in_ns": s.span_in_ns,
                "span_out_ns": s.span_out_ns,
            })
        })
        .collect()
}
