//! User CPU per operation, measured with db_bench on this machine.
//! PLACEHOLDER: filled in from target/measure (see the report).

use policy::Nanos;

pub const GET_NS: Nanos = 7_000;
pub const PUT_NS: Nanos = 5_000;
pub const FILLBATCH_KEY_NS: Nanos = 3_000;
pub const DUMP_KEY_NS: Nanos = 2_000;
pub const BACKGROUND_NS_PER_KIB: Nanos = 200;
