//! `null:LATENCY[,depth=N]`: a device that transfers nothing and takes a
//! fixed time per command, like Linux null_blk with `completion_nsec`.

use std::collections::VecDeque;

use policy::{format_nanos, Nanos};

use super::{Backend, Done, Faults, Io};

/// A command the null device holds: its token, the time it was taken (while
/// waiting) or is due (in service), and the result it will return.
#[derive(Clone, Copy, Debug)]
struct Held {
    token: u32,
    time: Nanos,
    result: i32,
}

/// Times are virtual: a command starts at `max(submitted, unit free)` and is
/// due `latency` later, whatever moment `poll` happens to notice it, so a
/// late poll delays the report of a completion but never the device.
#[derive(Debug)]
pub struct NullBackend {
    latency: Nanos,
    depth: usize,
    faults: Faults,
    submitted: u64,
    /// Latest `now` seen by `submit`, so a caller's clock going backwards
    /// cannot start a command before one taken earlier.
    last_submit: Nanos,
    /// In service, by due time. With one latency for all and FIFO starts,
    /// due times never decrease, so the front is always the next to finish.
    serving: VecDeque<Held>,
    /// Waiting for a unit, by arrival. Non-empty only while `serving` is full.
    waiting: VecDeque<Held>,
}

impl NullBackend {
    /// `depth` is clamped to at least 1.
    pub fn new(latency: Nanos, depth: u32, faults: Faults) -> NullBackend {
        let depth = depth.max(1) as usize;
        NullBackend {
            latency,
            depth,
            faults,
            submitted: 0,
            last_submit: 0,
            // Steady state never grows these beyond the queue depths seen.
            serving: VecDeque::with_capacity(depth.min(4096)),
            waiting: VecDeque::new(),
        }
    }

    /// When the next command in service finishes, if any: a caller may
    /// spin until then instead of polling.
    pub fn next_due(&self) -> Option<Nanos> {
        self.serving.front().map(|h| h.time)
    }

    fn start(&mut self, token: u32, start: Nanos, result: i32) {
        self.serving.push_back(Held {
            token,
            time: start.saturating_add(self.latency),
            result,
        });
    }
}

impl Backend for NullBackend {
    fn describe(&self) -> String {
        format!("null:{},depth={}", format_nanos(self.latency), self.depth)
    }

    fn submit(&mut self, now: Nanos, io: Io) {
        self.submitted += 1;
        let every = self.faults.error_every;
        let result = if every != 0 && self.submitted % every == 0 {
            -libc::EIO
        } else {
            io.buf.len() as i32
        };
        let now = now.max(self.last_submit);
        self.last_submit = now;
        if self.serving.len() < self.depth {
            self.start(io.token, now, result);
        } else {
            self.waiting.push_back(Held {
                token: io.token,
                time: now,
                result,
            });
        }
    }

    #[inline]
    fn poll(&mut self, now: Nanos, out: &mut Vec<Done>) {
        while let Some(&done) = self.serving.front() {
            if done.time > now {
                return;
            }
            self.serving.pop_front();
            out.push(Done {
                token: done.token,
                result: done.result,
            });
            // The unit freed at `done.time`, not now: the next one started then.
            if let Some(next) = self.waiting.pop_front() {
                self.start(next.token, next.time.max(done.time), next.result);
            }
        }
    }

    fn in_flight(&self) -> usize {
        self.serving.len() + self.waiting.len()
    }
}

#[cfg(test)]
mod tests {
    use std::ptr::NonNull;

    use super::*;

    const LEN: u32 = 4096;

    /// A command whose buffer is never touched: the null device only reads
    /// its length, so one dangling pointer serves every test command.
    fn io(token: u32) -> Io {
        // SAFETY: NullBackend never dereferences the buffer.
        unsafe { Io::new(token, false, 0, NonNull::dangling(), LEN) }
    }

    fn tokens(b: &mut NullBackend, now: Nanos) -> Vec<u32> {
        let mut out = Vec::new();
        b.poll(now, &mut out);
        out.iter().map(|d| d.token).collect()
    }

    #[test]
    fn completes_latency_after_submission_and_not_before() {
        let mut b = NullBackend::new(10_000, 64, Faults::default());
        b.submit(1_000, io(7));
        assert_eq!(b.next_due(), Some(11_000));
        assert_eq!(tokens(&mut b, 10_999), Vec::<u32>::new());
        assert_eq!(b.in_flight(), 1);
        let mut out = Vec::new();
        b.poll(11_000, &mut out);
        assert_eq!(
            out,
            [Done {
                token: 7,
                result: LEN as i32
            }]
        );
        assert_eq!(b.in_flight(), 0);
        assert_eq!(b.next_due(), None);
    }

    #[test]
    fn depth_bounds_parallelism() {
        let mut b = NullBackend::new(10, 2, Faults::default());
        for t in 0..5 {
            b.submit(0, io(t));
        }
        assert_eq!(b.in_flight(), 5);
        assert_eq!(tokens(&mut b, 9), Vec::<u32>::new());
        assert_eq!(tokens(&mut b, 10), [0, 1]);
        assert_eq!(tokens(&mut b, 19), Vec::<u32>::new());
        assert_eq!(tokens(&mut b, 20), [2, 3]);
        assert_eq!(tokens(&mut b, 29), Vec::<u32>::new());
        assert_eq!(tokens(&mut b, 30), [4]);
        assert_eq!(b.in_flight(), 0);
    }

    #[test]
    fn a_late_poll_does_not_delay_the_device() {
        let mut b = NullBackend::new(10, 2, Faults::default());
        for t in 0..5 {
            b.submit(0, io(t));
        }
        // Due at 10, 10, 20, 20, 30 whatever the polls in between.
        assert_eq!(tokens(&mut b, 25), [0, 1, 2, 3]);
        assert_eq!(b.next_due(), Some(30));

        // A waiting command starts when it arrives if a unit was already
        // free by then, even though no poll noticed the unit freeing.
        let mut b = NullBackend::new(10, 1, Faults::default());
        b.submit(0, io(0));
        b.submit(15, io(1));
        assert_eq!(tokens(&mut b, 24), [0]);
        assert_eq!(b.next_due(), Some(25));
        assert_eq!(tokens(&mut b, 25), [1]);
    }

    #[test]
    fn service_is_fifo() {
        let mut b = NullBackend::new(100, 3, Faults::default());
        for t in 0..20 {
            b.submit(u64::from(t) * 7, io(t));
        }
        assert_eq!(tokens(&mut b, u64::MAX), (0..20).collect::<Vec<_>>());
    }

    #[test]
    fn a_clock_going_back_does_not_start_a_command_earlier() {
        let mut b = NullBackend::new(10, 4, Faults::default());
        b.submit(100, io(0));
        b.submit(50, io(1));
        assert_eq!(tokens(&mut b, 109), Vec::<u32>::new());
        assert_eq!(tokens(&mut b, 110), [0, 1]);
    }

    #[test]
    fn zero_latency_completes_at_the_next_poll() {
        let mut b = NullBackend::new(0, 1, Faults::default());
        b.submit(5, io(0));
        b.submit(5, io(1));
        assert_eq!(tokens(&mut b, 5), [0, 1]);
    }

    #[test]
    fn every_nth_command_fails_with_eio() {
        let faults = Faults {
            error_every: 3,
            corrupt_every: 0,
        };
        let mut b = NullBackend::new(1, 2, faults);
        for t in 1..=9 {
            b.submit(0, io(t));
        }
        let mut out = Vec::new();
        b.poll(u64::MAX, &mut out);
        let failed: Vec<u32> = out
            .iter()
            .filter(|d| d.result == -libc::EIO)
            .map(|d| d.token)
            .collect();
        assert_eq!(failed, [3, 6, 9]);
        assert!(out
            .iter()
            .all(|d| d.result == -libc::EIO || d.result == LEN as i32));
        assert_eq!(out.len(), 9);
    }

    #[test]
    fn describes_itself_in_spec_syntax() {
        let b = NullBackend::new(10_000, 64, Faults::default());
        assert_eq!(b.describe(), "null:10us,depth=64");
        let b = NullBackend::new(0, 0, Faults::default());
        assert_eq!(b.describe(), "null:0,depth=1");
    }
}
