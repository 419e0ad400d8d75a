//! Marks as the shared region's commands (`shm::Cmd::marks`) carry them,
//! written by the preload library and read by exec's device.

use policy::Marks;

/// Marks as a command in the shared rings carries them: bit 0 Urgent,
/// bit 1 Barrier (the CID's bits, TOS 4.2.1).
pub fn marks_bits(m: Marks) -> u8 {
    u8::from(m.urgent) | u8::from(m.barrier) << 1
}

pub fn marks_from_bits(b: u8) -> Marks {
    Marks {
        urgent: b & 1 != 0,
        barrier: b & 2 != 0,
    }
}
