//! `file:PATH`: real I/O on a regular file or a block device, with O_DIRECT
//! through one io_uring owned by the device thread.

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use io_uring::{cqueue, opcode, squeue, types, IoUring};
use policy::Nanos;

use super::{Backend, Done, Faults, Io};

/// Where a corrupted read gets its flipped byte (clamped to the buffer).
const CORRUPT_AT: u32 = 100;

/// Largest ring asked of the kernel; more commands than this wait in
/// [`FileBackend`]'s own queue.
pub const MAX_RING_ENTRIES: u32 = 4096;

pub struct FileBackend {
    ring: IoUring,
    /// Kept open for the ring's lifetime: SQEs name it by descriptor.
    file: File,
    path: PathBuf,
    size: u64,
    /// Whether the file is registered with the ring (`types::Fixed(0)`),
    /// which saves the kernel a file-table lookup per command.
    fixed: bool,
    /// Whether the ring has IORING_SETUP_COOP_TASKRUN | TASKRUN_FLAG: the
    /// kernel then posts completions only when this thread enters it, and
    /// flags them in the SQ ring instead of interrupting the thread.
    taskrun_flag: bool,
    slots: Slots,
    /// Taken while every slot was busy, in arrival order.
    backlog: VecDeque<Io>,
    /// SQEs pushed and not yet consumed by an `io_uring_enter`.
    unsubmitted: usize,
    /// Injected errors, returned by the next poll.
    failed: Vec<u32>,
    error_every: u64,
    submitted: u64,
    /// `io_uring_enter` calls made by `poll`, and completions drained, for
    /// [`Backend::probe`].
    enters: u64,
    reaped: u64,
    /// Polls in a row with commands in the kernel and no completion.
    quiet_polls: u64,
    /// Completions drained after a submitting enter, after an enter for
    /// the TASKRUN flag, and with no enter (posted by the kernel on its own:
    /// io-wq, or task work run at an interrupt's return to this thread).
    by: [u64; 3],
}

/// The commands in the kernel, indexed by their SQE's user_data, so a
/// completion finds its token and buffer without a map.
struct Slots {
    io: Vec<Option<Io>>,
    free: Vec<u32>,
    corrupt_every: u64,
    good_reads: u64,
}

impl Slots {
    fn new(capacity: usize, corrupt_every: u64) -> Slots {
        Slots {
            io: vec![None; capacity],
            free: (0..capacity as u32).rev().collect(),
            corrupt_every,
            good_reads: 0,
        }
    }

    fn busy(&self) -> usize {
        self.io.len() - self.free.len()
    }

    fn complete(&mut self, cqe: &cqueue::Entry, out: &mut Vec<Done>) {
        let slot = cqe.user_data() as u32;
        let Some(io) = self.io.get_mut(slot as usize).and_then(Option::take) else {
            return;
        };
        self.free.push(slot);
        let result = cqe.result();
        let len = io.buf.len();
        if !io.write && result >= 0 && result as u32 == len && len > 0 {
            self.good_reads += 1;
            if self.corrupt_every != 0 && self.good_reads % self.corrupt_every == 0 {
                let at = CORRUPT_AT.min(len - 1) as usize;
                // SAFETY: the kernel is done with the buffer (its CQE is
                // here), the host does not touch it before Done, and `at`
                // is inside its `len` bytes.
                unsafe { *io.buf.ptr().add(at) ^= 0xff };
            }
        }
        out.push(Done {
            token: io.token,
            result,
        });
    }
}

impl FileBackend {
    /// Drives `file` (opened read-write, with O_DIRECT for real device
    /// timing) with a ring of `entries` rounded up to a power of two, at
    /// most [`MAX_RING_ENTRIES`]. `path` and `size` are for `describe`.
    pub fn new(
        file: File,
        path: &Path,
        size: u64,
        entries: u32,
        faults: Faults,
    ) -> io::Result<FileBackend> {
        FileBackend::with_setup(file, path, size, entries, faults, true)
    }

    /// `coop: false` skips COOP_TASKRUN, as on kernels that refuse it.
    pub(crate) fn with_setup(
        file: File,
        path: &Path,
        size: u64,
        entries: u32,
        faults: Faults,
        coop: bool,
    ) -> io::Result<FileBackend> {
        let entries = entries.clamp(1, MAX_RING_ENTRIES).next_power_of_two();
        let coop_ring = || {
            IoUring::builder()
                .setup_coop_taskrun()
                .setup_taskrun_flag()
                .build(entries)
        };
        let (ring, taskrun_flag) = match coop.then(coop_ring) {
            Some(Ok(ring)) => (ring, true),
            // Before Linux 5.19 the flags are refused with EINVAL. A plain
            // ring posts completions by interrupting the thread (task work
            // with TWA_SIGNAL), so busy-polling the CQ still sees them.
            _ => (IoUring::new(entries)?, false),
        };
        let fixed = ring.submitter().register_files(&[file.as_raw_fd()]).is_ok();
        let capacity = ring.params().sq_entries() as usize;
        Ok(FileBackend {
            ring,
            file,
            path: path.to_path_buf(),
            size,
            fixed,
            taskrun_flag,
            slots: Slots::new(capacity, faults.corrupt_every),
            backlog: VecDeque::new(),
            unsubmitted: 0,
            failed: Vec::new(),
            error_every: faults.error_every,
            submitted: 0,
            enters: 0,
            reaped: 0,
            quiet_polls: 0,
            by: [0; 3],
        })
    }

    /// Whether the kernel accepted COOP_TASKRUN with TASKRUN_FLAG (Linux
    /// 5.19+); without it completions arrive by interrupting the thread.
    pub fn coop_taskrun(&self) -> bool {
        self.taskrun_flag
    }

    /// Whether the file is registered with the ring.
    pub fn registered_file(&self) -> bool {
        self.fixed
    }

    fn sqe(&self, io: &Io, slot: u32) -> squeue::Entry {
        let (ptr, len) = (io.buf.ptr(), io.buf.len());
        let entry = match (io.write, self.fixed) {
            (false, true) => opcode::Read::new(types::Fixed(0), ptr, len)
                .offset(io.offset)
                .build(),
            (false, false) => opcode::Read::new(types::Fd(self.file.as_raw_fd()), ptr, len)
                .offset(io.offset)
                .build(),
            (true, true) => opcode::Write::new(types::Fixed(0), ptr, len)
                .offset(io.offset)
                .build(),
            (true, false) => opcode::Write::new(types::Fd(self.file.as_raw_fd()), ptr, len)
                .offset(io.offset)
                .build(),
        };
        entry.user_data(u64::from(slot))
    }

    /// Moves backlogged commands into the SQ while slots are free.
    fn issue_backlog(&mut self) {
        while !self.slots.free.is_empty() {
            let Some(io) = self.backlog.pop_front() else {
                return;
            };
            if !self.issue(io) {
                self.backlog.push_front(io);
                return;
            }
        }
    }

    /// Pushes one SQE; false if there is no slot or the SQ is full.
    fn issue(&mut self, io: Io) -> bool {
        let Some(slot) = self.slots.free.pop() else {
            return false;
        };
        let entry = self.sqe(&io, slot);
        // SAFETY: the buffer stays valid and untouched by the host until
        // this command's Done is returned (the contract of `Io::new`), and
        // Drop waits for every command in the kernel before returning.
        let pushed = unsafe { self.ring.submission().push(&entry) };
        if pushed.is_err() {
            self.slots.free.push(slot);
            return false;
        }
        self.slots.io[slot as usize] = Some(io);
        self.unsubmitted += 1;
        true
    }

    /// One `io_uring_enter`: submits what was pushed and, when the kernel
    /// flagged pending task work, runs it so that completions are posted
    /// (the crate adds GETEVENTS in that case; it never waits here).
    fn enter(&mut self) {
        // A short count (the kernel short of memory) leaves the rest in the
        // SQ, and an error (EINTR, EAGAIN, EBUSY) all of it: the next poll
        // submits them. An SQE the kernel cannot run gets an error CQE.
        self.enters += 1;
        if let Ok(n) = self.ring.submitter().submit() {
            self.unsubmitted = self.unsubmitted.saturating_sub(n);
        }
    }

    fn drain(&mut self, out: &mut Vec<Done>) {
        for cqe in self.ring.completion() {
            self.reaped += 1;
            self.slots.complete(&cqe, out);
        }
    }
}

impl Backend for FileBackend {
    fn describe(&self) -> String {
        format!(
            "file:{} (io_uring, O_DIRECT, {})",
            self.path.display(),
            report::human::num2str(self.size, 3, true, "B")
        )
    }

    fn submit(&mut self, _now: Nanos, io: Io) {
        self.submitted += 1;
        if self.error_every != 0 && self.submitted % self.error_every == 0 {
            self.failed.push(io.token);
        } else if !self.backlog.is_empty() || !self.issue(io) {
            self.backlog.push_back(io);
        }
    }

    fn poll(&mut self, _now: Nanos, out: &mut Vec<Done>) {
        for token in self.failed.drain(..) {
            out.push(Done {
                token,
                result: -libc::EIO,
            });
        }
        if self.slots.busy() == 0 && self.backlog.is_empty() {
            // Idle: no syscall and no store to the rings.
            return;
        }
        // With COOP_TASKRUN the kernel queues a completion as task work
        // without interrupting this thread (which may spin on another CPU
        // than the device's interrupt), so unless we enter the kernel it is
        // posted only at the next timer tick: 4 ms at HZ=250. A plain ring
        // interrupts the thread instead, and needs no enter to see it.
        let how = if self.unsubmitted > 0 {
            0
        } else if self.taskrun_flag && self.ring.submission().taskrun() {
            1
        } else {
            2
        };
        if how < 2 {
            self.enter();
        }
        let before = out.len();
        self.drain(out);
        if out.len() > before {
            self.by[how] += (out.len() - before) as u64;
            self.quiet_polls = 0;
        } else {
            self.quiet_polls += 1;
        }
        if !self.backlog.is_empty() {
            self.issue_backlog();
        }
    }

    fn in_flight(&self) -> usize {
        self.slots.busy() + self.backlog.len() + self.failed.len()
    }

    fn probe(&mut self) -> String {
        let cq_first = self.ring.completion().len();
        let taskrun_first = self.ring.submission().taskrun();
        let early = format!(
            "before any syscall: {} in the CQ, taskrun {}; completions drained after a submit, \
             a TASKRUN enter, no enter: {:?}; {} polls since the last; ",
            cq_first, taskrun_first, self.by, self.quiet_polls
        );
        let (sq_len, sq_taskrun, sq_overflow) = {
            let sq = self.ring.submission();
            (sq.len(), sq.taskrun(), sq.cq_overflow())
        };
        let cq_len = self.ring.completion().len();
        // The kernel's own view of the rings (heads, tails, cached heads).
        let fdinfo =
            std::fs::read_to_string(format!("/proc/self/fdinfo/{}", self.ring.as_raw_fd()))
                .map(|t| {
                    t.lines()
                        .filter(|l| {
                            [
                                "SqHead",
                                "SqTail",
                                "CachedSqHead",
                                "CqHead",
                                "CqTail",
                                "CachedCqTail",
                            ]
                            .iter()
                            .any(|k| l.starts_with(&format!("{k}:")))
                        })
                        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_else(|e| format!("fdinfo: {e}"));
        early
            + &format!(
                "io_uring: {} in the kernel, {} backlogged, {} unsubmitted, {} in the SQ, \
             {} in the CQ, SQ flags taskrun {} cq_overflow {}, {} enters, {} reaped; kernel: {}",
                self.slots.busy(),
                self.backlog.len(),
                self.unsubmitted,
                sq_len,
                cq_len,
                sq_taskrun,
                sq_overflow,
                self.enters,
                self.reaped,
                fdinfo
            )
    }
}

impl Drop for FileBackend {
    /// The kernel may still be writing into host buffers: wait for every
    /// command in it before the ring goes, so none lands after the host
    /// frees its memory. Backlogged commands never reached the kernel.
    fn drop(&mut self) {
        let mut scratch = Vec::new();
        while self.slots.busy() > 0 {
            match self.ring.submitter().submit_and_wait(1) {
                Ok(n) => self.unsubmitted = self.unsubmitted.saturating_sub(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // Nothing more can be waited for; closing the ring makes
                // the kernel cancel what is left.
                Err(_) => break,
            }
            self.drain(&mut scratch);
            scratch.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::alloc::{alloc_zeroed, dealloc, Layout};
    use std::os::unix::fs::OpenOptionsExt;
    use std::ptr::NonNull;
    use std::time::{Duration, Instant};

    use super::*;
    use crate::backend::layout::lay_out;

    /// The fallback for kernels without COOP_TASKRUN: its completions reach
    /// a busy-polling thread with no enter from `poll`.
    #[test]
    fn a_plain_ring_completes_by_polling_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plain.img");
        lay_out(&path, 0, 1 << 20).unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(&path)
            .unwrap();
        let mut b =
            FileBackend::with_setup(file, &path, 1 << 20, 8, Faults::default(), false).unwrap();
        assert!(!b.coop_taskrun());
        let layout = Layout::from_size_align(4096, 4096).unwrap();
        // SAFETY: a non-zero size.
        let buf = NonNull::new(unsafe { alloc_zeroed(layout) }).unwrap();
        for token in 0..16 {
            // SAFETY: 4096 bytes aligned to 4096, untouched until its Done.
            b.submit(0, unsafe { Io::new(token, false, 8192, buf, 4096) });
            let start = Instant::now();
            let mut out = Vec::new();
            while out.is_empty() {
                assert!(start.elapsed() < Duration::from_secs(1));
                b.poll(0, &mut out);
            }
            assert_eq!(
                out,
                [Done {
                    token,
                    result: 4096
                }]
            );
        }
        drop(b);
        // SAFETY: allocated above with this layout; no command is left.
        unsafe { dealloc(buf.as_ptr(), layout) };
    }
}
