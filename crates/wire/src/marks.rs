//! The marking rules as `exec` hands them to the library: the one marking
//! engine's (the `marks` crate: syntax, parsing, allocation-free matching,
//! presets), and how many of them fit in the environment that carries them.

pub use ::marks::presets::{preset, PRESETS};
pub use ::marks::rule::*;

/// The most bytes of rules `exec` hands the library: they travel in one
/// environment variable, which Linux caps at MAX_ARG_STRLEN, 32 pages =
/// 128 KiB (include/uapi/linux/binfmts.h); `execve` fails with E2BIG
/// above it. Half of it, so that a program that passes its environment on
/// with more in it is not refused either.
pub const MAX_RULES_BYTES: usize = 64 * 1024;

/// The facts the library learns of a request under `exec`: the thread's
/// name, the file's path, the process's title (`preload`'s `facts`); not
/// the process's command name (`title=` matches the program's), nor a
/// volume (a trace's).
pub const KNOWN: Needs = Needs {
    thread: true,
    file: true,
    title: true,
    comm: false,
    volume: false,
};

/// Refuses rules `exec` cannot apply: one on a fact it does not learn
/// ([`KNOWN`]), or more than fit in the environment ([`check_size`]).
pub fn check(rules: &[Rule]) -> Result<(), String> {
    Needs::check(KNOWN, "exec", rules)?;
    check_size(rules)
}

/// Refuses rules that would not fit in the environment (above).
pub fn check_size(rules: &[Rule]) -> Result<(), String> {
    let n: usize = rules.iter().map(|r| r.to_line().len() + 1).sum();
    if n > MAX_RULES_BYTES {
        return Err(format!(
            "the marking rules take {n} bytes ({} rules); at most {MAX_RULES_BYTES} reach the program (its environment's limit)",
            rules.len()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_that_would_not_fit_the_environment_are_refused() {
        let one = Rule::parse("write file=*.ibd => none").unwrap();
        assert!(check_size(&vec![one.clone(); 100]).is_ok());
        let e = check_size(&vec![one; 10_000]).unwrap_err();
        assert!(e.contains("10000 rules"), "{e}");
    }

    #[test]
    fn a_rule_on_a_fact_exec_does_not_learn_is_refused() {
        let ok = Rule::parse("write thread=w file=*.log title=*db* => none").unwrap();
        assert!(check(&[ok]).is_ok());
        let e = check(&[Rule::parse("volume=sda => none").unwrap()]).unwrap_err();
        assert!(e.contains("exec has no 'volume='"), "{e}");
        assert!(check(&[Rule::parse("comm=db => none").unwrap()]).is_err());
    }
}
