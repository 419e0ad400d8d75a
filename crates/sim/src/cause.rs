//! What each nanosecond of CPU is for (issue 37 item 3, "cycles per I/O"):
//! every segment the cores run (a thread's, or the interrupt handler's) is
//! tagged with the host-profile costs it is made of, and the core charges
//! its time to those causes as it charges it to user, kernel and irq time.
//! The parts therefore sum to the busy time exactly, whatever cuts a
//! segment short or the measured window clips of it.
//!
//! A segment made of several costs (the submit call's `syscall` then its
//! `submit_per_request`s; the handler's `irq_entry`, its `per_completion`s
//! and its `wakeup`s) lays them end to end in the order the model adds
//! them: a segment cut at time t has spent its first t ns on its first
//! parts. The kernel runs them in that order too (entry, then the work),
//! though not as cleanly apart; the split of a cut segment is our choice.

use policy::Nanos;

/// One cost of the host profile ([`crate::HostProfile`]), as charged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cause {
    /// The benchmark's or application's own work in user space
    /// (`user_per_io`, an application's compute, fio's cpuio spin).
    User,
    /// System call entry and exit (`syscall`).
    Syscall,
    /// Block layer and driver work to submit a request (`submit_per_request`).
    Submit,
    /// Interrupt entry and exit (`irq_entry`), a device's or a timer's.
    Irq,
    /// A completion's handling (`per_completion`, in the handler or by a
    /// poller) and the call's part of it in the thread (`reap_per_completion`).
    Completion,
    /// Switching a thread in (`context_switch`, `process_switch`).
    Switch,
    /// Waking a thread (`wakeup`: the handler's, a futex wake's, the
    /// journal's).
    Wakeup,
    /// Spinning on a polled queue.
    Poll,
    /// The page cache's copy of a buffered write (`buffered_write_per_kib`).
    Copy,
    /// Leaving an idle state before a handler or a woken thread runs (the
    /// cpuidle model's exit latency, [`crate::idle`]; none with idle
    /// states off).
    IdleExit,
}

/// How many causes there are ([`Cause`]'s variants).
pub(crate) const CAUSES: usize = 10;

/// CPU time by cause, ns, indexed by `Cause as usize`.
pub(crate) type ByCause = [Nanos; CAUSES];

/// A segment's causes laid end to end: `causes[i]` for the next `lens[i]`
/// ns (i < 3), `causes[3]` for the rest. The first parts are a segment's
/// fixed costs (an idle exit, an interrupt's entry, a system call's),
/// held in 32 bits (up to 4.29 s, longer is capped there; the parts still
/// sum to the segment's time) to keep it small: it rides with every
/// segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Mix {
    causes: [Cause; 4],
    lens: [u32; 3],
}

fn ns32(ns: Nanos) -> u32 {
    u32::try_from(ns).unwrap_or(u32::MAX)
}

impl Mix {
    /// A segment of one cause.
    pub(crate) const fn of(c: Cause) -> Mix {
        Mix {
            causes: [c; 4],
            lens: [0; 3],
        }
    }

    /// `a` for `a_ns`, then `b`.
    pub(crate) fn two(a: Cause, a_ns: Nanos, b: Cause) -> Mix {
        Mix {
            causes: [a, b, b, b],
            lens: [ns32(a_ns), 0, 0],
        }
    }

    /// `a` for `a_ns`, then `b` for `b_ns`, then `c`.
    pub(crate) fn three(a: Cause, a_ns: Nanos, b: Cause, b_ns: Nanos, c: Cause) -> Mix {
        Mix {
            causes: [a, b, c, c],
            lens: [ns32(a_ns), ns32(b_ns), 0],
        }
    }

    /// `c` for `ns` first, then the segment. A mix of four parts already
    /// gives its third part to its last (the sum stays exact).
    pub(crate) fn prepend(self, c: Cause, ns: Nanos) -> Mix {
        if ns == 0 {
            return self;
        }
        let [c0, c1, c2, c3] = self.causes;
        let [l0, l1, l2] = self.lens;
        debug_assert!(l2 == 0 || c2 == c3, "a fifth part: {self:?}");
        Mix {
            causes: [c, c0, c1, c3],
            lens: [ns32(ns), l0, l1],
        }
    }

    /// What is left of the segment after its first `ran` ns.
    pub(crate) fn after(self, mut ran: Nanos) -> Mix {
        let mut m = self;
        for _ in 0..3 {
            let l0 = Nanos::from(m.lens[0]);
            if ran < l0 {
                m.lens[0] = ns32(l0 - ran);
                return m;
            }
            ran -= l0;
            let [_, c1, c2, c3] = m.causes;
            let [_, l1, l2] = m.lens;
            m = Mix {
                causes: [c1, c2, c3, c3],
                lens: [l1, l2, 0],
            };
        }
        m
    }

    /// Charges the segment's time from `a` to `b` ns after its start to
    /// the causes it falls on.
    #[inline]
    pub(crate) fn charge(self, by: &mut ByCause, a: Nanos, b: Nanos) {
        if self.lens == [0; 3] {
            // One cause (most segments).
            by[self.causes[3] as usize] += b - a;
            return;
        }
        let overlap = |from: Nanos, to: Nanos| b.min(to).saturating_sub(a.max(from));
        let mut from = 0;
        for i in 0..3 {
            let to = from + Nanos::from(self.lens[i]);
            by[self.causes[i] as usize] += overlap(from, to);
            from = to;
        }
        by[self.causes[3] as usize] += overlap(from, Nanos::MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn charged(m: Mix, a: Nanos, b: Nanos) -> ByCause {
        let mut by = [0; CAUSES];
        m.charge(&mut by, a, b);
        by
    }

    #[test]
    fn parts_are_laid_end_to_end_and_sum_to_what_is_charged() {
        let m = Mix::three(Cause::Irq, 100, Cause::Completion, 300, Cause::Wakeup);
        let by = charged(m, 50, 600);
        assert_eq!(by[Cause::Irq as usize], 50);
        assert_eq!(by[Cause::Completion as usize], 300);
        assert_eq!(by[Cause::Wakeup as usize], 200);
        assert_eq!(by.iter().sum::<Nanos>(), 550);
    }

    #[test]
    fn a_cut_segment_resumes_where_its_parts_left_off() {
        let m = Mix::two(Cause::Syscall, 100, Cause::Submit);
        // 60 ns of the syscall ran: 40 left of it, then the submit.
        let rest = m.after(60);
        assert_eq!(rest, Mix::two(Cause::Syscall, 40, Cause::Submit));
        // Past the syscall: the submit alone.
        assert_eq!(m.after(100), Mix::of(Cause::Submit));
        let m3 = Mix::three(Cause::Irq, 10, Cause::Completion, 20, Cause::Wakeup);
        assert_eq!(m3.after(15), Mix::two(Cause::Completion, 15, Cause::Wakeup));
        assert_eq!(m3.after(30), Mix::of(Cause::Wakeup));
        // Cut twice or once: the same time on the same causes.
        let once = charged(m3, 0, 50);
        let mut twice = charged(m3, 0, 15);
        m3.after(15).charge(&mut twice, 0, 35);
        assert_eq!(once, twice);
    }

    #[test]
    fn an_idle_exit_comes_first() {
        let m = Mix::three(Cause::Irq, 10, Cause::Completion, 20, Cause::Wakeup)
            .prepend(Cause::IdleExit, 5);
        let by = charged(m, 0, 100);
        assert_eq!(by[Cause::IdleExit as usize], 5);
        assert_eq!(by[Cause::Irq as usize], 10);
        assert_eq!(by[Cause::Completion as usize], 20);
        assert_eq!(by[Cause::Wakeup as usize], 65);
        assert_eq!(
            Mix::of(Cause::Switch).prepend(Cause::IdleExit, 0),
            Mix::of(Cause::Switch)
        );
    }
}
