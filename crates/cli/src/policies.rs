//! `cinterrupts policies`: every strategy, its parameters and defaults.

use std::fmt::Write as _;

use policy::catalogue::STRATEGIES;

pub fn listing() -> String {
    let mut s = String::new();
    for st in STRATEGIES {
        let _ = writeln!(s, "{:<9} {}", st.name, st.summary);
        for p in st.params {
            let _ = writeln!(
                s,
                "          --{:<14} {:<8} {}",
                p.option, p.default, p.help
            );
        }
    }
    s.push_str(
        "\nEvery strategy delivers a completion in error at once (never coalesced).\n\
         Defaults are the paper's for the Intel Optane P4800X; use --delta 15us for the Intel P3700 (TOS 5.2).\n",
    );
    s
}
