//! The host side of the problem (issue 15): what the kernel does around the
//! device, as FastResponse (Liu et al., ICS'22; `shared/papers/fastresponse.txt`)
//! changes it and as TOS 2 compares it with interrupts. Each module is a
//! small pure state machine in the `policy` crate's style: state, one entry
//! per event, time passed in as `u64` nanoseconds, no clock and no I/O. The
//! simulator charges their costs in virtual time; the emulator's driver
//! applies the block-layer and completion parts to real I/O.

pub mod cfs;
pub mod fsync;
