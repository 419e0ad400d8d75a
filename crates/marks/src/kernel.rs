//! The kernel's default marks (TOS 4.1.1, Table 1, or the authors'
//! microbenchmark kernel), by the system call that carries a request, and
//! the application's RWF flags that override them (TOS 4.1.2); Table 1's
//! logic applied to what a block trace records ([`block`]).

use std::fmt;
use std::str::FromStr;

use policy::Marks;

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
    /// One SQE of an io_uring ring ([`Sqe`]: how it reached the kernel).
    Ring(Sqe),
}

/// How an io_uring SQE reaches the kernel, which is all its default marks
/// can go on: **our io_uring row for TOS Table 1**, which has none (the
/// paper's kernel is Linux 5.0.8 and its Table 1 predates io_uring's use).
///
/// The row follows the table's own logic (TOS 4.1.1: defaults "naturally
/// derive from the programming paradigm of each system call: any system
/// call that blocks the application ... is marked Urgent, and any system
/// call that supports asynchronous submission, such as io_submit, is marked
/// Barrier"), read off the arguments of the `io_uring_enter(fd, to_submit,
/// min_complete, flags)` that submits the SQE, since that is what the
/// kernel sees when it builds the request:
///
/// - [`Sqe::SubmitAndWait`] `{ alone: true }`: one SQE submitted by a call
///   that then waits in the same call (IORING_ENTER_GETEVENTS with
///   `min_complete >= 1`, liburing's `io_uring_submit_and_wait(ring, 1)`):
///   the application blocks on that one request, as in a `pread`, so
///   **Urgent**, Table 1's first rows.
/// - `SubmitAndWait { alone: false }`: a batch submitted and waited on in
///   the same call: **Barrier on the last SQE**, the rest unmarked. The
///   caller waits for the batch, as an `io_submit` + `io_getevents` caller
///   does, and Table 1's io_submit row marks that batch's last request.
/// - [`Sqe::Submit`]: submitted by a call that does not wait
///   (`min_complete` 0, or no GETEVENTS: fio's engine commits with
///   `io_uring_enter(ld, nr, 0, IORING_ENTER_GETEVENTS)`,
///   `fio_ioring_commit`). This is `io_submit`'s own paradigm, asynchronous
///   submission of a batch to be reaped later: Table 1's io_submit row,
///   **Barrier on the last SQE**, the rest unmarked.
/// - [`Sqe::SqPoll`]: on an IORING_SETUP_SQPOLL ring a kernel thread takes
///   the SQEs from the ring in its own batches (io_uring/sqpoll.c
///   `__io_sq_thread`, up to `IORING_SQPOLL_CAP_ENTRIES_VALUE` per ring per
///   pass) and no call of the application says where its batch ends or
///   that it waits: **unmarked**; adaptive coalescing bounds the wait (TOS
///   3.3).
/// - [`Sqe::IoPoll`]: an IORING_SETUP_IOPOLL ring (fio's `hipri`) is
///   polled: its requests go to a poll queue that raises no interrupt
///   (block/blk-mq.h `HCTX_TYPE_POLL`), so marks ask for nothing:
///   **unmarked**, and no interrupt.
///
/// The application's explicit flags win over the row, as over Table 1
/// (TOS 4.1.1): the authors' RWF_URGENT (0x20) and RWF_BARRIER (0x40) in the
/// SQE's `rw_flags`, both meaning explicitly unmarked ([`RwfFlags`]); and
/// so do `exec`'s `--mark-thread`/`--mark-file` rules, which stand for the
/// application's flags. The authors' basis kernel
/// (`cinterrupts-01-basis.patch`) touches neither fs/io_uring.c nor the
/// `read_iter` path io_uring takes (it marks `new_sync_read`,
/// `new_sync_write` and `do_iter_readv_writev`, which io_uring does not
/// call), so under [`DefaultMarks::Basis`] every SQE is unmarked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sqe {
    /// Submitted by an `io_uring_enter` that also waits (`min_complete >=
    /// 1` with IORING_ENTER_GETEVENTS); `alone`: the call submitted this
    /// one SQE; `last`: the call's last SQE.
    SubmitAndWait { alone: bool, last: bool },
    /// Submitted by an `io_uring_enter` that does not wait; `last`: the
    /// call's last SQE.
    Submit { last: bool },
    /// Taken by the SQPOLL kernel thread.
    SqPoll,
    /// On an IOPOLL ring: polled, no interrupt.
    IoPoll,
}

impl Sqe {
    /// The row's marks (see [`Sqe`]).
    pub fn table1(self) -> Marks {
        match self {
            Sqe::SubmitAndWait { alone: true, .. } => Marks::URGENT,
            Sqe::SubmitAndWait { last: true, .. } | Sqe::Submit { last: true } => Marks::BARRIER,
            Sqe::SubmitAndWait { .. } | Sqe::Submit { .. } | Sqe::SqPoll | Sqe::IoPoll => {
                Marks::NONE
            }
        }
    }
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
                // Our io_uring row, from the table's logic ([`Sqe`]).
                Call::Ring(sqe) => sqe.table1(),
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
                // No fs/io_uring.c change, and io_uring's read_iter path
                // is not one the patch marks ([`Sqe`]).
                Call::Ring(_) => Marks::NONE,
            },
        }
    }
}

/// TOS Table 1's logic on what a block trace records, which cannot see
/// the system call: a read blocks its caller (Table 1's reads are Urgent
/// unless asynchronous, which a block trace cannot tell), a write with the
/// RWBS sync flag is an O_DIRECT or O_SYNC write whose caller waits (Table
/// 1: Urgent), a flush or FUA is an fsync's (Urgent); other writes
/// (writeback) have no thread waiting: unmarked.
pub fn block(write: bool, sync: bool, flush: bool) -> Marks {
    if flush || !write || sync {
        Marks::URGENT
    } else {
        Marks::NONE
    }
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
    fn io_uring_row_waited_alone_is_urgent_batch_waited_together_ends_in_barrier() {
        let t = DefaultMarks::Table1;
        let alone = Sqe::SubmitAndWait {
            alone: true,
            last: true,
        };
        assert_eq!(t.of(Call::Ring(alone)), Marks::URGENT);
        let batch = |last| Sqe::SubmitAndWait { alone: false, last };
        assert_eq!(t.of(Call::Ring(batch(true))), Marks::BARRIER);
        assert_eq!(t.of(Call::Ring(batch(false))), Marks::NONE);
        // Submit-only: io_submit's paradigm and Table 1's io_submit row.
        assert_eq!(
            t.of(Call::Ring(Sqe::Submit { last: true })),
            t.of(Call::Submit { last: true })
        );
        assert_eq!(t.of(Call::Ring(Sqe::Submit { last: false })), Marks::NONE);
        assert_eq!(t.of(Call::Ring(Sqe::SqPoll)), Marks::NONE);
        assert_eq!(t.of(Call::Ring(Sqe::IoPoll)), Marks::NONE);
        // The basis kernel marks no SQE.
        for sqe in [alone, batch(true), Sqe::Submit { last: true }] {
            assert_eq!(DefaultMarks::Basis.of(Call::Ring(sqe)), Marks::NONE);
        }
    }

    #[test]
    fn a_block_trace_is_marked_by_who_waits() {
        assert_eq!(block(false, false, false), Marks::URGENT, "a read");
        assert_eq!(block(true, true, false), Marks::URGENT, "a sync write");
        assert_eq!(block(true, false, true), Marks::URGENT, "a FUA write");
        assert_eq!(block(false, false, true), Marks::URGENT, "a flush");
        assert_eq!(block(true, false, false), Marks::NONE, "writeback");
    }
}
