//! Default marks (TOS 4.1.1, Table 1, or the authors' microbenchmark
//! kernel), application overrides (TOS 4.1.2), and what splits and merges
//! do to marks (TOS 4.1.1).

use std::fmt;
use std::str::FromStr;

use policy::Marks;

use crate::job::{CintFlags, Engine, Job};

/// Which kernel gives a request its marks when the application passes no
/// flag: the paper's design or the kernel the authors measured with.
///
/// Table 1 stays the default: it is what the paper (TOS 4.1.1) says the
/// kernel does, and what our own job files were written for. `basis` is
/// what the authors' microbenchmark figures ran on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DefaultMarks {
    /// TOS 4.1.1, Table 1: blocking reads and writes Urgent (preadv2 and
    /// pwritev2 unless RWF_NOWAIT), (f)(data)sync Urgent, and the last
    /// request of each `io_submit` Barrier.
    #[default]
    Table1,
    /// The authors' microbenchmark kernel (artifact
    /// `linux-kernel/cinterrupts-01-basis.patch`, amytai/cinterrupts-osdi
    /// at d4dfa8a): `new_sync_read`, `new_sync_write` (fs/read_write.c,
    /// read/write/pread/pwrite) and `do_iter_readv_writev` (readv to
    /// pwritev2, after `kiocb_set_rw_flags`, so RWF_NOWAIT too) set
    /// IOCB_URGENT; `io_submit`'s Barrier on the last iocb is commented out
    /// (fs/aio.c, `SYSCALL_DEFINE3(io_submit)`: `/*if (unlikely(i == nr-1))
    /// { ret = io_submit_one_barrier(...` ), so an io_submit is unmarked
    /// unless fio's `barrier=1` sets IOCB_FLAG_BARRIER on its last iocb
    /// (their fio-3.12-barrier.patch); and fsync is not marked (the patch
    /// touches neither fs/sync.c nor the block layer's flush).
    Basis,
}

impl DefaultMarks {
    /// Every value, as written on the command line and in job files.
    pub const ALL: [DefaultMarks; 2] = [DefaultMarks::Table1, DefaultMarks::Basis];

    pub fn name(self) -> &'static str {
        match self {
            DefaultMarks::Table1 => "table1",
            DefaultMarks::Basis => "basis",
        }
    }
}

impl fmt::Display for DefaultMarks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DefaultMarks {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        DefaultMarks::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| format!("invalid default_marks '{s}' (table1, basis)"))
    }
}

/// The system call that carries a request, as the kernel's default marks
/// tell them apart (TOS 4.1.1, Table 1): what fio's engines issue, and what
/// `cinterrupts exec` sees a real program call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Call {
    /// A blocking read or write: read/write, pread/pwrite, (p)readv/
    /// (p)writev, preadv2/pwritev2 (`nowait`: with RWF_NOWAIT).
    Blocking { nowait: bool },
    /// One iocb of an `io_submit` (`last`: the call's last one).
    Submit { last: bool },
    /// fsync or fdatasync.
    Flush,
}

impl DefaultMarks {
    /// The marks this kernel gives a request that carries no flag.
    pub fn of(self, call: Call) -> Marks {
        match self {
            DefaultMarks::Table1 => match call {
                // TOS 4.1.1, Table 1: (p)read(v)/(p)write(v) are Urgent if
                // the fd is blocking (fio's always are) or the write
                // O_DIRECT; preadv2/pwritev2 Urgent unless RWF_NOWAIT.
                Call::Blocking { nowait: false } => Marks::URGENT,
                Call::Blocking { nowait: true } => Marks::NONE,
                // TOS 4.1.1, Table 1: io_submit marks the last request of
                // the batch Barrier.
                Call::Submit { last: true } => Marks::BARRIER,
                Call::Submit { last: false } => Marks::NONE,
                // TOS 4.1.1, Table 1: (f)(data)sync are Urgent.
                Call::Flush => Marks::URGENT,
            },
            // The authors' basis kernel (the patch's places cited at
            // [`DefaultMarks::Basis`]).
            DefaultMarks::Basis => match call {
                // new_sync_read/new_sync_write and do_iter_readv_writev set
                // IOCB_URGENT unconditionally, RWF_NOWAIT or not.
                Call::Blocking { .. } => Marks::URGENT,
                // The io_submit loop's barrier is commented out.
                Call::Submit { .. } => Marks::NONE,
                // No fs/sync.c or flush change in the patch.
                Call::Flush => Marks::NONE,
            },
        }
    }
}

/// The default marks the jobs of a run use, for its report: `table1`,
/// `basis`, or both in job order (`table1, basis`) when they differ.
pub fn default_marks_of<'a>(jobs: impl IntoIterator<Item = &'a Job>) -> String {
    let mut seen: Vec<DefaultMarks> = Vec::new();
    for j in jobs {
        if !seen.contains(&j.default_marks) {
            seen.push(j.default_marks);
        }
    }
    let names: Vec<&str> = seen.iter().map(|m| m.name()).collect();
    names.join(", ")
}

/// The kind of request a job issues.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IoKind {
    Read,
    Write,
    Fsync,
    Fdatasync,
}

/// The two RWF flags an application passes per request (`preadv2`/
/// `pwritev2` flags, or the iocb's `aio_rw_flags`), as the authors' kernel
/// reads them.
///
/// This is a syscall-level meaning, not a device one: both flags together
/// mean "explicitly unmarked" (TOS 4.1.1), whereas a *merged* request whose
/// children carry both bits becomes Urgent ([`Marks::merge`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RwfFlags {
    pub urgent: bool,
    pub barrier: bool,
}

impl RwfFlags {
    pub const NONE: RwfFlags = RwfFlags {
        urgent: false,
        barrier: false,
    };
    pub const URGENT: RwfFlags = RwfFlags {
        urgent: true,
        barrier: false,
    };
    pub const BARRIER: RwfFlags = RwfFlags {
        urgent: false,
        barrier: true,
    };
    /// RWF_URGENT | RWF_BARRIER: "this request is not urgent".
    pub const UNMARKED: RwfFlags = RwfFlags {
        urgent: true,
        barrier: true,
    };

    /// The marks the request carries when the application passed these
    /// flags. `None` means no flag was passed: the kernel default applies.
    pub fn to_marks(self) -> Option<Marks> {
        match (self.urgent, self.barrier) {
            (false, false) => None,
            (true, false) => Some(Marks::URGENT),
            (false, true) => Some(Marks::BARRIER),
            // TOS 4.1.1: both flags = explicitly unmarked.
            (true, true) => Some(Marks::NONE),
        }
    }
}

impl Job {
    /// The flags this job's application passes with a request, if any:
    /// `cint_flags` first, then the patched-fio `barrier` option.
    pub fn rwf_flags(&self, kind: IoKind, index_in_batch: usize, batch_len: usize) -> RwfFlags {
        match self.cint_flags {
            CintFlags::Urgent => RwfFlags::URGENT,
            CintFlags::Barrier => RwfFlags::BARRIER,
            CintFlags::None => RwfFlags::UNMARKED,
            CintFlags::Default => {
                let data = matches!(kind, IoKind::Read | IoKind::Write);
                if self.barrier && self.ioengine.is_async() && data {
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

    /// The marks the kernel defaults give a request when the application
    /// passes no flag: TOS 4.1.1, Table 1, or the authors' basis kernel
    /// ([`DefaultMarks`], the job's `default_marks`).
    pub fn default_marks(&self, kind: IoKind, index_in_batch: usize, batch_len: usize) -> Marks {
        let call = match kind {
            IoKind::Fsync | IoKind::Fdatasync => Call::Flush,
            IoKind::Read | IoKind::Write => match self.ioengine {
                // cpuio issues nothing; its "I/Os" never reach a device.
                Engine::Sync | Engine::Psync | Engine::Vsync | Engine::Pvsync | Engine::Cpuio => {
                    Call::Blocking { nowait: false }
                }
                Engine::Pvsync2 => Call::Blocking {
                    nowait: self.nowait,
                },
                // io_uring postdates the paper (Linux 5.0.8); its submit is
                // treated like io_submit.
                Engine::Libaio | Engine::IoUring | Engine::Null => Call::Submit {
                    last: is_last(index_in_batch, batch_len),
                },
            },
        };
        self.default_marks.of(call)
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
}

fn is_last(index_in_batch: usize, batch_len: usize) -> bool {
    index_in_batch.saturating_add(1) >= batch_len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_rwf_flags_mean_unmarked_but_both_bits_merge_to_urgent() {
        assert_eq!(RwfFlags::UNMARKED.to_marks(), Some(Marks::NONE));
        assert_eq!(Marks::URGENT.merge(Marks::BARRIER), Marks::URGENT);
        assert_eq!(RwfFlags::NONE.to_marks(), None);
    }

    #[test]
    fn last_of_batch() {
        assert!(!is_last(0, 4));
        assert!(is_last(3, 4));
        assert!(is_last(0, 0));
        assert!(is_last(usize::MAX, 4));
    }
}
