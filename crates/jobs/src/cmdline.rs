//! fio's job options given on the command line (`fio --iodepth=16
//! --section=psync job.fio`), and where they stand among the job file's.
//!
//! fio's precedence (axboe/fio at f5344384, init.c): `parse_cmd_line` runs
//! before any job file is read (`parse_options`, lines 3234-3247). A job
//! option given before any `--name` goes into `def_thread`
//! (`FIO_GETOPT_JOB`: `global = 1` unless the option is `name`, lines
//! 2920-2929; `get_new_job(global, ...)` returns `&def_thread` for a global,
//! line 497). The job file's `[global]` is parsed into the same `def_thread`
//! (`__parse_jobs_ini`, line 2195) and so overrides the command line, and
//! every job section starts from a copy of `def_thread` (`*td = *parent`,
//! line 507) and overrides both. So the command line gives the defaults,
//! the file's `[global]` wins over it, and a job's own section wins over
//! both. `--section=NAME` (repeatable) keeps only the named job sections;
//! `[global]` is always read (`skip_this_section`, lines 2046-2059), and
//! `--section=global` is refused ("can't use global as only section",
//! line 2880).

use std::fmt;

/// fio's job options from a command line, in the order given, and the
/// `--section`s to run. Pass it to [`crate::parse_file_with`] or
/// [`crate::parse_str_with`].
///
/// ```
/// let mut cmd = jobs::CommandLine::default();
/// cmd.push_arg("blocksize=4K");
/// cmd.push_arg("iodepth=16");
/// cmd.push_arg("section=b");
/// let text = "[a]\nrw=randread\nsize=1m\n[b]\nrw=randread\nioengine=libaio\nsize=1m\nbs=512\n";
/// let file = jobs::parse_str_with(text, "x.fio", &|_| None, &cmd).unwrap();
/// assert_eq!(file.jobs.len(), 1);
/// assert_eq!((file.jobs[0].iodepth, file.jobs[0].bs_read), (16, 512));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommandLine {
    /// `(name, value)`: `--iodepth=16` is `("iodepth", Some("16"))`, a
    /// bare `--time_based` is `("time_based", None)`.
    pub options: Vec<(String, Option<String>)>,
    /// `--section=NAME`, each time it was given: only these job sections run
    /// (all of them when empty).
    pub sections: Vec<String>,
}

impl CommandLine {
    /// Adds one `NAME[=VALUE]` (a command-line `--NAME[=VALUE]` without its
    /// dashes): `section=NAME` to [`CommandLine::sections`], anything else
    /// to [`CommandLine::options`]. The value is everything after the first
    /// `=` (`name=raw=random-read` is the name `raw=random-read`).
    pub fn push_arg(&mut self, arg: &str) {
        let (name, value) = match arg.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (arg, None),
        };
        match (name, value) {
            ("section", Some(v)) => self.sections.push(v),
            (n, v) => self.options.push((n.to_string(), v)),
        }
    }

    /// True when nothing was given.
    pub fn is_empty(&self) -> bool {
        self.options.is_empty() && self.sections.is_empty()
    }
}

/// An option as it was given on the command line, for messages:
/// `--iodepth=x`, `--time_based`.
pub(crate) struct Given<'a>(pub &'a str, pub Option<&'a str>);

impl fmt::Display for Given<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Some(v) => write!(f, "--{}={}", self.0, v),
            None => write!(f, "--{}", self.0),
        }
    }
}

/// A command line's arguments after its verb, with fio's job options
/// rewritten for an argument parser that takes them as one repeatable
/// `--fio NAME[=VALUE]`: each `--NAME[=VALUE]` (or `--NAME VALUE` for an
/// option that needs a value, as fio's getopt reads it) that is not one of
/// the verb's own options and names a job option or `section` becomes
/// `--fio NAME[=VALUE]`. `own(name)` says whether `--name` is the verb's
/// own option, and if so whether it takes a value (the next argument, when
/// not given with `=`). Anything else, and everything after `--`, is left
/// as it is.
pub fn fio_argv(
    args: Vec<std::ffi::OsString>,
    own: &dyn Fn(&str) -> Option<bool>,
) -> Vec<std::ffi::OsString> {
    let mut out = Vec::with_capacity(args.len());
    let mut rest = args.into_iter().peekable();
    while let Some(arg) = rest.next() {
        let Some(body) = arg.to_str().and_then(|a| a.strip_prefix("--")) else {
            out.push(arg);
            continue;
        };
        if body.is_empty() {
            // `--`: the rest is positional.
            out.push(arg);
            out.extend(rest);
            break;
        }
        let (name, has_value) = match body.split_once('=') {
            Some((n, _)) => (n, true),
            None => (body, false),
        };
        if let Some(takes_value) = own(name) {
            out.push(arg.clone());
            // `--device --x`: the next argument is the option's value.
            if takes_value && !has_value {
                out.extend(rest.next());
            }
            continue;
        }
        let needs_value = match name {
            "section" => true,
            _ => match crate::lookup(name) {
                Some(spec) => spec.takes_value(),
                None => {
                    out.push(arg);
                    continue;
                }
            },
        };
        let mut given = body.to_string();
        if needs_value && !has_value {
            if let Some(v) = rest.next_if(|v| v.to_str().is_some()) {
                given = format!("{name}={}", v.to_str().unwrap_or_default());
            }
        }
        out.push("--fio".into());
        out.push(given.into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_argv_rewrites_job_options_and_leaves_the_verbs_own() {
        let own = |n: &str| match n {
            "device" => Some(true),
            "quiet" => Some(false),
            _ => None,
        };
        let args = [
            "--iodepth=16",
            "--device",
            "--x",
            "--section",
            "b",
            "--quiet",
            "--bs",
            "4k",
            "--nosuch",
            "file.fio",
            "--",
            "--iodepth=1",
        ];
        let out = fio_argv(args.iter().map(|a| (*a).into()).collect(), &own);
        let out: Vec<&str> = out.iter().map(|a| a.to_str().unwrap()).collect();
        assert_eq!(
            out,
            [
                "--fio",
                "iodepth=16",
                "--device",
                "--x",
                "--fio",
                "section=b",
                "--quiet",
                "--fio",
                "bs=4k",
                "--nosuch",
                "file.fio",
                "--",
                "--iodepth=1",
            ]
        );
        // A bare switch takes no value: the next argument stays.
        let out = fio_argv(vec!["--time_based".into(), "x.fio".into()], &own);
        assert_eq!(out, ["--fio", "time_based", "x.fio"]);
    }

    #[test]
    fn push_arg_splits_at_the_first_equals_sign_and_collects_sections() {
        let mut c = CommandLine::default();
        for a in [
            "name=raw=random-read",
            "time_based",
            "section=a",
            "section=b",
        ] {
            c.push_arg(a);
        }
        assert_eq!(
            c.options,
            vec![
                ("name".to_string(), Some("raw=random-read".to_string())),
                ("time_based".to_string(), None)
            ]
        );
        assert_eq!(c.sections, ["a", "b"]);
        assert_eq!(Given("iodepth", Some("x")).to_string(), "--iodepth=x");
        assert_eq!(Given("time_based", None).to_string(), "--time_based");
    }
}
