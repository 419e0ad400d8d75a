//! The world's side of the cores' idle states ([`crate::idle`]): when a
//! core idles, what it knows then (its tick, the threads blocked on it),
//! and the exit latency a wake-up pays; the timers and dispatches the
//! proposal's per-device limit and the governors' sleep length read.
//! Apart from `idle` so that the model stays free of the world (as `blk`
//! and `block`).

use policy::Nanos;

use crate::world::{TState, World};

impl World {
    /// `core` found nothing to run: it idles.
    pub(crate) fn idle_enter(&mut self, core: u32) {
        if self.idle.is_none() {
            return;
        }
        let iowaiters = self
            .threads
            .iter()
            .filter(|t| t.spec.core as u32 == core && t.state == TState::Blocked)
            .count() as u32;
        let next_tick = self.cpu.next_tick(core, self.now);
        let now = self.now;
        if let Some(i) = &mut self.idle {
            i.enter(core, now, next_tick, iowaiters);
        }
    }

    /// `core` wakes (a handler or a thread takes it): the exit latency to
    /// pay first, 0 if it was not idling or idle states are off.
    pub(crate) fn idle_exit(&mut self, core: u32) -> Nanos {
        let measuring = self.measuring(self.now);
        let now = self.now;
        self.idle
            .as_mut()
            .map_or(0, |i| i.exit(core, now, measuring))
    }

    /// A thread on `core` sets a sleep timer for `at`.
    pub(crate) fn idle_timer(&mut self, core: u32, at: Nanos) {
        if let Some(i) = &mut self.idle {
            i.timer_set(core, at);
        }
    }

    /// Request `req` goes to the block layer: Kristo's per-device limit
    /// (a proposal) holds on its thread's core from now.
    pub(crate) fn idle_io(&mut self, req: u32) {
        if let Some(i) = &mut self.idle {
            let core = self.threads[self.requests[req as usize].tid as usize]
                .spec
                .core;
            i.io_dispatched(core, self.now);
        }
    }
}
