//! A userspace emulator of an NVMe controller with calibrated interrupts,
//! on real I/O (the paper's emulator, TOS 4.2.1, without a patched kernel).
//!
//! A **device thread** on its own CPU plays the controller: per-core
//! submission and completion rings in shared memory with phase bits and
//! doorbells, Urgent and Barrier in the command identifier
//! ([`policy::cid`]), commands executed on a [`backend`] (io_uring with
//! O_DIRECT on a file, or a timed null device), completions posted to the CQ
//! and fed to the policy, and an interrupt raised on the target core's line
//! only when the policy fires ([`device`]). The host **driver** submits into
//! the SQs, handles the interrupts of each target core (reaping the CQ) and
//! delivers each completion to the thread waiting for it ([`driver`]). The
//! **job threads** run fio's loop for psync, pvsync2, libaio and io_uring on
//! top of the driver; completions stay invisible to them until an
//! interrupt delivers them.
//!
//! It is **for** seeing the strategies of the `policy` crate on real I/O and
//! with this machine's real interrupt cost. It is **not** a kernel driver:
//! the job threads submit by writing the SQ from user space, so a system
//! call's cost is not part of the path, and an "interrupt" is a wake-up of a
//! thread, whose cost on this VM (tens of microseconds) the report measures.
//!
//! # Layers
//!
//! Each module uses only the ones below it (`tests/layers.rs` checks it):
//!
//! ```text
//!  experiments  bench (Table 2, device capacity)   direct (the io_uring baseline)
//!  run          run: place, spawn, window, stall, report, audit
//!  job workers  worker (fio's loop on the driver)
//!  host driver  driver: submission, interrupt handler, delivery to waiters
//!  device       device: controller loop (SQ fetch, backend, CQ post,
//!               policy, interrupt raise), completion gaps
//!  queue pair   queue (rings + line + the driver's tags)
//!  config       config (EmuConfig, Delivery, DeviceConfig, DriverConfig)
//!  leaves       ring  irq  mailbox  buffers  verify  backend  sys  latency  error
//! ```
//!
//! # Driving the device without the job workers
//!
//! The device and the driver are a public API of their own, for a host
//! other than the job threads (such as a library preloaded into a real
//! program): create one [`QueuePair`] per target core, start the
//! [`Device`] and the [`Driver`] on the same [`Clock`], then submit and wait
//! from each waiter's thread.
//!
//! ```no_run
//! use std::sync::Arc;
//! use emu::backend::BackendSpec;
//! use emu::{Clock, Delivery, Device, DeviceConfig, Driver, DriverConfig, QueuePair, Request};
//!
//! # fn main() -> Result<(), emu::EmuError> {
//! let queues = vec![Arc::new(QueuePair::new(0, 64, 64))]; // target core 0
//! let backend = BackendSpec::parse("null:10us").unwrap().open(None, 64).unwrap();
//! let clock = Clock::new();
//! let policy = policy::PolicySpec::named("cint");
//! let device = Device::start(
//!     &DeviceConfig { cpu: 1, policy, irq_delivery: Default::default(), recording: Default::default() },
//!     clock, backend.backend, queues.clone(),
//! )?;
//! let cfg = DriverConfig { delivery: Delivery::Poll, realtime_handler: false, handler_delay: 0, recording: Default::default(), block: None };
//! let driver = Driver::start(&cfg, clock, queues, &[0])?; // one waiter, on queue pair 0
//! let req = Request { cookie: 7, write: false, offset: 0, len: 4096, buf: 0, marks: policy::Marks::URGENT };
//! // SAFETY: the null backend never touches the buffer.
//! unsafe { driver.submit(0, &[req]) };
//! let mut done = Vec::new();
//! driver.wait(0, 1, 1, &mut done);
//! assert_eq!(done[0].cookie, 7);
//! let stats = device.stop()?.stats;
//! driver.stop();
//! # let _ = stats; Ok(()) }
//! ```

pub mod backend;
pub mod bench;
mod buffers;
mod config;
pub mod counters;
pub mod device;
mod direct;
pub mod driver;
mod error;
mod irq;
mod latency;
mod mailbox;
mod queue;
mod ring;
mod run;
mod sys;
mod verify;
mod worker;

pub use config::{Boost, Delivery, DeviceConfig, DriverConfig, EmuConfig, IrqDelivery, Recording};
pub use device::{Device, DeviceHandle, Ingress};
pub use driver::Driver;
pub use error::EmuError;
pub use irq::LineCount;
pub use mailbox::{Delivered, Inboxes};
pub use queue::{QueuePair, Request};
pub use run::{
    choose_target, claim_first, run, run_audited, uring_emulated, Audit, StandIn, Target, STAND_IN,
};
pub use sys::{Clock, HybridSleep, HybridTimer, TIMER_OVERSHOOT};
