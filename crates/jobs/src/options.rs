//! The option table: every fio option we know, its aliases, and what it
//! does here: set a [`Job`] field, get accepted and ignored (it does not
//! change the interrupts or latency being measured), or get rejected because
//! it would change them and is not modelled.

use crate::job::{CintFlags, CpusAllowedPolicy, Engine, Job, RwMode, Verify};
use crate::units::{
    parse_bool, parse_count, parse_cpu_list, parse_duration, parse_size, parse_u32, SEC, US,
};

/// Most jobs one file may define, clones included: fio's own limit,
/// `REAL_MAX_JOBS` in axboe/fio fio.h ("error: maximum number of jobs
/// reached", init.c `add_thread_segment`).
pub const MAX_JOBS: u32 = 4096;

/// Largest block size: the most Linux moves in one read or write,
/// `MAX_RW_COUNT` (`INT_MAX & PAGE_MASK` with 4 KiB pages, include/linux/fs.h);
/// a larger request would be cut short by the kernel. fio itself sets no
/// upper bound on `bs` (options.c: `minval = 1` only).
pub const MAX_BLOCK_SIZE: u64 = 0x7fff_f000;

/// A job being built: the fields of [`Job`] plus what must be resolved once
/// all options are known.
#[derive(Clone, Debug, Default)]
pub(crate) struct Draft {
    pub job: Job,
    /// `iodepth_batch_complete_max` as written; its default depends on the
    /// minimum, which may come later.
    pub complete_max: Option<u32>,
}

type Setter = fn(&mut Draft, &str) -> Result<(), String>;

/// How an option is handled.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    /// A boolean: a bare option means true.
    Bool(fn(&mut Draft, bool)),
    /// Needs a value.
    Value(Setter),
    /// Accepted, recorded as ignored; any value (or none).
    Ignored,
    /// Accepted and ignored, but the value must pass the check.
    IgnoredChecked(fn(&str) -> Result<(), String>),
    /// A real fio option that would change what is measured; the reason.
    Unsupported(&'static str),
}

/// What happens to an option, for listing (`cinterrupts options`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Disposition {
    /// Sets a field of [`Job`].
    Modelled,
    /// Accepted and ignored: it does not change what is measured.
    Ignored,
    /// Rejected, with the reason.
    Unsupported(&'static str),
}

/// One known option.
#[derive(Clone, Copy)]
pub struct OptionSpec {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub(crate) kind: Kind,
}

impl OptionSpec {
    /// True when the option needs a value (`bs=4k`); false for a boolean
    /// (`time_based`) or one taking any value or none. fio's command line
    /// takes the next argument as the value of such an option
    /// (`--iodepth 16`, getopt's `required_argument`).
    pub fn takes_value(&self) -> bool {
        matches!(self.kind, Kind::Value(_))
    }

    pub fn disposition(&self) -> Disposition {
        match self.kind {
            Kind::Bool(_) | Kind::Value(_) => Disposition::Modelled,
            Kind::Ignored | Kind::IgnoredChecked(_) => Disposition::Ignored,
            Kind::Unsupported(why) => Disposition::Unsupported(why),
        }
    }
}

impl std::fmt::Debug for OptionSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OptionSpec")
            .field("name", &self.name)
            .field("aliases", &self.aliases)
            .field("disposition", &self.disposition())
            .finish()
    }
}

/// Every option this crate knows, modelled, ignored or unsupported.
pub fn known_options() -> &'static [OptionSpec] {
    TABLE
}

/// The option called `name` (or one of its aliases).
pub fn lookup(name: &str) -> Option<&'static OptionSpec> {
    TABLE
        .iter()
        .find(|o| o.name == name || o.aliases.contains(&name))
}

const fn modelled(name: &'static str, aliases: &'static [&'static str], set: Setter) -> OptionSpec {
    OptionSpec {
        name,
        aliases,
        kind: Kind::Value(set),
    }
}

const fn flag(
    name: &'static str,
    aliases: &'static [&'static str],
    set: fn(&mut Draft, bool),
) -> OptionSpec {
    OptionSpec {
        name,
        aliases,
        kind: Kind::Bool(set),
    }
}

const fn ignored(name: &'static str, aliases: &'static [&'static str]) -> OptionSpec {
    OptionSpec {
        name,
        aliases,
        kind: Kind::Ignored,
    }
}

const fn unsupported(
    name: &'static str,
    aliases: &'static [&'static str],
    why: &'static str,
) -> OptionSpec {
    OptionSpec {
        name,
        aliases,
        kind: Kind::Unsupported(why),
    }
}

/// Splits fio's `read,write[,trim]` values. A value without a comma applies
/// to reads and writes; with commas, an empty part leaves that direction as it
/// was; the trim part is checked and dropped.
fn split_rw<T>(
    v: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<(Option<T>, Option<T>), String>
where
    T: Clone,
{
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return Err(format!("too many values in '{v}' (read,write[,trim])"));
    }
    let one = |p: &str| -> Result<Option<T>, String> {
        if p.is_empty() {
            Ok(None)
        } else {
            parse(p).map(Some)
        }
    };
    if parts.len() == 1 {
        let x = parse(parts[0])?;
        return Ok((Some(x.clone()), Some(x)));
    }
    let r = one(parts[0])?;
    let w = one(parts[1])?;
    if let Some(t) = parts.get(2) {
        one(t)?;
    }
    Ok((r, w))
}

fn percent(v: &str) -> Result<u32, String> {
    let p = parse_u32(v)?;
    if p > 100 {
        return Err(format!("{p} is not a percentage (0..=100)"));
    }
    Ok(p)
}

fn block_size(v: &str) -> Result<u64, String> {
    let b = parse_size(v)?;
    if b == 0 {
        return Err(format!("block size '{v}' must be above 0"));
    }
    Ok(b)
}

/// fio's `filename=a:b` names two files (HOWTO, `filename`: "separating
/// the names with a ':' colon"; `\:` is a colon inside a name). One file per
/// job is modelled, so several are refused; `\:` becomes `:`.
fn one_file(v: &str) -> Result<String, String> {
    let mut name = String::with_capacity(v.len());
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                name.push(':');
                chars.next();
            }
            ':' => {
                return Err(format!(
                    "'{v}' names several files (fio separates them with ':'; write '\\:' for a colon in a name): one file per job is modelled"
                ))
            }
            // No path holds a NUL; open(2) would stop at it.
            '\0' => return Err(format!("'{v}' holds a NUL byte, which no file name can")),
            _ => name.push(c),
        }
    }
    Ok(name)
}

fn at_least_one(v: &str) -> Result<u32, String> {
    let n = parse_u32(v)?;
    if n == 0 {
        return Err("must be at least 1".to_string());
    }
    Ok(n)
}

static TABLE: &[OptionSpec] = &[
    // --- identity and layout
    modelled("name", &[], |d, v| {
        d.job.name = v.to_string();
        Ok(())
    }),
    modelled("numjobs", &[], |d, v| {
        let n = at_least_one(v)?;
        if n > MAX_JOBS {
            return Err(format!("{n} clones is above fio's limit of {MAX_JOBS}"));
        }
        d.job.numjobs = n;
        Ok(())
    }),
    modelled("filename", &[], |d, v| {
        d.job.filename = Some(one_file(v)?);
        Ok(())
    }),
    modelled("directory", &[], |d, v| {
        d.job.directory = Some(v.to_string());
        Ok(())
    }),
    // --- what is read and written
    modelled("rw", &["readwrite"], |d, v| {
        if let Some(m) = RwMode::parse(v) {
            d.job.rw = m;
            return Ok(());
        }
        if v.contains(':') {
            return Err(format!("'{v}': offset modifiers (':N') are not modelled"));
        }
        if matches!(v, "trim" | "randtrim" | "trimwrite" | "randtrimwrite") {
            return Err(format!(
                "rw '{v}' is not supported (trims are not modelled)"
            ));
        }
        Err(format!(
            "invalid rw '{v}' (read, write, randread, randwrite, rw, readwrite, randrw)"
        ))
    }),
    modelled("rwmixread", &[], |d, v| {
        d.job.rwmixread = percent(v)?;
        Ok(())
    }),
    modelled("rwmixwrite", &[], |d, v| {
        d.job.rwmixread = 100 - percent(v)?;
        Ok(())
    }),
    modelled("bs", &["blocksize"], |d, v| {
        let (r, w) = split_rw(v, block_size)?;
        if let Some(r) = r {
            d.job.bs_read = r;
        }
        if let Some(w) = w {
            d.job.bs_write = w;
        }
        Ok(())
    }),
    modelled("size", &["filesize"], |d, v| {
        // fio: size=0 is the whole file or device (filesetup.c,
        // `if (!o->size || ...) o->size = total_size`), as no size is.
        d.job.size = Some(parse_size(v)?).filter(|&s| s > 0);
        Ok(())
    }),
    modelled("offset", &[], |d, v| {
        d.job.offset = parse_size(v)?;
        Ok(())
    }),
    modelled("io_size", &["io_limit"], |d, v| {
        // fio: io_size=0 (its default) means size.
        d.job.io_size = Some(parse_size(v)?).filter(|&s| s > 0);
        Ok(())
    }),
    modelled("number_ios", &[], |d, v| {
        d.job.number_ios = Some(parse_count(v)?).filter(|&n| n > 0);
        Ok(())
    }),
    modelled("loops", &[], |d, v| {
        d.job.loops = at_least_one(v)?;
        Ok(())
    }),
    // --- engine and queueing
    modelled("ioengine", &[], |d, v| {
        d.job.ioengine = Engine::parse(v)
            .ok_or_else(|| format!("ioengine '{v}' is not supported ({})", Engine::NAMES))?;
        Ok(())
    }),
    modelled("iodepth", &[], |d, v| {
        d.job.iodepth = parse_u32(v)?;
        Ok(())
    }),
    modelled("iodepth_batch_submit", &["iodepth_batch"], |d, v| {
        d.job.iodepth_batch_submit = parse_u32(v)?;
        Ok(())
    }),
    modelled(
        "iodepth_batch_complete_min",
        &["iodepth_batch_complete"],
        |d, v| {
            d.job.iodepth_batch_complete_min = parse_u32(v)?;
            Ok(())
        },
    ),
    modelled("iodepth_batch_complete_max", &[], |d, v| {
        d.complete_max = Some(parse_u32(v)?).filter(|&n| n > 0);
        Ok(())
    }),
    modelled("iodepth_low", &[], |d, v| {
        d.job.iodepth_low = Some(parse_u32(v)?).filter(|&n| n > 0);
        Ok(())
    }),
    flag("direct", &[], |d, b| d.job.direct = b),
    flag("buffered", &[], |d, b| d.job.direct = !b),
    modelled("sync", &[], |d, v| {
        d.job.sync = match v {
            "sync" | "dsync" => true,
            "none" => false,
            _ => parse_bool(v)
                .map_err(|_| format!("invalid sync '{v}' (0, 1, none, sync, dsync)"))?,
        };
        Ok(())
    }),
    modelled("fsync", &[], |d, v| {
        d.job.fsync = parse_u32(v)?;
        Ok(())
    }),
    modelled("fdatasync", &[], |d, v| {
        d.job.fdatasync = parse_u32(v)?;
        Ok(())
    }),
    flag("end_fsync", &[], |d, b| d.job.end_fsync = b),
    flag("nowait", &[], |d, b| d.job.nowait = b),
    // --- time
    modelled("runtime", &["timeout"], |d, v| {
        d.job.runtime = Some(parse_duration(v, Some(SEC))?).filter(|&t| t > 0);
        Ok(())
    }),
    flag("time_based", &[], |d, b| d.job.time_based = b),
    modelled("ramp_time", &[], |d, v| {
        d.job.ramp_time = parse_duration(v, Some(SEC))?;
        Ok(())
    }),
    modelled("startdelay", &[], |d, v| {
        if v.contains('-') {
            return Err(format!("'{v}': random start delay ranges are not modelled"));
        }
        d.job.startdelay = parse_duration(v, Some(SEC))?;
        Ok(())
    }),
    modelled("thinktime", &[], |d, v| {
        d.job.thinktime = parse_duration(v, Some(US))?;
        Ok(())
    }),
    modelled("thinktime_blocks", &[], |d, v| {
        d.job.thinktime_blocks = at_least_one(v)?;
        Ok(())
    }),
    // fio reads rate_iops as an integer option (FIO_OPT_INT), through
    // check_str_bytes (parse.c __handle_option), so `k` is 1024 there as in
    // sizes; the command line's own rates (`--max-irq-rate 100k`) are
    // decimal counts per second.
    modelled("rate_iops", &[], |d, v| {
        let (old_r, old_w) = d.job.rate_iops.unwrap_or((0, 0));
        let (r, w) = split_rw(v, parse_count)?;
        let rate = (r.unwrap_or(old_r), w.unwrap_or(old_w));
        d.job.rate_iops = Some(rate).filter(|&rw| rw != (0, 0));
        Ok(())
    }),
    // --- placement
    modelled("cpus_allowed", &[], |d, v| {
        d.job.cpus_allowed = Some(parse_cpu_list(v)?.into());
        Ok(())
    }),
    modelled("cpus_allowed_policy", &[], |d, v| {
        d.job.cpus_allowed_policy = match v {
            "shared" => CpusAllowedPolicy::Shared,
            "split" => CpusAllowedPolicy::Split,
            _ => return Err(format!("invalid cpus_allowed_policy '{v}' (shared, split)")),
        };
        Ok(())
    }),
    // --- verification
    modelled("verify", &[], |d, v| {
        d.job.verify = match v {
            "0" | "null" => None,
            "crc32c" | "crc32c-intel" => Some(Verify::Crc32c),
            _ => return Err(format!("verify '{v}' is not supported (crc32c)")),
        };
        Ok(())
    }),
    flag("do_verify", &[], |d, b| d.job.do_verify = b),
    // --- calibrated interrupts
    flag("barrier", &[], |d, b| d.job.barrier = b),
    modelled("cint_flags", &[], |d, v| {
        d.job.cint_flags = CintFlags::parse(v)
            .ok_or_else(|| format!("invalid cint_flags '{v}' (urgent, barrier, none, default)"))?;
        Ok(())
    }),
    // Ours: the kernel whose default marks apply (crate::marks::DefaultMarks).
    modelled("default_marks", &[], |d, v| {
        d.job.default_marks = v.parse()?;
        Ok(())
    }),
    // --- accepted, ignored: reporting, logging, buffers, randomness
    ignored("gtod_reduce", &[]),
    ignored("norandommap", &[]),
    ignored("randrepeat", &[]),
    ignored("allrandrepeat", &[]),
    ignored("random_generator", &[]),
    ignored("randseed", &[]),
    ignored("disable_bw_measurement", &["disable_bw"]),
    ignored("disable_lat", &[]),
    ignored("disable_clat", &[]),
    ignored("disable_slat", &[]),
    ignored("clat_percentiles", &[]),
    ignored("lat_percentiles", &[]),
    ignored("slat_percentiles", &[]),
    ignored("percentile_list", &[]),
    ignored("significant_figures", &[]),
    ignored("numa_mem_policy", &[]),
    ignored("numa_cpu_nodes", &[]),
    ignored("group_reporting", &[]),
    // The authors' job files set it (artifact fig5-fig14 files): disk
    // utilisation statistics only.
    ignored("disk_util", &[]),
    ignored("new_group", &[]),
    ignored("unified_rw_reporting", &[]),
    ignored("stats", &[]),
    ignored("invalidate", &[]),
    ignored("thread", &[]),
    ignored("log_avg_msec", &[]),
    ignored("log_hist_msec", &[]),
    ignored("log_offset", &[]),
    ignored("write_lat_log", &[]),
    ignored("write_bw_log", &[]),
    ignored("write_iops_log", &[]),
    ignored("write_hist_log", &[]),
    ignored("per_job_logs", &[]),
    ignored("bwavgtime", &[]),
    ignored("iopsavgtime", &[]),
    ignored("exitall", &[]),
    ignored("exitall_on_error", &[]),
    ignored("scramble_buffers", &[]),
    ignored("refill_buffers", &[]),
    ignored("zero_buffers", &[]),
    ignored("buffer_compress_percentage", &[]),
    ignored("buffer_pattern", &[]),
    ignored("dedupe_percentage", &[]),
    ignored("fadvise_hint", &[]),
    OptionSpec {
        name: "kb_base",
        aliases: &[],
        kind: Kind::IgnoredChecked(|v| match v {
            "1024" => Ok(()),
            _ => Err(format!("kb_base '{v}' is not supported (1024)")),
        }),
    },
    ignored("description", &[]),
    ignored("fixedbufs", &[]),
    ignored("registerfiles", &[]),
    ignored("sqthread_poll", &[]),
    ignored("sqthread_poll_cpu", &[]),
    ignored("create_on_open", &[]),
    ignored("allow_file_create", &[]),
    ignored("overwrite", &[]),
    ignored("unlink", &[]),
    ignored("fallocate", &[]),
    ignored("ioscheduler", &[]),
    ignored("cgroup", &[]),
    ignored("clocksource", &[]),
    ignored("iomem", &["mem"]),
    ignored("iomem_align", &["mem_align"]),
    ignored("verify_pattern", &[]),
    ignored("verify_fatal", &[]),
    ignored("verify_dump", &[]),
    // --- real fio options that would change what is measured
    unsupported(
        "hipri",
        &[],
        "polled I/O completes without interrupts and is not modelled",
    ),
    unsupported(
        "stonewall",
        &["wait_for_previous"],
        "jobs here run concurrently; serialising them is not modelled",
    ),
    unsupported(
        "wait_for",
        &[],
        "jobs here run concurrently; serialising them is not modelled",
    ),
    unsupported("bssplit", &[], "mixed block sizes are not modelled"),
    unsupported(
        "bsrange",
        &["blocksize_range"],
        "mixed block sizes are not modelled",
    ),
    unsupported("rate", &[], "only rate_iops is modelled"),
    unsupported("rate_min", &["ratemin"], "only rate_iops is modelled"),
    unsupported("rate_iops_min", &[], "only rate_iops is modelled"),
    unsupported(
        "rate_process",
        &[],
        "only rate_iops with even spacing is modelled",
    ),
    unsupported("thinktime_spin", &[], "spinning think time is not modelled"),
    unsupported(
        "io_submit_mode",
        &[],
        "offloaded submission is not modelled",
    ),
    unsupported("cpumask", &[], "use cpus_allowed"),
    unsupported("nrfiles", &[], "one file per job is modelled"),
    unsupported("openfiles", &[], "one file per job is modelled"),
    unsupported("file_service_type", &[], "one file per job is modelled"),
    unsupported("zonemode", &[], "zoned I/O is not modelled"),
    unsupported("zonesize", &[], "zoned I/O is not modelled"),
    unsupported("zonerange", &[], "zoned I/O is not modelled"),
    unsupported("zoneskip", &[], "zoned I/O is not modelled"),
    unsupported(
        "percentage_random",
        &[],
        "mixed sequential and random offsets are not modelled",
    ),
    unsupported("rw_sequencer", &[], "offset sequencing is not modelled"),
    unsupported("cmdprio_percentage", &[], "I/O priorities are not modelled"),
    unsupported("prio", &[], "I/O priorities are not modelled"),
    unsupported("prioclass", &[], "I/O priorities are not modelled"),
    unsupported("nice", &[], "CPU priorities are not modelled"),
    unsupported(
        "flow",
        &["flow_id"],
        "flow control between jobs is not modelled",
    ),
    unsupported("verify_async", &[], "verification threads are not modelled"),
    unsupported(
        "verify_backlog",
        &[],
        "interleaved verification is not modelled",
    ),
    unsupported(
        "pre_read",
        &[],
        "pre-reading into the page cache is not modelled",
    ),
    unsupported("fsync_on_close", &[], "use end_fsync"),
    unsupported("sync_file_range", &[], "sync_file_range is not modelled"),
    unsupported(
        "write_barrier",
        &[],
        "fio's write_barrier is not modelled (the cinterrupts option is 'barrier')",
    ),
    unsupported("uncached", &[], "uncached buffered I/O is not modelled"),
    unsupported(
        "steadystate",
        &["ss"],
        "stopping at steady state is not modelled",
    ),
    unsupported("exec_prerun", &[], "running commands is not supported"),
    unsupported("exec_postrun", &[], "running commands is not supported"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_are_unique() {
        let mut all: Vec<&str> = TABLE
            .iter()
            .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()))
            .collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "an option name appears twice in the table");
    }

    #[test]
    fn aliases_find_their_option() {
        assert_eq!(lookup("blocksize").unwrap().name, "bs");
        assert_eq!(
            lookup("iodepth_batch").unwrap().name,
            "iodepth_batch_submit"
        );
        assert_eq!(
            lookup("disable_bw").unwrap().disposition(),
            Disposition::Ignored
        );
        assert!(matches!(
            lookup("hipri").unwrap().disposition(),
            Disposition::Unsupported(_)
        ));
        assert!(lookup("foo").is_none());
    }

    #[test]
    fn bs_splits_read_and_write() {
        let mut d = Draft::default();
        let set = |d: &mut Draft, v: &str| match lookup("bs").unwrap().kind {
            Kind::Value(f) => f(d, v),
            _ => unreachable!(),
        };
        set(&mut d, "4k,8k").unwrap();
        assert_eq!((d.job.bs_read, d.job.bs_write), (4096, 8192));
        set(&mut d, ",16k").unwrap();
        assert_eq!((d.job.bs_read, d.job.bs_write), (4096, 16384));
        set(&mut d, "64k").unwrap();
        assert_eq!((d.job.bs_read, d.job.bs_write), (65536, 65536));
        assert!(set(&mut d, "4k,0").is_err());
        assert!(set(&mut d, "1,2,3,4").is_err());
    }
}
