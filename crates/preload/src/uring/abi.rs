//! io_uring's user-space ABI, as include/uapi/linux/io_uring.h (Linux
//! 6.18) lays it out on x86_64: the setup parameters, the SQE and CQE, the
//! rings' words at the offsets the kernel reports, and the constants the
//! library reads. Nothing here calls the kernel.

use std::sync::atomic::{AtomicU32, Ordering::*};

/// The mmap offsets of a ring descriptor (IORING_OFF_SQ_RING,
/// IORING_OFF_CQ_RING, IORING_OFF_SQES).
pub(crate) const OFF_SQ_RING: i64 = 0;
pub(crate) const OFF_CQ_RING: i64 = 0x800_0000;
pub(crate) const OFF_SQES: i64 = 0x1000_0000;

/// `io_uring_setup` flags (IORING_SETUP_*).
pub(crate) mod setup {
    pub(crate) const IOPOLL: u32 = 1 << 0;
    pub(crate) const SQPOLL: u32 = 1 << 1;
    pub(crate) const CQSIZE: u32 = 1 << 3;
    pub(crate) const ATTACH_WQ: u32 = 1 << 5;
    pub(crate) const R_DISABLED: u32 = 1 << 6;
    pub(crate) const TASKRUN_FLAG: u32 = 1 << 9;
    pub(crate) const SQE128: u32 = 1 << 10;
    pub(crate) const CQE32: u32 = 1 << 11;
    pub(crate) const SINGLE_ISSUER: u32 = 1 << 12;
    pub(crate) const DEFER_TASKRUN: u32 = 1 << 13;
    pub(crate) const NO_MMAP: u32 = 1 << 14;
    pub(crate) const REGISTERED_FD_ONLY: u32 = 1 << 15;
    pub(crate) const NO_SQARRAY: u32 = 1 << 16;
}

/// `io_uring_enter` flags (IORING_ENTER_*).
pub(crate) mod enter {
    pub(crate) const GETEVENTS: u32 = 1 << 0;
    pub(crate) const SQ_WAKEUP: u32 = 1 << 1;
    pub(crate) const SQ_WAIT: u32 = 1 << 2;
    pub(crate) const EXT_ARG: u32 = 1 << 3;
    pub(crate) const REGISTERED_RING: u32 = 1 << 4;
    /// Linux 6.12: the EXT_ARG timeout is absolute.
    pub(crate) const ABS_TIMER: u32 = 1 << 5;
    /// Linux 6.13: the EXT_ARG is a registered region's offset.
    pub(crate) const EXT_ARG_REG: u32 = 1 << 6;
    /// Linux 6.15: the wait is not accounted as iowait.
    pub(crate) const NO_IOWAIT: u32 = 1 << 7;
    /// Every flag this library answers.
    pub(crate) const KNOWN: u32 =
        GETEVENTS | SQ_WAKEUP | SQ_WAIT | EXT_ARG | REGISTERED_RING | ABS_TIMER | NO_IOWAIT;
}

/// The SQ ring's flags word (IORING_SQ_*) and the CQ ring's (IORING_CQ_*).
pub(crate) const SQ_NEED_WAKEUP: u32 = 1 << 0;
pub(crate) const SQ_CQ_OVERFLOW: u32 = 1 << 1;
pub(crate) const SQ_TASKRUN: u32 = 1 << 2;
pub(crate) const CQ_EVENTFD_DISABLED: u32 = 1 << 0;

/// SQE flags (IOSQE_*).
pub(crate) const SQE_FIXED_FILE: u8 = 1 << 0;
pub(crate) const SQE_CQE_SKIP_SUCCESS: u8 = 1 << 6;

/// The opcodes this library looks into (enum io_uring_op).
pub(crate) mod op {
    pub(crate) const READV: u8 = 1;
    pub(crate) const WRITEV: u8 = 2;
    pub(crate) const FSYNC: u8 = 3;
    pub(crate) const READ_FIXED: u8 = 4;
    pub(crate) const TIMEOUT: u8 = 11;
    pub(crate) const WRITE_FIXED: u8 = 5;
    pub(crate) const FILES_UPDATE: u8 = 20;
    pub(crate) const CLOSE: u8 = 19;
    pub(crate) const READ: u8 = 22;
    pub(crate) const WRITE: u8 = 23;
    pub(crate) const MSG_RING: u8 = 40;
}

/// `io_uring_register` opcodes (IORING_REGISTER_*, IORING_UNREGISTER_*).
pub(crate) mod reg {
    pub(crate) const REGISTER_FILES: u32 = 2;
    pub(crate) const UNREGISTER_FILES: u32 = 3;
    pub(crate) const REGISTER_EVENTFD: u32 = 4;
    pub(crate) const UNREGISTER_EVENTFD: u32 = 5;
    pub(crate) const REGISTER_FILES_UPDATE: u32 = 6;
    pub(crate) const REGISTER_EVENTFD_ASYNC: u32 = 7;
    pub(crate) const REGISTER_FILES2: u32 = 13;
    pub(crate) const REGISTER_FILES_UPDATE2: u32 = 14;
    pub(crate) const REGISTER_RING_FDS: u32 = 20;
    pub(crate) const UNREGISTER_RING_FDS: u32 = 21;
    pub(crate) const REGISTER_CLONE_BUFFERS: u32 = 30;
    pub(crate) const REGISTER_ZCRX_IFQ: u32 = 32;
    pub(crate) const REGISTER_RESIZE_RINGS: u32 = 33;
    pub(crate) const REGISTER_MEM_REGION: u32 = 34;
    /// Or-ed into the opcode: the descriptor is a registered ring index.
    pub(crate) const USE_REGISTERED_RING: u32 = 1 << 31;
    /// `io_uring_rsrc_register.flags`: a sparse table of `nr` empty slots.
    pub(crate) const RSRC_REGISTER_SPARSE: u32 = 1 << 0;
}

/// The registered-ring table's size per task (io_uring/tctx.h
/// IO_RINGFD_REG_MAX).
pub(crate) const RINGFD_REG_MAX: usize = 16;

/// The SQE and CQE sizes (64 and 16 bytes).
pub(crate) const SQE: usize = 64;
pub(crate) const CQE: usize = 16;

/// `struct io_sqring_offsets`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SqOffsets {
    pub head: u32,
    pub tail: u32,
    pub ring_mask: u32,
    pub ring_entries: u32,
    pub flags: u32,
    pub dropped: u32,
    pub array: u32,
    pub resv1: u32,
    pub user_addr: u64,
}

/// `struct io_cqring_offsets`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CqOffsets {
    pub head: u32,
    pub tail: u32,
    pub ring_mask: u32,
    pub ring_entries: u32,
    pub overflow: u32,
    pub cqes: u32,
    pub flags: u32,
    pub resv1: u32,
    pub user_addr: u64,
}

/// `struct io_uring_params` (120 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Params {
    pub sq_entries: u32,
    pub cq_entries: u32,
    pub flags: u32,
    pub sq_thread_cpu: u32,
    pub sq_thread_idle: u32,
    pub features: u32,
    pub wq_fd: u32,
    pub resv: [u32; 3],
    pub sq_off: SqOffsets,
    pub cq_off: CqOffsets,
}

/// `struct io_uring_getevents_arg` (IORING_ENTER_EXT_ARG; `min_wait_usec`
/// from Linux 6.12, a pad before).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct GeteventsArg {
    pub sigmask: u64,
    pub sigmask_sz: u32,
    pub min_wait_usec: u32,
    pub ts: u64,
}

/// `struct __kernel_timespec`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Timespec {
    pub tv_sec: i64,
    pub tv_nsec: i64,
}

/// A CQE (`struct io_uring_cqe` without the CQE32 tail).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Cqe {
    pub user_data: u64,
    pub res: i32,
    pub flags: u32,
}

/// A copy of one SQE, with accessors for the fields the library reads
/// (`struct io_uring_sqe`'s offsets).
#[derive(Clone, Copy)]
pub(crate) struct Sqe(pub [u8; SQE]);

impl Sqe {
    fn u32_at(&self, at: usize) -> u32 {
        u32::from_le_bytes(self.0[at..at + 4].try_into().expect("4 bytes"))
    }
    fn u64_at(&self, at: usize) -> u64 {
        u64::from_le_bytes(self.0[at..at + 8].try_into().expect("8 bytes"))
    }
    pub fn opcode(&self) -> u8 {
        self.0[0]
    }
    pub fn flags(&self) -> u8 {
        self.0[1]
    }
    pub fn set_flags(&mut self, f: u8) {
        self.0[1] = f;
    }
    pub fn fd(&self) -> i32 {
        self.u32_at(4) as i32
    }
    pub fn set_fd(&mut self, fd: i32) {
        self.0[4..8].copy_from_slice(&fd.to_le_bytes());
    }
    pub fn off(&self) -> u64 {
        self.u64_at(8)
    }
    pub fn addr(&self) -> u64 {
        self.u64_at(16)
    }
    pub fn len(&self) -> u32 {
        self.u32_at(24)
    }
    /// `rw_flags` for reads and writes (`fsync_flags` for FSYNC).
    pub fn op_flags(&self) -> u32 {
        self.u32_at(28)
    }
    pub fn set_op_flags(&mut self, f: u32) {
        self.0[28..32].copy_from_slice(&f.to_le_bytes());
    }
    pub fn user_data(&self) -> u64 {
        self.u64_at(32)
    }
}

/// A ring mapping seen through the kernel's offsets: the SQ and CQ words
/// of one `struct io_rings` (IORING_FEAT_SINGLE_MMAP: both in one mapping)
/// and the SQE array. Used for the program's rings (our memory) and the
/// shadow's (the kernel's, mapped by us).
#[derive(Clone, Copy)]
pub(crate) struct Rings {
    pub base: usize,
    pub sqes: usize,
    pub sq: SqOffsets,
    pub cq: CqOffsets,
    pub sq_entries: u32,
    pub cq_entries: u32,
    /// IORING_SETUP_NO_SQARRAY: the SQ holds SQE indexes implicitly.
    pub no_array: bool,
}

impl Rings {
    fn word(&self, off: u32) -> &AtomicU32 {
        // SAFETY: `off` is one of the kernel's offsets into this mapping,
        // u32-aligned, alive as long as the ring is.
        unsafe { &*((self.base + off as usize) as *const AtomicU32) }
    }
    pub fn sq_head(&self) -> &AtomicU32 {
        self.word(self.sq.head)
    }
    pub fn sq_tail(&self) -> &AtomicU32 {
        self.word(self.sq.tail)
    }
    pub fn sq_flags(&self) -> &AtomicU32 {
        self.word(self.sq.flags)
    }
    pub fn sq_dropped(&self) -> &AtomicU32 {
        self.word(self.sq.dropped)
    }
    pub fn cq_head(&self) -> &AtomicU32 {
        self.word(self.cq.head)
    }
    pub fn cq_tail(&self) -> &AtomicU32 {
        self.word(self.cq.tail)
    }
    pub fn cq_flags(&self) -> &AtomicU32 {
        self.word(self.cq.flags)
    }

    /// The SQE index at SQ position `pos` (the array's entry, or the
    /// position itself without an array).
    pub fn sq_index(&self, pos: u32) -> u32 {
        let slot = pos & (self.sq_entries - 1);
        if self.no_array {
            return slot;
        }
        self.word(self.sq.array + slot * 4).load(Relaxed)
    }

    pub fn set_sq_index(&self, pos: u32, idx: u32) {
        if !self.no_array {
            let slot = pos & (self.sq_entries - 1);
            self.word(self.sq.array + slot * 4).store(idx, Relaxed);
        }
    }

    pub fn read_sqe(&self, idx: u32) -> Sqe {
        let mut s = Sqe([0; SQE]);
        // SAFETY: idx < sq_entries (checked by the caller); the SQE array
        // holds sq_entries entries.
        unsafe {
            std::ptr::copy_nonoverlapping(
                (self.sqes + idx as usize * SQE) as *const u8,
                s.0.as_mut_ptr(),
                SQE,
            )
        };
        s
    }

    pub fn write_sqe(&self, idx: u32, s: &Sqe) {
        // SAFETY: as read_sqe; the slot is ours to fill (not yet published).
        unsafe {
            std::ptr::copy_nonoverlapping(
                s.0.as_ptr(),
                (self.sqes + idx as usize * SQE) as *mut u8,
                SQE,
            )
        };
    }

    /// CQEs published and not yet consumed.
    pub fn cq_ready(&self) -> u32 {
        self.cq_tail()
            .load(Acquire)
            .wrapping_sub(self.cq_head().load(Acquire))
    }

    pub fn read_cqe(&self, pos: u32) -> Cqe {
        let at = self.base + self.cq.cqes as usize + (pos & (self.cq_entries - 1)) as usize * CQE;
        // SAFETY: a CQE slot of the mapping, published by the tail.
        unsafe {
            Cqe {
                user_data: std::ptr::read_volatile(at as *const u64),
                res: std::ptr::read_volatile((at + 8) as *const i32),
                flags: std::ptr::read_volatile((at + 12) as *const u32),
            }
        }
    }

    pub fn write_cqe(&self, pos: u32, c: Cqe) {
        let at = self.base + self.cq.cqes as usize + (pos & (self.cq_entries - 1)) as usize * CQE;
        // SAFETY: a free CQE slot (tail - head < cq_entries, checked by
        // the caller), not the program's to read until the tail moves.
        unsafe {
            std::ptr::write_volatile(at as *mut u64, c.user_data);
            std::ptr::write_volatile((at + 8) as *mut i32, c.res);
            std::ptr::write_volatile((at + 12) as *mut u32, c.flags);
        }
    }

    /// The length of the rings' mapping as the kernel sizes it
    /// (io_uring/io_uring.c rings_size): the CQEs' end, then the SQ array.
    pub fn rings_len(p: &Params) -> usize {
        let cq_end = p.cq_off.cqes as usize + p.cq_entries as usize * CQE;
        if p.flags & setup::NO_SQARRAY != 0 {
            return cq_end;
        }
        cq_end.max(p.sq_off.array as usize + p.sq_entries as usize * 4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_structs_have_the_kernels_sizes() {
        assert_eq!(std::mem::size_of::<Params>(), 120);
        assert_eq!(std::mem::size_of::<SqOffsets>(), 40);
        assert_eq!(std::mem::size_of::<CqOffsets>(), 40);
        assert_eq!(std::mem::size_of::<GeteventsArg>(), 24);
    }

    #[test]
    fn sqe_fields_read_at_the_kernels_offsets() {
        let mut s = Sqe([0; SQE]);
        s.0[0] = op::WRITE;
        s.0[4..8].copy_from_slice(&7i32.to_le_bytes());
        s.0[8..16].copy_from_slice(&4096u64.to_le_bytes());
        s.0[24..28].copy_from_slice(&512u32.to_le_bytes());
        s.0[28..32].copy_from_slice(&0x40u32.to_le_bytes());
        s.0[32..40].copy_from_slice(&99u64.to_le_bytes());
        assert_eq!(
            (
                s.opcode(),
                s.fd(),
                s.off(),
                s.len(),
                s.op_flags(),
                s.user_data()
            ),
            (op::WRITE, 7, 4096, 512, 0x40, 99)
        );
        s.set_fd(3);
        s.set_op_flags(0);
        assert_eq!((s.fd(), s.op_flags()), (3, 0));
    }
}
