//! `cinterrupts calibrate --device-from TRACE` (issue 27 item 6): a device
//! profile fitted from a block trace, its error at p50..p99.99 on a
//! held-out part printed, and the profile one `sim --device` runs.

mod common;

use common::{bin, stderr, stdout};

/// A blkparse trace of `n` QD1 4 KiB reads whose issue-to-completion
/// times cycle through 18, 20 and 22 us.
fn blkparse(n: usize) -> String {
    let mut s = String::new();
    let mut t: u64 = 0;
    for i in 0..n {
        let lat = [18_000, 20_000, 22_000][i % 3];
        let (a, b) = (t, t + lat);
        for (seq, at, act, tail) in [(2 * i + 1, a, "D", "[fio]"), (2 * i + 2, b, "C", "[0]")] {
            s += &format!(
                "  8,0    0 {seq:>8} {:>5}.{:09}  4242 {act:>2}   R {} + 8 {tail}\n",
                at / 1_000_000_000,
                at % 1_000_000_000,
                1000 + 8 * i
            );
        }
        t = b + 5_000;
    }
    s
}

#[test]
fn a_profile_fitted_from_a_trace_is_one_the_simulator_runs() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("qd1.blkparse");
    std::fs::write(&trace, blkparse(600)).unwrap();
    let profile = dir.path().join("fitted.toml");
    let o = bin()
        .args(["calibrate", "--device-from"])
        .arg(&trace)
        .arg("-o")
        .arg(&profile)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("600 requests fitted"), "{out}");
    // The five percentiles of the held-out part, each with its error.
    for q in ["p50 ", "p90 ", "p99 ", "p99.9 ", "p99.99 "] {
        assert!(
            out.lines()
                .any(|l| l.trim_start().starts_with(q) && l.contains("error")),
            "{q}: {out}"
        );
    }
    let text = std::fs::read_to_string(&profile).unwrap();
    // The median service time is the trace's, 20 us, and the parallelism 1.
    assert!(text.contains("parallelism = 1\n"), "{text}");
    let mean_line = text.lines().find(|l| l.starts_with("mean = ")).unwrap();
    let ns: f64 = mean_line
        .trim_start_matches("mean = \"")
        .trim_end_matches("ns\"")
        .parse()
        .unwrap();
    assert!((ns - 20_000.0).abs() < 1_500.0, "{mean_line}");
    // sim runs it.
    let job = dir.path().join("j.fio");
    std::fs::write(
        &job,
        "[r]\nrw=randread\nbs=4k\ndirect=1\nsize=1m\nruntime=10ms\n",
    )
    .unwrap();
    let s = bin()
        .args(["sim"])
        .arg(&job)
        .arg("--device")
        .arg(&profile)
        .output()
        .unwrap();
    assert!(s.status.success(), "{}", stderr(&s));
}

#[test]
fn a_trace_without_completions_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.blkparse");
    std::fs::write(&trace, blkparse(5)).unwrap();
    let o = bin()
        .args(["calibrate", "--device-from"])
        .arg(&trace)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("at least 10"), "{err}");
}
