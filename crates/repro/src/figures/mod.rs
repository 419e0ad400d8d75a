//! The paper's experiments, one file each (TOS figure numbers), in the
//! order the paper shows them; then FastResponse's (`fr_*`, FR figure
//! numbers) and ours.

mod fastresponse;
pub mod field;
mod fig08;
mod fig10;
mod fig11;
mod fig12;
mod fig15;
mod fig17;
mod fig18;
mod fig19;
mod fig20;
mod fig21;
mod fig22;
mod fig23;
mod fr_fig04;
mod fr_fig04b;
mod fr_fig06;
mod fr_fig12;
mod fr_fig13;
mod fr_fig14;
mod fr_fig14b;
mod fr_fig15;
mod fr_fig15b;
mod fr_fig16;
mod fr_fig18;
mod fr_fig19;
mod fr_fig19b;
mod gyawali;
mod gyawali_fig6;
mod gyawali_fig7;
mod gyawali_fig8;
mod kristo;
mod macro_systems;
mod ours_cstates;
mod ours_fr_cint;
mod ours_mixed16;
mod ours_uring;
mod table3;
mod table5;
mod table6;
mod table7;
mod tos_fig03;
mod tos_fig04;
mod tos_fig05;

use crate::experiment::Experiment;

/// Every experiment `reproduce` knows.
pub fn all() -> Vec<Experiment> {
    vec![
        tos_fig03::experiment(),
        tos_fig04::experiment(),
        tos_fig05::experiment(),
        fig08::experiment(),
        fig10::experiment(),
        fig11::experiment(),
        fig12::experiment(),
        fig15::experiment(),
        fig17::experiment(),
        fig18::experiment(),
        fig19::experiment(),
        fig20::experiment(),
        fig21::experiment(),
        gyawali_fig6::experiment(),
        gyawali_fig7::experiment(),
        gyawali_fig8::experiment(),
        ours_mixed16::experiment(),
        ours_uring::experiment(),
        table3::experiment(),
        fig22::experiment(),
        fig23::experiment(),
        table5::experiment(),
        table6::experiment(),
        table7::experiment(),
        table7::experiment8(),
        fr_fig04::experiment(),
        fr_fig06::experiment(),
        fr_fig12::experiment(),
        fr_fig14::experiment(),
        fr_fig15::experiment(),
        fr_fig16::experiment(),
        fr_fig18::experiment(),
        fr_fig19::experiment(),
        fr_fig19b::experiment(),
        fr_fig04b::experiment(),
        fr_fig13::experiment(),
        fr_fig14b::experiment(),
        fr_fig15b::experiment(),
        ours_fr_cint::experiment(),
        kristo::experiment(),
        ours_cstates::experiment(),
        field::experiment(),
    ]
}

macro_rules! example {
    ($name:literal) => {
        Workload {
            name: $name,
            text: include_str!(concat!("../../../../examples/", $name, ".fio")),
            app: false,
        }
    };
}

macro_rules! own {
    ($name:literal) => {
        Workload {
            name: $name,
            text: include_str!(concat!("../../jobs/", $name, ".fio")),
            app: false,
        }
    };
}

pub(crate) use {example, own};

/// One of the authors' job files, transcribed (`crates/repro/artifact/`).
macro_rules! artifact {
    ($name:literal, $path:literal) => {
        $crate::experiment::Workload {
            name: $name,
            text: include_str!(concat!("../../artifact/", $path)),
            app: false,
        }
    };
}

pub(crate) use artifact;

/// An application file (issue 16): `examples/apps/NAME.toml`.
macro_rules! app {
    ($name:literal) => {
        $crate::experiment::Workload {
            name: $name,
            text: include_str!(concat!("../../../../examples/apps/", $name, ".toml")),
            app: true,
        }
    };
}

pub(crate) use app;

/// The job names the authors' mixed job files give their two threads
/// (`name=raw=random-read-psync`, `name=raw=random-read-libaio`).
pub const SYNC: &str = "raw=random-read-psync";
pub const ASYNC: &str = "raw=random-read-libaio";

/// The kernel the artifact's microbenchmarks ran (its
/// `linux-kernel/cinterrupts-01-basis.patch`): blocking reads Urgent,
/// `io_submit` unmarked (the Table 1 loop is commented out in fs/aio.c).
pub const BASIS: &str = "--default_marks=basis";
