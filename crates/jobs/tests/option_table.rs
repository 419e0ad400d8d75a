//! The option table covers what fio users write.

use jobs::{lookup, parse_str, Disposition};

const IGNORED: &[&str] = &[
    "gtod_reduce",
    "norandommap",
    "randrepeat",
    "random_generator",
    "disable_bw_measurement",
    "disable_bw",
    "disable_lat",
    "disable_clat",
    "disable_slat",
    "clat_percentiles",
    "lat_percentiles",
    "slat_percentiles",
    "percentile_list",
    "numa_mem_policy",
    "numa_cpu_nodes",
    "group_reporting",
    "invalidate",
    "unified_rw_reporting",
    "log_avg_msec",
    "write_lat_log",
    "write_bw_log",
    "write_iops_log",
    "per_job_logs",
    "scramble_buffers",
    "refill_buffers",
    "zero_buffers",
    "buffer_compress_percentage",
    "fadvise_hint",
    "allrandrepeat",
    "kb_base",
    "description",
    "randseed",
    "create_on_open",
    "allow_file_create",
    "overwrite",
    "ioscheduler",
    "cgroup",
];

const MODELLED: &[&str] = &[
    "name",
    "thread",
    "numjobs",
    "rw",
    "readwrite",
    "rwmixread",
    "rwmixwrite",
    "bs",
    "blocksize",
    "bsrange",
    "bssplit",
    "blockalign",
    "random_distribution",
    "nrfiles",
    "rate",
    "size",
    "filesize",
    "offset",
    "io_size",
    "io_limit",
    "number_ios",
    "loops",
    "filename",
    "directory",
    "ioengine",
    "iodepth",
    "iodepth_batch_submit",
    "iodepth_batch",
    "iodepth_batch_complete_min",
    "iodepth_batch_complete",
    "iodepth_batch_complete_max",
    "iodepth_low",
    "direct",
    "buffered",
    "sync",
    "fsync",
    "fdatasync",
    "end_fsync",
    "nowait",
    "runtime",
    "time_based",
    "ramp_time",
    "startdelay",
    "thinktime",
    "thinktime_blocks",
    "rate_iops",
    "cpus_allowed",
    "cpus_allowed_policy",
    "verify",
    "do_verify",
    "barrier",
    "cint_flags",
];

#[test]
fn ignored_options_are_accepted_and_recorded() {
    for &name in IGNORED {
        let spec = lookup(name).unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(spec.disposition(), Disposition::Ignored, "{name}");
        let value = if name == "kb_base" { "1024" } else { "1" };
        let f = parse_str(&format!("[j]\n{name}={value}\n"), "t.fio", &|_| None)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(f.ignored.len(), 1, "{name}");
        assert_eq!((f.ignored[0].line, f.ignored[0].option.as_str()), (2, name));
    }
}

#[test]
fn modelled_options_are_known() {
    for &name in MODELLED {
        let spec = lookup(name).unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(spec.disposition(), Disposition::Modelled, "{name}");
    }
}

#[test]
fn unsupported_options_say_why() {
    for name in ["rate_min", "thinktime_spin", "exitall"] {
        let Some(Disposition::Unsupported(why)) = lookup(name).map(|s| s.disposition()) else {
            panic!("{name} is not marked unsupported");
        };
        let e = parse_str(&format!("[j]\n{name}=1\n"), "t.fio", &|_| None).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("t.fio:2: option '{name}' is not supported: {why}")
        );
    }
}
