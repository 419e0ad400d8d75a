//! Device profiles as `service` reads them (issue 12): the shipped ones by
//! name, a file by path (a regular file of at most 1 MiB), and every bound
//! a profile's numbers must keep, each refused with one line naming the
//! file, the line and the key, and each accepted at its edge.

use service::{DeviceProfile, ProfileError};

/// A profile using every key, one per line (line numbers below count on
/// it).
const PROFILE: &str = r#"name = "t"
description = "a test device"
queues = 32
queue_depth = 1024
parallelism = 4
max_read_iops = 500000
max_write_iops = 400000
max_read_bw = 2000000000
max_write_bw = 1000000000
default_delta = "6us"
default_thr = 32

[read]
distribution = "normal"
mean = "10us"
stddev = "1us"
floor = "2us"
per_kib = "100ns"

[write]
distribution = "lognormal"
mean = "20us"
stddev = "5us"
floor = "4us"
per_kib = "200ns"
"#;

/// `PROFILE` with its line `from` replaced by `to`.
fn with(from: &str, to: &str) -> String {
    assert_eq!(PROFILE.matches(&format!("{from}\n")).count(), 1, "{from}");
    PROFILE.replace(&format!("{from}\n"), &format!("{to}\n"))
}

fn parse(text: &str) -> Result<DeviceProfile, String> {
    DeviceProfile::parse(text, "d.toml").map_err(|e| e.to_string())
}

fn refused(from: &str, to: &str) -> String {
    parse(&with(from, to)).unwrap_err()
}

fn accepted(from: &str, to: &str) -> DeviceProfile {
    parse(&with(from, to)).unwrap_or_else(|e| panic!("{to}: {e}"))
}

#[test]
fn the_test_profile_is_valid() {
    let p = parse(PROFILE).unwrap();
    assert_eq!((p.queues, p.read.mean, p.write.per_kib), (32, 10_000, 200));
}

#[test]
fn every_shipped_profile_loads_by_its_name() {
    assert_eq!(
        DeviceProfile::shipped(),
        ["optane", "p3700", "optane-900p", "kioxia-fl6"]
    );
    for name in DeviceProfile::shipped() {
        assert_eq!(DeviceProfile::load(name).unwrap().name, name);
    }
}

#[test]
fn an_unknown_name_is_refused_listing_the_shipped_ones() {
    assert_eq!(
        DeviceProfile::load("optane2").unwrap_err().to_string(),
        "unknown device profile 'optane2' (shipped: optane, p3700, optane-900p, kioxia-fl6; \
         or give a path to a .toml file)"
    );
}

/// A file in a fresh directory under the system's temporary one.
fn temp_file(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("service-profile-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn a_path_is_read_as_a_profile_file() {
    let path = temp_file("mine.toml", PROFILE.as_bytes());
    let p = DeviceProfile::load(path.to_str().unwrap());
    std::fs::remove_file(&path).unwrap();
    assert_eq!(p, DeviceProfile::parse(PROFILE, "d.toml"));
}

#[test]
fn a_name_with_a_slash_or_ending_in_toml_is_a_path() {
    // Read as files (and not found), not looked up among the shipped.
    for path in ["missing.toml", "/nonexistent/optane"] {
        match DeviceProfile::load(path) {
            Err(ProfileError::Read { file, .. }) => assert_eq!(file, path),
            other => panic!("{path}: {other:?}"),
        }
    }
}

#[test]
fn a_path_that_is_not_a_regular_file_is_refused() {
    // A directory (or a device node, a FIFO: `--device /dev/zero` once grew
    // to 5 GB) is not read.
    let dir = std::env::temp_dir();
    let dir = dir.to_str().unwrap();
    assert_eq!(
        DeviceProfile::load(dir).unwrap_err().to_string(),
        format!("{dir}: not a regular file (a profile is a .toml file)")
    );
}

/// `PROFILE` padded with a comment to exactly `len` bytes, its last line
/// (`per_kib`) without a newline, so a byte cut off changes its value.
fn padded(len: usize) -> Vec<u8> {
    let body = PROFILE.trim_end();
    let pad = len - body.len() - 1;
    format!("#{}\n{body}", "x".repeat(pad - 1)).into_bytes()
}

#[test]
fn a_profile_file_of_exactly_1_mib_is_read_whole() {
    // MAX_PROFILE_BYTES: 1 MiB, three hundred times the shipped profiles.
    let path = temp_file("edge.toml", &padded(1 << 20));
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 1 << 20);
    let p = DeviceProfile::load(path.to_str().unwrap());
    std::fs::remove_file(&path).unwrap();
    assert_eq!(p.unwrap().write.per_kib, 200);
}

#[test]
fn a_profile_file_over_1_mib_is_refused() {
    let path = temp_file("big.toml", &padded((1 << 20) + 1));
    let e = DeviceProfile::load(path.to_str().unwrap());
    std::fs::remove_file(&path).unwrap();
    assert_eq!(
        e.unwrap_err().to_string(),
        format!(
            "{}: larger than 1024 KiB, the most a profile may be (the shipped ones are 3 KB)",
            path.display()
        )
    );
}

#[test]
fn a_profile_file_that_is_not_utf8_names_the_line() {
    let mut bytes = b"name = \"t\"\n# \xff\n".to_vec();
    bytes.extend_from_slice(PROFILE.as_bytes());
    let path = temp_file("latin1.toml", &bytes);
    let e = DeviceProfile::load(path.to_str().unwrap());
    std::fs::remove_file(&path).unwrap();
    assert_eq!(
        e.unwrap_err().to_string(),
        format!("{}: line 2: not UTF-8 text", path.display())
    );
}

// The bounds (crates/service/src/limits.rs says where each comes from).

#[test]
fn a_name_must_not_be_empty() {
    assert_eq!(
        refused("name = \"t\"", "name = \"  \""),
        "d.toml:1: key 'name': must not be empty"
    );
}

#[test]
fn queues_are_1_to_65535_as_nvmes_number_of_queues() {
    // NVMe Base Specification 2.0, 5.27.1.5: 16 bits, 0's based.
    let want = "d.toml:3: key 'queues': must be 1 to 65535 (NVMe Number of Queues)";
    assert_eq!(refused("queues = 32", "queues = 0"), want);
    assert_eq!(refused("queues = 32", "queues = 65536"), want);
    assert_eq!(accepted("queues = 32", "queues = 1").queues, 1);
    assert_eq!(accepted("queues = 32", "queues = 65535").queues, 65_535);
}

#[test]
fn a_queue_holds_2_to_65536_entries_as_nvmes_cap_mqes() {
    // CAP.MQES: 16 bits, 0's based (NVMe Base Specification 2.0, 3.1.3.1).
    let want = "d.toml:4: key 'queue_depth': must be 2 to 65536 (NVMe CAP.MQES)";
    assert_eq!(refused("queue_depth = 1024", "queue_depth = 1"), want);
    assert_eq!(refused("queue_depth = 1024", "queue_depth = 65537"), want);
    assert_eq!(
        accepted("queue_depth = 1024", "queue_depth = 2").queue_depth,
        2
    );
    let p = accepted("queue_depth = 1024", "queue_depth = 65536");
    assert_eq!(p.queue_depth, 65_536);
}

#[test]
fn a_device_has_at_least_one_unit() {
    assert_eq!(
        refused("parallelism = 4", "parallelism = 0"),
        "d.toml:5: key 'parallelism': must be at least 1"
    );
    assert_eq!(
        accepted("parallelism = 4", "parallelism = 1").parallelism,
        1
    );
}

#[test]
fn an_iops_ceiling_is_1_to_10m_each_way() {
    // MAX_IOPS: three times the fastest NVMe drives.
    for (line, key, from) in [
        (6, "max_read_iops", "max_read_iops = 500000"),
        (7, "max_write_iops", "max_write_iops = 400000"),
    ] {
        let want = format!(
            "d.toml:{line}: key '{key}': must be 1 to 10000000 (10M, three times the fastest NVMe drives)"
        );
        assert_eq!(refused(from, &format!("{key} = 0")), want);
        assert_eq!(refused(from, &format!("{key} = 10000001")), want);
        accepted(from, &format!("{key} = 1"));
        accepted(from, &format!("{key} = 10000000"));
    }
}

#[test]
fn a_bandwidth_ceiling_is_1_mbs_to_1_tbs_each_way() {
    // MIN_BW, MAX_BW: below any NVMe device's sequential rate; sixty times a
    // PCIe 5.0 x4 link.
    for (line, key, from) in [
        (8, "max_read_bw", "max_read_bw = 2000000000"),
        (9, "max_write_bw", "max_write_bw = 1000000000"),
    ] {
        let want = format!(
            "d.toml:{line}: key '{key}': must be 1000000 to 1000000000000 bytes a second (1 MB/s to 1 TB/s)"
        );
        assert_eq!(refused(from, &format!("{key} = 999999")), want);
        assert_eq!(refused(from, &format!("{key} = 1000000000001")), want);
        accepted(from, &format!("{key} = 1000000"));
        accepted(from, &format!("{key} = 1000000000000"));
    }
    // Absent: no ceiling.
    let p = accepted("max_read_bw = 2000000000", "");
    assert_eq!((p.max_read_bw, p.max_write_bw), (None, Some(1_000_000_000)));
}

#[test]
fn a_mean_service_time_is_more_than_0() {
    assert_eq!(
        refused("mean = \"10us\"", "mean = \"0ns\""),
        "d.toml:15: key 'read.mean': must be greater than 0"
    );
    assert_eq!(
        refused("mean = \"20us\"", "mean = \"0ns\""),
        "d.toml:22: key 'write.mean': must be greater than 0"
    );
}

#[test]
fn service_times_are_at_most_linuxs_nvme_io_timeout() {
    // MAX_SERVICE: Linux's nvme io_timeout, 30 s (drivers/nvme/host/core.c).
    for (line, key, from) in [
        (15, "read.mean", "mean = \"10us\""),
        (16, "read.stddev", "stddev = \"1us\""),
        (18, "read.per_kib", "per_kib = \"100ns\""),
        (22, "write.mean", "mean = \"20us\""),
        (23, "write.stddev", "stddev = \"5us\""),
        (25, "write.per_kib", "per_kib = \"200ns\""),
    ] {
        let name = key.split('.').nth(1).unwrap();
        assert_eq!(
            refused(from, &format!("{name} = \"30000000001ns\"")),
            format!("d.toml:{line}: key '{key}': must be at most 30s (Linux's NVMe I/O timeout)")
        );
        accepted(from, &format!("{name} = \"30s\""));
    }
}

#[test]
fn a_floor_is_below_the_mean() {
    assert_eq!(
        refused("floor = \"2us\"", "floor = \"10us\""),
        "d.toml:17: key 'read.floor': must be below mean"
    );
    assert_eq!(
        refused("floor = \"4us\"", "floor = \"20us\""),
        "d.toml:24: key 'write.floor': must be below mean"
    );
    assert_eq!(
        accepted("floor = \"2us\"", "floor = \"9999ns\"").read.floor,
        9_999
    );
}

#[test]
fn the_default_delta_is_more_than_0_and_at_most_1s() {
    // MAX_DEFAULT_DELTA: Linux's bound on its scheduler's granularities
    // (kernel/sysctl.c, max_sched_granularity_ns).
    let want = "d.toml:10: key 'default_delta': must be more than 0 and at most 1s";
    assert_eq!(
        refused("default_delta = \"6us\"", "default_delta = \"0ns\""),
        want
    );
    assert_eq!(
        refused(
            "default_delta = \"6us\"",
            "default_delta = \"1000000001ns\""
        ),
        want
    );
    let p = accepted("default_delta = \"6us\"", "default_delta = \"1ns\"");
    assert_eq!(p.default_delta, 1);
    let p = accepted("default_delta = \"6us\"", "default_delta = \"1s\"");
    assert_eq!(p.default_delta, 1_000_000_000);
}

#[test]
fn the_default_threshold_is_at_least_1() {
    assert_eq!(
        refused("default_thr = 32", "default_thr = 0"),
        "d.toml:11: key 'default_thr': must be at least 1"
    );
    assert_eq!(
        accepted("default_thr = 32", "default_thr = 1").default_thr,
        1
    );
}

// toml's own errors, located by its spans (crates/service/src/toml_file.rs).

#[test]
fn an_unknown_key_names_its_line_and_key() {
    let e = refused("queues = 32", "queues = 32\nchannels = [1, 2]");
    assert!(
        e.starts_with("d.toml:4: key 'channels': unknown field `channels`, expected one of `name`"),
        "{e}"
    );
}

#[test]
fn an_unknown_key_in_a_table_names_it_dotted() {
    let e = refused("per_kib = \"100ns\"", "per_kib = \"100ns\"\np99 = \"9us\"");
    assert!(
        e.starts_with(
            "d.toml:19: key 'read.p99': unknown field `p99`, expected one of `distribution`"
        ),
        "{e}"
    );
}

#[test]
fn a_value_of_the_wrong_type_names_its_line_and_key() {
    assert_eq!(
        refused("parallelism = 4", "parallelism = \"four\""),
        "d.toml:5: key 'parallelism': invalid type: string \"four\", expected u32"
    );
    assert_eq!(
        refused("stddev = \"5us\"", "stddev = 5000"),
        "d.toml:23: key 'write.stddev': invalid type: integer `5000`, expected a string"
    );
}

#[test]
fn a_missing_key_in_a_table_names_the_table_on_its_header_line() {
    assert_eq!(
        refused("mean = \"20us\"", ""),
        "d.toml:20: key 'write': missing field `mean`"
    );
}

#[test]
fn a_missing_top_level_key_names_the_file() {
    // toml's span for a top-level key is the whole file: line 1, no key.
    assert_eq!(
        refused("queues = 32", ""),
        "d.toml:1: missing field `queues`"
    );
}

#[test]
fn a_syntax_error_names_its_line() {
    let e = refused("queues = 32", "queues = = 32");
    assert!(e.starts_with("d.toml:3: "), "{e}");
    assert!(!e.contains('\n'), "{e}");
}

#[test]
fn a_key_left_without_a_value_at_the_end_still_gets_a_reason() {
    // toml 0.8 gives no message for it ("x = " as the text's end): the
    // line still says what is wrong (issue 12: one line naming the file,
    // the line and what is wrong).
    assert_eq!(
        parse(&format!("{PROFILE}channels = ")).unwrap_err(),
        "d.toml:26: invalid TOML (toml gave no reason: a key without a value at the end of the file?)"
    );
}
