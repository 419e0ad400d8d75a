//! From lexed sections to jobs: fio's inheritance of `[global]` options,
//! option application, validation of each merged job, `numjobs` expansion.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::cmdline::{CommandLine, Given};
use crate::error::{quoted, with_quoted_value, JobError};
use crate::ini::{self, Entry};
use crate::job::{Engine, Job, CPUCHUNKS_DEFAULT_US};
use crate::options::{lookup, Draft, Kind, MAX_BLOCK_SIZE, MAX_JOBS};
use crate::source::{self, MAX_INCLUDE_DEPTH, MAX_JOB_FILE_BYTES};
use crate::units::parse_bool;

/// A parsed job file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobFile {
    /// One entry per clone, in file order (`numjobs=4` gives four).
    pub jobs: Vec<Job>,
    /// Each occurrence of an accepted-but-ignored option.
    pub ignored: Vec<Ignored>,
    /// Adjustments made the way fio makes them (e.g. iodepth capped at 1
    /// for a synchronous engine).
    pub notes: Vec<Note>,
}

/// An option that was accepted and ignored because it does not change what
/// is measured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ignored {
    pub file: String,
    pub line: usize,
    pub option: String,
}

/// What [`Ignored::file`] says for an option given on the command line
/// (its `line` is 0).
pub const COMMAND_LINE: &str = "command line";

impl fmt::Display for Ignored {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            return write!(
                f,
                "{}: option '{}' ignored (does not change what is measured)",
                self.file, self.option
            );
        }
        write!(
            f,
            "{}:{}: option '{}' ignored (does not change what is measured)",
            self.file, self.line, self.option
        )
    }
}

/// Something changed on the user's behalf, as fio would.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

/// Reads and parses a job file, and the files it includes; `${VAR}` comes
/// from the process environment. The file must be a regular file or a FIFO,
/// and it and its includes together at most [`MAX_JOB_FILE_BYTES`].
pub fn parse_file(path: &Path) -> Result<JobFile, JobError> {
    parse_file_with(path, &CommandLine::default())
}

/// [`parse_file`] with fio's command-line job options and `--section`s, in
/// fio's precedence (see [`CommandLine`]): the command line gives every
/// job's defaults, the file's `[global]` and the job's own section win.
/// An error in a command-line option is [`JobError::CommandLine`], naming
/// it as given (`--iodepth=x: ...`).
pub fn parse_file_with(path: &Path, cmd: &CommandLine) -> Result<JobFile, JobError> {
    let shown = path.display().to_string();
    let env = |var: &str| std::env::var(var).ok();
    let mut disk = DiskIncludes {
        stack: vec![Opened::new(path)],
        budget: MAX_JOB_FILE_BYTES,
        env: &env,
    };
    let text = source::read_text(path, &shown, &mut disk.budget)?;
    let sections = ini::lex(&text, &shown, &env, &mut |name, from, line| {
        disk.include(name, from, line)
    })?;
    from_sections(&sections, &shown, cmd)
}

/// [`parse_file_with`] of each file in turn (`cinterrupts jobs`); a
/// `runtime` replaces every job's `runtime=`. The first file refused ends
/// the reading.
pub fn parse_files_with(
    files: &[PathBuf],
    cmd: &CommandLine,
    runtime: Option<u64>,
) -> Result<Vec<JobFile>, JobError> {
    let mut parsed = Vec::new();
    for f in files {
        let mut file = parse_file_with(f, cmd)?;
        if runtime.is_some() {
            for j in &mut file.jobs {
                j.runtime = runtime;
            }
        }
        parsed.push(file);
    }
    Ok(parsed)
}

impl JobFile {
    /// Writes the accepted-but-ignored options and fio-style adjustments,
    /// a `note: ` line each. `w` should be buffered: a hostile file can
    /// hold a quarter of a million ignored options, and one unbuffered
    /// write each took seconds.
    pub fn write_notes(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        for i in &self.ignored {
            writeln!(w, "note: {i}")?;
        }
        for n in &self.notes {
            writeln!(w, "note: {n}")?;
        }
        w.flush()
    }
}

/// Parses job-file text. `origin` names it in messages; `env` resolves
/// `${VAR}`. Reads nothing: an `include` directive is an error here (use
/// [`parse_file`]).
pub fn parse_str(
    text: &str,
    origin: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<JobFile, JobError> {
    parse_str_with(text, origin, env, &CommandLine::default())
}

/// [`parse_str`] with fio's command-line job options and `--section`s, as
/// [`parse_file_with`].
pub fn parse_str_with(
    text: &str,
    origin: &str,
    env: &dyn Fn(&str) -> Option<String>,
    cmd: &CommandLine,
) -> Result<JobFile, JobError> {
    let sections = ini::lex(text, origin, env, &mut |_, from, line| {
        Err(JobError::Unsupported {
            file: from.to_string(),
            line,
            option: "include".to_string(),
            why: "include files are read only from a job file on disk".to_string(),
        })
    })?;
    from_sections(&sections, origin, cmd)
}

/// A file being read, as opened and as resolved (for cycles).
struct Opened {
    path: PathBuf,
    real: PathBuf,
}

impl Opened {
    fn new(path: &Path) -> Opened {
        Opened {
            path: path.to_path_buf(),
            // A FIFO from a shell (`/dev/fd/63`) may not resolve; its own
            // name then stands for it.
            real: path.canonicalize().unwrap_or_else(|_| path.to_path_buf()),
        }
    }
}

/// fio's `include FILE`, read from disk: the chain of files being read (the
/// job file first), and the bytes left to read.
struct DiskIncludes<'a> {
    stack: Vec<Opened>,
    budget: u64,
    env: &'a dyn Fn(&str) -> Option<String>,
}

impl DiskIncludes<'_> {
    /// The entries of `include NAME` at `from:line`, its own includes
    /// expanded in place.
    fn include(&mut self, name: &str, from: &str, line: usize) -> Result<Vec<Entry>, JobError> {
        let refuse = |message: String| JobError::InvalidValue {
            file: from.to_string(),
            line,
            option: "include".to_string(),
            message,
        };
        let including = &self.stack.last().expect("the job file").path;
        let path = source::include_path(name, including);
        if self.stack.len() > MAX_INCLUDE_DEPTH {
            return Err(refuse(format!(
                "'{}': includes nested deeper than {MAX_INCLUDE_DEPTH}",
                quoted(name)
            )));
        }
        let opened = Opened::new(&path);
        if self.stack.iter().any(|o| o.real == opened.real) {
            return Err(refuse(format!(
                "'{}' includes itself (an include cycle)",
                quoted(name)
            )));
        }
        let shown = path.display().to_string();
        let text = source::read_text(&path, &shown, &mut self.budget).map_err(|e| match e {
            JobError::Read { reason, .. } => {
                refuse(format!("cannot read '{}': {reason}", quoted(&shown)))
            }
            other => other,
        })?;
        self.stack.push(opened);
        let env = self.env;
        let entries = ini::lex_included(&text, &shown, env, &mut |n, f, l| self.include(n, f, l));
        self.stack.pop();
        entries
    }
}

/// Jobs from lexed sections: the command line's defaults, `[global]`
/// inheritance, options applied, each job checked, `numjobs` expanded, the
/// job count bounded.
fn from_sections(
    sections: &[ini::Section],
    origin: &str,
    cmd: &CommandLine,
) -> Result<JobFile, JobError> {
    let mut out = JobFile::default();
    check_sections(sections, origin, cmd)?;
    // fio: a job starts from the global options accumulated so far, and
    // they start from the command line's (crate::cmdline).
    let mut global = Draft::default();
    for (name, value) in &cmd.options {
        apply_given(&mut global, name, value.as_deref(), &mut out.ignored)?;
    }
    // Every section is still parsed past the job bound, so an invalid
    // option anywhere is reported as itself; only the count goes on.
    let mut total = 0usize;
    let mut first_over: Option<Job> = None;
    for section in sections {
        if section.is_global() {
            for e in &section.entries {
                apply(&mut global, e, &mut out.ignored)?;
            }
            continue;
        }
        // fio init.c `skip_this_section`: only the --section's jobs.
        if !cmd.sections.is_empty() && !cmd.sections.contains(&section.name) {
            continue;
        }
        let mut draft = global.clone();
        draft.job.name = section.name.clone();
        draft.job.section_line = section.line;
        for e in &section.entries {
            apply(&mut draft, e, &mut out.ignored)?;
        }
        let job = finish(draft, origin, &mut out.notes)?;
        total += job.numjobs as usize;
        if total > MAX_JOBS as usize {
            first_over.get_or_insert(job);
            continue;
        }
        for i in 0..job.numjobs as usize {
            out.jobs.push(Job {
                clone_index: i,
                ..job.clone()
            });
        }
    }
    if let Some(job) = first_over {
        let cause = if job.numjobs > 1 {
            format!("option 'numjobs': its {} clones bring", job.numjobs)
        } else {
            "this section brings".to_string()
        };
        return Err(JobError::TooManyJobs {
            file: origin.to_string(),
            line: job.section_line,
            job: quoted(&job.name),
            message: format!(
                "{cause} the file past fio's limit of {MAX_JOBS} jobs (REAL_MAX_JOBS); it defines {total}"
            ),
        });
    }
    if out.jobs.is_empty() {
        return Err(JobError::NoJobs {
            file: origin.to_string(),
        });
    }
    Ok(out)
}

/// Each `--section=NAME` names a job section of the file, and not
/// `global` (fio: "can't use global as only section"). fio itself runs
/// nothing for a name it does not find; naming it is kinder.
fn check_sections(
    sections: &[ini::Section],
    origin: &str,
    cmd: &CommandLine,
) -> Result<(), JobError> {
    for want in &cmd.sections {
        let refuse = |message: String| JobError::CommandLine {
            given: Given("section", Some(want)).to_string(),
            message,
        };
        if want == "global" {
            return Err(refuse(
                "[global] cannot be the only section (fio: \"can't use global as only section\")"
                    .to_string(),
            ));
        }
        if !sections.iter().any(|s| &s.name == want) {
            let names: Vec<&str> = sections
                .iter()
                .filter(|s| !s.is_global())
                .map(|s| s.name.as_str())
                .collect();
            return Err(refuse(format!(
                "{origin} has no job section [{}] (it has: {})",
                quoted(want),
                quoted(&names.join(", "))
            )));
        }
    }
    Ok(())
}

/// Applies one job option given on the command line; an error names it as
/// given (`--iodepth=x: ...`).
fn apply_given(
    d: &mut Draft,
    name: &str,
    value: Option<&str>,
    ignored: &mut Vec<Ignored>,
) -> Result<(), JobError> {
    let given = Given(name, value).to_string();
    let refuse = |message: String| JobError::CommandLine {
        given: quoted(&given),
        message,
    };
    match name {
        "section" => return Err(refuse("needs a section name".to_string())),
        // fio: --name starts a job defined on the command line (init.c,
        // FIO_GETOPT_JOB); only job files define jobs here.
        "name" => {
            return Err(refuse(
                "jobs defined on the command line are not supported: put the job in a job file"
                    .to_string(),
            ))
        }
        _ => {}
    }
    let entry = Entry {
        file: COMMAND_LINE.into(),
        line: 0,
        key: name.to_string(),
        value: value.map(str::to_string),
    };
    apply(d, &entry, ignored).map_err(|e| {
        refuse(match e {
            JobError::UnknownOption { .. } => {
                "unknown option (neither a fio job option we know nor one of ours)".to_string()
            }
            JobError::Unsupported { why, .. } => format!("not supported: {why}"),
            JobError::MissingValue { .. } => "needs a value".to_string(),
            JobError::InvalidValue { message, .. } => message,
            other => other.to_string(),
        })
    })
}

/// Applies one `option[=value]` to a draft.
fn apply(d: &mut Draft, e: &Entry, ignored: &mut Vec<Ignored>) -> Result<(), JobError> {
    let file = &*e.file;
    let spec = lookup(&e.key).ok_or_else(|| JobError::UnknownOption {
        file: file.to_string(),
        line: e.line,
        option: quoted(&e.key),
    })?;
    let missing = || JobError::MissingValue {
        file: file.to_string(),
        line: e.line,
        option: e.key.clone(),
    };
    // The setters quote the value as written: a hostile one (1 MB, NUL
    // bytes) is cut and escaped here, once for all of them.
    let invalid = |message: String| JobError::InvalidValue {
        file: file.to_string(),
        line: e.line,
        option: e.key.clone(),
        message: with_quoted_value(&message, e.value.as_deref().unwrap_or("")),
    };
    let value = e.value.as_deref();
    match spec.kind {
        Kind::Bool(set) => match value {
            None => set(d, true),
            Some("") => return Err(missing()),
            Some(v) => set(d, parse_bool(v).map_err(invalid)?),
        },
        Kind::Value(set) => match value {
            None | Some("") => return Err(missing()),
            Some(v) => set(d, v).map_err(invalid)?,
        },
        Kind::Ignored | Kind::IgnoredChecked(_) => {
            if let (Kind::IgnoredChecked(check), Some(v)) = (spec.kind, value) {
                check(v).map_err(invalid)?;
            }
            ignored.push(Ignored {
                file: file.to_string(),
                line: e.line,
                option: e.key.clone(),
            });
        }
        Kind::Unsupported(why) => {
            return Err(JobError::Unsupported {
                file: file.to_string(),
                line: e.line,
                option: e.key.clone(),
                why: why.to_string(),
            })
        }
    }
    Ok(())
}

/// Resolves defaults that depend on other options and validates the merged
/// job. Errors name the job's section line.
fn finish(d: Draft, file: &str, notes: &mut Vec<Note>) -> Result<Job, JobError> {
    let Draft {
        mut job,
        complete_max,
    } = d;
    let err = |job: &Job, option: &str, message: String| JobError::InvalidJob {
        file: file.to_string(),
        line: job.section_line,
        job: quoted(&job.name),
        option: option.to_string(),
        message,
    };
    let mut note = |job: &Job, message: String| {
        notes.push(Note {
            file: file.to_string(),
            line: job.section_line,
            message: format!("job '{}': {message}", quoted(&job.name)),
        })
    };

    if job.iodepth == 0 {
        return Err(err(&job, "iodepth", "must be at least 1".to_string()));
    }
    let mut complete_max = complete_max;
    // fio: "both iodepth >= 1 and synchronous I/O engine are selected, queue
    // depth will be capped at 1". The batch options follow the depth.
    if job.ioengine.is_sync() && job.iodepth > 1 {
        note(
            &job,
            format!(
                "ioengine {} is synchronous: iodepth {} capped at 1",
                job.ioengine, job.iodepth
            ),
        );
        job.iodepth = 1;
        job.iodepth_batch_submit = job.iodepth_batch_submit.min(1);
        job.iodepth_batch_complete_min = job.iodepth_batch_complete_min.min(1);
        complete_max = complete_max.map(|m| m.min(1));
        job.iodepth_low = None;
    }
    // fio HOWTO: "If it is set to 0 the iodepth value will be used."
    if job.iodepth_batch_submit == 0 {
        job.iodepth_batch_submit = job.iodepth;
    }
    // fio caps the batch sizes at the depth, it does not refuse them (the
    // authors' fig5 passes --iodepth_batch_complete_max=16 to a psync job
    // whose section sets iodepth=1). init.c `fixup_options` (line 816): "if
    // (o->iodepth_batch > o->iodepth ...) o->iodepth_batch = o->iodepth";
    // backend.c reaps `min(iodepth_batch_complete_min, cur_depth)` at least
    // and at most `iodepth_batch_complete_max` of what is in flight, so
    // neither ever counts past the depth.
    let depth = job.iodepth;
    let mut cap = |job: &Job, option: &str, value: u32| -> u32 {
        if value > depth {
            note(
                job,
                format!("{option} {value} above iodepth {depth}: capped at {depth}, as fio"),
            );
            depth
        } else {
            value
        }
    };
    job.iodepth_batch_submit = cap(&job, "iodepth_batch_submit", job.iodepth_batch_submit);
    job.iodepth_batch_complete_min = cap(
        &job,
        "iodepth_batch_complete_min",
        job.iodepth_batch_complete_min,
    );
    let complete_max = complete_max.map(|m| cap(&job, "iodepth_batch_complete_max", m));
    // fio: the maximum defaults to the minimum, and is raised to it if lower.
    job.iodepth_batch_complete_max = match complete_max {
        Some(m) => m.max(job.iodepth_batch_complete_min),
        None => job.iodepth_batch_complete_min,
    }
    .max(1);
    // fio: iodepth_low above iodepth (or 0) means iodepth.
    job.iodepth_low = job.iodepth_low.filter(|&low| low < job.iodepth);
    // time_based without runtime= is checked by `Job::bounds`, which knows
    // the command line's --runtime (fio's own command line satisfies it too).
    if job.barrier && !job.ioengine.is_async() {
        return Err(err(
            &job,
            "barrier",
            format!("needs ioengine libaio or io_uring, not {}", job.ioengine),
        ));
    }
    if job.nowait && !job.ioengine.takes_rwf_flags() {
        return Err(err(
            &job,
            "nowait",
            format!(
                "needs ioengine pvsync2, libaio or io_uring, not {}",
                job.ioengine
            ),
        ));
    }
    // fio registers `hipri` only with the engines that can poll
    // (engines/sync.c for pvsync2's RWF_HIPRI, engines/io_uring.c's
    // IORING_SETUP_IOPOLL); with any other engine fio says "Bad option".
    if job.hipri && !matches!(job.ioengine, Engine::Pvsync2 | Engine::IoUring) {
        return Err(err(
            &job,
            "hipri",
            format!("needs ioengine pvsync2 or io_uring, not {}", job.ioengine),
        ));
    }
    // fio registers its io_uring engine options with that engine only
    // (engines/io_uring.c `options[]`); with another engine fio says "Bad
    // option".
    if job.ioengine != Engine::IoUring {
        let u = &job.uring;
        let set = [
            ("sqthread_poll", u.sqthread_poll),
            ("sqthread_poll_cpu", u.sqthread_poll_cpu.is_some()),
            ("registerfiles", u.registerfiles),
            ("fixedbufs", u.fixedbufs),
            ("nonvectored", u.nonvectored.is_some()),
        ];
        if let Some((option, _)) = set.iter().find(|(_, on)| *on) {
            return Err(err(
                &job,
                option,
                format!("needs ioengine io_uring, not {}", job.ioengine),
            ));
        }
    }
    cpuio(&mut job, &err, &mut note)?;
    if job.ioengine.is_noio() {
        return Ok(job);
    }
    check_block_sizes(&job).map_err(|(option, message)| err(&job, option, message))?;
    Ok(job)
}

/// fio's cpuio engine (engines/cpu.c, `fio_cpuio_init`): `cpuload` is
/// required and at most 100, and the engine sets the job's think time so
/// that each `cpuchunks` spin is followed by `cpuchunks * (100 - cpuload) /
/// cpuload` microseconds of sleep (integer microseconds, as fio computes
/// it), after every "I/O". Its options belong to the engine: with another
/// engine fio says "Bad option".
fn cpuio(
    job: &mut Job,
    err: &dyn Fn(&Job, &str, String) -> JobError,
    note: &mut dyn FnMut(&Job, String),
) -> Result<(), JobError> {
    if job.ioengine != Engine::Cpuio {
        if job.cpuload.is_some() || job.exit_on_io_done || job.cpuchunks != CPUCHUNKS_DEFAULT_US {
            let option = if job.cpuload.is_some() {
                "cpuload"
            } else if job.exit_on_io_done {
                "exit_on_io_done"
            } else {
                "cpuchunks"
            };
            return Err(err(
                job,
                option,
                format!("needs ioengine cpuio, not {}", job.ioengine),
            ));
        }
        return Ok(());
    }
    let load = match job.cpuload {
        None | Some(0) => {
            return Err(err(
                job,
                "cpuload",
                "ioengine cpuio needs cpuload= (fio: \"cpu thread needs rate (cpuload=)\")"
                    .to_string(),
            ))
        }
        Some(l) if l > 100 => {
            note(job, format!("cpuload {l} above 100: capped at 100, as fio"));
            100
        }
        Some(l) => l,
    };
    job.cpuload = Some(load);
    if job.thinktime != 0 || job.thinktime_blocks != 1 {
        note(
            job,
            "ioengine cpuio sets thinktime from cpuload and cpuchunks: the job's own thinktime is replaced, as fio".to_string(),
        );
    }
    let think_us = job.cpuchunks * u64::from(100 - load) / u64::from(load);
    job.thinktime = think_us * 1_000;
    job.thinktime_blocks = 1;
    Ok(())
}

/// The block sizes against the kernel, `direct` and `size`: the one check
/// both front ends (the simulator and the emulator) get from the parser.
/// Only the directions the job does I/O in count, as fio's `td_min_bs`.
fn check_block_sizes(job: &Job) -> Result<(), (&'static str, String)> {
    let mut used = Vec::with_capacity(2);
    if job.rw.reads() {
        used.push(("read", job.bs_read));
    }
    if job.rw.writes() {
        used.push(("write", job.bs_write));
    }
    let differ = job.bs_read != job.bs_write && used.len() == 2;
    let named = |dir: &str, bs: u64| {
        if differ {
            format!("{bs}-byte {dir} block size")
        } else {
            format!("block size {bs}")
        }
    };
    for &(dir, bs) in &used {
        if bs > MAX_BLOCK_SIZE {
            return Err((
                "bs",
                format!(
                    "{} is above {MAX_BLOCK_SIZE}, the most Linux transfers in one read or write (MAX_RW_COUNT)",
                    named(dir, bs)
                ),
            ));
        }
        // O_DIRECT needs the logical block's alignment; 512 bytes is the
        // smallest there is. fio does not check it up front: the kernel
        // fails the first I/O with EINVAL (ioengines.c, "first direct IO
        // errored ... invalid block size").
        if job.direct && bs % 512 != 0 {
            return Err((
                "bs",
                format!(
                    "{} is not a multiple of 512, which direct=1 (O_DIRECT) needs",
                    named(dir, bs)
                ),
            ));
        }
    }
    // fio filesetup.c: "blocksize is larger than data set range".
    let smallest = used.iter().map(|&(_, bs)| bs).min().unwrap_or(job.bs_read);
    if let Some(size) = job.size {
        if smallest > size {
            return Err((
                "bs",
                format!("block size {smallest} is larger than size={size}: not one I/O fits"),
            ));
        }
    }
    Ok(())
}
