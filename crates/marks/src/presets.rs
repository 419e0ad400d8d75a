//! The built-in rule sets (`exec --marks-for NAME`): rules for programs
//! the authors patched or that we cannot patch, each citing its sources.

/// The built-in rule sets (`--marks-for`), each a rules file in
/// `crates/exec/presets/`, which users can copy and edit (they stay
/// beside the `exec` documentation that names them).
pub const PRESETS: [(&str, &str); 3] = [
    ("mariadb", include_str!("../../exec/presets/mariadb.rules")),
    (
        "postgres",
        include_str!("../../exec/presets/postgres.rules"),
    ),
    ("rocksdb", include_str!("../../exec/presets/rocksdb.rules")),
];

/// A preset's text by name.
pub fn preset(name: &str) -> Result<&'static str, String> {
    PRESETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| *t)
        .ok_or_else(|| {
            let names: Vec<&str> = PRESETS.iter().map(|(n, _)| *n).collect();
            format!("no preset '{name}' ({})", names.join(", "))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rule::{first, parse_file, Facts, Op};

    #[test]
    fn every_preset_parses_and_names_its_sources() {
        for (name, text) in PRESETS {
            let rules = parse_file(name, text).unwrap_or_else(|e| panic!("{e}"));
            assert!(!rules.is_empty(), "{name}");
            // Every rule has a comment above it citing a source (a URL).
            let mut cited = false;
            for line in text.lines().map(str::trim) {
                if line.starts_with('#') && line.contains("https://") {
                    cited = true;
                } else if !line.is_empty() && !line.starts_with('#') {
                    assert!(cited, "{name}: '{line}' cites no source above it");
                }
            }
        }
        assert!(preset("oracle")
            .unwrap_err()
            .contains("mariadb, postgres, rocksdb"));
    }

    /// The matcher's cost per request, printed (`cargo test -p
    /// cinterrupts-marks --release presets::tests::cost -- --nocapture`):
    /// the PostgreSQL preset against a backend's WAL write, which passes
    /// every rule.
    #[test]
    fn cost() {
        let rules = parse_file("postgres", preset("postgres").unwrap()).unwrap();
        let f = Facts {
            thread: Some("postgres"),
            file: Some("/var/lib/postgresql/15/main/pg_wal/000000010000000000000001"),
            title: Some("postgres: postgres pgbench [local] COMMIT"),
            ..Facts::op(Op::Write)
        };
        let n = 200_000;
        let t = std::time::Instant::now();
        let mut hits = 0;
        for _ in 0..n {
            hits += usize::from(
                first(std::hint::black_box(&rules), std::hint::black_box(&f)).is_some(),
            );
        }
        let per = t.elapsed().as_nanos() as f64 / n as f64;
        eprintln!(
            "marks::first: {per:.0} ns per request ({} rules, {hits} hits)",
            rules.len()
        );
    }
}
