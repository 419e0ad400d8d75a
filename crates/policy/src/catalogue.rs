//! Every strategy, declared once: its name, what it does, the parameters it
//! takes with their typed defaults and help, and how to build it from a
//! [`PolicySpec`]. The CLI's options, `cinterrupts policies` and the
//! parameters a run reports are all made from [`STRATEGIES`].

use std::fmt::{self, Write as _};

use thiserror::Error;

use crate::burst::DeltaRule;
use crate::cint::{BarrierMode, Cint, CintConfig, OooCount};
use crate::dim::{Dim, DimMode};
use crate::nvme::{Aggregation, Nvme, ThrBase, TIME_UNIT};
use crate::options::{self, AnyOpt, Opt, Value, OPTIONS};
use crate::{adaptive::Adaptive, default::Default as DefaultPolicy, dynamic};
use crate::{format_nanos, Nanos, Policy, US};

pub use crate::options::PolicySpec;

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
/// The smallest Aggregation Time NVMe 1.4 encodes (TOS 3.2).
const NVME_AGGR_TIME: Nanos = 100 * US;

#[derive(Clone, Debug, Error, PartialEq)]
pub enum SpecError {
    #[error("unknown policy '{0}' (try: {1})")]
    UnknownPolicy(String, String),
    #[error("option --{option} does not apply to policy '{policy}' (it takes: {takes})")]
    NotApplicable {
        option: &'static str,
        policy: String,
        takes: String,
    },
    #[error("policy '{name}': {message}")]
    ArtifactName { name: String, message: String },
    #[error("option --{option}: {message}")]
    BadValue {
        option: &'static str,
        message: String,
    },
}

/// One parameter of a strategy, whatever its type: for the listing, the
/// applicability check and the settings a run reports.
pub trait Parameter: Sync {
    /// The option's name as the CLI spells it.
    fn option(&self) -> &'static str;
    /// What the parameter means for this strategy.
    fn help(&self) -> &'static str;
    /// The default as `cinterrupts policies` shows it (`6us`, `off`, `-`).
    fn default_shown(&self) -> String;
    /// The value the strategy runs with; `None` when it is not shown at all
    /// (a raw value standing in for other options, unless given).
    fn in_force(&self, spec: &PolicySpec) -> Option<Value>;
}

/// A parameter with a default.
pub struct Param<T: 'static> {
    pub opt: &'static Opt<T>,
    pub default: T,
    pub help: &'static str,
}

impl<T: Copy> Param<T> {
    /// As given, or the default.
    pub fn value(&self, spec: &PolicySpec) -> T {
        self.opt.given(spec).unwrap_or(self.default)
    }
}

impl<T: Copy + Sync + 'static> Parameter for Param<T> {
    fn option(&self) -> &'static str {
        self.opt.name
    }
    fn help(&self) -> &'static str {
        self.help
    }
    fn default_shown(&self) -> String {
        self.opt.value(self.default).to_string()
    }
    fn in_force(&self, spec: &PolicySpec) -> Option<Value> {
        Some(self.opt.value(self.value(spec)))
    }
}

/// What an [`Optional`] parameter is when not given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unset {
    /// A protection not in force: shown as `off`.
    Off,
    /// Another way to give other parameters: shown as `-` and left out of
    /// the settings.
    Instead,
}

/// A parameter without a default.
pub struct Optional<T: 'static> {
    pub opt: &'static Opt<T>,
    pub unset: Unset,
    pub help: &'static str,
}

impl<T: Copy> Optional<T> {
    pub fn value(&self, spec: &PolicySpec) -> Option<T> {
        self.opt.given(spec)
    }
}

impl<T: Copy + Sync + 'static> Parameter for Optional<T> {
    fn option(&self) -> &'static str {
        self.opt.name
    }
    fn help(&self) -> &'static str {
        self.help
    }
    fn default_shown(&self) -> String {
        match self.unset {
            Unset::Off => "off".into(),
            Unset::Instead => "-".into(),
        }
    }
    fn in_force(&self, spec: &PolicySpec) -> Option<Value> {
        match (self.value(spec), self.unset) {
            (Some(v), _) => Some(self.opt.value(v)),
            (None, Unset::Off) => Some(Value::Off),
            (None, Unset::Instead) => None,
        }
    }
}

/// An `nvme` parameter that a raw Feature 08h value, when given, stands
/// for: the value in force is the one decoded from the feature, not the
/// option's default (a run on `--nvme-feature 0x0205` reported
/// `aggr-time=100us thr=32` while it ran 200us and 6, issue 12).
pub struct FromFeature<T: 'static> {
    pub param: Param<T>,
    pub decode: fn(Aggregation) -> T,
}

impl<T: Copy + Sync + 'static> Parameter for FromFeature<T> {
    fn option(&self) -> &'static str {
        self.param.option()
    }
    fn help(&self) -> &'static str {
        self.param.help()
    }
    fn default_shown(&self) -> String {
        self.param.default_shown()
    }
    fn in_force(&self, spec: &PolicySpec) -> Option<Value> {
        let decoded = NVME_FEATURE
            .value(spec)
            .and_then(|f| Aggregation::from_feature(f).ok());
        match decoded {
            Some(agg) => Some(self.param.opt.value((self.decode)(agg))),
            None => self.param.in_force(spec),
        }
    }
}

type Build = fn(&PolicySpec) -> Result<Box<dyn Policy>, SpecError>;

/// One strategy, declared once.
pub struct Strategy {
    pub name: &'static str,
    pub summary: &'static str,
    pub params: &'static [&'static dyn Parameter],
    /// What a device needs to run it (issue 40 item 2: a device-side
    /// strategy says which NVMe feature it needs), for `policies`.
    pub requires: &'static str,
    /// Called with a spec that gives only options in `params`.
    build: Build,
}

impl Strategy {
    pub fn takes(&self, option: &str) -> bool {
        self.params.iter().any(|p| p.option() == option)
    }

    fn takes_list(&self) -> String {
        if self.params.is_empty() {
            "no options".to_string()
        } else {
            self.params
                .iter()
                .map(|p| format!("--{}", p.option()))
                .collect::<Vec<_>>()
                .join(", ")
        }
    }
}

const DELTA: Param<Nanos> = Param {
    opt: &options::DELTA,
    default: DELTA_OPTANE,
    help: "quiescent gap that ends a burst (6us Optane, 15us P3700; TOS 5.2)",
};
const THR: Param<u32> = Param {
    opt: &options::THR,
    default: THR_DEFAULT,
    help: "completions coalesced at most per interrupt",
};
const OOO: Param<bool> = Param {
    opt: &options::OOO,
    default: true,
    help: "out-of-order Urgent: urgent-only interrupts reap just the Urgent entries (TOS 3.5)",
};
const BARRIER: Param<BarrierMode> = Param {
    opt: &options::BARRIER,
    default: BarrierMode::Relaxed,
    help: "relaxed: fire when the Barrier completes; strict: once all earlier submissions have too",
};
const STORM: Optional<u64> = Optional {
    opt: &options::MAX_IRQ_RATE,
    unset: Unset::Off,
    help: "Urgent-storm protection: keep interrupts under this rate per second (EWMA, lambda 1/128; TOS 4.3)",
};
const OOO_COUNT: Param<OooCount> = Param {
    opt: &options::OOO_COUNT,
    default: OooCount::Prose,
    help: "prose: an Urgent reaped out of order counts toward thr, so thr bounds every wait (TOS 3.5); code: it does not (the authors' pci.c, irq_poller_fire_urgent), unbounded under an Urgent stream",
};
const URGENT_GUARD: Optional<Nanos> = Optional {
    opt: &options::URGENT_INTERVAL_MIN_THR,
    unset: Unset::Off,
    help: "the authors' storm guard (pci.c urgent_interval_min_thr, default 0 = off): while the EWMA (1/128) of the interval between urgent interrupts is below this, marks are coalesced; e.g. 10us = 100K/s",
};
const NVME_THR: Param<u32> = Param {
    opt: &options::THR,
    default: NVME_PRESET_THR,
    help: "Aggregation Threshold: entries per interrupt 1..256, stored 0's-based (--nvme-thr code: the count to exceed, 0..255)",
};
const NVME_THR_BASE: Param<ThrBase> = Param {
    opt: &options::NVME_THR,
    default: ThrBase::Spec,
    help: "spec: --thr 32 fires at the 32nd entry (NVMe 1.4 5.21.1.8, TOS 3.2); code: at the 33rd (the authors' pci_emul.c, thr > irq_poller_thr)",
};
const AGGR_TIME: Param<Nanos> = Param {
    opt: &options::AGGR_TIME,
    default: NVME_AGGR_TIME,
    help: "Aggregation Time, a multiple of 100us up to 25.5ms",
};
/// `nvme`'s own time and threshold: what a given feature value decodes to.
const NVME_AGGR_TIME_IN_FORCE: FromFeature<Nanos> = FromFeature {
    param: AGGR_TIME,
    decode: |agg| agg.time,
};
const NVME_THR_IN_FORCE: FromFeature<u32> = FromFeature {
    param: NVME_THR,
    decode: |agg| agg.threshold,
};
const NVME_FEATURE: Optional<u32> = Optional {
    opt: &options::NVME_FEATURE,
    unset: Unset::Instead,
    help: "the raw Feature 08h value instead, e.g. 0x011f = 100us, 32 entries",
};
const A: Param<f64> = Param {
    opt: &options::A,
    default: dynamic::DEFAULT_A,
    help: "correction factor",
};
const DELTA_UNIT: Param<Nanos> = Param {
    opt: &options::DELTA_UNIT,
    default: dynamic::DEFAULT_UNIT,
    help: "what one unit of the formula's delta is (the paper gives none)",
};
const DIM_MODE: Param<DimMode> = Param {
    opt: &options::DIM_MODE,
    default: DimMode::Eqe,
    help: "eqe: timer from the first pending completion; cqe: restarted by each",
};

pub static STRATEGIES: &[Strategy] = &[
    Strategy {
        name: "default",
        summary: "an interrupt per completion (no coalescing; Linux's default)",
        params: &[],
        requires: "nothing: Feature 08h off, its reset value (TOS 2: the standard \"specifies that interrupt coalescing be turned off by default\")",
        build: |_| Ok(Box::new(DefaultPolicy)),
    },
    Strategy {
        name: "virtio",
        summary: "a virtio-blk queue served by a VMM: one interrupt when no request of the queue is in flight (Firecracker process_queue; EVENT_IDX)",
        params: &[],
        requires: "a virtio-blk device with VIRTIO_RING_F_EVENT_IDX (virtio 1.1 2.6.7.2, as virtio.rs), not NVMe",
        build: |_| Ok(Box::new(crate::virtio::Virtio::new())),
    },
    Strategy {
        name: "nvme",
        summary: "NVMe 1.4 Feature 08h aggregation: threshold or time since the first pending completion, never extended",
        params: &[
            &NVME_AGGR_TIME_IN_FORCE,
            &NVME_THR_IN_FORCE,
            &NVME_FEATURE,
            &NVME_THR_BASE,
        ],
        requires: "NVMe Feature 08h, one value for the whole controller (NVMe 1.4 5.21.1.8); Feature 09h's Coalescing Disable exempts a vector",
        build: |spec| Ok(Box::new(Nvme::new("nvme", nvme_aggregation(spec)?))),
    },
    Strategy {
        name: "nvme100",
        summary: "nvme with 100us, the smallest time the standard allows (TOS 3.2)",
        params: &[&NVME_THR, &NVME_THR_BASE],
        requires: "NVMe Feature 08h at its smallest time, 1 x 100us (NVMe 1.4 5.21.1.8)",
        build: |spec| nvme_preset("nvme100", 100 * US, spec),
    },
    Strategy {
        name: "nvme20",
        summary: "nvme with a theoretical 20us (TOS 3.2)",
        params: &[&NVME_THR, &NVME_THR_BASE],
        requires: "nothing NVMe offers: Feature 08h counts time in 100us units (TOS 3.2: theoretical)",
        build: |spec| nvme_preset("nvme20", 20 * US, spec),
    },
    Strategy {
        name: "nvme6",
        summary: "nvme with a theoretical 6us, adaptive's delta (TOS 3.2)",
        params: &[&NVME_THR, &NVME_THR_BASE],
        requires: "nothing NVMe offers: Feature 08h counts time in 100us units (TOS 3.2: theoretical)",
        build: |spec| nvme_preset("nvme6", 6 * US, spec),
    },
    Strategy {
        name: "adaptive",
        summary: "TOS Algorithm 1: fire after a quiet gap of delta or at thr completions; marks ignored",
        params: &[&DELTA, &THR],
        requires: "new firmware: no NVMe revision defines adaptive coalescing (TOS 2: \"no adaptive coalescing\"; the authors emulate it, TOS 4.2.1)",
        build: |spec| {
            let thr = thr(THR.value(spec), u32::MAX)?;
            Ok(Box::new(Adaptive::new(DELTA.value(spec), thr)))
        },
    },
    Strategy {
        name: "cint",
        summary: "calibrated interrupts, TOS Algorithm 2: Urgent at once, Barrier ends a batch, the rest adaptive",
        params: &[&DELTA, &THR, &OOO, &BARRIER, &STORM, &OOO_COUNT, &URGENT_GUARD],
        requires: "new firmware and two command bits in reserved SQE bits (TOS 4.2.1: \"any of the reserved bits in the submission queue entry\"); in no NVMe revision",
        build: |spec| {
            let config = cint_config(spec, DeltaRule::Fixed(DELTA.value(spec)))?;
            Ok(Box::new(Cint::new("cint", config)))
        },
    },
    Strategy {
        name: "dynamic",
        summary: "Gyawali and Aryal: Algorithm 2 with delta = e^(a (thr - coalesced)) - 1",
        params: &[
            &A,
            &DELTA_UNIT,
            &THR,
            &OOO,
            &BARRIER,
            &STORM,
            &OOO_COUNT,
            &URGENT_GUARD,
        ],
        requires: "new firmware and cint's two command bits, as cint; in no NVMe revision",
        build: build_dynamic,
    },
    Strategy {
        name: "dim",
        summary: "Linux net_dim: moderation profiles {usec, completions}, stepped per 64-interrupt window",
        params: &[&DIM_MODE],
        requires: "a host driver rewriting the device's moderation each window (Linux lib/dim drives NICs); on NVMe that is Set Features 08h, controller-wide, not per CQ",
        build: |spec| Ok(Box::new(Dim::new(DIM_MODE.value(spec)))),
    },
];

/// Looks a strategy up by name.
pub fn strategy(name: &str) -> Option<&'static Strategy> {
    STRATEGIES.iter().find(|s| s.name == name)
}

fn thr(thr: u32, max: u32) -> Result<u32, SpecError> {
    if thr == 0 || thr > max {
        return Err(SpecError::BadValue {
            option: "thr",
            message: format!("{thr} is outside 1..={max}"),
        });
    }
    Ok(thr)
}

fn max_irq_rate(spec: &PolicySpec) -> Result<Option<u64>, SpecError> {
    match STORM.value(spec) {
        Some(0) => Err(SpecError::BadValue {
            option: "max-irq-rate",
            message: "must be at least 1 interrupt per second".into(),
        }),
        r => Ok(r),
    }
}

/// cint's and dynamic's configuration.
fn cint_config(spec: &PolicySpec, delta: DeltaRule) -> Result<CintConfig, SpecError> {
    let max_irq_rate = max_irq_rate(spec)?;
    let urgent_interval_min = URGENT_GUARD.value(spec);
    if max_irq_rate.is_some() && urgent_interval_min.is_some() {
        return Err(SpecError::BadValue {
            option: "urgent-interval-min-thr",
            message: "give one storm guard: --max-irq-rate (ours) or --urgent-interval-min-thr (the authors')".into(),
        });
    }
    Ok(CintConfig {
        delta,
        thr: thr(THR.value(spec), u32::MAX)?,
        ooo: OOO.value(spec),
        barrier: BARRIER.value(spec),
        max_irq_rate,
        ooo_count: OOO_COUNT.value(spec),
        urgent_interval_min,
    })
}

/// The threshold in entries, as `--nvme-thr` reads `--thr`.
fn nvme_threshold(spec: &PolicySpec, time: Nanos) -> Result<u32, SpecError> {
    NVME_THR_BASE
        .value(spec)
        .entries(NVME_THR.value(spec), time)
        .map_err(|message| SpecError::BadValue {
            option: "thr",
            message,
        })
}

fn nvme_preset(name: &str, time: Nanos, spec: &PolicySpec) -> Result<Box<dyn Policy>, SpecError> {
    let threshold = nvme_threshold(spec, time)?;
    Ok(Box::new(Nvme::new(name, Aggregation { time, threshold })))
}

fn nvme_aggregation(spec: &PolicySpec) -> Result<Aggregation, SpecError> {
    if let Some(f) = NVME_FEATURE.value(spec) {
        if AGGR_TIME.opt.given(spec).is_some()
            || NVME_THR.opt.given(spec).is_some()
            || NVME_THR_BASE.opt.given(spec).is_some()
        {
            return Err(SpecError::BadValue {
                option: "nvme-feature",
                message: "give either the feature value or --aggr-time/--thr/--nvme-thr, not both"
                    .into(),
            });
        }
        return Aggregation::from_feature(f).map_err(|message| SpecError::BadValue {
            option: "nvme-feature",
            message,
        });
    }
    let time = AGGR_TIME.value(spec);
    let agg = Aggregation {
        time,
        threshold: nvme_threshold(spec, time)?,
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

fn build_dynamic(spec: &PolicySpec) -> Result<Box<dyn Policy>, SpecError> {
    let a = A.value(spec);
    if !(a.is_finite() && a > 0.0) {
        return Err(SpecError::BadValue {
            option: "a",
            message: format!("{a} must be a positive number"),
        });
    }
    let unit = DELTA_UNIT.value(spec);
    if unit == 0 {
        return Err(SpecError::BadValue {
            option: "delta-unit",
            message: "must be more than 0".into(),
        });
    }
    let config = cint_config(spec, DeltaRule::Fixed(0))?;
    Ok(Box::new(dynamic::dynamic(a, unit, config)))
}

/// Refuses options the strategy does not take, so a typo in a sweep is not
/// silently a no-op.
fn check_applicable(spec: &PolicySpec, s: &Strategy) -> Result<(), SpecError> {
    for opt in OPTIONS {
        if opt.given(spec).is_some() && !s.takes(opt.name()) {
            return Err(SpecError::NotApplicable {
                option: opt.name(),
                policy: s.name.to_string(),
                takes: s.takes_list(),
            });
        }
    }
    Ok(())
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
    (s.build)(spec)
}

/// A strategy as it runs: its name and every parameter in force, defaults
/// filled in, typed. `Display` gives the one-line description:
/// `cint delta=6us thr=32 ooo=on barrier=relaxed max-irq-rate=off`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Settings {
    pub name: String,
    pub params: Vec<(&'static str, Value)>,
}

impl Settings {
    /// The settings `spec` gives; an unknown strategy has none.
    pub fn of(spec: &PolicySpec) -> Settings {
        let params = strategy(&spec.name).map_or_else(Vec::new, |s| {
            s.params
                .iter()
                .filter_map(|p| Some((p.option(), p.in_force(spec)?)))
                .collect()
        });
        Settings {
            name: spec.name.clone(),
            params,
        }
    }
}

impl fmt::Display for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        for (option, value) in &self.params {
            write!(f, " {option}={value}")?;
        }
        Ok(())
    }
}

/// The strategy's name and every parameter in force, defaults filled in:
/// `cint delta=6us thr=32 ooo=on barrier=relaxed max-irq-rate=off`.
pub fn describe(spec: &PolicySpec) -> String {
    Settings::of(spec).to_string()
}

/// The `--help` line of an option: what it is, then the strategies that take
/// it (`Quiescent gap that ends a burst (adaptive, cint)`).
pub fn option_help(opt: &dyn AnyOpt) -> String {
    let takers: Vec<&str> = STRATEGIES
        .iter()
        .filter(|s| s.takes(opt.name()))
        .map(|s| s.name)
        .collect();
    format!("{} ({})", opt.about(), takers.join(", "))
}

/// `cinterrupts policies`: every strategy, its parameters and defaults.
pub fn listing() -> String {
    let mut s = String::new();
    for st in STRATEGIES {
        let _ = writeln!(s, "{:<9} {}", st.name, st.summary);
        for p in st.params {
            let _ = writeln!(
                s,
                "          --{:<14} {:<8} {}",
                p.option(),
                p.default_shown(),
                p.help()
            );
        }
        let _ = writeln!(s, "          needs: {}", st.requires);
    }
    let _ = write!(
        s,
        "\nEvery strategy delivers a completion in error at once (never coalesced).\n\
         Defaults are the paper's for the Intel Optane P4800X; use --delta {} for the Intel P3700 (TOS 5.2).\n\
         \n\
         The authors' system names (their artifact's scripts) are policies too, D in us:\n\
         alpha-0-0 = default; alpha-D-T = adaptive; cint-D-T = cint with ooo off,\n\
         cint-D-T-ooo or cint-ooo-D-T with ooo on (both --ooo-count code);\n\
         baseline-US-THR and nvme-emul-TIME-THR (TIME in 100us units) = nvme --nvme-thr code.\n",
        format_nanos(DELTA_P3700)
    );
    s
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
            "option --delta does not apply to policy 'nvme100' (it takes: --thr, --nvme-thr)"
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
            "cint delta=6us thr=16 ooo=on barrier=relaxed max-irq-rate=off ooo-count=prose urgent-interval-min-thr=off"
        );
        assert_eq!(
            describe(&PolicySpec::named("nvme100")),
            "nvme100 thr=32 nvme-thr=spec"
        );
    }

    #[test]
    fn settings_are_typed_and_show_a_raw_feature_only_when_given() {
        let s = Settings::of(&PolicySpec::named("cint"));
        assert_eq!(s.params[0], ("delta", Value::Time(DELTA_OPTANE)));
        assert_eq!(s.params[4], ("max-irq-rate", Value::Off));
        assert_eq!(
            describe(&PolicySpec::named("nvme")),
            "nvme aggr-time=100us thr=32 nvme-thr=spec"
        );
        let spec = PolicySpec {
            nvme_feature: Some(0x011f),
            ..PolicySpec::named("nvme")
        };
        assert_eq!(
            describe(&spec),
            "nvme aggr-time=100us thr=32 nvme-feature=0x011f nvme-thr=spec"
        );
        assert_eq!(Settings::of(&PolicySpec::named("fast")).params, vec![]);
    }

    #[test]
    fn a_raw_nvme_feature_reports_the_time_and_threshold_it_runs_with() {
        let spec = PolicySpec {
            nvme_feature: Some(0x0205),
            ..PolicySpec::named("nvme")
        };
        let p = build(&spec).unwrap();
        assert_eq!(p.delay_bound(), 200 * US);
        assert_eq!(
            describe(&spec),
            "nvme aggr-time=200us thr=6 nvme-feature=0x0205 nvme-thr=spec"
        );
        let s = Settings::of(&spec);
        assert_eq!(s.params[0], ("aggr-time", Value::Time(200 * US)));
        assert_eq!(s.params[1], ("thr", Value::Count(6)));
    }

    #[test]
    fn zero_thr_is_refused() {
        let spec = PolicySpec {
            thr: Some(0),
            ..PolicySpec::named("adaptive")
        };
        assert!(build(&spec).is_err());
    }

    #[test]
    fn every_parameter_is_a_known_option_and_every_option_is_taken() {
        for s in STRATEGIES {
            for p in s.params {
                assert!(
                    OPTIONS.iter().any(|o| o.name() == p.option()),
                    "{} {}",
                    s.name,
                    p.option()
                );
            }
        }
        for o in OPTIONS {
            assert!(STRATEGIES.iter().any(|s| s.takes(o.name())), "{}", o.name());
        }
        assert_eq!(
            option_help(&options::DELTA),
            "Quiescent gap that ends a burst (adaptive, cint)"
        );
    }
}
