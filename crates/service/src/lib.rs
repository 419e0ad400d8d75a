//! An NVMe device as every front end models it (issue 26 item 1): the
//! profile that describes it, read and checked once ([`DeviceProfile`]);
//! the device that serves commands on its units under its IOPS and
//! bandwidth ceilings, drawing each command's service time ([`Device`]);
//! and the pieces it is made of, each command's service-time draw
//! ([`ServiceTime`], [`Sampler`]) and the ceilings' token buckets
//! ([`Gate`]).
//!
//! One crate so that a profile means the same device in `cinterrupts sim
//! --device`, `run --device` and `exec --device`: the simulator schedules
//! the device's completions as events, the emulator reports them when its
//! real clock passes them. Times are `u64` nanoseconds.

/// A device's tuned delta and thr as strategy defaults (TOS 5.2).
pub mod defaults;
pub mod device;
pub mod draw;
/// A device's timing fitted from a block trace (issue 27 item 6).
pub mod fit;
pub mod gate;
pub mod limits;
pub mod profile;
pub mod toml_file;

pub use defaults::with_device_defaults;
pub use device::{Command, Device, Started};
pub use draw::{duration, Distribution, Sampler, ServiceTime};
pub use gate::{ceil, per_byte, round, spacing, Gate, BUCKET_BYTES};
pub use limits::MAX_SERVICE;
pub use profile::DeviceProfile;
pub use toml_file::ProfileError;
