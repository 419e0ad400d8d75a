//! Where the emulated controller executes commands: a real file or block
//! device through io_uring (`file:PATH`), or the device model (crate
//! `service`, [`ModelBackend`]): a timed null device
//! (`null:LATENCY[,depth=N]`, like Linux null_blk's `completion_nsec`) or
//! a profile's device, its service times drawn from the profile's
//! distributions (`--device optane`).
//!
//! The device thread owns one backend and drives it from its polling loop:
//! [`Backend::submit`] hands it a command, [`Backend::poll`] collects the
//! finished ones. A backend never blocks the loop for longer than a system
//! call: timing is by the `now` the loop passes in (busy-polled, since a
//! sleep overshoots by tens of microseconds here, PLATFORM.md section 3).

use std::ptr::NonNull;

use policy::Nanos;

mod file;
mod layout;
mod model;
mod open;
pub mod path;
mod spec;

pub use file::{FileBackend, MAX_RING_ENTRIES};
pub use model::ModelBackend;
pub use open::{Access, Opened, ANNOUNCED_LAYOUT};
pub use spec::{BackendSpec, Faults, Kind, DEFAULT_NULL_DEPTH};

/// A data buffer the host lent the device for one command, as a DMA address.
#[derive(Clone, Copy, Debug)]
pub struct DmaBuf {
    ptr: NonNull<u8>,
    len: u32,
}

// SAFETY: the pointer is only a DMA address; ownership of the bytes moves
// with the command (host -> device at submission, back at completion), and
// only one side touches them at a time (see `Io::new`).
unsafe impl Send for DmaBuf {}

impl DmaBuf {
    pub fn ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub fn len(&self) -> u32 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// One command for the backend.
#[derive(Clone, Copy, Debug)]
pub struct Io {
    /// The device's token for the command, returned in [`Done::token`].
    pub token: u32,
    pub write: bool,
    /// Byte offset in the file or device.
    pub offset: u64,
    pub buf: DmaBuf,
}

impl Io {
    /// # Safety
    /// `ptr` must be valid for reads and writes of `len` bytes, aligned for
    /// O_DIRECT (4096), and nothing else may touch those bytes until the
    /// backend returns this command's [`Done`].
    pub unsafe fn new(token: u32, write: bool, offset: u64, ptr: NonNull<u8>, len: u32) -> Io {
        Io {
            token,
            write,
            offset,
            buf: DmaBuf { ptr, len },
        }
    }
}

/// A finished command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Done {
    pub token: u32,
    /// Bytes transferred, or a negative errno (as io_uring's `res`).
    pub result: i32,
}

impl Done {
    /// A command in error: a negative errno, or a short transfer (which an
    /// NVMe command cannot return: it is a failure of the device here).
    pub fn is_error(&self, len: u32) -> bool {
        self.result < 0 || self.result as u32 != len
    }
}

/// What the device thread drives. Not thread-safe by design: one device
/// thread owns it.
pub trait Backend: Send {
    /// `file:/tmp/x (io_uring, O_DIRECT, 256 MiB)` or `null:10us,depth=64`.
    fn describe(&self) -> String;

    /// Takes a command at `now`. It may start at once or wait for internal
    /// parallelism; it is never refused.
    fn submit(&mut self, now: Nanos, io: Io);

    /// Issues what [`Backend::submit`] queued and appends every command that
    /// has finished by `now` to `out`. Called in a busy loop, so it must be
    /// cheap when nothing is due (no system call unless work was queued or
    /// the kernel has completions to post).
    fn poll(&mut self, now: Nanos, out: &mut Vec<Done>);

    /// Commands taken and not yet returned by `poll`.
    fn in_flight(&self) -> usize;

    /// Where the commands in flight stand inside the backend, for a stall
    /// report (`io_uring: 1 in the kernel, ...`); empty if it has nothing
    /// to add to [`Backend::in_flight`]. Called rarely, off the hot path.
    fn probe(&mut self) -> String {
        String::new()
    }
}
