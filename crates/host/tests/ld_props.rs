//! LD's invariants (FR 3.3) over random streams of submissions and
//! completions: every request completes exactly once, after all its pieces;
//! the pieces cover it exactly, in LBA order; non-critical I/O in flight
//! never exceeds the tokens; critical I/O never waits; and once completions
//! keep coming, every request is dispatched and done (nothing starves).

use host::ld::{Dispatch, Done, Ld, LdConfig, Req};
use proptest::prelude::*;
use std::collections::HashMap;

#[derive(Clone, Debug)]
enum Op {
    Submit {
        critical: bool,
        offset: u64,
        len: u64,
        queue: usize,
    },
    /// Completes the in-flight piece at this index (modulo their number).
    Complete(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (any::<bool>(), 0u64..1 << 30, 0u64..300_000, 0usize..6).prop_map(
            |(critical, offset, len, queue)| Op::Submit {
                critical,
                offset,
                len,
                queue
            }
        ),
        any::<usize>().prop_map(Op::Complete),
    ]
}

fn config() -> impl Strategy<Value = LdConfig> {
    (
        1u32..12,
        prop_oneof![Just(32 * 1024u64), Just(4096), 1u64..70_000],
        1usize..4,
        any::<bool>(),
    )
        .prop_map(|(tokens, split, queues, opportunistic)| LdConfig {
            tokens,
            split,
            queues,
            opportunistic,
        })
}

struct Check {
    cfg: LdConfig,
    reqs: HashMap<u64, Req>,
    dispatched: HashMap<u64, Vec<Dispatch>>,
    in_flight: Vec<Dispatch>,
    done: HashMap<u64, Done>,
}

impl Check {
    fn dispatch(&mut self, ld: &Ld, out: Vec<Dispatch>) {
        for d in out {
            assert!(d.critical || d.token, "non-critical without a token: {d:?}");
            let pieces = self.dispatched.entry(d.parent).or_default();
            if let Some(last) = pieces.last() {
                // Consecutive and ascending (FR 3.3: LBA order).
                assert!(
                    last.offset + last.len <= d.offset || d.len == 0,
                    "{last:?} then {d:?}"
                );
            }
            pieces.push(d);
            self.in_flight.push(d);
        }
        let holding = self.in_flight.iter().filter(|d| d.token).count() as u32;
        let noncritical = self.in_flight.iter().filter(|d| !d.critical).count() as u32;
        assert!(holding <= self.cfg.tokens);
        assert!(noncritical <= self.cfg.tokens);
        assert_eq!(noncritical, ld.noncritical_in_flight());
        assert_eq!(holding + ld.free_tokens(), self.cfg.tokens);
    }

    fn done(&mut self, done: Done) {
        let req = self.reqs[&done.id];
        assert!(
            self.done.insert(done.id, done).is_none(),
            "done twice: {done:?}"
        );
        // Every piece was dispatched and none is still at the device.
        assert!(self.in_flight.iter().all(|d| d.parent != done.id));
        let pieces = &self.dispatched[&done.id];
        assert_eq!(pieces.len() as u32, done.pieces);
        // The pieces cover the request exactly.
        let mut at = req.offset;
        for p in pieces {
            assert_eq!(p.offset, at);
            at += p.len;
        }
        assert_eq!(at, req.offset + req.len);
        if !req.critical {
            assert!(pieces.iter().all(|p| p.len <= self.cfg.split));
        } else {
            assert_eq!(pieces.len(), 1);
        }
        assert!(done.submitted <= done.first_dispatch && done.first_dispatch <= done.completed);
    }

    fn complete(&mut self, ld: &mut Ld, now: u64, index: usize) {
        let d = self.in_flight.remove(index % self.in_flight.len());
        let c = ld.completed(now, d.piece).expect("in flight");
        if let Some(done) = c.done {
            self.done(done);
        }
        self.dispatch(ld, c.dispatch);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn ld_keeps_its_invariants(cfg in config(), ops in prop::collection::vec(op(), 0..200)) {
        let mut ld = Ld::new(cfg.clone());
        let mut check = Check {
            cfg: cfg.clone(),
            reqs: HashMap::new(),
            dispatched: HashMap::new(),
            in_flight: Vec::new(),
            done: HashMap::new(),
        };
        let mut now = 0;
        let mut next_id = 0;
        for op in ops {
            now += 1;
            match op {
                Op::Submit { critical, offset, len, queue } => {
                    let req = Req { id: next_id, critical, offset, len, queue };
                    next_id += 1;
                    check.reqs.insert(req.id, req);
                    let free = ld.free_tokens();
                    let out = ld.submit(now, req);
                    if critical {
                        // Never waits for a token; takes one only if free
                        // and the option says so.
                        prop_assert_eq!(out.len(), 1);
                        prop_assert_eq!((out[0].parent, out[0].len, out[0].critical), (req.id, len, true));
                        prop_assert_eq!(out[0].token, cfg.opportunistic && free > 0);
                    }
                    check.dispatch(&ld, out);
                }
                Op::Complete(i) if !check.in_flight.is_empty() => check.complete(&mut ld, now, i),
                Op::Complete(_) => {}
            }
        }
        // Completions keep coming, oldest first: everything drains.
        while !check.in_flight.is_empty() {
            now += 1;
            check.complete(&mut ld, now, 0);
        }
        prop_assert_eq!(check.done.len(), check.reqs.len());
        prop_assert_eq!(ld.outstanding(), 0);
        prop_assert_eq!(ld.free_tokens(), cfg.tokens);
        for q in 0..cfg.queues {
            prop_assert_eq!(ld.queued(q), 0);
        }
    }
}
