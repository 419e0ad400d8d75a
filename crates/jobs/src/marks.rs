//! Default marks (TOS 4.1.1, Table 1), application overrides (TOS 4.1.2),
//! and what splits and merges do to marks (TOS 4.1.1).

use policy::Marks;

use crate::job::{CintFlags, Engine, Job};

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
    /// passes no flag. TOS 4.1.1, Table 1.
    pub fn default_marks(&self, kind: IoKind, index_in_batch: usize, batch_len: usize) -> Marks {
        match kind {
            // TOS 4.1.1, Table 1: (f)(data)sync are Urgent.
            IoKind::Fsync | IoKind::Fdatasync => Marks::URGENT,
            IoKind::Read | IoKind::Write => match self.ioengine {
                // TOS 4.1.1, Table 1: (p)read(v)/(p)write(v) are Urgent if
                // the fd is blocking (fio's always are) or the write O_DIRECT.
                Engine::Sync | Engine::Psync | Engine::Vsync | Engine::Pvsync => Marks::URGENT,
                // TOS 4.1.1, Table 1: preadv2/pwritev2 Urgent unless RWF_NOWAIT.
                Engine::Pvsync2 if self.nowait => Marks::NONE,
                Engine::Pvsync2 => Marks::URGENT,
                // TOS 4.1.1, Table 1: io_submit marks the last request of the
                // batch Barrier. io_uring postdates the paper (Linux 5.0.8);
                // its submit is treated like io_submit.
                Engine::Libaio | Engine::IoUring | Engine::Null => {
                    if is_last(index_in_batch, batch_len) {
                        Marks::BARRIER
                    } else {
                        Marks::NONE
                    }
                }
            },
        }
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
