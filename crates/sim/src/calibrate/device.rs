//! A device profile fitted from a block trace (issue 27 item 6; `cinterrupts
//! calibrate --device-from TRACE`): the trace's requests with an issue and
//! a completion time, filtered to one command's if asked, fitted by
//! `service::fit` (service time by direction and size, parallelism, IOPS,
//! delta), the fit's error on a held-out part, and the profile as a file
//! `sim --device` takes, checked by the simulator's own reader.

use std::path::Path;

use policy::time::readable;
use service::fit::{Fit, Sample};
use service::DeviceProfile;

/// The fewest requests a fit is made from.
const MIN_SAMPLES: usize = 10;

/// Why no profile could be fitted: one line.
#[derive(Debug, thiserror::Error)]
pub enum DeviceFitError {
    #[error(transparent)]
    Trace(#[from] traces::TraceError),
    #[error("{trace}: {found} requests with an issue and a completion time; a fit needs at least {MIN_SAMPLES}")]
    TooFew { trace: String, found: usize },
    #[error("no direction to fit")]
    NoDirection,
    #[error("{0}")]
    Profile(String),
}

/// The requests a fit is made from, and how many of the trace's were
/// skipped.
#[derive(Debug, Default)]
pub struct Samples {
    pub samples: Vec<Sample>,
    /// Another command's (with `comm`), without a completion time, flushes,
    /// discards, requests of no bytes.
    pub skipped: u64,
}

/// The trace's requests that carry a service time: with a completion
/// time, neither a flush nor a discard, of some bytes; with `comm`, only
/// that command's (a capture of one program on a shared disk holds
/// others' I/O too).
pub fn samples(
    trace: &Path,
    format: Option<traces::Format>,
    comm: Option<&str>,
    order: traces::Order,
) -> Result<Samples, DeviceFitError> {
    let mut out = Samples::default();
    for r in traces::open_in_order(trace, format, order)? {
        let r = r?;
        if comm.is_some_and(|c| r.comm.as_deref() != Some(c)) {
            out.skipped += 1;
            continue;
        }
        match r.complete_ns {
            Some(done) if !r.flush && !r.discard && r.bytes > 0 => out.samples.push(Sample {
                write: r.write,
                bytes: u64::from(r.bytes),
                issue: r.issue_ns,
                complete: done,
            }),
            _ => out.skipped += 1,
        }
    }
    Ok(out)
}

/// A trace's fit and the profile written from it.
#[derive(Debug)]
pub struct DeviceFit {
    /// The trace, as given.
    pub trace: String,
    pub fitted: usize,
    pub skipped: u64,
    pub fit: Fit,
    /// The profile, a device file the simulator reads (checked).
    pub profile: String,
}

/// `--hold-out`: the fraction of the trace (its end) held out to measure
/// the fit, from 0 to 0.9 (at least a tenth is fitted).
pub fn parse_hold_out(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("'{s}' is not a fraction"))?;
    if (0.0..=0.9).contains(&v) {
        Ok(v)
    } else {
        Err(format!("'{s}': between 0 and 0.9"))
    }
}

/// Fits the trace's requests (`samples`), holding out its last
/// `hold_out` share; the profile is named after the trace's file stem.
pub fn fit_trace(
    trace: &Path,
    format: Option<traces::Format>,
    comm: Option<&str>,
    hold_out: f64,
    order: traces::Order,
) -> Result<DeviceFit, DeviceFitError> {
    let s = samples(trace, format, comm, order)?;
    let shown = trace.display().to_string();
    if s.samples.len() < MIN_SAMPLES {
        return Err(DeviceFitError::TooFew {
            trace: shown,
            found: s.samples.len(),
        });
    }
    let fit = service::fit::fit(&s.samples, hold_out, 1);
    let name = trace
        .file_stem()
        .map_or("fitted".to_string(), |s| s.to_string_lossy().into_owned());
    let profile = fit
        .profile(&name, &shown)
        .ok_or(DeviceFitError::NoDirection)?;
    // The profile is one the simulator reads: checked before it is kept.
    DeviceProfile::parse(&profile, "the fitted profile")
        .map_err(|e| DeviceFitError::Profile(e.to_string()))?;
    Ok(DeviceFit {
        trace: shown,
        fitted: s.samples.len(),
        skipped: s.skipped,
        fit,
        profile,
    })
}

impl DeviceFit {
    /// The fit as `calibrate --device-from` prints it: the requests used,
    /// parallelism, IOPS and delta, each direction's service time and its
    /// error at each quantile of the held-out part.
    pub fn text(&self) -> String {
        let f = &self.fit;
        let mut s = format!(
            "{}: {} requests fitted and held out ({} skipped: another command's, without a completion time, flushes, discards)\n",
            self.trace, self.fitted, self.skipped
        );
        s += &format!(
            "parallelism {} (most in flight); busiest 100 ms: {} read, {} write IOPS; delta {} (TOS 5.2: p90 completion gap)\n",
            f.parallelism,
            f.max_read_iops,
            f.max_write_iops,
            readable(f.delta)
        );
        for (name, d) in [("read", &f.read), ("write", &f.write)] {
            let Some(d) = d else { continue };
            let t = &d.time;
            s += &format!(
                "{name}: {:?} mean {} sd {} floor {} per KiB {} ({} fitted, {} held out)\n",
                t.distribution,
                readable(t.mean),
                readable(t.stddev),
                readable(t.floor),
                readable(t.per_kib),
                d.fitted,
                d.held_out
            );
            for (q, seen, model, err) in &d.errors {
                s += &format!(
                    "  p{:<7} held out {:>10}  fitted model {:>10}  error {:+.1}%\n",
                    q * 100.0,
                    readable(*seen),
                    readable(*model),
                    err * 100.0
                );
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A blkparse trace of `n` QD1 4 KiB reads, queued by `fio` and `cron`
    /// in turn, of 18, 20 or 22 us each (as crates/cli/tests/calibrate_device.rs).
    fn trace(name: &str, n: usize) -> std::path::PathBuf {
        let mut s = String::new();
        let mut t: u64 = 0;
        for i in 0..n {
            let lat = [18_000, 20_000, 22_000][i % 3];
            let comm = ["[fio]", "[cron]"][i % 2];
            // The command is the `Q`'s (traces::blkparse).
            let events = [
                (3 * i + 1, t, "Q", comm),
                (3 * i + 2, t, "D", comm),
                (3 * i + 3, t + lat, "C", "[0]"),
            ];
            for (seq, at, act, tail) in events {
                s += &format!(
                    "  8,0    0 {seq:>8} {:>5}.{:09}  4242 {act:>2}   R {} + 8 {tail}\n",
                    at / 1_000_000_000,
                    at % 1_000_000_000,
                    1000 + 8 * i
                );
            }
            t += lat + 5_000;
        }
        let p = std::env::temp_dir().join(format!(
            "sim-calibrate-{}-{name}.blkparse",
            std::process::id()
        ));
        std::fs::write(&p, s).unwrap();
        p
    }

    #[test]
    fn comm_keeps_one_commands_requests_and_too_few_is_refused() {
        let p = trace("thirty", 30);
        let all = samples(&p, None, None, traces::Order::Check).unwrap();
        let fio = samples(&p, None, Some("fio"), traces::Order::Check).unwrap();
        let fitted = fit_trace(&p, None, Some("fio"), 0.3, traces::Order::Check);
        let few = trace("eight", 8);
        let refused = fit_trace(&few, None, None, 0.3, traces::Order::Check);
        let _ = (std::fs::remove_file(&p), std::fs::remove_file(&few));
        assert_eq!((all.samples.len(), all.skipped), (30, 0));
        assert_eq!((fio.samples.len(), fio.skipped), (15, 15));
        let e = refused.unwrap_err().to_string();
        assert!(
            e.ends_with(
                ": 8 requests with an issue and a completion time; a fit needs at least 10"
            ),
            "{e}"
        );
        let f = fitted.unwrap();
        assert_eq!((f.fitted, f.skipped), (15, 15));
        let text = f.text();
        assert!(
            text.starts_with(&format!("{}: 15 requests fitted", p.display())),
            "{text}"
        );
        assert!(text.contains("\nread: "), "{text}");
        assert!(
            !text.contains("\nwrite: "),
            "no writes in the trace: {text}"
        );
    }
}
