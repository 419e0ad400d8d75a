//! The LD block layer's state in a run: what `World` holds of it (pieces in
//! flight, criticality, waits), with no dependency on `World`.

use std::collections::{HashMap, VecDeque};

use host::ld::{Ld, LdConfig};
use policy::Nanos;

use crate::BlockScheduler;

/// A piece at the device: its LD id, its request's slot, whether it is
/// critical.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Piece {
    pub ld: u64,
    pub parent: u32,
    pub critical: bool,
}

/// The LD block layer's state in a run.
#[derive(Debug)]
pub(crate) struct Block {
    pub ld: Ld,
    /// Pieces in flight, by their request slot.
    pub pieces: HashMap<u32, Piece>,
    /// Prepared requests' criticality, by slot, until they are submitted.
    pub critical: HashMap<u32, bool>,
    /// Non-critical pieces dispatched and not yet completed by the handler.
    pub noncritical: u32,
    /// Per thread: (sum of block-layer waits, requests) in the window
    /// (FR's T_Blk: submit to first dispatch).
    pub wait: Vec<(Nanos, u64)>,
    /// Per thread: polled pieces the device posted while the thread was not
    /// spinning, in order, found at its next reaping call.
    pub unfound: Vec<VecDeque<u32>>,
}

impl Block {
    pub(crate) fn new(scheduler: &BlockScheduler, queues: usize, threads: usize) -> Option<Block> {
        match *scheduler {
            BlockScheduler::None => None,
            BlockScheduler::Ld {
                tokens,
                split,
                opportunistic,
            } => Some(Block {
                ld: Ld::new(LdConfig {
                    tokens,
                    split,
                    queues,
                    opportunistic,
                }),
                pieces: HashMap::new(),
                critical: HashMap::new(),
                noncritical: 0,
                wait: vec![(0, 0); threads],
                unfound: vec![VecDeque::new(); threads],
            }),
        }
    }
}
