//! Where the interrupt handler leaves a job thread's completions, and how it
//! wakes the thread: the part of the kernel between the CQ and the system
//! call the thread sleeps in.

use std::sync::{Mutex, OnceLock};
use std::thread::Thread;

/// A completion handed to the job thread that submitted it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivered {
    /// The job thread's own request slot.
    pub cookie: u32,
    /// Bytes transferred, or a negative errno.
    pub result: i32,
    pub error: bool,
}

#[derive(Default)]
struct Inbox {
    ready: Vec<Delivered>,
    /// 0 while the thread is not waiting; else how many must be ready
    /// before the handler wakes it.
    wake_at: usize,
}

#[derive(Default)]
pub struct Mailbox {
    inbox: Mutex<Inbox>,
    thread: OnceLock<Thread>,
}

impl Mailbox {
    /// The thread [`Mailbox::deliver`] wakes; set by the thread itself.
    pub fn attach(&self, t: Thread) {
        let _ = self.thread.set(t);
    }

    /// [`Mailbox::attach`] with the calling thread, unless one is attached.
    pub fn attach_current(&self) {
        if self.thread.get().is_none() {
            self.attach(std::thread::current());
        }
    }

    /// Handler: hands over completions. Returns whether the thread waits
    /// for no more than are now ready, so must be woken with
    /// [`Mailbox::wake`]: the handler wakes it once it has finished, as a
    /// wake-up in an interrupt handler only marks the thread runnable and
    /// the switch to it happens at the interrupt's exit.
    #[must_use = "a waiting thread is woken only by `wake`"]
    pub fn deliver(&self, done: &[Delivered]) -> bool {
        let mut inbox = self.inbox.lock().expect("mailbox lock");
        inbox.ready.extend_from_slice(done);
        inbox.wake_at != 0 && inbox.ready.len() >= inbox.wake_at
    }

    /// Wakes the thread after a [`Mailbox::deliver`] that asked for it.
    pub fn wake(&self) {
        if let Some(t) = self.thread.get() {
            t.unpark();
        }
    }

    /// Job thread: waits until at least `min` completions are ready (asking
    /// to be woken when `wake_at` are), then moves up to `max` into `out`.
    /// libaio's waiter is woken by every delivery and re-checks (`wake_at`
    /// 1, fs/aio.c read_events); io_uring's waker checks `min` first.
    /// `before_sleep` runs each time the thread is about to sleep (to take a
    /// pending interrupt itself, with polled delivery).
    pub fn wait(
        &self,
        min: usize,
        max: usize,
        wake_at: usize,
        out: &mut Vec<Delivered>,
        before_sleep: &mut dyn FnMut(),
    ) {
        loop {
            {
                let mut inbox = self.inbox.lock().expect("mailbox lock");
                if inbox.ready.len() >= min.max(1) {
                    inbox.wake_at = 0;
                    let n = inbox.ready.len().min(max.max(1));
                    out.extend(inbox.ready.drain(..n));
                    return;
                }
                inbox.wake_at = wake_at.clamp(1, min.max(1));
            }
            // A delivery it makes wakes this thread, so park returns.
            before_sleep();
            std::thread::park();
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn d(cookie: u32) -> Delivered {
        Delivered {
            cookie,
            result: 4096,
            error: false,
        }
    }

    #[test]
    fn waits_for_min_takes_at_most_max() {
        let mb = Arc::new(Mailbox::default());
        let waiter = {
            let mb = mb.clone();
            std::thread::spawn(move || {
                mb.attach(std::thread::current());
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
}
