//! The paper's experiments, one file each (TOS figure numbers), in the
//! order the paper shows them.

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
mod gyawali;

use crate::experiment::Experiment;

/// Every experiment `reproduce` knows.
pub fn all() -> Vec<Experiment> {
    vec![
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
        gyawali::experiment(),
    ]
}

macro_rules! example {
    ($name:literal) => {
        Workload {
            name: $name,
            text: include_str!(concat!("../../../../examples/", $name, ".fio")),
        }
    };
}

macro_rules! own {
    ($name:literal) => {
        Workload {
            name: $name,
            text: include_str!(concat!("../../jobs/", $name, ".fio")),
        }
    };
}

pub(crate) use {example, own};
