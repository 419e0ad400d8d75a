//! What a strategy can be told: one row per option, each a field of
//! [`PolicySpec`] with its command-line name, how its value is written, and
//! its typed value. The CLI's options and `cinterrupts policies` are made
//! from these rows and the strategies' parameters ([`crate::catalogue`]).

use std::fmt;

use crate::cint::{BarrierMode, OooCount};
use crate::dim::DimMode;
use crate::feature09::CdVectors;
use crate::nvme::ThrBase;
use crate::{format_nanos, Nanos};

/// A strategy and its options as given; unset options take the strategy's
/// defaults.
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
    pub ooo_count: Option<OooCount>,
    pub urgent_interval_min_thr: Option<Nanos>,
    pub nvme_thr: Option<ThrBase>,
    pub cd: Option<CdVectors>,
}

impl PolicySpec {
    pub fn named(name: &str) -> Self {
        PolicySpec {
            name: name.to_string(),
            ..Default::default()
        }
    }
}

/// A parameter's value, typed. `Display` spells it as the CLI takes it
/// (`6us`, `32`, `on`, `0x011f`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Time(Nanos),
    Count(u32),
    /// Per second.
    Rate(u64),
    Switch(bool),
    Factor(f64),
    /// A raw NVMe feature value.
    Feature(u32),
    Barrier(BarrierMode),
    DimMode(DimMode),
    OooCount(OooCount),
    ThrBase(ThrBase),
    /// Interrupt vectors with Coalescing Disable (Feature 09h).
    Vectors(CdVectors),
    /// A protection not in force (Urgent-storm protection by default).
    Off,
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Value::Time(ns) => f.write_str(&format_nanos(ns)),
            Value::Count(n) => write!(f, "{n}"),
            Value::Rate(r) => write!(f, "{r}"),
            Value::Switch(on) => f.write_str(if on { "on" } else { "off" }),
            Value::Factor(x) => write!(f, "{x}"),
            Value::Feature(v) => write!(f, "{v:#06x}"),
            Value::Barrier(b) => f.write_str(b.as_str()),
            Value::DimMode(m) => f.write_str(m.as_str()),
            Value::OooCount(c) => f.write_str(c.as_str()),
            Value::ThrBase(b) => f.write_str(b.as_str()),
            Value::Vectors(v) => write!(f, "{v}"),
            Value::Off => f.write_str("off"),
        }
    }
}

impl Value {
    fn time(self) -> Option<Nanos> {
        match self {
            Value::Time(t) => Some(t),
            _ => None,
        }
    }
    fn count(self) -> Option<u32> {
        match self {
            Value::Count(n) => Some(n),
            _ => None,
        }
    }
    fn rate(self) -> Option<u64> {
        match self {
            Value::Rate(r) => Some(r),
            _ => None,
        }
    }
    fn switch(self) -> Option<bool> {
        match self {
            Value::Switch(on) => Some(on),
            _ => None,
        }
    }
    fn factor(self) -> Option<f64> {
        match self {
            Value::Factor(x) => Some(x),
            _ => None,
        }
    }
    fn feature(self) -> Option<u32> {
        match self {
            Value::Feature(v) => Some(v),
            _ => None,
        }
    }
    fn barrier(self) -> Option<BarrierMode> {
        match self {
            Value::Barrier(b) => Some(b),
            _ => None,
        }
    }
    fn dim_mode(self) -> Option<DimMode> {
        match self {
            Value::DimMode(m) => Some(m),
            _ => None,
        }
    }
    fn ooo_count(self) -> Option<OooCount> {
        match self {
            Value::OooCount(c) => Some(c),
            _ => None,
        }
    }
    fn thr_base(self) -> Option<ThrBase> {
        match self {
            Value::ThrBase(b) => Some(b),
            _ => None,
        }
    }
    fn vectors(self) -> Option<CdVectors> {
        match self {
            Value::Vectors(v) => Some(v),
            _ => None,
        }
    }
}

/// How a value is written on the command line. The CLI reads each kind one
/// way; a word kind lists its words and the value each stands for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// `6us`, `100us`, `1ms`: a unit is required (except for 0).
    Time,
    /// A whole number.
    Count,
    /// Per second: `100k`, `250000`.
    Rate,
    /// `on` or `off`.
    Switch,
    /// A decimal number.
    Factor,
    /// Hexadecimal with `0x`, or decimal.
    Feature,
    /// One of these words.
    Word(&'static [(&'static str, Value)]),
    /// Interrupt vectors: `1,3`, `2-5`, `none` or `sync`
    /// ([`crate::feature09::CdVectors::parse`] reads it).
    Vectors,
}

/// One option: a field of [`PolicySpec`] holding a `T`.
pub struct Opt<T: 'static> {
    /// As the CLI spells it, without the dashes.
    pub name: &'static str,
    /// The placeholder in `--help` (`TIME`).
    pub value_name: &'static str,
    /// The `--help` line; the strategies that take it are appended.
    pub about: &'static str,
    pub kind: Kind,
    get: fn(&PolicySpec) -> Option<T>,
    set: fn(&mut PolicySpec, T),
    to_value: fn(T) -> Value,
    from_value: fn(Value) -> Option<T>,
}

impl<T: Copy> Opt<T> {
    /// The value given, if any.
    pub fn given(&self, spec: &PolicySpec) -> Option<T> {
        (self.get)(spec)
    }

    pub fn value(&self, v: T) -> Value {
        (self.to_value)(v)
    }
}

/// An option whatever its type: what the CLI and the checks need.
pub trait AnyOpt: Sync {
    fn name(&self) -> &'static str;
    fn value_name(&self) -> &'static str;
    fn about(&self) -> &'static str;
    fn kind(&self) -> Kind;
    /// The value given in `spec`, if any.
    fn given(&self, spec: &PolicySpec) -> Option<Value>;
    /// Sets the option in `spec`; `Err` if `value` is of another kind
    /// (names the kind expected).
    fn give(&self, spec: &mut PolicySpec, value: Value) -> Result<(), String>;
}

impl<T: Copy + 'static> AnyOpt for Opt<T> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn value_name(&self) -> &'static str {
        self.value_name
    }
    fn about(&self) -> &'static str {
        self.about
    }
    fn kind(&self) -> Kind {
        self.kind
    }
    fn given(&self, spec: &PolicySpec) -> Option<Value> {
        (self.get)(spec).map(self.to_value)
    }
    fn give(&self, spec: &mut PolicySpec, value: Value) -> Result<(), String> {
        match (self.from_value)(value) {
            Some(v) => {
                (self.set)(spec, v);
                Ok(())
            }
            None => Err(format!("'{value}' is not a {}", self.value_name)),
        }
    }
}

pub const DELTA: Opt<Nanos> = Opt {
    name: "delta",
    value_name: "TIME",
    about: "Quiescent gap that ends a burst",
    kind: Kind::Time,
    get: |s| s.delta,
    set: |s, v| s.delta = Some(v),
    to_value: Value::Time,
    from_value: Value::time,
};
pub const THR: Opt<u32> = Opt {
    name: "thr",
    value_name: "N",
    about: "Most completions per interrupt",
    kind: Kind::Count,
    get: |s| s.thr,
    set: |s, v| s.thr = Some(v),
    to_value: Value::Count,
    from_value: Value::count,
};
pub const OOO: Opt<bool> = Opt {
    name: "ooo",
    value_name: "on|off",
    about: "Out-of-order Urgent processing",
    kind: Kind::Switch,
    get: |s| s.ooo,
    set: |s, v| s.ooo = Some(v),
    to_value: Value::Switch,
    from_value: Value::switch,
};
pub const BARRIER: Opt<BarrierMode> = Opt {
    name: "barrier",
    value_name: "BARRIER",
    about: "Barrier semantics",
    kind: Kind::Word(&[
        ("relaxed", Value::Barrier(BarrierMode::Relaxed)),
        ("strict", Value::Barrier(BarrierMode::Strict)),
    ]),
    get: |s| s.barrier,
    set: |s, v| s.barrier = Some(v),
    to_value: Value::Barrier,
    from_value: Value::barrier,
};
pub const MAX_IRQ_RATE: Opt<u64> = Opt {
    name: "max-irq-rate",
    value_name: "RATE",
    about: "Urgent-storm protection: maximum interrupts per second",
    kind: Kind::Rate,
    get: |s| s.max_irq_rate,
    set: |s, v| s.max_irq_rate = Some(v),
    to_value: Value::Rate,
    from_value: Value::rate,
};
pub const AGGR_TIME: Opt<Nanos> = Opt {
    name: "aggr-time",
    value_name: "TIME",
    about: "NVMe Aggregation Time, a multiple of 100us",
    kind: Kind::Time,
    get: |s| s.aggr_time,
    set: |s, v| s.aggr_time = Some(v),
    to_value: Value::Time,
    from_value: Value::time,
};
pub const NVME_FEATURE: Opt<u32> = Opt {
    name: "nvme-feature",
    value_name: "VALUE",
    about: "Raw NVMe Feature 08h value, e.g. 0x011f",
    kind: Kind::Feature,
    get: |s| s.nvme_feature,
    set: |s, v| s.nvme_feature = Some(v),
    to_value: Value::Feature,
    from_value: Value::feature,
};
pub const A: Opt<f64> = Opt {
    name: "a",
    value_name: "A",
    about: "Correction factor of the dynamic timeout",
    kind: Kind::Factor,
    get: |s| s.a,
    set: |s, v| s.a = Some(v),
    to_value: Value::Factor,
    from_value: Value::factor,
};
pub const DELTA_UNIT: Opt<Nanos> = Opt {
    name: "delta-unit",
    value_name: "TIME",
    about: "What one unit of the dynamic timeout is",
    kind: Kind::Time,
    get: |s| s.delta_unit,
    set: |s, v| s.delta_unit = Some(v),
    to_value: Value::Time,
    from_value: Value::time,
};
pub const DIM_MODE: Opt<DimMode> = Opt {
    name: "dim-mode",
    value_name: "DIM_MODE",
    about: "Moderation timer mode",
    kind: Kind::Word(&[
        ("eqe", Value::DimMode(DimMode::Eqe)),
        ("cqe", Value::DimMode(DimMode::Cqe)),
    ]),
    get: |s| s.dim_mode,
    set: |s, v| s.dim_mode = Some(v),
    to_value: Value::DimMode,
    from_value: Value::dim_mode,
};

pub const OOO_COUNT: Opt<OooCount> = Opt {
    name: "ooo-count",
    value_name: "OOO_COUNT",
    about: "Whether an Urgent entry reaped out of order counts toward thr: prose (TOS 3.5) or code (the authors' patch)",
    kind: Kind::Word(&[
        ("prose", Value::OooCount(OooCount::Prose)),
        ("code", Value::OooCount(OooCount::Code)),
    ]),
    get: |s| s.ooo_count,
    set: |s, v| s.ooo_count = Some(v),
    to_value: Value::OooCount,
    from_value: Value::ooo_count,
};
pub const URGENT_INTERVAL_MIN_THR: Opt<Nanos> = Opt {
    name: "urgent-interval-min-thr",
    value_name: "TIME",
    about: "The authors' Urgent-storm guard: coalesce marked entries while the average interval between urgent interrupts is below this",
    kind: Kind::Time,
    get: |s| s.urgent_interval_min_thr,
    set: |s, v| s.urgent_interval_min_thr = Some(v),
    to_value: Value::Time,
    from_value: Value::time,
};
pub const NVME_THR: Opt<ThrBase> = Opt {
    name: "nvme-thr",
    value_name: "NVME_THR",
    about: "How --thr is read: spec (entries per interrupt) or code (the authors' nvme-emul: fire when the count exceeds it)",
    kind: Kind::Word(&[
        ("spec", Value::ThrBase(ThrBase::Spec)),
        ("code", Value::ThrBase(ThrBase::Code)),
    ]),
    get: |s| s.nvme_thr,
    set: |s, v| s.nvme_thr = Some(v),
    to_value: Value::ThrBase,
    from_value: Value::thr_base,
};

pub const CD: Opt<CdVectors> = Opt {
    name: "cd",
    value_name: "VECTORS",
    about: "Interrupt vectors with Coalescing Disable (NVMe Feature 09h): 1,3 or 2-5 (I/O queue N's vector is N), none, or sync (the simulator's: the vectors of queues whose threads block)",
    kind: Kind::Vectors,
    get: |s| s.cd,
    set: |s, v| s.cd = Some(v),
    to_value: Value::Vectors,
    from_value: Value::vectors,
};

/// Every option, in the order the CLI lists them and the checks meet them.
pub static OPTIONS: &[&dyn AnyOpt] = &[
    &DELTA,
    &THR,
    &OOO,
    &BARRIER,
    &MAX_IRQ_RATE,
    &AGGR_TIME,
    &NVME_FEATURE,
    &A,
    &DELTA_UNIT,
    &DIM_MODE,
    &OOO_COUNT,
    &URGENT_INTERVAL_MIN_THR,
    &NVME_THR,
    &CD,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_option_round_trips_its_own_kind_and_refuses_others() {
        let samples = [
            Value::Time(6_000),
            Value::Count(7),
            Value::Rate(100),
            Value::Switch(false),
            Value::Factor(0.5),
            Value::Feature(0x011f),
            Value::Barrier(BarrierMode::Strict),
            Value::DimMode(DimMode::Cqe),
            Value::OooCount(OooCount::Code),
            Value::ThrBase(ThrBase::Code),
            Value::Vectors(CdVectors::Sync),
        ];
        for opt in OPTIONS {
            let mut taken = 0;
            for v in samples {
                let mut spec = PolicySpec::named("x");
                if opt.give(&mut spec, v).is_ok() {
                    taken += 1;
                    assert_eq!(opt.given(&spec), Some(v), "{}", opt.name());
                } else {
                    assert_eq!(spec, PolicySpec::named("x"), "{}", opt.name());
                }
            }
            assert_eq!(taken, 1, "{} takes exactly one kind", opt.name());
        }
    }

    #[test]
    fn values_are_spelled_as_the_cli_takes_them() {
        assert_eq!(Value::Time(6_000).to_string(), "6us");
        assert_eq!(Value::Feature(0x011f).to_string(), "0x011f");
        assert_eq!(Value::Switch(true).to_string(), "on");
        assert_eq!(Value::Factor(0.1).to_string(), "0.1");
        assert_eq!(Value::Off.to_string(), "off");
        assert_eq!(Value::Barrier(BarrierMode::Relaxed).to_string(), "relaxed");
    }
}
