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

/// One key a device profile accepts, for listings (`cinterrupts features`,
/// issue 42 item 3). A table's key is dotted (`read.mean`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    pub name: &'static str,
    /// Whether a profile without it is refused (serde: no default).
    pub required: bool,
    /// What it sets, as the field's doc says.
    pub what: &'static str,
}

const fn key(name: &'static str, required: bool, what: &'static str) -> Key {
    Key {
        name,
        required,
        what,
    }
}

/// Every key of [`DeviceProfile`] and of its `[read]` and `[write]` tables
/// ([`ServiceTime`]), in the struct's order. The tests hold it to the
/// structs' fields as serde derives them and to which keys may be left
/// out, so a field added without a row fails.
pub const KEYS: &[Key] = &[
    key("name", true, "short name (`optane`)"),
    key("description", true, "the product this models"),
    key("queues", true, "I/O queue pairs (one per core)"),
    key("queue_depth", true, "entries per queue"),
    key("parallelism", true, "commands the device serves at once"),
    key("max_read_iops", true, "random 4 KiB read IOPS ceiling"),
    key("max_write_iops", true, "random 4 KiB write IOPS ceiling"),
    key(
        "max_read_bw",
        false,
        "read bandwidth ceiling, bytes a second (absent: none)",
    ),
    key(
        "max_write_bw",
        false,
        "write bandwidth ceiling, bytes a second (absent: none)",
    ),
    key("read.distribution", true, "`normal` or `lognormal` (read)"),
    key("read.mean", true, "mean 4 KiB read service time"),
    key("read.stddev", true, "its standard deviation"),
    key(
        "read.floor",
        false,
        "shortest read service time (default 0)",
    ),
    key(
        "read.per_kib",
        true,
        "read transfer time per KiB beyond 4 KiB",
    ),
    key(
        "write.distribution",
        true,
        "`normal` or `lognormal` (write)",
    ),
    key("write.mean", true, "mean 4 KiB write service time"),
    key("write.stddev", true, "its standard deviation"),
    key(
        "write.floor",
        false,
        "shortest write service time (default 0)",
    ),
    key(
        "write.per_kib",
        true,
        "write transfer time per KiB beyond 4 KiB",
    ),
    key(
        "default_delta",
        true,
        "adaptive coalescing's delta tuned for it (TOS 5.2)",
    ),
    key(
        "default_thr",
        true,
        "adaptive coalescing's thr tuned for it (TOS 5.2)",
    ),
];

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

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::{self, Deserialize, Deserializer, Visitor};

    /// The field names serde's derive hands `deserialize_struct`: what a
    /// struct accepts, read from the code (then it stops with an error).
    struct Fields(std::cell::RefCell<Vec<&'static str>>);

    #[derive(Debug)]
    struct Stop;
    impl std::fmt::Display for Stop {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("stop")
        }
    }
    impl std::error::Error for Stop {}
    impl de::Error for Stop {
        fn custom<T: std::fmt::Display>(_: T) -> Self {
            Stop
        }
    }

    impl<'de> Deserializer<'de> for &Fields {
        type Error = Stop;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
            Err(Stop)
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Stop> {
            self.0.borrow_mut().extend_from_slice(fields);
            Err(Stop)
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
            bytes byte_buf option unit unit_struct newtype_struct seq tuple
            tuple_struct map enum identifier ignored_any
        }
    }

    fn fields_of<T: for<'de> Deserialize<'de>>() -> Vec<&'static str> {
        let f = Fields(Default::default());
        assert!(T::deserialize(&f).is_err());
        f.0.into_inner()
    }

    #[test]
    fn keys_are_every_field_of_the_profile_and_its_tables() {
        let mut want = Vec::new();
        let service = fields_of::<ServiceTime>();
        for field in fields_of::<DeviceProfile>() {
            match field {
                "read" | "write" => want.extend(service.iter().map(|k| format!("{field}.{k}"))),
                _ => want.push(field.to_string()),
            }
        }
        let mut have: Vec<String> = KEYS.iter().map(|k| k.name.to_string()).collect();
        want.sort();
        have.sort();
        assert_eq!(
            have, want,
            "KEYS against DeviceProfile's and ServiceTime's fields"
        );
        assert!(service.len() >= 5 && want.len() >= 20, "{want:?}");
    }

    /// Every key, one per line.
    const FULL: &str = "name = \"t\"\ndescription = \"d\"\nqueues = 32\nqueue_depth = 1024\n\
        parallelism = 4\nmax_read_iops = 500000\nmax_write_iops = 400000\n\
        max_read_bw = 2000000000\nmax_write_bw = 1000000000\ndefault_delta = \"6us\"\n\
        default_thr = 32\n[read]\ndistribution = \"normal\"\nmean = \"10us\"\nstddev = \"1us\"\n\
        floor = \"2us\"\nper_kib = \"100ns\"\n[write]\ndistribution = \"lognormal\"\n\
        mean = \"20us\"\nstddev = \"2us\"\nfloor = \"5us\"\nper_kib = \"200ns\"\n";

    /// `FULL` without the line of `key` (dotted for a table's).
    fn without(key: &str) -> String {
        let mut table = String::new();
        let mut out = String::new();
        let mut removed = false;
        for line in FULL.lines() {
            if let Some(t) = line.strip_prefix('[') {
                table = format!("{}.", t.trim_end_matches(']'));
            }
            let name = line.split(" =").next().unwrap_or("");
            if format!("{table}{name}") == key {
                removed = true;
                continue;
            }
            out += line;
            out.push('\n');
        }
        assert!(removed, "{key} is not in FULL");
        out
    }

    #[test]
    fn a_required_key_left_out_is_refused_and_an_optional_one_is_not() {
        DeviceProfile::parse(FULL, "full.toml").unwrap();
        for k in KEYS {
            let got = DeviceProfile::parse(&without(k.name), "t.toml");
            assert_eq!(got.is_err(), k.required, "{}: {got:?}", k.name);
        }
    }
}
