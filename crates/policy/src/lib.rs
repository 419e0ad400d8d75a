//! Interrupt-generation strategies for an NVMe completion queue, each a pure,
//! deterministic state machine.
//!
//! This crate is the part of calibrated interrupts (Tai, Smolyar, Wei,
//! Tsafrir; OSDI'21, ACM TOS'22) that would live in device firmware: given the
//! stream of commands submitted and completions posted on one completion queue
//! (CQ), decide when to raise an interrupt and what kind. The simulator and the
//! emulator drive the same code; so does `cinterrupts coalesce`.
//!
//! What it is not: no clock, no threads, no I/O. Time is a `u64` of
//! nanoseconds passed in by the caller ([`Nanos`]). The caller owns the CQ (see
//! [`cq::CompletionQueue`] for the host driver's view, with out-of-order Urgent
//! reaping and the contiguous doorbell) and the timer.
//!
//! # Driving a policy
//! Every strategy implements [`Policy`]:
//! - [`Policy::submitted`] when a command enters the submission queue (only
//!   strict Barrier uses it);
//! - [`Policy::completed`] when the device posts a completion to the CQ;
//! - [`Policy::deadline_reached`] once `now >= deadline()`. A deadline due at
//!   the same instant as a completion is handled first: Algorithm 1 loops
//!   `while now < timeout` (TOS 3.2), so a timeout at `t` expires before a
//!   completion arriving at `t` is counted.
//!
//! Each returns `Some(Interrupt)` when an interrupt fires at `now`.
//! [`replay::Replay`] is a complete driver over an event stream.
//!
//! ```
//! use policy::{build, Completion, Interrupt, Marks, Policy, PolicySpec};
//! let mut p = build(&PolicySpec::named("cint")).unwrap();
//! // An Urgent completion fires at once; with OOO only Urgent entries are reaped.
//! assert_eq!(p.completed(1_000, Completion::ok(1, Marks::URGENT)), Some(Interrupt::UrgentOnly));
//! // An unmarked one waits for a quiet gap of delta (6 us).
//! assert_eq!(p.completed(2_000, Completion::ok(2, Marks::NONE)), None);
//! assert_eq!(p.deadline(), Some(8_000));
//! assert_eq!(p.deadline_reached(8_000), Some(Interrupt::Full));
//! ```

pub mod adaptive;
mod aggregation;
mod artifact;
mod burst;
pub mod catalogue;
pub mod cid;
pub mod cint;
pub mod cq;
pub mod decimal;
pub mod default;
pub mod dim;
pub mod dynamic;
pub mod fast;
pub mod feature09;
mod marks;
pub mod nvme;
pub mod options;
pub mod oracle;
pub mod quote;
pub mod replay;
mod storm;
pub mod stream;
mod strict;
pub mod time;
mod urgent_interval;
pub mod virtio;

pub use burst::DeltaRule;
pub use catalogue::{build, build_for_vector, describe, Settings, SpecError};
pub use marks::{ByMark, Marks};
pub use options::{PolicySpec, Value};
pub use time::{format_nanos, Nanos, MS, SEC, US};

/// A command as the device sees it in the submission queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Command {
    /// Identifies the command until it completes (the CID's tag).
    pub id: u64,
    pub marks: Marks,
}

/// A completion queue entry as the device posts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub id: u64,
    /// The bits of the command, carried from the SQE (TOS 1.9 of the digest:
    /// the device tracks them per outstanding command).
    pub marks: Marks,
    /// Completed in error. Never coalesced: NVMe recommends "commands that
    /// complete in error are not coalesced" (TOS 4.2.1).
    pub error: bool,
}

impl Completion {
    pub fn ok(id: u64, marks: Marks) -> Self {
        Completion {
            id,
            marks,
            error: false,
        }
    }
}

/// What kind of interrupt fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Interrupt {
    /// The handler reaps every unreaped entry in the CQ.
    Full,
    /// Out-of-order Urgent processing (TOS 3.5): the handler reaps only the
    /// Urgent entries and returns; the rest wait for a later full interrupt.
    UrgentOnly,
}

impl Interrupt {
    pub fn as_str(self) -> &'static str {
        match self {
            Interrupt::Full => "full",
            Interrupt::UrgentOnly => "urgent",
        }
    }
}

/// One interrupt-generation strategy for one completion queue.
pub trait Policy: Send {
    /// The strategy's name as the CLI spells it.
    fn name(&self) -> &str;

    /// A command was submitted. Strategies that do not order completions
    /// against submissions ignore it.
    fn submitted(&mut self, _now: Nanos, _cmd: Command) {}

    /// A completion was posted to the CQ at `now`.
    fn completed(&mut self, now: Nanos, cqe: Completion) -> Option<Interrupt>;

    /// The deadline from [`Policy::deadline`] has passed; `now` is when the
    /// caller noticed (at or after the deadline). Called early, it does nothing.
    fn deadline_reached(&mut self, now: Nanos) -> Option<Interrupt>;

    /// When the caller must call [`Policy::deadline_reached`] next, if ever.
    /// `None` means nothing is pending that a timer would deliver.
    fn deadline(&self) -> Option<Nanos>;

    /// The longest any completion can wait in the CQ from being posted to the
    /// interrupt that delivers it, whatever the stream: the guarantee that
    /// no completion waits forever. Property tests hold every strategy to it.
    fn delay_bound(&self) -> Nanos;
}
