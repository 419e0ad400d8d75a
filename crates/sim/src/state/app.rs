//! The application run's state: each thread's driver and the instances'
//! books, what `World` holds of them, with no dependency on `World` (issue
//! 26 item 3).

use std::mem::size_of;

use apps::{Action, AppThread, OpDone, OpKind};
use hdrhistogram::Histogram;

use crate::limits::CLAT_MAX;

/// What drives one application thread.
#[derive(Debug)]
pub(crate) struct Driver {
    pub model: Box<dyn AppThread>,
    pub instance: usize,
    pub background: bool,
    /// Its bound on its own I/Os in flight ([`AppThread::max_in_flight`]).
    pub max_in_flight: u32,
    /// A blocking thread's submit call waits next for this many I/Os.
    pub(crate) then_wait: Option<u32>,
    /// The action decided before the futex_wake call the thread makes
    /// first, or the rest of a compute longer than [`super::MAX_SEGMENT`].
    pub(crate) pending: Option<Action>,
}

impl Driver {
    pub(crate) fn new(instance: usize, background: bool, model: Box<dyn AppThread>) -> Driver {
        Driver {
            max_in_flight: model.max_in_flight(),
            model,
            instance,
            background,
            then_wait: None,
            pending: None,
        }
    }
}

/// One instance's operations of one kind, foreground or background.
#[derive(Debug)]
pub(crate) struct OpStats {
    pub instance: usize,
    pub kind: OpKind,
    pub background: bool,
    pub ops: u64,
    pub items: u64,
    /// 1 ns to 100 s at 3 significant digits, as the I/O latencies
    /// ([`CLAT_MAX`]): bounded memory however long the run.
    pub lat: Histogram<u64>,
}

/// The application run's state beside the world: the instances, the
/// operations' books and the buffers the models drain into.
#[derive(Debug)]
pub(crate) struct Apps {
    /// Each instance's name (its first thread's name up to the `/`).
    pub names: Vec<String>,
    /// Per instance, the thread of each index.
    pub tids: Vec<Vec<Option<u32>>>,
    /// Created as each (instance, kind, background) first finishes one.
    pub book: Vec<OpStats>,
    /// Each request slot's tag (the model's name for the I/O).
    pub(crate) tags: Vec<u64>,
    pub tags_buf: Vec<u64>,
    pub(crate) ops_buf: Vec<OpDone>,
    pub(crate) wakes_buf: Vec<usize>,
}

impl Apps {
    pub(crate) fn new(names: Vec<String>, tids: Vec<Vec<Option<u32>>>) -> Apps {
        Apps {
            names,
            tids,
            book: Vec::new(),
            tags: Vec::new(),
            tags_buf: Vec::new(),
            ops_buf: Vec::new(),
            wakes_buf: Vec::new(),
        }
    }

    pub(crate) fn tag(&self, req: u32) -> u64 {
        self.tags[req as usize]
    }

    pub(crate) fn set_tag(&mut self, req: u32, tag: u64) {
        let i = req as usize;
        if i >= self.tags.len() {
            self.tags.resize(i + 1, 0);
        }
        self.tags[i] = tag;
    }

    pub(crate) fn record(&mut self, instance: usize, background: bool, op: OpDone, measured: bool) {
        if !measured {
            return;
        }
        let at =
            match self.book.iter().position(|s| {
                s.instance == instance && s.kind == op.kind && s.background == background
            }) {
                Some(at) => at,
                None => {
                    self.book.push(OpStats {
                        instance,
                        kind: op.kind,
                        background,
                        ops: 0,
                        items: 0,
                        lat: Histogram::new_with_bounds(1, CLAT_MAX, 3).expect("valid bounds"),
                    });
                    self.book.len() - 1
                }
            };
        let s = &mut self.book[at];
        s.ops += 1;
        s.items += u64::from(op.items);
        s.lat
            .saturating_record(op.end.saturating_sub(op.start).max(1));
    }

    /// What it holds, bytes (capacities).
    pub(crate) fn bytes(&self) -> usize {
        let hists: usize = self
            .book
            .iter()
            .map(|s| size_of::<OpStats>() + s.lat.distinct_values() * size_of::<u64>())
            .sum();
        hists
            + (self.tags.capacity() + self.tags_buf.capacity()) * size_of::<u64>()
            + self.ops_buf.capacity() * size_of::<OpDone>()
            + self.wakes_buf.capacity() * size_of::<usize>()
            + self.tids.iter().map(|t| t.capacity() * 8).sum::<usize>()
    }
}
