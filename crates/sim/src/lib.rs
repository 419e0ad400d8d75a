//! The discrete-event simulator of host cores, an NVMe device and the
//! interrupt policy.
//!
//! The simulator runs a workload from a fio job file (the `jobs` crate) on
//! simulated host cores that submit to per-core NVMe queues; the device
//! serves commands with a service-time model and a `policy` instance per
//! completion queue decides when to interrupt. Everything runs in virtual
//! time (`u64` nanoseconds) and is deterministic for a seed. [`replay`]
//! runs a block trace's requests instead, one thread per trace process,
//! open or closed loop, and says how far its timing drifted.
//!
//! ```
//! let optane = sim::DeviceProfile::load("optane").unwrap();
//! assert_eq!(optane.default_delta, 6_000); // 6 us, TOS 5.2
//! let host = sim::HostProfile::load("xeon-e5-2660v4").unwrap();
//! assert_eq!(host.irq_cycles, 1_500); // TOS 2, Fig 3: the calibration's target
//! ```

pub mod bench;
mod blk;
pub mod calibrate;
mod cause;
pub mod coalesce;
mod cpu;
pub mod era;
mod error;
mod events;
pub mod fleet;
mod fs;
mod idle;
mod iopath;
pub mod limits;
mod nvme;
mod polling;
pub mod profile;
pub mod replay;
mod run;
mod sched;
mod state;
mod step;
pub mod trace_marks;
mod vectors;
mod wakeup;
mod workload;
mod world;

// The host mechanisms' choices are declared once, in `host::mechanism`
// (issue 26 item 2); the simulator applies them.
pub use ::host::mechanism::{BlockScheduler, Journal, Settings as HostSettings, Wakeup};
pub use ::host::poll::Mode as Completion;
pub use error::SimError;
pub use events::EVENT_KINDS;
pub use idle::IdleSettings;
pub use profile::{
    DeviceProfile, Distribution, HostProfile, IrqDelivery, IrqTaken, Preemption, ProfileError,
    ServiceTime,
};
pub use run::{
    simulate, simulate_app, simulate_app_with, simulate_audited, SimConfig, RECORDS_ENV,
};
pub use world::Audit;
