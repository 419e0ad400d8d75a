//! Every strategy by name, its parameters and defaults, and how to build one
//! from a [`PolicySpec`] (what the CLI parsed).

use thiserror::Error;

use crate::burst::DeltaRule;
use crate::cint::{BarrierMode, Cint, CintConfig};
use crate::dim::{Dim, DimMode};
use crate::nvme::{Aggregation, Nvme, TIME_UNIT};
use crate::{adaptive::Adaptive, default::Default as DefaultPolicy, dynamic};
use crate::{format_nanos, Nanos, Policy, US};

/// Delta for the Intel Optane DC P4800X (TOS 5.2, Fig. 18: the 90th
/// percentile inter-arrival of non-batched libaio at iodepth 256).
pub const DELTA_OPTANE: Nanos = 6 * US;
/// Delta for the Intel DC P3700 (TOS 5.2: its 99th percentile inter-arrival).
pub const DELTA_P3700: Nanos = 15 * US;
/// thr for both devices (TOS 5.2, Fig. 19: throughput plateaus by 32).
pub const THR_DEFAULT: u32 = 32;
/// The NVMe presets' threshold (TOS 3.2: "All NVMe coalescing configurations
/// have threshold set to 32").
pub const NVME_PRESET_THR: u32 = 32;

/// A strategy and its options as given; unset options take the defaults.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PolicySpec {
    pub name: String,
    pub delta: Option<Nanos>,
    pub thr: Option<u32>,
    pub ooo: Option<bool>,
    pub barrier: Option<BarrierMode>,
    pub max_irq_rate: Option<u64>,
    pub aggr_time: Option<Nanos>,
    pub nvme_feature: Option<u32>,
    pub a: Option<f64>,
    pub delta_unit: Option<Nanos>,
    pub dim_mode: Option<DimMode>,
}

impl PolicySpec {
    pub fn named(name: &str) -> Self {
        PolicySpec {
            name: name.to_string(),
            ..Default::default()
        }
    }
}

#[derive(Debug, Error, PartialEq)]
pub enum SpecError {
    #[error("unknown policy '{0}' (try: {1})")]
    UnknownPolicy(String, String),
    #[error("option --{option} does not apply to policy '{policy}' (it takes: {takes})")]
    NotApplicable {
        option: &'static str,
        policy: String,
        takes: String,
    },
    #[error("option --{option}: {message}")]
    BadValue {
        option: &'static str,
        message: String,
    },
}

/// One parameter of a strategy, for `cinterrupts policies`.
pub struct Param {
    pub option: &'static str,
    pub default: &'static str,
    pub help: &'static str,
}

pub struct Strategy {
    pub name: &'static str,
    pub summary: &'static str,
    pub params: &'static [Param],
}

const DELTA: Param = Param {
    option: "delta",
    default: "6us",
    help: "quiescent gap that ends a burst (6us Optane, 15us P3700; TOS 5.2)",
};
const THR: Param = Param {
    option: "thr",
    default: "32",
    help: "completions coalesced at most per interrupt",
};
const OOO: Param = Param {
    option: "ooo",
    default: "on",
    help: "out-of-order Urgent: urgent-only interrupts reap just the Urgent entries (TOS 3.5)",
};
const BARRIER: Param = Param {
    option: "barrier",
    default: "relaxed",
    help: "relaxed: fire when the Barrier completes; strict: once all earlier submissions have too",
};
const STORM: Param = Param {
    option: "max-irq-rate",
    default: "off",
    help: "Urgent-storm protection: keep interrupts under this rate per second (EWMA, lambda 1/128; TOS 4.3)",
};
const NVME_THR: Param = Param {
    option: "thr",
    default: "32",
    help: "Aggregation Threshold in entries, 1..256 (stored 0's-based)",
};

pub static STRATEGIES: &[Strategy] = &[
    Strategy {
        name: "default",
        summary: "an interrupt per completion (no coalescing; Linux's default)",
        params: &[],
    },
    Strategy {
        name: "nvme",
        summary: "NVMe 1.4 Feature 08h aggregation: threshold or time since the first pending completion, never extended",
        params: &[
            Param {
                option: "aggr-time",
                default: "100us",
                help: "Aggregation Time, a multiple of 100us up to 25.5ms",
            },
            NVME_THR,
            Param {
                option: "nvme-feature",
                default: "-",
                help: "the raw Feature 08h value instead, e.g. 0x011f = 100us, 32 entries",
            },
        ],
    },
    Strategy {
        name: "nvme100",
        summary: "nvme with 100us, the smallest time the standard allows (TOS 3.2)",
        params: &[NVME_THR],
    },
    Strategy {
        name: "nvme20",
        summary: "nvme with a theoretical 20us (TOS 3.2)",
        params: &[NVME_THR],
    },
    Strategy {
        name: "nvme6",
        summary: "nvme with a theoretical 6us, adaptive's delta (TOS 3.2)",
        params: &[NVME_THR],
    },
    Strategy {
        name: "adaptive",
        summary: "TOS Algorithm 1: fire after a quiet gap of delta or at thr completions; marks ignored",
        params: &[DELTA, THR],
    },
    Strategy {
        name: "cint",
        summary: "calibrated interrupts, TOS Algorithm 2: Urgent at once, Barrier ends a batch, the rest adaptive",
        params: &[DELTA, THR, OOO, BARRIER, STORM],
    },
    Strategy {
        name: "dynamic",
        summary: "Gyawali and Aryal: Algorithm 2 with delta = e^(a (thr - coalesced)) - 1",
        params: &[
            Param {
                option: "a",
                default: "0.1",
                help: "correction factor",
            },
            Param {
                option: "delta-unit",
                default: "1us",
                help: "what one unit of the formula's delta is (the paper gives none)",
            },
            THR,
            OOO,
            BARRIER,
            STORM,
        ],
    },
    Strategy {
        name: "dim",
        summary: "Linux net_dim: moderation profiles {usec, completions}, stepped per 64-interrupt window",
        params: &[Param {
            option: "dim-mode",
            default: "eqe",
            help: "eqe: timer from the first pending completion; cqe: restarted by each",
        }],
    },
];

/// Looks a strategy up by name.
pub fn strategy(name: &str) -> Option<&'static Strategy> {
    STRATEGIES.iter().find(|s| s.name == name)
}

fn takes(s: &Strategy) -> String {
    if s.params.is_empty() {
        "no options".to_string()
    } else {
        s.params
            .iter()
            .map(|p| format!("--{}", p.option))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Every option a spec can carry, with its value as given (`None` if unset),
/// spelled as the CLI prints it.
impl PolicySpec {
    pub fn given(&self) -> [(&'static str, Option<String>); 10] {
        let on_off = |v: bool| if v { "on" } else { "off" }.to_string();
        [
            ("delta", self.delta.map(format_nanos)),
            ("thr", self.thr.map(|v| v.to_string())),
            ("ooo", self.ooo.map(on_off)),
            ("barrier", self.barrier.map(|b| b.as_str().to_string())),
            ("max-irq-rate", self.max_irq_rate.map(|v| v.to_string())),
            ("aggr-time", self.aggr_time.map(format_nanos)),
            (
                "nvme-feature",
                self.nvme_feature.map(|v| format!("{v:#06x}")),
            ),
            ("a", self.a.map(|v| v.to_string())),
            ("delta-unit", self.delta_unit.map(format_nanos)),
            ("dim-mode", self.dim_mode.map(|m| m.as_str().to_string())),
        ]
    }
}

/// Refuses options the strategy does not take, so a typo in a sweep is not
/// silently a no-op.
fn check_applicable(spec: &PolicySpec, s: &Strategy) -> Result<(), SpecError> {
    for (option, value) in spec.given() {
        if value.is_some() && !s.params.iter().any(|p| p.option == option) {
            return Err(SpecError::NotApplicable {
                option,
                policy: s.name.to_string(),
                takes: takes(s),
            });
        }
    }
    Ok(())
}

fn thr(spec: &PolicySpec, default: u32, max: u32) -> Result<u32, SpecError> {
    let thr = spec.thr.unwrap_or(default);
    if thr == 0 || thr > max {
        return Err(SpecError::BadValue {
            option: "thr",
            message: format!("{thr} is outside 1..={max}"),
        });
    }
    Ok(thr)
}

fn max_irq_rate(spec: &PolicySpec) -> Result<Option<u64>, SpecError> {
    match spec.max_irq_rate {
        Some(0) => Err(SpecError::BadValue {
            option: "max-irq-rate",
            message: "must be at least 1 interrupt per second".into(),
        }),
        r => Ok(r),
    }
}

fn nvme_aggregation(spec: &PolicySpec) -> Result<Aggregation, SpecError> {
    if let Some(f) = spec.nvme_feature {
        if spec.aggr_time.is_some() || spec.thr.is_some() {
            return Err(SpecError::BadValue {
                option: "nvme-feature",
                message: "give either the feature value or --aggr-time/--thr, not both".into(),
            });
        }
        return Aggregation::from_feature(f).map_err(|message| SpecError::BadValue {
            option: "nvme-feature",
            message,
        });
    }
    let time = spec.aggr_time.unwrap_or(100 * US);
    let agg = Aggregation {
        time,
        threshold: thr(spec, NVME_PRESET_THR, 256)?,
    };
    if agg.to_feature().is_none() {
        return Err(SpecError::BadValue {
            option: "aggr-time",
            message: format!(
                "{} is not a multiple of {} up to 25.5ms as NVMe 1.4 encodes it (the paper's theoretical nvme20 and nvme6 are presets)",
                format_nanos(time),
                format_nanos(TIME_UNIT)
            ),
        });
    }
    Ok(agg)
}

/// The strategy's name and every parameter in force, defaults filled in:
/// `cint delta=6us thr=32 ooo=on barrier=relaxed max-irq-rate=off`.
pub fn describe(spec: &PolicySpec) -> String {
    let Some(s) = strategy(&spec.name) else {
        return spec.name.clone();
    };
    let given = spec.given();
    let mut out = s.name.to_string();
    for p in s.params {
        let value = given
            .iter()
            .find(|(o, _)| *o == p.option)
            .and_then(|(_, v)| v.clone());
        if p.option == "nvme-feature" && value.is_none() {
            continue;
        }
        out.push_str(&format!(
            " {}={}",
            p.option,
            value.as_deref().unwrap_or(p.default)
        ));
    }
    out
}

/// Builds the strategy a spec names.
pub fn build(spec: &PolicySpec) -> Result<Box<dyn Policy>, SpecError> {
    let s = strategy(&spec.name).ok_or_else(|| {
        SpecError::UnknownPolicy(
            spec.name.clone(),
            STRATEGIES
                .iter()
                .map(|s| s.name)
                .collect::<Vec<_>>()
                .join(", "),
        )
    })?;
    check_applicable(spec, s)?;
    let preset = |time: Nanos| -> Result<Box<dyn Policy>, SpecError> {
        let threshold = thr(spec, NVME_PRESET_THR, 256)?;
        Ok(Box::new(Nvme::new(s.name, Aggregation { time, threshold })))
    };
    let ooo = spec.ooo.unwrap_or(true);
    let barrier = spec.barrier.unwrap_or(BarrierMode::Relaxed);
    Ok(match s.name {
        "default" => Box::new(DefaultPolicy),
        "nvme" => Box::new(Nvme::new("nvme", nvme_aggregation(spec)?)),
        "nvme100" => preset(100 * US)?,
        "nvme20" => preset(20 * US)?,
        "nvme6" => preset(6 * US)?,
        "adaptive" => Box::new(Adaptive::new(
            spec.delta.unwrap_or(DELTA_OPTANE),
            thr(spec, THR_DEFAULT, u32::MAX)?,
        )),
        "cint" => Box::new(Cint::new(
            "cint",
            CintConfig {
                delta: DeltaRule::Fixed(spec.delta.unwrap_or(DELTA_OPTANE)),
                thr: thr(spec, THR_DEFAULT, u32::MAX)?,
                ooo,
                barrier,
                max_irq_rate: max_irq_rate(spec)?,
            },
        )),
        "dynamic" => {
            let a = spec.a.unwrap_or(dynamic::DEFAULT_A);
            if !(a.is_finite() && a > 0.0) {
                return Err(SpecError::BadValue {
                    option: "a",
                    message: format!("{a} must be a positive number"),
                });
            }
            let unit = spec.delta_unit.unwrap_or(dynamic::DEFAULT_UNIT);
            if unit == 0 {
                return Err(SpecError::BadValue {
                    option: "delta-unit",
                    message: "must be more than 0".into(),
                });
            }
            Box::new(dynamic::dynamic(
                a,
                unit,
                thr(spec, THR_DEFAULT, u32::MAX)?,
                ooo,
                barrier,
                max_irq_rate(spec)?,
            ))
        }
        "dim" => Box::new(Dim::new(spec.dim_mode.unwrap_or(DimMode::Eqe))),
        other => unreachable!("strategy {other} listed but not built"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_strategy_builds_with_defaults() {
        for s in STRATEGIES {
            let p = build(&PolicySpec::named(s.name)).unwrap();
            assert_eq!(p.name(), s.name);
        }
    }

    #[test]
    fn unknown_and_inapplicable_options_are_refused() {
        assert!(matches!(
            build(&PolicySpec::named("fast")),
            Err(SpecError::UnknownPolicy(..))
        ));
        let spec = PolicySpec {
            delta: Some(US),
            ..PolicySpec::named("nvme100")
        };
        let err = build(&spec).err().unwrap();
        assert_eq!(
            err.to_string(),
            "option --delta does not apply to policy 'nvme100' (it takes: --thr)"
        );
    }

    #[test]
    fn nvme_time_must_be_encodable() {
        let spec = PolicySpec {
            aggr_time: Some(20 * US),
            ..PolicySpec::named("nvme")
        };
        assert!(build(&spec).is_err());
        let spec = PolicySpec {
            aggr_time: Some(200 * US),
            ..PolicySpec::named("nvme")
        };
        assert_eq!(build(&spec).unwrap().delay_bound(), 200 * US);
        let spec = PolicySpec {
            nvme_feature: Some(0x0203),
            ..PolicySpec::named("nvme")
        };
        assert_eq!(build(&spec).unwrap().delay_bound(), 200 * US);
    }

    #[test]
    fn describe_fills_in_defaults() {
        let spec = PolicySpec {
            thr: Some(16),
            ..PolicySpec::named("cint")
        };
        assert_eq!(
            describe(&spec),
            "cint delta=6us thr=16 ooo=on barrier=relaxed max-irq-rate=off"
        );
        assert_eq!(describe(&PolicySpec::named("nvme100")), "nvme100 thr=32");
    }

    #[test]
    fn zero_thr_is_refused() {
        let spec = PolicySpec {
            thr: Some(0),
            ..PolicySpec::named("adaptive")
        };
        assert!(build(&spec).is_err());
    }
}
