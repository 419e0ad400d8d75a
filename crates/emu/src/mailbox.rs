//! Where the interrupt handler leaves a job thread's completions, and how it
//! wakes the thread: the part of the kernel between the CQ and the system
//! call the thread sleeps in.
//!
//! The waiters of one core sleep on one futex word, their [`WakeGroup`],
//! each on its own bit of it (FUTEX_WAIT_BITSET). The handler wakes every
//! thread an interrupt made runnable in one system call at the interrupt's
//! exit, so they become runnable together and the scheduler chooses which
//! runs first, as after a hardware interrupt. Waking them one by one would
//! let the first preempt the handler's thread (the SCHED_IDLE poller)
//! before the next was woken, and the order of the wake-up calls would
//! decide which thread runs first.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use crate::sys;

/// A completion handed to the job thread that submitted it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivered {
    /// The job thread's own request slot.
    pub cookie: u32,
    /// Bytes transferred, or a negative errno.
    pub result: i32,
    pub error: bool,
}

/// The futex word the waiters of one core sleep on: bumped at every wake,
/// so a waiter that read it before checking its inbox does not sleep
/// through a delivery made in between.
#[derive(Debug, Default)]
pub struct WakeGroup {
    word: AtomicU32,
}

impl WakeGroup {
    /// Wakes, at once, the waiters among `waiters` that sleep (each of
    /// this group). The word is bumped before the waiters' sleeping flags
    /// are read, so a waiter about to sleep either sees the new word (its
    /// wait returns at once) or is seen sleeping and woken.
    pub fn wake<'a>(&self, waiters: impl IntoIterator<Item = &'a Mailbox>) {
        self.word.fetch_add(1, Ordering::SeqCst);
        let bits = waiters.into_iter().fold(0, |bits, m| {
            debug_assert!(std::ptr::eq(&*m.group, self), "a waiter of another core");
            if m.sleeping.load(Ordering::SeqCst) {
                bits | m.bit
            } else {
                bits
            }
        });
        if bits != 0 {
            sys::futex_wake_bits(&self.word, bits);
        }
    }
}

#[derive(Default)]
struct Inbox {
    ready: Vec<Delivered>,
    /// 0 while the thread is not waiting; else how many must be ready
    /// before the handler wakes it.
    wake_at: usize,
}

/// One waiter's completions (a waiter is one thread).
pub struct Mailbox {
    inbox: Mutex<Inbox>,
    group: Arc<WakeGroup>,
    /// The waiter's bit in its group's word (shared by waiters `i` and
    /// `i + 32` of a core: a spurious wake-up, which the waiter re-checks).
    bit: u32,
    /// The waiter is in (or about to enter) its futex wait.
    sleeping: AtomicBool,
}

impl Mailbox {
    /// The mailbox of the `index`-th waiter of `group`'s core.
    pub fn new(group: Arc<WakeGroup>, index: usize) -> Mailbox {
        Mailbox {
            inbox: Mutex::default(),
            group,
            bit: 1 << (index % 32),
            sleeping: AtomicBool::new(false),
        }
    }

    /// Handler: hands over completions. Returns whether the thread waits
    /// for no more than are now ready, so must be woken: the handler wakes
    /// it with its group's [`WakeGroup::wake`] once it has finished, as a
    /// wake-up in an interrupt handler only marks the thread runnable and
    /// the switch to it happens at the interrupt's exit.
    #[must_use = "a waiting thread is woken only by its group's `wake`"]
    pub fn deliver(&self, done: &[Delivered]) -> bool {
        let mut inbox = self.inbox.lock().expect("mailbox lock");
        inbox.ready.extend_from_slice(done);
        inbox.wake_at != 0 && inbox.ready.len() >= inbox.wake_at
    }

    /// The group this mailbox's waiter sleeps on.
    pub fn group(&self) -> &Arc<WakeGroup> {
        &self.group
    }

    /// Wakes the waiter alone, after a [`Mailbox::deliver`] that asked for
    /// it.
    pub fn wake(&self) {
        self.group.wake([self]);
    }

    /// Job thread: waits until at least `min` completions are ready (asking
    /// to be woken when `wake_at` are), then moves up to `max` into `out`.
    /// libaio's waiter is woken by every delivery and re-checks (`wake_at`
    /// 1, fs/aio.c read_events); io_uring's waker checks `min` first.
    /// `before_sleep` runs each time the thread is about to sleep (to take a
    /// pending interrupt itself, with polled delivery). Returns its sleeps
    /// that ended (its wake-ups).
    pub fn wait(
        &self,
        min: usize,
        max: usize,
        wake_at: usize,
        out: &mut Vec<Delivered>,
        before_sleep: &mut dyn FnMut(),
    ) -> u64 {
        let mut wakeups = 0;
        loop {
            // Read before the inbox: a delivery after this read bumps the
            // word before its wake-up, so the sleep below does not start.
            let seen = self.group.word.load(Ordering::SeqCst);
            {
                let mut inbox = self.inbox.lock().expect("mailbox lock");
                if inbox.ready.len() >= min.max(1) {
                    inbox.wake_at = 0;
                    let n = inbox.ready.len().min(max.max(1));
                    out.extend(inbox.ready.drain(..n));
                    return wakeups;
                }
                inbox.wake_at = wake_at.clamp(1, min.max(1));
            }
            // A delivery it makes itself bumps the word, so the wait
            // returns at once.
            before_sleep();
            self.sleeping.store(true, Ordering::SeqCst);
            if sys::futex_wait_bits(&self.group.word, seen, self.bit) != sys::Slept::Not {
                wakeups += 1;
            }
            self.sleeping.store(false, Ordering::Relaxed);
        }
    }

    /// Job thread: the completions delivered and not yet taken.
    pub fn ready(&self) -> usize {
        self.inbox.lock().expect("mailbox lock").ready.len()
    }

    /// Job thread: one sleep of a wait that decides for itself when it is
    /// over (io_uring's min-wait, `host::uring::Wait`): asks to be woken
    /// once `wake_at` completions are ready and sleeps, for at most
    /// `timeout` ns, unless they already are. `before_sleep` as in
    /// [`Mailbox::wait`]. Returns how the sleep ended; the caller reads
    /// [`Mailbox::ready`] and decides.
    pub fn sleep(
        &self,
        wake_at: usize,
        timeout: Option<u64>,
        before_sleep: &mut dyn FnMut(),
    ) -> sys::Slept {
        let seen = self.group.word.load(Ordering::SeqCst);
        {
            let mut inbox = self.inbox.lock().expect("mailbox lock");
            if inbox.ready.len() >= wake_at.max(1) {
                inbox.wake_at = 0;
                return sys::Slept::Not;
            }
            inbox.wake_at = wake_at.max(1);
        }
        before_sleep();
        self.sleeping.store(true, Ordering::SeqCst);
        let slept = sys::futex_wait_bits_for(&self.group.word, seen, self.bit, timeout);
        self.sleeping.store(false, Ordering::Relaxed);
        self.inbox.lock().expect("mailbox lock").wake_at = 0;
        slept
    }

    /// Waiter: moves up to `max` completions already delivered into `out`,
    /// without waiting. Returns how many.
    pub fn take(&self, max: usize, out: &mut Vec<Delivered>) -> usize {
        let mut inbox = self.inbox.lock().expect("mailbox lock");
        let n = inbox.ready.len().min(max);
        out.extend(inbox.ready.drain(..n));
        n
    }
}

/// Where the interrupt handler leaves each waiter's completions and how it
/// wakes the waiters: this process's `Mailbox`es, or inboxes a host keeps
/// elsewhere (`cinterrupts exec`'s, in memory shared with the program).
pub trait Inboxes: Send + Sync {
    /// Hands `done` to `waiter`. Returns whether the waiter waits for no
    /// more than are now ready, so must be woken by [`Inboxes::wake`] once
    /// the handler has finished (the switch to a woken thread happens at the
    /// interrupt's exit).
    fn deliver(&self, waiter: usize, done: &[Delivered]) -> bool;

    /// Wakes `waiters` (each asked for by [`Inboxes::deliver`]), those of
    /// one core in one call, so that the scheduler, not the order of the
    /// calls, picks which runs first.
    fn wake(&self, waiters: &[usize]);
}

/// The mailboxes of this process's waiters, by waiter index.
pub struct Mailboxes(pub Arc<[Arc<Mailbox>]>);

impl Inboxes for Mailboxes {
    fn deliver(&self, waiter: usize, done: &[Delivered]) -> bool {
        self.0[waiter].deliver(done)
    }

    fn wake(&self, waiters: &[usize]) {
        let Some(&first) = waiters.first() else {
            return;
        };
        // Every waiter that submits to one queue pair is of that core's
        // group; one of another group (a host's own arrangement) is woken
        // alone.
        let group = self.0[first].group();
        let ours = |o: &&usize| Arc::ptr_eq(self.0[**o].group(), group);
        group.wake(waiters.iter().filter(ours).map(|&o| &*self.0[o]));
        for &o in waiters.iter().filter(|o| !ours(o)) {
            self.0[o].wake();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(cookie: u32) -> Delivered {
        Delivered {
            cookie,
            result: 4096,
            error: false,
        }
    }

    #[test]
    fn waits_for_min_takes_at_most_max() {
        let mb = Arc::new(Mailbox::new(Arc::default(), 0));
        let waiter = {
            let mb = mb.clone();
            std::thread::spawn(move || {
                let mut out = vec![];
                mb.wait(3, 2, 3, &mut out, &mut || {});
                let first = out.len();
                mb.wait(2, 8, 1, &mut out, &mut || {});
                (first, out)
            })
        };
        for i in 0..4 {
            if mb.deliver(&[d(i)]) {
                mb.wake();
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let (first, out) = waiter.join().unwrap();
        assert_eq!(first, 2);
        assert_eq!(out, vec![d(0), d(1), d(2), d(3)]);
    }

    #[test]
    fn one_wake_of_the_group_wakes_every_waiter_it_names() {
        let group = Arc::new(WakeGroup::default());
        let boxes: Vec<Arc<Mailbox>> = (0..3)
            .map(|i| Arc::new(Mailbox::new(group.clone(), i)))
            .collect();
        let waiters: Vec<_> = boxes[..2]
            .iter()
            .map(|mb| {
                let mb = mb.clone();
                std::thread::spawn(move || {
                    let mut out = vec![];
                    mb.wait(1, 1, 1, &mut out, &mut || {});
                    out
                })
            })
            .collect();
        // Let both fall asleep (a waiter not asleep yet re-checks anyway).
        std::thread::sleep(std::time::Duration::from_millis(20));
        let mut due = vec![];
        for (i, mb) in boxes.iter().enumerate() {
            if mb.deliver(&[d(i as u32)]) {
                due.push(&**mb);
            }
        }
        assert_eq!(due.len(), 2, "the third mailbox has no waiter");
        group.wake(due);
        let got: Vec<_> = waiters.into_iter().map(|w| w.join().unwrap()).collect();
        assert_eq!(got, vec![vec![d(0)], vec![d(1)]]);
    }
}
