//! A YCSB load injector (`workload-ycsb.c`, `_launch_ycsb` and
//! `_launch_ycsb_e`; `workload-common.c`, `do_workload_thread`): it
//! generates its share of the operations as fast as it can and enqueues
//! each request to the worker owning the key, waiting only for a slot.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use jobs::ycsb::{Mix, Op};
use jobs::Waiter;
use policy::Nanos;
use rand::RngCore;

use super::shared::{Action as ReqAction, Request, Shared};
use super::{Config, CLIENT_REQUEST_NS, SCAN_INDEX_PER_ITEM_NS};
use crate::{Action, AppThread, OpDone, OpKind};

#[derive(Debug)]
pub struct Client {
    /// Its index among the instance's threads (the workers wake it).
    index: usize,
    shared: Rc<RefCell<Shared>>,
    mix: Mix,
    scan_length: u64,
    /// Operations still to generate.
    remaining: u64,
    /// The current operation's requests not yet enqueued, with their worker.
    pending: VecDeque<(usize, Request)>,
    stopped: bool,
    ended: bool,
}

impl Client {
    pub fn new(
        config: &Config,
        index: usize,
        ops: u64,
        shared: Rc<RefCell<Shared>>,
    ) -> Result<Client, String> {
        Ok(Client {
            index,
            shared,
            mix: config
                .mix()
                .map_err(|e| format!("option '{}': {}", e.option, e.message))?,
            scan_length: u64::from(config.scan_length),
            // `ops = 0`: no bound, the front end stops the run.
            remaining: if config.ops == 0 { u64::MAX } else { ops },
            pending: VecDeque::new(),
            stopped: false,
            ended: false,
        })
    }

    /// One YCSB operation: its requests queued, its CPU returned.
    fn generate(&mut self, rng: &mut dyn RngCore) -> Nanos {
        let mut shared = self.shared.borrow_mut();
        let shared = &mut *shared;
        let loaded = shared.keys.items;
        // What reads and scans may reach: the loaded keys and the inserts
        // acknowledged in order (YCSB's `transactioninsertkeysequence`).
        let keys = loaded + shared.acknowledged;
        let op = self.mix.next(rng);
        let request = |op, action, key| Request {
            op,
            action,
            key,
            start: 0,
        };
        let (kind, reqs): (OpKind, Vec<(ReqAction, u64)>) = match op {
            Op::Read => (
                OpKind::Read,
                vec![(ReqAction::Read, shared.chooser.next(keys, rng))],
            ),
            Op::Update => (
                OpKind::Update,
                vec![(ReqAction::Update, shared.chooser.next(keys, rng))],
            ),
            Op::ReadModifyWrite => (
                OpKind::ReadModifyWrite,
                vec![(ReqAction::RmwRead, shared.chooser.next(keys, rng))],
            ),
            Op::Insert => {
                // YCSB's insert sequence: the next key after the load.
                let key = loaded + shared.inserted;
                shared.inserted += 1;
                (OpKind::Insert, vec![(ReqAction::Add, key)])
            }
            Op::Scan => {
                // `kv_init_scan(item, scan_length)`: the next L keys from
                // the start key, fewer at the key space's end.
                let start = shared.chooser.next(keys, rng);
                let end = (start + self.scan_length).min(keys);
                (
                    OpKind::Scan,
                    (start..end).map(|k| (ReqAction::ReadNoLookup, k)).collect(),
                )
            }
        };
        let id = shared.begin(kind, reqs.len() as u32);
        let cost = match kind {
            OpKind::Scan => (SCAN_INDEX_PER_ITEM_NS + CLIENT_REQUEST_NS) * reqs.len() as u64,
            _ => CLIENT_REQUEST_NS,
        };
        for (action, key) in reqs {
            self.pending
                .push_back((shared.keys.worker_of(key), request(id, action, key)));
        }
        cost
    }

    fn end(&mut self) -> Action {
        if !self.ended {
            self.ended = true;
            self.shared.borrow_mut().clients_alive -= 1;
        }
        Action::Done
    }
}

impl AppThread for Client {
    fn waiter(&self) -> Waiter {
        // It never waits for I/O; its requests are the workers'.
        Waiter::Libaio
    }

    fn next(&mut self, now: Nanos, rng: &mut dyn RngCore) -> Action {
        while let Some(&(worker, req)) = self.pending.front() {
            let req = Request { start: now, ..req };
            if !self
                .shared
                .borrow_mut()
                .try_enqueue(worker, req, self.index)
            {
                // KVell spins (`NOP10()`) on its own core until the worker
                // dequeues; here it sleeps until the worker wakes it.
                return Action::Park;
            }
            self.pending.pop_front();
        }
        if self.ended || self.stopped || self.shared.borrow().stopping || self.remaining == 0 {
            return self.end();
        }
        self.remaining -= 1;
        Action::Compute(self.generate(rng))
    }

    fn completed(&mut self, _tags: &[u64], _now: Nanos) {}

    fn drain_ops(&mut self, _out: &mut Vec<OpDone>) {}

    fn stop(&mut self) {
        self.stopped = true;
        self.shared.borrow_mut().stopping = true;
    }

    fn max_in_flight(&self) -> u32 {
        0
    }
}
