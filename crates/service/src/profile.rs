//! A device profile: the numbers a device is modelled with, each cited in
//! its file (`profiles/devices/*.toml`), read once here for every front end
//! (the simulator, the emulator's `--device`, `exec --device`, `calibrate`).

use serde::Deserialize;

use crate::draw::{duration, ServiceTime};
use crate::limits::{
    MAX_BW, MAX_DEFAULT_DELTA, MAX_IOPS, MAX_QUEUES, MAX_QUEUE_DEPTH, MAX_SERVICE, MIN_BW,
};
use crate::toml_file::{bad_value, dotted, human, resolve, ProfileError};

/// An NVMe SSD: its queues, its units and ceilings, its service times, and
/// the coalescing parameters tuned for it.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceProfile {
    /// Short name (`optane`).
    pub name: String,
    /// The product this models.
    pub description: String,
    /// I/O submission/completion queue pairs available (one per core).
    pub queues: u32,
    /// Entries per queue.
    pub queue_depth: u32,
    /// Commands the device serves at once (internal channels / dies).
    pub parallelism: u32,
    /// Random 4 KiB read IOPS ceiling of the whole device.
    pub max_read_iops: u64,
    /// Random 4 KiB write IOPS ceiling of the whole device.
    pub max_write_iops: u64,
    /// Read bandwidth ceiling of the whole device, bytes a second (absent:
    /// none; the IOPS ceiling and the units alone bound throughput). A
    /// token bucket in bytes beside the IOPS one ([`crate::Gate`]).
    #[serde(default)]
    pub max_read_bw: Option<u64>,
    /// Write bandwidth ceiling, bytes a second (absent: none).
    #[serde(default)]
    pub max_write_bw: Option<u64>,
    /// Read service time.
    pub read: ServiceTime,
    /// Write service time.
    pub write: ServiceTime,
    /// The coalescing timeout delta tuned for this device, ns (TOS 5.2).
    #[serde(deserialize_with = "duration")]
    pub default_delta: u64,
    /// The coalescing threshold thr tuned for this device (TOS 5.2).
    pub default_thr: u32,
}

/// Shipped device profiles: (name, repository path, text).
const DEVICES: &[(&str, &str, &str)] = &[
    (
        "optane",
        "profiles/devices/optane.toml",
        include_str!("../../../profiles/devices/optane.toml"),
    ),
    (
        "p3700",
        "profiles/devices/p3700.toml",
        include_str!("../../../profiles/devices/p3700.toml"),
    ),
    (
        "optane-900p",
        "profiles/devices/optane-900p.toml",
        include_str!("../../../profiles/devices/optane-900p.toml"),
    ),
    (
        "kioxia-fl6",
        "profiles/devices/kioxia-fl6.toml",
        include_str!("../../../profiles/devices/kioxia-fl6.toml"),
    ),
];

impl DeviceProfile {
    /// A shipped profile by name (`optane`, `p3700`, `optane-900p`,
    /// `kioxia-fl6`), or a
    /// TOML file by path (anything containing `/` or ending in `.toml`).
    pub fn load(name_or_path: &str) -> Result<DeviceProfile, ProfileError> {
        let (text, origin) = resolve("device", DEVICES, name_or_path)?;
        Self::parse(&text, &origin)
    }

    /// Names of the shipped device profiles.
    pub fn shipped() -> Vec<&'static str> {
        DEVICES.iter().map(|(name, _, _)| *name).collect()
    }

    /// A device whose timing is hand-computable: every read and write takes
    /// exactly `service` (a time as the profiles write it: `5500ns`, `10us`)
    /// on one of `parallelism` units, under an IOPS ceiling of `max_iops`
    /// each way. Kept busy with one unit, it posts a completion every
    /// `service` exactly, so the completion gaps, TOS 5.2's delta and the
    /// throughput are known in advance: the fixture the tests of the gaps,
    /// of `tune` and of the CLI share. The TOML text, for a file a command
    /// line can name.
    pub fn constant_service_toml(service: &str, parallelism: u32, max_iops: u64) -> String {
        let op = format!(
            "distribution = \"normal\"\nmean = \"{service}\"\nstddev = \"0ns\"\nper_kib = \"0ns\"\n"
        );
        format!(
            "name = \"const\"\ndescription = \"constant service time\"\nqueues = 32\n\
             queue_depth = 4096\nparallelism = {parallelism}\nmax_read_iops = {max_iops}\n\
             max_write_iops = {max_iops}\ndefault_delta = \"6us\"\ndefault_thr = 32\n\
             [read]\n{op}[write]\n{op}"
        )
    }

    /// [`DeviceProfile::constant_service_toml`], parsed.
    pub fn constant_service(
        service: &str,
        parallelism: u32,
        max_iops: u64,
    ) -> Result<DeviceProfile, ProfileError> {
        Self::parse(
            &Self::constant_service_toml(service, parallelism, max_iops),
            "const.toml",
        )
    }

    /// Parses profile text; `origin` names it in messages.
    pub fn parse(text: &str, origin: &str) -> Result<DeviceProfile, ProfileError> {
        let p: DeviceProfile = crate::toml_file::parse(text, origin)?;
        p.validate(text, origin)?;
        Ok(p)
    }

    fn validate(&self, text: &str, origin: &str) -> Result<(), ProfileError> {
        let bad = |table: Option<&str>, key: &str, reason: &str| {
            Err(bad_value(text, origin, &dotted(table, key), reason))
        };
        if self.name.trim().is_empty() {
            return bad(None, "name", "must not be empty");
        }
        if !(1..=MAX_QUEUES).contains(&self.queues) {
            return bad(
                None,
                "queues",
                &format!("must be 1 to {MAX_QUEUES} (NVMe Number of Queues)"),
            );
        }
        if !(2..=MAX_QUEUE_DEPTH).contains(&self.queue_depth) {
            return bad(
                None,
                "queue_depth",
                &format!("must be 2 to {MAX_QUEUE_DEPTH} (NVMe CAP.MQES)"),
            );
        }
        if self.parallelism < 1 {
            return bad(None, "parallelism", "must be at least 1");
        }
        for (key, iops) in [
            ("max_read_iops", self.max_read_iops),
            ("max_write_iops", self.max_write_iops),
        ] {
            if !(1..=MAX_IOPS).contains(&iops) {
                return bad(
                    None,
                    key,
                    &format!("must be 1 to {MAX_IOPS} (10M, three times the fastest NVMe drives)"),
                );
            }
        }
        for (key, bw) in [
            ("max_read_bw", self.max_read_bw),
            ("max_write_bw", self.max_write_bw),
        ] {
            if bw.is_some_and(|bw| !(MIN_BW..=MAX_BW).contains(&bw)) {
                return bad(
                    None,
                    key,
                    &format!("must be {MIN_BW} to {MAX_BW} bytes a second (1 MB/s to 1 TB/s)"),
                );
            }
        }
        let service = format!(
            "must be at most {} (Linux's NVMe I/O timeout)",
            human(MAX_SERVICE)
        );
        for (table, st) in [("read", &self.read), ("write", &self.write)] {
            if st.mean == 0 {
                return bad(Some(table), "mean", "must be greater than 0");
            }
            for (key, t) in [
                ("mean", st.mean),
                ("stddev", st.stddev),
                ("per_kib", st.per_kib),
            ] {
                if t > MAX_SERVICE {
                    return bad(Some(table), key, &service);
                }
            }
            if st.floor >= st.mean {
                return bad(Some(table), "floor", "must be below mean");
            }
        }
        if self.default_delta == 0 || self.default_delta > MAX_DEFAULT_DELTA {
            return bad(
                None,
                "default_delta",
                &format!(
                    "must be more than 0 and at most {}",
                    human(MAX_DEFAULT_DELTA)
                ),
            );
        }
        if self.default_thr < 1 {
            return bad(None, "default_thr", "must be at least 1");
        }
        Ok(())
    }
}
