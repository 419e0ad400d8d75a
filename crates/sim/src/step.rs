//! What a thread does when its current CPU segment ends: the thread's
//! program counter, which the CPU ([`crate::cpu`]) carries with each segment
//! and hands back when the segment ends ([`crate::world::thread`] acts on it).

/// What a thread does when its current CPU segment ends (or when it is
/// switched in with no preempted segment to finish).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Just switched in: finish the segment that was cut short, if any, else
    /// carry on with `Thread::next`.
    Resume,
    /// Decide: issue the next batch, reap, sleep or finish.
    Plan,
    /// User work for the prepared batch is done: enter the submit call.
    Submit,
    /// The submit call's entry is done: the page cache copies the batch's
    /// buffered writes (preemptible at every page, [`crate::cpu::Kind`]).
    SubmitCopy,
    /// One request of a multi-request submit call is built: a voluntary
    /// preemption point, and every [`crate::world::thread::PLUG_MAX_REQUESTS`] a
    /// plug flush ([`crate::world::thread`]).
    SubmitNext,
    /// The submit call has handed the batch to the device.
    Submitted,
    /// Enter the call that waits for completions.
    GetEvents,
    /// In the waiting call: take what has been delivered, return or sleep.
    Reap,
    /// The call's own part of the completions it took is done
    /// (`reap_per_completion` each): it returns them to the thread.
    Reaped,
    /// Spinning on the completion queue (a polled request): the segment
    /// lasts until the device posts the entry, which cuts it to the reap.
    Poll,
    /// The fsync call's entry is done: enter the fsync path
    /// ([`crate::world::journal`]).
    Fsync,
    /// Woken by the fsync path (a caller, or JBD2): go on in it.
    Journal,
    /// Done with this step of the fsync path: sleep until woken (or spin
    /// while it has polled I/Os out, `fsync_io_polls`).
    JournalSleep,
    /// Spinning for the fsync path's polled I/Os: the segment lasts until
    /// the device posts one (or the thread is woken), then the thread
    /// takes what it found ([`crate::world::journal`]).
    JournalPoll,
}
