//! The bounded runner itself: it measures memory and stops a hang.
mod common;
use common::*;

#[test]
fn the_bounded_runner_sees_a_quick_clean_exit() {
    let b = hostile(&["policies"], b"", 10);
    assert!(b.output.status.success());
    assert!(b.max_rss_mib > 0.5 && b.max_rss_mib < MEMORY_BOUND_MIB);
}

#[test]
#[should_panic(expected = "still running")]
fn the_bounded_runner_stops_a_hang() {
    let mut cmd = std::process::Command::new("sleep");
    cmd.arg("30");
    bounded(cmd, b"", std::time::Duration::from_millis(300));
}
