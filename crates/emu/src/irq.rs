//! An interrupt line to one host core: the device raises it, the handler
//! thread pinned to that core takes it.
//!
//! How an interrupt is delivered here: the device thread sets the line's
//! pending bits and unparks the handler thread (a futex wake, and when the
//! core is idle an inter-processor interrupt from the kernel). The handler
//! runs at SCHED_FIFO, so waking it preempts whatever job thread runs on the
//! core, as a hardware interrupt does. While it is pending, further raises
//! merge into it (an APIC holds one pending vector, and so does MSI-X's
//! pending bit); a full interrupt covers an urgent-only one. With the
//! authors' IPIs (`IrqDelivery::Ipi`) the device raises only once the line
//! is clear, so nothing merges: the line is then their call slot, locked
//! from the raise until the handler takes it.
//!
//! The line also counts what was raised on it, for the report: raises,
//! raises that merged, and the fires that waited for the slot and for how
//! long.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::thread::Thread;

use policy::{Interrupt, Nanos};

const URGENT_ONLY: u32 = 1;
const FULL: u32 = 2;
const STOP: u32 = 4;

/// What the handler finds when it wakes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Taken {
    Interrupt { kind: Interrupt, raised_at: Nanos },
    Stop,
}

#[derive(Default)]
pub struct IrqLine {
    pending: AtomicU32,
    /// When the oldest pending raise happened, for the delivery latency.
    raised_at: AtomicU64,
    /// Woken at every raise (wake-up delivery).
    handler: OnceLock<Thread>,
    /// Woken only for a raise left pending too long (polled delivery, when
    /// the core is too busy for its idle poller to run).
    fallback: OnceLock<Thread>,
    /// The `raised_at` of the last raise the fallback was woken for.
    kicked: AtomicU64,
    /// Raises, and those that merged into one pending (written by the
    /// device thread alone).
    raised: AtomicU64,
    merged: AtomicU64,
    /// Fires that found the slot taken, and the time they waited, ns.
    slot_waits: AtomicU64,
    slot_wait_ns: AtomicU64,
}

/// What was raised on a line so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LineCount {
    pub raised: u64,
    pub merged: u64,
    pub slot_waits: u64,
    pub slot_wait_ns: u64,
}

impl IrqLine {
    /// The thread that [`IrqLine::raise`] wakes. Set once, before the device runs.
    pub fn attach(&self, handler: Thread) {
        self.handler
            .set(handler)
            .expect("an interrupt line has one handler");
    }

    /// The thread [`IrqLine::kick_if_overdue`] wakes. Set once.
    pub fn attach_fallback(&self, t: Thread) {
        self.fallback
            .set(t)
            .expect("an interrupt line has one fallback handler");
    }

    /// Device: wakes the fallback handler if an interrupt has been pending
    /// for `limit` or more and it was not woken for it yet. Returns whether
    /// it woke it.
    pub fn kick_if_overdue(&self, now: Nanos, limit: Nanos) -> bool {
        if self.pending.load(Ordering::Acquire) & !STOP == 0 {
            return false;
        }
        let raised = self.raised_at.load(Ordering::Relaxed);
        if now < raised + limit || self.kicked.load(Ordering::Relaxed) == raised + 1 {
            return false;
        }
        // +1 so that a raise at time 0 is told from "never kicked".
        self.kicked.store(raised + 1, Ordering::Relaxed);
        match self.fallback.get() {
            Some(t) => {
                t.unpark();
                true
            }
            None => false,
        }
    }

    /// Device: raises an interrupt of `kind` at `now`. Returns `false` when
    /// it merged into one still pending.
    pub fn raise(&self, kind: Interrupt, now: Nanos) -> bool {
        let sent = self.set_pending(kind, now);
        bump(&self.raised, 1);
        if !sent {
            bump(&self.merged, 1);
        }
        sent
    }

    /// Device: a fire waited `ns` for the slot (the line to clear).
    pub fn waited_for_slot(&self, ns: Nanos) {
        bump(&self.slot_waits, 1);
        bump(&self.slot_wait_ns, ns);
    }

    /// What was raised so far.
    pub fn count(&self) -> LineCount {
        let r = |a: &AtomicU64| a.load(Ordering::Relaxed);
        LineCount {
            raised: r(&self.raised),
            merged: r(&self.merged),
            slot_waits: r(&self.slot_waits),
            slot_wait_ns: r(&self.slot_wait_ns),
        }
    }

    fn set_pending(&self, kind: Interrupt, now: Nanos) -> bool {
        let bit = match kind {
            Interrupt::Full => FULL,
            Interrupt::UrgentOnly => URGENT_ONLY,
        };
        // One device thread raises; the handler only clears bits.
        let pending = self.pending.load(Ordering::Relaxed);
        if pending & (bit | FULL) != 0 {
            return false;
        }
        if pending & !STOP == 0 {
            // Stored before the bit is published (Release below), so the
            // handler that sees the bit sees the time.
            self.raised_at.store(now, Ordering::Relaxed);
        }
        let prev = self.pending.fetch_or(bit, Ordering::AcqRel);
        if prev & !STOP != 0 {
            // An urgent-only interrupt still pending became a full one.
            return false;
        }
        if let Some(t) = self.handler.get() {
            t.unpark();
        }
        true
    }

    /// Asks the handler to exit once nothing is pending.
    pub fn stop(&self) {
        self.pending.fetch_or(STOP, Ordering::AcqRel);
        for t in [self.handler.get(), self.fallback.get()]
            .into_iter()
            .flatten()
        {
            t.unpark();
        }
    }

    /// Something is pending (a cheap load, for pollers).
    pub fn is_pending(&self) -> bool {
        self.pending.load(Ordering::Acquire) & !STOP != 0
    }

    /// The raw pending bits, for a stall report.
    pub fn bits(&self) -> u32 {
        self.pending.load(Ordering::Relaxed)
    }

    pub fn stopped(&self) -> bool {
        self.pending.load(Ordering::Acquire) & STOP != 0
    }

    /// Handler: takes what is pending, without waiting.
    pub fn take(&self) -> Option<Taken> {
        let raised_at = self.raised_at.load(Ordering::Relaxed);
        let bits = self.pending.fetch_and(STOP, Ordering::AcqRel);
        if bits & FULL != 0 {
            Some(Taken::Interrupt {
                kind: Interrupt::Full,
                raised_at,
            })
        } else if bits & URGENT_ONLY != 0 {
            Some(Taken::Interrupt {
                kind: Interrupt::UrgentOnly,
                raised_at,
            })
        } else if bits & STOP != 0 {
            Some(Taken::Stop)
        } else {
            None
        }
    }

    /// Handler: waits for the next interrupt (or the stop).
    pub fn wait(&self) -> Taken {
        loop {
            if let Some(t) = self.take() {
                return t;
            }
            std::thread::park();
        }
    }
}

/// One writer (the device thread): a load and a store, no locked add.
fn bump(a: &AtomicU64, by: u64) {
    a.store(a.load(Ordering::Relaxed) + by, Ordering::Relaxed);
}

impl LineCount {
    pub fn since(self, e: LineCount) -> LineCount {
        LineCount {
            raised: self.raised - e.raised,
            merged: self.merged - e.merged,
            slot_waits: self.slot_waits - e.slot_waits,
            slot_wait_ns: self.slot_wait_ns - e.slot_wait_ns,
        }
    }

    pub fn plus(self, o: LineCount) -> LineCount {
        LineCount {
            raised: self.raised + o.raised,
            merged: self.merged + o.merged,
            slot_waits: self.slot_waits + o.slot_waits,
            slot_wait_ns: self.slot_wait_ns + o.slot_wait_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn the_fallback_is_woken_once_per_overdue_raise() {
        let line = IrqLine::default();
        line.attach_fallback(std::thread::current());
        assert!(!line.kick_if_overdue(1_000, 50), "nothing pending");
        line.raise(Interrupt::Full, 100);
        assert!(!line.kick_if_overdue(149, 50), "not overdue yet");
        assert!(line.kick_if_overdue(150, 50));
        assert!(!line.kick_if_overdue(500, 50), "once per raise");
        line.take();
        line.raise(Interrupt::UrgentOnly, 600);
        assert!(
            line.kick_if_overdue(700, 50),
            "a new raise may be kicked again"
        );
    }

    #[test]
    fn raises_merge_while_pending_and_full_covers_urgent_only() {
        let line = IrqLine::default();
        assert!(line.raise(Interrupt::UrgentOnly, 10));
        assert!(!line.raise(Interrupt::UrgentOnly, 11));
        assert!(!line.raise(Interrupt::Full, 12), "merged, but upgraded");
        assert_eq!(
            line.take(),
            Some(Taken::Interrupt {
                kind: Interrupt::Full,
                raised_at: 10
            })
        );
        assert_eq!(line.take(), None);
        assert!(line.raise(Interrupt::Full, 20));
        assert!(!line.raise(Interrupt::UrgentOnly, 21));
        line.stop();
        assert!(matches!(
            line.take(),
            Some(Taken::Interrupt {
                kind: Interrupt::Full,
                raised_at: 20
            })
        ));
        assert_eq!(line.take(), Some(Taken::Stop), "stop comes after the work");
    }

    #[test]
    fn a_raise_from_another_thread_wakes_the_handler() {
        let line = Arc::new(IrqLine::default());
        let handler = {
            let line = line.clone();
            std::thread::spawn(move || {
                let mut n = 0;
                while let Taken::Interrupt { .. } = line.wait() {
                    n += 1;
                }
                n
            })
        };
        line.attach(handler.thread().clone());
        let mut raised = 0;
        for i in 0..1000 {
            if line.raise(Interrupt::Full, i) {
                raised += 1;
            }
            if i % 10 == 0 {
                std::thread::yield_now();
            }
        }
        line.stop();
        let delivered = handler.join().unwrap();
        assert!(
            delivered >= 1 && delivered <= raised,
            "{delivered} of {raised}"
        );
    }
}
