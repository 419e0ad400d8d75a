//! What the run's own threads (the job threads and the thread that cuts
//! the window) share while the run goes on.

use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::Arc;

use crate::config::Recording;
use crate::device::DeviceHandle;
use crate::driver::Driver;
use crate::sys::Clock;

pub(crate) struct Running<'a> {
    pub(crate) clock: Clock,
    /// Set when the run must stop early (a thread failed, or it stalled).
    pub(crate) abort: Arc<AtomicBool>,
    /// Job threads whose measured part is over.
    pub(crate) finished: Arc<AtomicUsize>,
    /// When the jobs start, set before they are released: every job thread
    /// and the window's watch count the runtime from this one instant, so
    /// that the watch never hurries the device before a job's own end (a
    /// thread scheduled late counted from its own later start, and a
    /// request the hurried device completed early was measured).
    pub(crate) t0: Arc<std::sync::atomic::AtomicU64>,
    /// Per job thread: it has exited (`stonewall`, `wait_for`).
    pub(crate) exited: Arc<[AtomicBool]>,
    pub(crate) driver: &'a Driver,
    /// Asked for its own view when the run stalls.
    pub(crate) device: &'a DeviceHandle,
    /// The measured window, as the device and the handlers see it.
    pub(crate) recording: Recording,
}
