//! fio's job-level marks: what the flags a job passes (our `cint_flags`,
//! the authors' patched-fio `barrier`) and the way its engine submits give
//! each request, over the kernel's defaults ([`crate::kernel`]).
//!
//! The `jobs` crate reads these settings from a job file
//! ([`JobMarks`] is the part of its `Job` that marks depend on); the
//! decision is here, with exec's and the traces' (`crate::resolve`).

use policy::Marks;

use crate::kernel::{Call, DefaultMarks, RwfFlags, Sqe};

/// The kind of request a job issues.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IoKind {
    Read,
    Write,
    Fsync,
    Fdatasync,
}

impl IoKind {
    /// The operation a rule names (`crate::Op`): fsync and fdatasync are
    /// both a flush.
    pub fn op(self) -> crate::Op {
        match self {
            IoKind::Read => crate::Op::Read,
            IoKind::Write => crate::Op::Write,
            IoKind::Fsync | IoKind::Fdatasync => crate::Op::Flush,
        }
    }
}

/// Our per-job override of the marks the application controls (TOS 4.1.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CintFlags {
    /// Kernel defaults (TOS Table 1), plus fio's `barrier` option.
    #[default]
    Default,
    /// Every request carries RWF_URGENT.
    Urgent,
    /// Every request carries RWF_BARRIER.
    Barrier,
    /// Every request carries RWF_URGENT|RWF_BARRIER: explicitly unmarked.
    None,
}

impl CintFlags {
    pub fn parse(s: &str) -> Option<CintFlags> {
        Some(match s {
            "default" => CintFlags::Default,
            "urgent" => CintFlags::Urgent,
            "barrier" => CintFlags::Barrier,
            "none" => CintFlags::None,
            _ => return None,
        })
    }
}

/// How a fio engine hands its requests to the kernel: all the kernel's
/// default marks can go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Submission {
    /// One blocking call per request (sync, psync, vsync, pvsync, cpuio;
    /// pvsync2 with `nowait`: RWF_NOWAIT).
    Blocking { nowait: bool },
    /// Batches by `io_submit` (libaio; fio's null engine queues, commits
    /// and gets events the same way).
    Batch,
    /// An io_uring ring: polled (`hipri`: IORING_SETUP_IOPOLL) or fed by
    /// the SQPOLL thread (`sqthread_poll`), else submitted without waiting.
    Ring { hipri: bool, sqpoll: bool },
}

impl Submission {
    /// Submission and completion are separate calls.
    pub fn is_async(self) -> bool {
        !matches!(self, Submission::Blocking { .. })
    }
}

/// What a fio job's marks depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct JobMarks {
    /// `cint_flags=`.
    pub cint_flags: CintFlags,
    /// The authors' patched fio's `barrier=1`.
    pub barrier: bool,
    pub submission: Submission,
    /// `default_marks=`: which kernel's defaults apply.
    pub defaults: DefaultMarks,
}

impl JobMarks {
    /// The flags this job's application passes with a request, if any:
    /// `cint_flags` first, then the patched-fio `barrier` option.
    pub fn rwf_flags(&self, kind: IoKind, index_in_batch: usize, batch_len: usize) -> RwfFlags {
        match self.cint_flags {
            CintFlags::Urgent => RwfFlags::URGENT,
            CintFlags::Barrier => RwfFlags::BARRIER,
            CintFlags::None => RwfFlags::UNMARKED,
            CintFlags::Default => {
                let data = matches!(kind, IoKind::Read | IoKind::Write);
                if self.barrier && self.submission.is_async() && data {
                    // Authors' patched fio: RWF_BARRIER on the last iocb of
                    // each io_submit, both flags (not urgent) on the others.
                    if is_last(index_in_batch, batch_len) {
                        RwfFlags::BARRIER
                    } else {
                        RwfFlags::UNMARKED
                    }
                } else {
                    RwfFlags::NONE
                }
            }
        }
    }

    /// The system call that carries request `index_in_batch` of a batch of
    /// `batch_len`, as the kernel's defaults tell calls apart.
    pub fn call(&self, kind: IoKind, index_in_batch: usize, batch_len: usize) -> Call {
        match kind {
            IoKind::Fsync | IoKind::Fdatasync => Call::Flush,
            IoKind::Read | IoKind::Write => match self.submission {
                Submission::Blocking { nowait } => Call::Blocking { nowait },
                // fio's io_uring engine: our io_uring row ([`Sqe`]) for how
                // fio 3.33 submits (engines/io_uring.c).
                Submission::Ring { .. } => Call::Ring(self.sqe(index_in_batch, batch_len)),
                Submission::Batch => Call::Submit {
                    last: is_last(index_in_batch, batch_len),
                },
            },
        }
    }

    /// The marks the kernel defaults give a request when the application
    /// passes no flag: TOS 4.1.1, Table 1, or the authors' basis kernel
    /// ([`DefaultMarks`], the job's `default_marks`).
    pub fn default_marks(&self, kind: IoKind, index_in_batch: usize, batch_len: usize) -> Marks {
        self.defaults.of(self.call(kind, index_in_batch, batch_len))
    }

    /// The marks the device sees on request `index_in_batch` (0-based) of a
    /// submission of `batch_len` requests (1 for blocking engines): the
    /// application's flags if it passes any, else the kernel defaults.
    ///
    /// `cint_flags` overrides everything the application controls; `none`
    /// leaves every request unmarked, fsync included (TOS 4.1.2). An index
    /// at or past the end of the batch, or an empty batch, counts as last.
    pub fn marks(&self, kind: IoKind, index_in_batch: usize, batch_len: usize) -> Marks {
        self.rwf_flags(kind, index_in_batch, batch_len)
            .to_marks()
            .unwrap_or_else(|| self.default_marks(kind, index_in_batch, batch_len))
    }

    /// How fio 3.33's io_uring engine hands SQE `index_in_batch` of a
    /// batch of `batch_len` to the kernel: an IOPOLL ring with `hipri`
    /// (`fio_ioring_queue_init`: IORING_SETUP_IOPOLL), the SQPOLL thread
    /// with `sqthread_poll` (its commit never submits), else an
    /// `io_uring_enter(nr, 0, GETEVENTS)` that does not wait
    /// (`fio_ioring_commit`: `min_complete` 0; fio waits in a later call,
    /// `fio_ioring_getevents`).
    pub fn sqe(&self, index_in_batch: usize, batch_len: usize) -> Sqe {
        match self.submission {
            Submission::Ring { hipri: true, .. } => Sqe::IoPoll,
            Submission::Ring { sqpoll: true, .. } => Sqe::SqPoll,
            _ => Sqe::Submit {
                last: is_last(index_in_batch, batch_len),
            },
        }
    }
}

fn is_last(index_in_batch: usize, batch_len: usize) -> bool {
    index_in_batch.saturating_add(1) >= batch_len
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring() -> JobMarks {
        JobMarks {
            cint_flags: CintFlags::Default,
            barrier: false,
            submission: Submission::Ring {
                hipri: false,
                sqpoll: false,
            },
            defaults: DefaultMarks::Table1,
        }
    }

    #[test]
    fn fio_io_uring_jobs_take_the_row_and_explicit_flags_win() {
        let mut j = ring();
        // fio commits without waiting: Barrier on the batch's last SQE, as
        // for libaio's io_submit.
        assert_eq!(j.marks(IoKind::Read, 3, 4), Marks::BARRIER);
        assert_eq!(j.marks(IoKind::Read, 0, 4), Marks::NONE);
        assert_eq!(j.marks(IoKind::Read, 0, 1), Marks::BARRIER);
        j.submission = Submission::Ring {
            hipri: false,
            sqpoll: true,
        };
        assert_eq!(j.sqe(0, 1), Sqe::SqPoll);
        assert_eq!(j.marks(IoKind::Read, 0, 1), Marks::NONE);
        // An explicit RWF_URGENT (cint_flags=urgent) wins over the row.
        j.cint_flags = CintFlags::Urgent;
        assert_eq!(j.marks(IoKind::Read, 0, 1), Marks::URGENT);
        j.cint_flags = CintFlags::Default;
        j.submission = Submission::Ring {
            hipri: true,
            sqpoll: false,
        };
        assert_eq!(j.sqe(3, 4), Sqe::IoPoll);
        assert_eq!(j.marks(IoKind::Read, 3, 4), Marks::NONE);
        // fsync stays Table 1's Urgent whatever the engine.
        assert_eq!(j.marks(IoKind::Fsync, 0, 1), Marks::URGENT);
    }

    #[test]
    fn the_patched_barrier_applies_to_batches_only() {
        let mut j = ring();
        j.barrier = true;
        j.submission = Submission::Batch;
        assert_eq!(j.rwf_flags(IoKind::Write, 3, 4), RwfFlags::BARRIER);
        assert_eq!(j.rwf_flags(IoKind::Write, 0, 4), RwfFlags::UNMARKED);
        assert_eq!(j.rwf_flags(IoKind::Fsync, 0, 4), RwfFlags::NONE);
        j.submission = Submission::Blocking { nowait: false };
        assert_eq!(j.rwf_flags(IoKind::Write, 3, 4), RwfFlags::NONE);
        assert_eq!(CintFlags::parse("none"), Some(CintFlags::None));
        assert_eq!(CintFlags::parse("soon"), None);
    }

    #[test]
    fn last_of_batch() {
        assert!(!is_last(0, 4));
        assert!(is_last(3, 4));
        assert!(is_last(0, 0));
        assert!(is_last(usize::MAX, 4));
    }
}
