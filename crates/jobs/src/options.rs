//! The option table: every fio option we know, its aliases, and what it
//! does here: set a [`Job`] field, get accepted and ignored (it does not
//! change the interrupts or latency being measured), or get rejected because
//! it would change them and is not modelled.

use crate::job::{
    BsSplit, CintFlags, CpusAllowedPolicy, Distribution, Engine, Job, RateProcess, RwMode, Verify,
};
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

/// Most files one job spreads its I/O over (`nrfiles`): each is a region
/// of the emulator's one backend with its own state; fio has no bound but
/// the open-file limit (`openfiles`), Linux's default `ulimit -n` of 1024.
pub const MAX_FILES: u32 = 1024;

/// fio's `rw` with its offset modifier (options.c `str_rw_cb`): `:N` after
/// a random mode is how many I/Os share one random offset (the rest go on
/// sequentially, `ddir_seq_nr`); after a sequential mode, bytes to skip
/// after each I/O, negative to step back (`ddir_seq_add`).
fn rw_mode(d: &mut Draft, v: &str) -> Result<(), String> {
    let (mode, postfix) = match v.split_once(':') {
        Some((m, p)) => (m.trim(), Some(p.trim())),
        None => (v, None),
    };
    let Some(m) = RwMode::parse(mode) else {
        if matches!(mode, "trim" | "randtrim" | "trimwrite" | "randtrimwrite") {
            return Err(format!(
                "rw '{mode}' is not supported (trims are not modelled)"
            ));
        }
        return Err(format!(
            "invalid rw '{v}' (read, write, randread, randwrite, rw, readwrite, randrw)"
        ));
    };
    d.job.rw = m;
    d.job.rw_seq_nr = 1;
    d.job.rw_seq_add = 0;
    let Some(p) = postfix else { return Ok(()) };
    if m.is_random() {
        let n = parse_count(p).map_err(|e| format!("'{v}': {e}"))?;
        d.job.rw_seq_nr = u32::try_from(n).ok().filter(|&n| n > 0).ok_or_else(|| {
            format!(
                "'{v}': the I/Os per random offset must be 1 to {}",
                u32::MAX
            )
        })?;
    } else {
        let (neg, mag) = match p.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, p),
        };
        let n = parse_size(mag).map_err(|e| format!("'{v}': {e}"))?;
        let n = i64::try_from(n).map_err(|_| format!("'{v}': the step is too large"))?;
        d.job.rw_seq_add = if neg { -n } else { n };
    }
    Ok(())
}

/// `MIN-MAX` (fio's FIO_OPT_RANGE; `:` also separates them).
fn bs_range(v: &str) -> Result<(u64, u64), String> {
    let (a, b) = v
        .split_once('-')
        .or_else(|| v.split_once(':'))
        .ok_or_else(|| format!("'{v}' is not a range MIN-MAX"))?;
    let (a, b) = (block_size(a.trim())?, block_size(b.trim())?);
    check_bs_bound(a.max(b))?;
    // fio's check_range swaps a reversed range.
    Ok((a.min(b), a.max(b)))
}

fn check_bs_bound(b: u64) -> Result<(), String> {
    if b > MAX_BLOCK_SIZE {
        return Err(format!(
            "block size {b} is above {MAX_BLOCK_SIZE}, the most Linux transfers in one read or write (MAX_RW_COUNT)"
        ));
    }
    Ok(())
}

/// fio's `BSSPLIT_MAX` (thread_options.h).
const BSSPLIT_MAX: usize = 64;

/// One direction of `bssplit` (options.c `split_parse_ddir`,
/// `bssplit_ddir`): `BS/PERC` entries split by `:`; a missing or zero
/// percent shares what the others leave; sorted by percent.
fn bs_split(v: &str) -> Result<Vec<BsSplit>, String> {
    let mut out = Vec::new();
    let mut missing = 0u32;
    for part in v.split(':') {
        if part.is_empty() {
            break;
        }
        if out.len() == BSSPLIT_MAX {
            return Err(format!(
                "more than {BSSPLIT_MAX} entries (fio's BSSPLIT_MAX)"
            ));
        }
        let (bs, perc) = match part.split_once('/') {
            Some((bs, p)) => {
                let p = p.trim();
                let perc = if p.is_empty() {
                    0
                } else {
                    parse_u32(p)?.min(100)
                };
                (bs, perc)
            }
            None => (part, 0),
        };
        let bs = block_size(bs.trim())?;
        check_bs_bound(bs)?;
        if perc == 0 {
            missing += 1;
        }
        out.push(BsSplit { bs, perc });
    }
    if out.is_empty() {
        return Err(format!("'{v}' has no BS/PERCENT entry"));
    }
    let given: u32 = out.iter().map(|e| e.perc).sum();
    if given > 100 && missing > 1 {
        return Err(format!("'{v}': percentages add to more than 100"));
    }
    if missing > 0 {
        let share = if missing == 1 && out.len() == 1 {
            100
        } else {
            100u32.saturating_sub(given) / missing
        };
        for e in out.iter_mut().filter(|e| e.perc == 0) {
            e.perc = share;
        }
    }
    out.sort_by_key(|e| e.perc);
    Ok(out)
}

/// fio's `random_distribution` (options.c `str_random_distribution_cb`):
/// `random`, `zipf[:THETA[:CENTER]]`, `pareto[:H[:CENTER]]`,
/// `normal`/`gauss[:DEV[:CENTER]]`, `zoned:A/S:...`.
fn distribution(v: &str) -> Result<Distribution, String> {
    let (kind, rest) = match v.split_once(':') {
        Some((k, r)) => (k.trim(), Some(r.trim())),
        None => (v.trim(), None),
    };
    let value_center = |default: f64| -> Result<(f64, Option<f64>), String> {
        let Some(rest) = rest else {
            return Ok((default, None));
        };
        let (val, center) = match rest.split_once(':') {
            Some((a, c)) => (a, Some(c)),
            None => (rest, None),
        };
        let num = |s: &str| {
            s.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| format!("'{v}': '{s}' is not a number"))
        };
        let center = center.map(num).transpose()?;
        if center.is_some_and(|c| !(0.0..=1.0).contains(&c)) {
            return Err(format!("'{v}': the center must be between 0 and 1"));
        }
        Ok((num(val)?, center))
    };
    Ok(match kind {
        "random" => Distribution::Random,
        "zipf" => {
            // fio.h FIO_DEF_ZIPF.
            let (theta, center) = value_center(1.1)?;
            if theta == 1.0 || theta <= 0.0 {
                return Err(format!("'{v}': zipf theta must be above 0 and not 1"));
            }
            Distribution::Zipf { theta, center }
        }
        "pareto" => {
            // fio.h FIO_DEF_PARETO.
            let (h, center) = value_center(0.2)?;
            if h <= 0.0 || h >= 1.0 {
                return Err(format!("'{v}': pareto h must be between 0 and 1"));
            }
            Distribution::Pareto { h, center }
        }
        "normal" | "gauss" => {
            let (dev, center) = value_center(0.0)?;
            if !(0.0..100.0).contains(&dev) {
                return Err(format!("'{v}': normal deviation must be 0 to below 100"));
            }
            Distribution::Normal { dev, center }
        }
        "zoned" => Distribution::Zoned(zoned(v, rest.unwrap_or(""))?.into()),
        "sequence" => Distribution::Sequence(sequence(v, rest.unwrap_or(""))?.into()),
        "zoned_abs" => {
            return Err(format!(
                "random_distribution '{kind}' is not modelled (random, zipf, pareto, normal, zoned, sequence)"
            ))
        }
        _ => {
            return Err(format!(
                "invalid random_distribution '{v}' (random, zipf, pareto, normal, gauss, zoned, sequence)"
            ))
        }
    })
}

/// fio's `FIO_SEQ_MAX` (thread_options.h).
const SEQUENCE_MAX: usize = 64;

/// `sequence:B,B,...` (options.c `parse_sequence_distribution`): block
/// indices, digits only.
fn sequence(v: &str, spec: &str) -> Result<Vec<u64>, String> {
    if spec.is_empty() {
        return Err(format!("'{v}': missing pattern in sequence distribution"));
    }
    let parts: Vec<&str> = spec.split(',').map(str::trim).collect();
    if parts.len() > SEQUENCE_MAX {
        return Err(format!(
            "'{v}': at most {SEQUENCE_MAX} elements (fio's FIO_SEQ_MAX)"
        ));
    }
    parts
        .iter()
        .map(|p| {
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!("'{v}': invalid or negative element '{p}'"));
            }
            p.parse::<u64>()
                .map_err(|_| format!("'{v}': element '{p}' is too large"))
        })
        .collect()
}

/// `zoned:A/S:A/S...` for every direction (options.c `zone_split_ddir`):
/// access percents must add to 100; a missing size takes what is left.
fn zoned(v: &str, spec: &str) -> Result<Vec<(u32, u32)>, String> {
    if spec.contains(',') {
        return Err(format!("'{v}': per-direction zones are not modelled"));
    }
    let mut zones = Vec::new();
    let mut missing = 0u32;
    for part in spec.split(':').filter(|p| !p.is_empty()) {
        let (a, s) = part
            .split_once('/')
            .ok_or_else(|| format!("'{v}': zone '{part}' is not ACCESS/SIZE"))?;
        let a = parse_u32(a.trim())?.min(100);
        let s = if s.trim().is_empty() {
            missing += 1;
            None
        } else {
            Some(parse_u32(s.trim())?.min(100))
        };
        zones.push((a, s));
    }
    let access: u32 = zones.iter().map(|z| z.0).sum();
    let sized: u32 = zones.iter().filter_map(|z| z.1).sum();
    if access != 100 || sized > 100 {
        return Err(format!(
            "'{v}': access percentages must add to 100 and sizes to at most 100"
        ));
    }
    let share = (100 - sized).checked_div(missing).unwrap_or(0);
    Ok(zones
        .into_iter()
        .map(|(a, s)| (a, s.unwrap_or(share)))
        .collect())
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
    modelled("rw", &["readwrite"], rw_mode),
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
    // fio's bsrange=MIN-MAX[,MIN-MAX] (FIO_OPT_RANGE): sizes drawn per I/O.
    modelled("bsrange", &["blocksize_range"], |d, v| {
        let (r, w) = split_rw(v, bs_range)?;
        if let Some(r) = r {
            d.job.bsrange[0] = Some(r);
        }
        if let Some(w) = w {
            d.job.bsrange[1] = Some(w);
        }
        Ok(())
    }),
    // fio's bssplit=BS/PERC:BS/PERC[,...] (options.c `bssplit_ddir`).
    modelled("bssplit", &[], |d, v| {
        let (r, w) = split_rw(v, bs_split)?;
        if let Some(r) = r {
            d.job.bssplit[0] = Some(r.into());
        }
        if let Some(w) = w {
            d.job.bssplit[1] = Some(w.into());
        }
        Ok(())
    }),
    modelled("blockalign", &["ba"], |d, v| {
        let (r, w) = split_rw(v, block_size)?;
        if let Some(r) = r {
            d.job.blockalign[0] = Some(r);
        }
        if let Some(w) = w {
            d.job.blockalign[1] = Some(w);
        }
        Ok(())
    }),
    modelled("random_distribution", &[], |d, v| {
        d.job.distribution = distribution(v)?;
        Ok(())
    }),
    flag("random_sequence_stride", &[], |d, b| {
        d.job.random_sequence_stride = b
    }),
    // HOWTO `nrfiles`: "The size of files will be size divided by this".
    modelled("nrfiles", &["nr_files"], |d, v| {
        let n = at_least_one(v)?;
        if n > MAX_FILES {
            return Err(format!(
                "{n} files is above the {MAX_FILES} a job may open here"
            ));
        }
        d.job.nrfiles = n;
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
    flag("thread", &[], |d, b| d.job.thread = b),
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
    // fio's `rate` (FIO_OPT_ULL, read,write[,trim]): bytes per second, `k`
    // as 1024 like every fio size; it wins over rate_iops in its direction
    // (init.c `__setup_rate`).
    modelled("rate", &[], |d, v| {
        let (old_r, old_w) = d.job.rate.unwrap_or((0, 0));
        let (r, w) = split_rw(v, parse_size)?;
        let rate = (r.unwrap_or(old_r), w.unwrap_or(old_w));
        d.job.rate = Some(rate).filter(|&rw| rw != (0, 0));
        Ok(())
    }),
    // HOWTO rate_process: `linear` (fio's default) or `poisson`
    // (backend.c usec_for_io: exponential gaps, mean 10^6 / IOPS usec).
    modelled("rate_process", &[], |d, v| {
        d.job.rate_process = RateProcess::parse(v)
            .ok_or_else(|| format!("invalid rate_process '{v}' (linear, poisson)"))?;
        Ok(())
    }),
    // --- order (fio backend.c run_threads; HOWTO `stonewall`, `wait_for`)
    flag("stonewall", &["wait_for_previous"], |d, b| {
        d.job.stonewall = b
    }),
    modelled("wait_for", &[], |d, v| {
        d.job.wait_for = Some(v.to_string()).filter(|s| !s.is_empty());
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
    // Ours: the kernel whose default marks apply (marks::DefaultMarks).
    modelled("default_marks", &[], |d, v| {
        d.job.default_marks = v.parse()?;
        Ok(())
    }),
    // Ours: one marking rule in the `marks` crate's syntax, as `exec --mark`
    // and `coalesce --trace --mark` take it; each `mark=` adds one, in
    // order ([global]'s first). A rule on a fact a fio job has not (a
    // process title, a volume) is refused (crate::marking::KNOWN).
    modelled("mark", &[], |d, v| {
        let rule = marks::Rule::parse(v)?;
        marks::Needs::check(
            crate::marking::KNOWN,
            "a fio job",
            std::slice::from_ref(&rule),
        )?;
        d.job.mark.push(rule);
        Ok(())
    }),
    // Ours, not fio's (fio: "Bad option <critical=1>"): FastResponse's
    // criticality tag, carried by every request of the job (Job::critical).
    flag("critical", &[], |d, b| d.job.critical = b),
    // fio's engine option (engines/sync.c for pvsync2, engines/io_uring.c):
    // polled completion. The engine check is in parse.rs (finish).
    flag("hipri", &[], |d, b| d.job.hipri = b),
    // fio 3.33's io_uring engine options (engines/io_uring.c `options[]`,
    // crate::Uring); the engine check is in parse.rs (finish).
    flag("sqthread_poll", &[], |d, b| d.job.uring.sqthread_poll = b),
    modelled("sqthread_poll_cpu", &[], |d, v| {
        d.job.uring.sqthread_poll_cpu = Some(parse_u32(v)?);
        Ok(())
    }),
    flag("registerfiles", &[], |d, b| d.job.uring.registerfiles = b),
    flag("fixedbufs", &[], |d, b| d.job.uring.fixedbufs = b),
    // FIO_OPT_INT with `.def = "-1"`: -1 probes, 0 vectored, else not.
    modelled("nonvectored", &[], |d, v| {
        d.job.uring.nonvectored = match v.trim() {
            "-1" => None,
            other => Some(parse_u32(other)? != 0),
        };
        Ok(())
    }),
    // fio's cpuio engine options (engines/cpu.c); the engine check and
    // fio_cpuio_init's thinktime are in parse.rs (finish).
    modelled("cpuload", &[], |d, v| {
        d.job.cpuload = Some(parse_u32(v)?);
        Ok(())
    }),
    modelled("cpuchunks", &[], |d, v| {
        d.job.cpuchunks = u64::from(at_least_one(v)?);
        Ok(())
    }),
    flag("exit_on_io_done", &[], |d, b| d.job.exit_on_io_done = b),
    // fio 3.33's cpumode: `noop` spins a loop, `qsort` sorts ("to consume
    // more energy", HOWTO); the same CPU time either way here.
    modelled("cpumode", &[], |_, v| match v {
        "noop" | "qsort" => Ok(()),
        _ => Err(format!("invalid cpumode '{v}' (noop, qsort)")),
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
    ignored("exitall_on_error", &[]),
    // Logging of each I/O's priority only.
    ignored("log_prio", &[]),
    // Buffer contents: the emulator's null and file backends neither
    // compress nor deduplicate, as dedupe_percentage above.
    ignored("dedupe_mode", &[]),
    ignored("dedupe_global", &[]),
    ignored("dedupe_working_set_percentage", &[]),
    // Printing of errors only.
    ignored("error_dump", &[]),
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
    // fio 3.33's cmd_type (engines/io_uring.c, `.def = "nvme"`, one
    // value): read by the io_uring_cmd engine only; fio's io_uring engine
    // accepts and ignores it.
    OptionSpec {
        name: "cmd_type",
        aliases: &[],
        kind: Kind::IgnoredChecked(|v| match v {
            "nvme" => Ok(()),
            _ => Err(format!("invalid cmd_type '{v}' (nvme)")),
        }),
    },
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
    // HOWTO rate_min: "Failing to meet this requirement will cause the job
    // to exit": a job may end early.
    unsupported(
        "rate_min",
        &["ratemin"],
        "minimum rates, which end a job that misses them, are not modelled",
    ),
    unsupported(
        "rate_iops_min",
        &[],
        "minimum rates, which end a job that misses them, are not modelled",
    ),
    unsupported("thinktime_spin", &[], "spinning think time is not modelled"),
    // fio's default, `inline`, is what is modelled (the job thread submits).
    OptionSpec {
        name: "io_submit_mode",
        aliases: &[],
        kind: Kind::IgnoredChecked(|v| {
            match v {
            "inline" => Ok(()),
            _ => Err(format!(
                "io_submit_mode '{v}' is not supported: offloaded submission is not modelled (inline)"
            )),
        }
        }),
    },
    unsupported("cpumask", &[], "use cpus_allowed"),
    unsupported(
        "openfiles",
        &[],
        "every file of a job is open at once here (fio's default)",
    ),
    // fio's default, `roundrobin` (one I/O per file), is what nrfiles models.
    OptionSpec {
        name: "file_service_type",
        aliases: &[],
        kind: Kind::IgnoredChecked(|v| {
            match v {
            "roundrobin" | "roundrobin:1" => Ok(()),
            _ => Err(format!(
                "file_service_type '{v}' is not supported: files are served round robin, one I/O each (roundrobin)"
            )),
        }
        }),
    },
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
    // fio 3.33's cmdprio options (engines/cmdprio.h, shared by the libaio
    // and io_uring engines): per-request I/O priorities.
    unsupported("cmdprio_percentage", &[], "I/O priorities are not modelled"),
    unsupported("cmdprio_class", &[], "I/O priorities are not modelled"),
    unsupported("cmdprio", &[], "I/O priorities are not modelled"),
    unsupported("cmdprio_bssplit", &[], "I/O priorities are not modelled"),
    // fio 3.33's io_uring `force_async=N`: IOSQE_ASYNC on every Nth SQE
    // (`fio_ioring_prep`), so an io-wq worker thread issues it, not the
    // submitting task.
    unsupported(
        "force_async",
        &[],
        "IOSQE_ASYNC (an io-wq worker thread issuing the request) is not modelled",
    ),
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
    // HOWTO exitall: "terminate all jobs in the same group, as soon as one
    // job of that group finishes": the others' measured parts end early.
    unsupported(
        "exitall",
        &[],
        "ending every job when one finishes is not modelled",
    ),
    unsupported(
        "exit_what",
        &[],
        "ending other jobs when one finishes is not modelled",
    ),
    unsupported(
        "continue_on_error",
        &[],
        "an I/O error ends the job here (fio's default continue_on_error=none)",
    ),
    unsupported(
        "ignore_error",
        &[],
        "an I/O error ends the job here (fio's default)",
    ),
    // HOWTO latency_target: fio searches for the queue depth that meets it.
    unsupported(
        "latency_target",
        &[],
        "searching for the queue depth that meets a latency target is not modelled",
    ),
    unsupported(
        "latency_window",
        &[],
        "searching for the queue depth that meets a latency target is not modelled",
    ),
    unsupported(
        "latency_percentile",
        &[],
        "searching for the queue depth that meets a latency target is not modelled",
    ),
    unsupported(
        "flow_sleep",
        &[],
        "flow control between jobs is not modelled",
    ),
    unsupported(
        "max_latency",
        &[],
        "ending a job on a latency bound is not modelled",
    ),
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
            lookup("rate_min").unwrap().disposition(),
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
