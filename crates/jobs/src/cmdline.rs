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

#[cfg(test)]
mod tests {
    use super::*;

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
