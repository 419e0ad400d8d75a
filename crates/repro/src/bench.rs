//! `cinterrupts bench exec`: the benches that set `exec` beside something
//! else on this machine, each running the `cinterrupts` binary it is given
//! (the program under `exec` must be a child of that binary).
//!
//! - [`crossval`]: one fio job under `run` (our fio loop) and under `exec`
//!   with the real fio (issue 14 item 7);
//! - [`cost`]: what routing through `exec` costs against fio natively
//!   (issue 38 item 2).
//!
//! Each returns its figures, which print as text or as JSON.

pub mod cost;
pub mod crossval;

use std::process::Command;

use serde_json::Value;

/// A bench that could not run or read its sides: one line, "what: why".
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BenchError(pub String);

/// `what: why`, as every error of these benches reads.
fn fail(what: impl std::fmt::Display, why: impl std::fmt::Display) -> BenchError {
    BenchError(format!("{what}: {why}"))
}

/// The standard output of `cmd`, which must succeed; `what` names it in
/// the error, with its standard error.
fn output(cmd: &mut Command, what: &str) -> Result<Vec<u8>, BenchError> {
    let o = cmd
        .output()
        .map_err(|e| fail(format_args!("cannot start {what}"), e))?;
    if !o.status.success() {
        return Err(BenchError(format!(
            "{what} failed ({}): {}",
            o.status,
            String::from_utf8_lossy(&o.stderr).trim_end()
        )));
    }
    Ok(o.stdout)
}

/// JSON from `bytes`, or "`what`: not JSON: why".
fn json_of(bytes: &[u8], what: &str) -> Result<Value, BenchError> {
    serde_json::from_slice(bytes).map_err(|e| fail(format_args!("{what}: not JSON"), e))
}

/// Total IOPS, and the mean clat and lat (weighted by requests) of every
/// job's reads and writes in fio's JSON. `lat` is clat where the JSON has
/// none (our fio loop's).
fn fio_jobs(v: &Value) -> Result<(f64, f64, f64), BenchError> {
    let jobs = v["jobs"]
        .as_array()
        .ok_or_else(|| BenchError("no jobs in the JSON".into()))?;
    let (mut iops, mut n, mut clat, mut lat) = (0.0, 0.0, 0.0, 0.0);
    for j in jobs {
        for dir in ["read", "write"] {
            let d = &j[dir];
            iops += d["iops"].as_f64().unwrap_or(0.0);
            let k = d["clat_ns"]["N"].as_f64().unwrap_or(0.0);
            let c = d["clat_ns"]["mean"].as_f64().unwrap_or(0.0);
            n += k;
            clat += k * c;
            lat += k * d["lat_ns"]["mean"].as_f64().unwrap_or(c);
        }
    }
    if n == 0.0 {
        return Err(BenchError("no I/O completed".into()));
    }
    Ok((iops, clat / n, lat / n))
}

/// JSON as the benches print it: pretty, one newline after.
fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).expect("a JSON value always serializes") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_jobs_weighs_each_direction_by_its_requests() {
        let v = serde_json::json!({"jobs": [
            {"read": {"iops": 100.0, "clat_ns": {"N": 3.0, "mean": 10.0}, "lat_ns": {"mean": 12.0}},
             "write": {"iops": 50.0, "clat_ns": {"N": 1.0, "mean": 30.0}}},
        ]});
        let (iops, clat, lat) = fio_jobs(&v).unwrap();
        assert_eq!(iops, 150.0);
        assert_eq!(clat, (3.0 * 10.0 + 30.0) / 4.0);
        // The write has no lat: its clat stands in.
        assert_eq!(lat, (3.0 * 12.0 + 30.0) / 4.0);
        let none = serde_json::json!({"jobs": [{"read": {"iops": 0.0}}]});
        assert_eq!(fio_jobs(&none).unwrap_err().to_string(), "no I/O completed");
        assert_eq!(
            fio_jobs(&serde_json::json!({})).unwrap_err().to_string(),
            "no jobs in the JSON"
        );
    }

    #[test]
    fn a_failing_command_names_itself_and_its_stderr() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo oops >&2; exit 3"]);
        let e = output(&mut cmd, "the shell").unwrap_err().to_string();
        assert!(e.starts_with("the shell failed ("), "{e}");
        assert!(e.ends_with("): oops"), "{e}");
    }
}
