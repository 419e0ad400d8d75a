//! Value parsers and the policy options every verb that runs a policy takes.

use clap::{Args, ValueEnum};
use policy::cint::BarrierMode;
use policy::dim::DimMode;
use policy::PolicySpec;

/// `6us`, `100us`, `1ms`: a unit is required (except for 0).
pub fn duration(s: &str) -> Result<u64, String> {
    jobs::units::parse_duration(s, None)
}

/// A run length: like [`duration`] (a unit is required, though fio's job
/// files default to seconds), and more than 0.
pub fn runtime(s: &str) -> Result<u64, String> {
    match duration(s)? {
        0 => Err("must be more than 0".to_string()),
        ns => Ok(ns),
    }
}

/// `100k`, `1.5m`, `250000` per second.
pub fn rate(s: &str) -> Result<u64, String> {
    jobs::units::parse_rate(s)
}

pub fn on_off(s: &str) -> Result<bool, String> {
    match s {
        "on" | "1" | "true" | "yes" => Ok(true),
        "off" | "0" | "false" | "no" => Ok(false),
        _ => Err(format!("'{s}' is not on or off")),
    }
}

/// A Feature 08h value, hexadecimal with `0x` or decimal.
pub fn feature(s: &str) -> Result<u32, String> {
    let parsed = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16),
        None => s.parse(),
    };
    parsed.map_err(|_| format!("'{s}' is not a number (e.g. 0x011f)"))
}

/// How results are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Human-readable text (for a run, fio's normal layout)
    Normal,
    /// JSON (for a run, shaped like fio's)
    Json,
}

/// Where and how a run (`sim`, `run`) prints its results.
#[derive(Args, Debug, Clone)]
pub struct RunOutput {
    /// Results as fio's normal output or its JSON
    #[arg(
        long = "output-format",
        value_enum,
        default_value = "normal",
        value_name = "FORMAT"
    )]
    pub format: OutputFormat,
    /// Write the results to this file (whole or not at all)
    #[arg(long = "output", short = 'o', value_name = "FILE")]
    pub file: Option<std::path::PathBuf>,
    /// Nothing on stderr but errors: no notes about the job file, no
    /// progress bar
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum BarrierArg {
    Relaxed,
    Strict,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum DimModeArg {
    Eqe,
    Cqe,
}

/// Which interrupt strategy, and its parameters (see `cinterrupts policies`).
#[derive(Args, Debug, Clone)]
pub struct PolicyArgs {
    /// Strategy: default, nvme, nvme100, nvme20, nvme6, adaptive, cint, dynamic, dim
    #[arg(long, default_value = "cint")]
    pub policy: String,
    /// Quiescent gap that ends a burst (adaptive, cint)
    #[arg(long, value_parser = duration, value_name = "TIME")]
    pub delta: Option<u64>,
    /// Most completions per interrupt
    #[arg(long, value_name = "N")]
    pub thr: Option<u32>,
    /// Out-of-order Urgent processing (cint, dynamic)
    #[arg(long, value_parser = on_off, value_name = "on|off")]
    pub ooo: Option<bool>,
    /// Barrier semantics (cint, dynamic)
    #[arg(long, value_enum)]
    pub barrier: Option<BarrierArg>,
    /// Urgent-storm protection: maximum interrupts per second (cint, dynamic)
    #[arg(long, value_parser = rate, value_name = "RATE")]
    pub max_irq_rate: Option<u64>,
    /// NVMe Aggregation Time, a multiple of 100us (nvme)
    #[arg(long, value_parser = duration, value_name = "TIME")]
    pub aggr_time: Option<u64>,
    /// Raw NVMe Feature 08h value, e.g. 0x011f (nvme)
    #[arg(long, value_parser = feature, value_name = "VALUE")]
    pub nvme_feature: Option<u32>,
    /// Correction factor of the dynamic timeout (dynamic)
    #[arg(long, value_name = "A")]
    pub a: Option<f64>,
    /// What one unit of the dynamic timeout is (dynamic)
    #[arg(long, value_parser = duration, value_name = "TIME")]
    pub delta_unit: Option<u64>,
    /// Moderation timer mode (dim)
    #[arg(long, value_enum)]
    pub dim_mode: Option<DimModeArg>,
}

impl PolicyArgs {
    pub fn spec(&self) -> PolicySpec {
        self.spec_named(&self.policy)
    }

    pub fn spec_named(&self, name: &str) -> PolicySpec {
        PolicySpec {
            name: name.to_string(),
            delta: self.delta,
            thr: self.thr,
            ooo: self.ooo,
            barrier: self.barrier.map(|b| match b {
                BarrierArg::Relaxed => BarrierMode::Relaxed,
                BarrierArg::Strict => BarrierMode::Strict,
            }),
            max_irq_rate: self.max_irq_rate,
            aggr_time: self.aggr_time,
            nvme_feature: self.nvme_feature,
            a: self.a,
            delta_unit: self.delta_unit,
            dim_mode: self.dim_mode.map(|m| match m {
                DimModeArg::Eqe => DimMode::Eqe,
                DimModeArg::Cqe => DimMode::Cqe,
            }),
        }
    }

    /// True when any strategy parameter was given.
    pub fn has_parameters(&self) -> bool {
        self.spec_named("") != PolicySpec::named("")
    }
}
