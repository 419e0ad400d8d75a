//! The counts that hold a run to its invariants.

use crate::device::DeviceStats;
use crate::driver::{BlockCount, HandlerCount};

/// Counts that hold the emulator to its invariants: every request submitted
/// is consumed exactly once, nothing is dropped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Audit {
    pub submitted: u64,
    pub device: DeviceStats,
    /// Over the whole run (not only the measured window).
    pub handlers: HandlerCount,
    pub consumed: u64,
    pub tag_waits: u64,
    pub verified: u64,
    pub mismatches: u64,
    /// The block layer's counts, when the run has one (`--block-scheduler`).
    pub block: Option<BlockCount>,
}
