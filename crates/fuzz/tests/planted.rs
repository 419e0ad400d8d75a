//! The harness itself, proven on a test-only target with a planted panic, a
//! planted over-allocation and a planted hang, each reachable only through a
//! dictionary token (the seed is harmless).

use fuzz::driver::{run, Config};
use fuzz::targets::Target;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn contains(input: &[u8], token: &[u8]) -> bool {
    input.windows(token.len()).any(|w| w == token)
}

fn planted_panic(input: &[u8]) -> bool {
    if contains(input, b"PANIC") {
        panic!("planted panic");
    }
    false
}

fn planted_alloc(input: &[u8]) -> bool {
    if contains(input, b"ALLOC") {
        // 100 MiB: above the 64 MiB limit, below the 256 MiB hard cap.
        // Zeroed, so the pages are never touched and the test stays fast.
        std::hint::black_box(vec![0u8; 100 << 20]);
    }
    false
}

fn planted_hang(input: &[u8]) -> bool {
    if contains(input, b"HANG") {
        loop {
            std::thread::sleep(Duration::from_secs(1));
        }
    }
    false
}

fn target(name: &'static str, token: &[u8], run: fn(&[u8]) -> bool) -> Target {
    Target {
        name,
        seeds: vec![b"hello\nworld\n".to_vec()],
        dict: vec![token.to_vec(), b"x".to_vec()],
        run,
    }
}

fn crashes_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cinterrupts-fuzz-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn config(dir: &Path, secs: f64) -> Config {
    Config {
        duration: Duration::from_secs_f64(secs),
        crashes: Some(dir.to_path_buf()),
        ..Config::default()
    }
}

#[test]
fn a_planted_panic_is_found_saved_and_minimised() {
    let dir = crashes_dir("panic");
    let report = run(
        target("planted-panic", b"PANIC", planted_panic),
        &config(&dir, 1.0),
    );
    assert!(report.panics > 0, "{}", report.summary());
    assert_eq!((report.hangs, report.memory), (0, 0));
    assert!(
        report.messages[0].contains("planted panic"),
        "{:?}",
        report.messages
    );
    assert!(
        report.messages[0].contains("planted.rs"),
        "{:?}",
        report.messages
    );
    // The minimiser cuts the input down to the token itself.
    let inputs: Vec<Vec<u8>> = report
        .saved
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    assert!(inputs.iter().any(|i| i == b"PANIC"), "{inputs:?}");
    assert!(report.saved[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("planted-panic-panic-"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_planted_over_allocation_is_found() {
    let dir = crashes_dir("alloc");
    let report = run(
        target("planted-alloc", b"ALLOC", planted_alloc),
        &config(&dir, 1.0),
    );
    assert!(report.memory > 0, "{}", report.summary());
    assert_eq!((report.panics, report.hangs), (0, 0));
    assert!(
        report.messages[0].contains("(100 MiB)"),
        "{:?}",
        report.messages
    );
    assert!(!report.saved.is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_planted_hang_is_found_and_stops_the_run() {
    let dir = crashes_dir("hang");
    let cfg = Config {
        hang_after: Duration::from_millis(500),
        ..config(&dir, 30.0)
    };
    let report = run(target("planted-hang", b"HANG", planted_hang), &cfg);
    assert_eq!(report.hangs, 1, "{}", report.summary());
    // Stopped at the hang, not at the end of the 30 s budget.
    assert!(
        report.elapsed < Duration::from_secs(10),
        "{:?}",
        report.elapsed
    );
    let input = std::fs::read(&report.saved[0]).unwrap();
    assert!(contains(&input, b"HANG"));
    std::fs::remove_dir_all(&dir).unwrap();
}
