//! Each real target for about a second: the shipped parsers survive the
//! mutator's first few thousand inputs (the long runs are in the README).

use fuzz::driver::{run, Config};
use fuzz::targets::{by_name, repo_root, NAMES};
use std::time::Duration;

#[test]
fn every_real_target_survives_a_second_of_fuzzing() {
    for name in NAMES {
        let target = by_name(name, &repo_root()).unwrap();
        assert!(
            target.seeds.len() > 1 || name.starts_with("profile"),
            "{name}: seeds not found"
        );
        let cfg = Config {
            duration: Duration::from_secs(1),
            seed: 1,
            ..Config::default()
        };
        let report = run(target, &cfg);
        assert!(report.execs > 0, "{}", report.summary());
        assert_eq!(
            report.findings(),
            0,
            "{}: {:?}",
            report.summary(),
            report.messages
        );
    }
}
