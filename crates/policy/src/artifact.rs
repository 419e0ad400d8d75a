//! The authors' system names, as their artifact's scripts name each run
//! (`amytai/cinterrupts-osdi`, `fig*/test*.sh`, `run_load "NAME"`), read into
//! a [`PolicySpec`] that runs what their module parameters ran:
//!
//! | name | module and parameters | here |
//! |---|---|---|
//! | `alpha-0-0` | nvme.ko `empathetic=0 irq_poller_max_thr=0 irq_poller_delay=0` | `default` |
//! | `alpha-D-T` | nvme.ko `empathetic=0 irq_poller_delay=D irq_poller_max_thr=T` | `adaptive`, delta D us, thr T |
//! | `cint-D-T` | nvme.ko `empathetic=1 ... urgent_ooo=0` | `cint`, delta D us, thr T, ooo off |
//! | `cint-D-T-ooo`, `cint-ooo-D-T` | the same with `urgent_ooo=1` | ooo on |
//! | `baseline-US-THR` | nvme-emul.ko `irq_poller_time=US/100 irq_poller_thr=THR` | `nvme`, `--nvme-thr code` |
//! | `nvme-emul-TIME-THR` | nvme-emul.ko `irq_poller_time=TIME irq_poller_thr=THR` (100 us units) | the same |
//!
//! D is in microseconds (`irq_poller_delay`, "in usec"); `alpha-D-0` fires at
//! every entry whatever D (pci.c: `if (irqdata.thr >= irqdata.max_thr)` with
//! max_thr 0), so it is `default` too. The two OOO spellings are the
//! artifact's own (`cint-"$delay"-32-ooo` in fig10/test_nortlm.sh,
//! `cint-ooo-$delay-%d` in fig14/test.sh). `cint` runs follow the authors'
//! code for OOO's thr counting (`--ooo-count code`). `baseline-` is the
//! artifact's run name for nvme-emul (`baseline-100-32` loads
//! `irq_poller_thr=32 irq_poller_time=1`); `nvme-emul-` takes the module's
//! own unit.

use crate::cint::OooCount;
use crate::nvme::{ThrBase, TIME_UNIT};
use crate::{Nanos, PolicySpec, SpecError, US};

impl PolicySpec {
    /// Whether `name` is spelled like one of the artifact's system names
    /// (it may still be malformed: see [`PolicySpec::from_artifact_name`]).
    pub fn is_artifact_name(name: &str) -> bool {
        ["alpha-", "cint-", "baseline-", "nvme-emul-"]
            .iter()
            .any(|p| name.starts_with(p))
    }

    /// Reads one of the artifact's system names (module docs).
    pub fn from_artifact_name(name: &str) -> Result<PolicySpec, SpecError> {
        let bad = |message: String| SpecError::ArtifactName {
            name: name.to_string(),
            message,
        };
        let numbers = |rest: &str, what: &str| -> Result<(u64, u32), SpecError> {
            let mut parts = rest.split('-');
            let (Some(a), Some(b), None) = (parts.next(), parts.next(), parts.next()) else {
                return Err(bad(format!("expected {what}")));
            };
            let a = a
                .parse::<u64>()
                .map_err(|_| bad(format!("'{a}' is not a whole number ({what})")))?;
            let b = b
                .parse::<u32>()
                .map_err(|_| bad(format!("'{b}' is not a whole number ({what})")))?;
            Ok((a, b))
        };
        let usecs = |d: u64| {
            d.checked_mul(US)
                .ok_or_else(|| bad(format!("{d} us is too long")))
        };
        if let Some(rest) = name.strip_prefix("alpha-") {
            let (d, t) = numbers(rest, "alpha-DELTA_US-THR")?;
            if t == 0 {
                return Ok(PolicySpec::named("default"));
            }
            return Ok(PolicySpec {
                delta: Some(usecs(d)?),
                thr: Some(t),
                ..PolicySpec::named("adaptive")
            });
        }
        if let Some(rest) = name.strip_prefix("cint-") {
            let what = "cint-DELTA_US-THR, cint-DELTA_US-THR-ooo or cint-ooo-DELTA_US-THR";
            let (rest, ooo) = match (rest.strip_prefix("ooo-"), rest.strip_suffix("-ooo")) {
                (Some(r), None) | (None, Some(r)) => (r, true),
                (None, None) => (rest, false),
                (Some(_), Some(_)) => return Err(bad(format!("expected {what}"))),
            };
            let (d, t) = numbers(rest, what)?;
            if t == 0 {
                return Err(bad(
                    "thr 0 fires at every completion (the artifact's alpha-0-0); cint needs at least 1"
                        .into(),
                ));
            }
            return Ok(PolicySpec {
                delta: Some(usecs(d)?),
                thr: Some(t),
                ooo: Some(ooo),
                ooo_count: Some(OooCount::Code),
                ..PolicySpec::named("cint")
            });
        }
        let (time, thr) = if let Some(rest) = name.strip_prefix("baseline-") {
            let (us, thr) = numbers(rest, "baseline-TIME_US-THR")?;
            if us % 100 != 0 {
                return Err(bad(format!(
                    "{us} us is not a multiple of irq_poller_time's 100 us"
                )));
            }
            (usecs(us)?, thr)
        } else if let Some(rest) = name.strip_prefix("nvme-emul-") {
            let (units, thr) = numbers(rest, "nvme-emul-TIME-THR, TIME in 100 us units")?;
            let time: Nanos = units
                .checked_mul(TIME_UNIT)
                .ok_or_else(|| bad(format!("{units} units is too long")))?;
            (time, thr)
        } else {
            return Err(bad(
                "not an artifact name (alpha-D-T, cint-D-T[-ooo], baseline-US-THR, nvme-emul-TIME-THR)"
                    .into(),
            ));
        };
        let spec = PolicySpec {
            aggr_time: Some(time),
            thr: Some(thr),
            nvme_thr: Some(ThrBase::Code),
            ..PolicySpec::named("nvme")
        };
        // Checks the ranges (0..=255 units and thr, a timer unless 0-0) now,
        // so a bad name is refused as a name.
        crate::build(&spec).map_err(|e| bad(e.to_string()))?;
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cint::OooCount;

    fn read(name: &str) -> PolicySpec {
        PolicySpec::from_artifact_name(name).unwrap()
    }

    #[test]
    fn the_artifacts_systems() {
        assert_eq!(read("alpha-0-0"), PolicySpec::named("default"));
        assert_eq!(read("alpha-6-0"), PolicySpec::named("default"));
        let a = read("alpha-1000000-128");
        assert_eq!(
            (a.name.as_str(), a.delta, a.thr),
            ("adaptive", Some(1_000_000 * US), Some(128))
        );
        let c = read("cint-1000000-65535");
        assert_eq!(c.name, "cint");
        assert_eq!(
            (c.delta, c.thr, c.ooo),
            (Some(1_000_000 * US), Some(65_535), Some(false))
        );
        assert_eq!(c.ooo_count, Some(OooCount::Code));
        assert_eq!(read("cint-6-32-ooo").ooo, Some(true));
        assert_eq!(read("cint-ooo-6-32"), read("cint-6-32-ooo"));
        let n = read("baseline-100-32");
        assert_eq!(
            (n.name.as_str(), n.aggr_time, n.thr),
            ("nvme", Some(100 * US), Some(32))
        );
        assert_eq!(n.nvme_thr, Some(ThrBase::Code));
        assert_eq!(read("nvme-emul-1-32"), n);
        assert_eq!(read("nvme-emul-0-0").aggr_time, Some(0));
        for name in ["alpha-0-0", "cint-6-32-ooo", "baseline-0-0", "alpha-6-32"] {
            assert!(crate::build(&read(name)).is_ok(), "{name}");
        }
    }

    #[test]
    fn malformed_names_are_refused_in_one_line() {
        for name in [
            "cint-6",
            "cint-6-32-7",
            "cint-ooo-6-32-ooo",
            "cint-x-32",
            "cint-6-0",
            "alpha-6",
            "baseline-150-32",
            "baseline-0-32",
            "nvme-emul-256-32",
            "nvme-emul-1-256",
            "fast",
        ] {
            let err = PolicySpec::from_artifact_name(name)
                .unwrap_err()
                .to_string();
            assert!(err.starts_with(&format!("policy '{name}': ")), "{err}");
            assert!(!err.contains('\n'), "{err}");
        }
    }
}
