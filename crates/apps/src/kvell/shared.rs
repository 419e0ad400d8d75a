//! What the threads of one KVell instance share: the workers' request
//! queues (`slab_context.callbacks`, a ring of `max_pending_callbacks`
//! slots), the operations in flight, the key space and the run's end.

use std::collections::{BTreeSet, HashMap, VecDeque};

use policy::Nanos;

use super::keys::{Chooser, KeySpace};
use super::Config;
use crate::{OpDone, OpKind};

/// One request in a worker's queue (`struct slab_callback`'s `action`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// `READ`: index lookup, then the item's page.
    Read,
    /// `READ_NO_LOOKUP`: a scan's item, its place known from the client's
    /// index scan.
    ReadNoLookup,
    /// `UPDATE`: lookup, read the page, write it.
    Update,
    /// `ADD`: append a slot to the slab, then as `UPDATE`.
    Add,
    /// A read-modify-write's read: its callback enqueues the `UPDATE`.
    RmwRead,
}

#[derive(Clone, Copy, Debug)]
pub struct Request {
    pub op: u64,
    pub action: Action,
    pub key: u64,
    /// When the client had its slot (`add_time_in_payload(callback, 0)`).
    pub start: Nanos,
}

#[derive(Debug)]
struct OpState {
    kind: OpKind,
    items: u32,
    remaining: u32,
    start: Option<Nanos>,
}

#[derive(Debug)]
pub struct Shared {
    pub keys: KeySpace,
    pub chooser: Chooser,
    /// Keys handed to inserts so far (YCSB's insert sequence): key
    /// `items + i`.
    pub inserted: u64,
    /// Inserts acknowledged in order: keys below `items + acknowledged`
    /// are all in the store (YCSB's `AcknowledgedCounterGenerator`, which
    /// `latest` and scans read from, so they never ask for a key whose
    /// insert is still in flight).
    pub acknowledged: u64,
    acked_beyond: BTreeSet<u64>,
    queues: Vec<VecDeque<Request>>,
    max_pending: usize,
    /// Per worker: the clients (thread indices) waiting for a slot.
    parked: Vec<Vec<usize>>,
    ops: HashMap<u64, OpState>,
    next_op: u64,
    pub clients_alive: usize,
    pub stopping: bool,
}

impl Shared {
    pub fn new(config: &Config, keys: KeySpace, clients: usize) -> Result<Shared, String> {
        let workers = config.worker_cores.len();
        Ok(Shared {
            chooser: Chooser::new(config.request_distribution, keys.items)?,
            keys,
            inserted: 0,
            acknowledged: 0,
            acked_beyond: BTreeSet::new(),
            queues: vec![VecDeque::new(); workers],
            max_pending: config.pending_callbacks() as usize,
            parked: vec![Vec::new(); workers],
            ops: HashMap::new(),
            next_op: 0,
            clients_alive: clients,
            stopping: false,
        })
    }

    /// A new operation of `requests` requests.
    pub fn begin(&mut self, kind: OpKind, requests: u32) -> u64 {
        let id = self.next_op;
        self.next_op += 1;
        self.ops.insert(
            id,
            OpState {
                kind,
                items: requests.max(1),
                remaining: requests,
                start: None,
            },
        );
        id
    }

    /// `get_slab_buffer` then `enqueue_slab_callback`: false (and the
    /// client noted as waiting) when the worker's queue is full.
    pub fn try_enqueue(&mut self, worker: usize, req: Request, client: usize) -> bool {
        if self.queues[worker].len() >= self.max_pending {
            if !self.parked[worker].contains(&client) {
                self.parked[worker].push(client);
            }
            return false;
        }
        self.queues[worker].push_back(req);
        if let Some(op) = self.ops.get_mut(&req.op) {
            if op.kind != OpKind::Scan && op.start.is_none() {
                op.start = Some(req.start);
            }
        }
        true
    }

    /// A worker enqueueing into its own queue from a callback (a
    /// read-modify-write's update): past the bound, where KVell's
    /// `get_slab_buffer` would spin for ever on a full queue.
    pub fn enqueue_own(&mut self, worker: usize, req: Request) {
        self.queues[worker].push_back(req);
    }

    pub fn queued(&self, worker: usize) -> usize {
        self.queues[worker].len()
    }

    pub fn dequeue(&mut self, worker: usize) -> Option<Request> {
        self.queues[worker].pop_front()
    }

    /// The clients waiting on this worker's queue, now that it has room.
    pub fn take_parked(&mut self, worker: usize, out: &mut Vec<usize>) {
        out.append(&mut self.parked[worker]);
    }

    /// The final callback of one of the operation's requests (`compute_stats`);
    /// the operation when it was its last. A scan starts at the start of its
    /// first item to complete (the artifact's `print_scan_latency_stats`).
    pub fn finish(&mut self, req: &Request, end: Nanos) -> Option<OpDone> {
        let op = self.ops.get_mut(&req.op)?;
        if op.start.is_none() {
            op.start = Some(req.start);
        }
        op.remaining = op.remaining.saturating_sub(1);
        if op.remaining > 0 {
            return None;
        }
        let op = self.ops.remove(&req.op)?;
        if op.kind == OpKind::Insert {
            self.acknowledge(req.key - self.keys.items);
        }
        Some(OpDone {
            kind: op.kind,
            start: op.start.unwrap_or(req.start),
            end,
            items: op.items,
        })
    }

    fn acknowledge(&mut self, i: u64) {
        self.acked_beyond.insert(i);
        while self.acked_beyond.remove(&self.acknowledged) {
            self.acknowledged += 1;
        }
    }
}
