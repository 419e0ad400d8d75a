//! What of a process's record did not pass through the device, as the
//! report names it. The record itself is the preload library's too
//! (`wire::Record`, issue 38 item 1); what the report makes of it is
//! exec's.

pub use wire::{Boosted, Record};

use crate::watch::{NotRouted, IO_URING, IO_URING_REFUSED};

/// The library's trap of inline io_uring calls not installed, in the
/// report's words.
pub const UNTRAPPED: &str = "inline io_uring calls not trapped";

/// Shared writable file mappings, in the report's words.
pub const MMAP_WRITE_BACK: &str = "mmap write-back";

/// What of a process's I/O did not pass through the device.
pub trait NotRoutedOf {
    /// What of this process's I/O did not pass through the device, as the
    /// report names it.
    fn not_routed(&self) -> Vec<NotRouted>;
}

impl NotRoutedOf for Record {
    fn not_routed(&self) -> Vec<NotRouted> {
        let mut v = Vec::new();
        let me = |what: &str, calls, why: Option<String>| NotRouted {
            what: what.into(),
            pid: self.pid,
            comm: self.comm.clone(),
            calls,
            uid: Some(self.uid),
            why,
        };
        if let Some(why) = &self.unmapped {
            v.push(me(
                "region not mapped",
                None,
                Some(format!("{why}: none of its I/O was routed (its direct I/O went to the kernel, counted)")),
            ));
        }
        if self.io_uring {
            v.push(me(
                IO_URING,
                None,
                Some("seen by the library (a ring set up or open at the exit)".into()),
            ));
        }
        if self.io_uring_refused > 0 {
            v.push(me(
                IO_URING_REFUSED,
                Some(self.io_uring_refused),
                Some("io_uring_setup through glibc's syscall() failed with ENOSYS by the preload library (--io-uring refuse), the kernel not called".into()),
            ));
        }
        for (feature, n) in &self.io_uring_features_refused {
            v.push(me(
                &format!("io_uring {feature} refused"),
                Some(*n),
                Some("refused with EINVAL, as by a kernel without it: the routed ring cannot provide it".into()),
            ));
        }
        if let Some(why) = &self.io_uring_untrapped {
            v.push(me(
                UNTRAPPED,
                None,
                Some(format!(
                    "{why}: its inline io_uring calls reach the kernel's own rings"
                )),
            ));
        }
        if self.mmap_write_back > 0 {
            v.push(me(
                MMAP_WRITE_BACK,
                Some(self.mmap_write_back),
                Some("a file on a disk mapped shared and writable (mmap): its dirty pages reach the disk by the kernel's write-back, which the library never sees; neither routed nor counted".into()),
            ));
        }
        if self.counts.nested > 0 {
            v.push(me(
                "call inside a routed call (a signal handler's)",
                Some(self.counts.nested),
                Some(
                    "made while its thread was inside a routed call: passed straight to the kernel"
                        .into(),
                ),
            ));
        }
        v
    }
}
