//! `cinterrupts jobs --check`: each file read as a front end would read it,
//! one line per file (`ok` with its jobs, or `refused` with the first
//! reason), so that a directory of job files can be checked at once.

use std::path::{Path, PathBuf};

use policy::quote::quoted;

use crate::{parse_file, serial_order, Engine, Job};

/// Each file's line, and how many parse.
#[derive(Debug, Default)]
pub struct Checked {
    /// `ok       FILE: N jobs` or `refused  REASON`, one per file in order.
    pub lines: Vec<String>,
    pub ok: usize,
}

impl Checked {
    /// Every file's line, then the count.
    pub fn text(&self) -> String {
        let mut s: String = self.lines.iter().map(|l| format!("{l}\n")).collect();
        s += &format!("{} of {} files parse\n", self.ok, self.lines.len());
        s
    }
}

/// Reads each file; a file that parses but whose jobs wait for one that
/// does not exist (stonewall, wait_for) is refused as `sim` and `run`
/// refuse it.
pub fn check_files(files: &[PathBuf]) -> Checked {
    let mut c = Checked::default();
    for f in files {
        let line = match parse_file(f) {
            Ok(file) => match serial_order(&file.jobs) {
                Err((i, why)) => format!("refused  {}", unordered(f, &file.jobs[i], &why)),
                Ok(_) => {
                    c.ok += 1;
                    let n = file.jobs.len();
                    format!(
                        "ok       {}: {n} job{}",
                        f.display(),
                        if n == 1 { "" } else { "s" }
                    )
                }
            },
            Err(e) => match engine_refusal(f) {
                Some(why) => format!("refused  {why}"),
                None => format!("refused  {e}"),
            },
        };
        c.lines.push(line);
    }
    c
}

/// `FILE:LINE: job 'NAME': WHY` for a job `serial_order` refuses.
pub fn unordered(file: &Path, job: &Job, why: &str) -> String {
    format!(
        "{}:{}: job '{}': {why}",
        file.display(),
        job.section_line,
        quoted(&job.name)
    )
}

/// A file refused for its `ioengine=` names the engine and the ones
/// supported, rather than the parser's first complaint (which may be an
/// option that engine alone takes).
fn engine_refusal(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().enumerate().find_map(|(i, line)| {
        let (key, value) = line.split_once('=')?;
        if key.trim() != "ioengine" {
            return None;
        }
        let value = value.split([';', '#']).next()?.trim();
        if value.is_empty() || value.contains('$') || Engine::parse(value).is_some() {
            return None;
        }
        Some(format!(
            "{}:{}: option 'ioengine': ioengine '{}' is not supported ({})",
            path.display(),
            i + 1,
            quoted(value),
            Engine::NAMES
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_file_is_one_line_and_an_unknown_engine_is_named() {
        let dir = std::env::temp_dir().join(format!("jobs-check-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, text: &str| {
            let p = dir.join(name);
            std::fs::write(&p, text).unwrap();
            p
        };
        let good = write("good.fio", "[a]\nrw=read\nsize=1m\n[b]\nrw=read\nsize=1m\n");
        let engine = write("engine.fio", "[a]\nioengine=spdk\nsize=1m\n");
        let waits = write("waits.fio", "[a]\nsize=1m\nwait_for=nobody\n");
        let c = check_files(&[good.clone(), engine.clone(), waits.clone()]);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(c.ok, 1);
        assert_eq!(c.lines[0], format!("ok       {}: 2 jobs", good.display()));
        assert!(
            c.lines[1].starts_with(&format!(
                "refused  {}:2: option 'ioengine': ioengine 'spdk' is not supported (",
                engine.display()
            )),
            "{}",
            c.lines[1]
        );
        assert!(
            c.lines[2].starts_with(&format!("refused  {}:1: job 'a': ", waits.display())),
            "{}",
            c.lines[2]
        );
        assert!(c.text().ends_with("\n1 of 3 files parse\n"), "{}", c.text());
    }
}
