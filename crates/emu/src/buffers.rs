//! The data buffers a job thread lends the device: one 4 KiB-aligned slot
//! per request it may have in flight (O_DIRECT needs the alignment).

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;

pub const ALIGN: usize = 4096;

pub struct Buffers {
    ptr: NonNull<u8>,
    layout: Layout,
    slot: usize,
}

// SAFETY: the allocation is owned by one job thread; the device only sees
// the addresses of slots lent with in-flight commands.
unsafe impl Send for Buffers {}

impl Buffers {
    /// `slots` slots of at least `slot_len` bytes each.
    pub fn new(slots: usize, slot_len: usize) -> Buffers {
        let slot = slot_len.max(1).div_ceil(ALIGN) * ALIGN;
        let layout = Layout::from_size_align(slot * slots.max(1), ALIGN).expect("buffer layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = NonNull::new(unsafe { alloc_zeroed(layout) })
            .unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        Buffers { ptr, layout, slot }
    }

    /// The address of slot `i`, for a command.
    pub fn addr(&self, i: usize) -> usize {
        assert!((i + 1) * self.slot <= self.layout.size());
        self.ptr.as_ptr() as usize + i * self.slot
    }

    /// Slot `i`'s first `len` bytes. The caller must not have lent the slot
    /// to a command still in flight (the job thread's own bookkeeping).
    pub fn get_mut(&mut self, i: usize, len: usize) -> &mut [u8] {
        assert!(len <= self.slot && (i + 1) * self.slot <= self.layout.size());
        // SAFETY: in bounds (asserted); `&mut self` and the caller's
        // ownership of the slot mean nothing else touches it.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().add(i * self.slot), len) }
    }
}

impl Drop for Buffers {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}
