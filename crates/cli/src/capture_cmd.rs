//! `cinterrupts capture`: argument wiring for `capture` (issue 27 item 2),
//! and what a loss does (issue 41 item 0): the capture fails naming it,
//! or with `--allow-loss` the trace is marked partial (`traces::partial`).

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Args;

#[derive(Args, Debug)]
pub struct CaptureArgs {
    /// The blkparse-text output (the interrupts go to OUT.irq.csv beside it)
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub out: PathBuf,
    /// Only this block device's events (repeatable; default: every device)
    #[arg(long = "device", value_name = "/dev/NAME")]
    pub devices: Vec<PathBuf>,
    /// Record this long without a program, or stop the program after it
    /// (`10s`, `500ms`, fio's spellings)
    #[arg(long, value_name = "TIME", value_parser = crate::args::runtime)]
    pub duration: Option<u64>,
    /// The program to run while recording, after `--`
    #[arg(last = true, value_name = "PROGRAM")]
    pub program: Vec<OsString>,
    /// The trace buffer per CPU (tracefs `buffer_size_kb`): `64M`, `1G`,
    /// fio's size spellings, whole KiB, at least 4K; default 64M. A
    /// recording that fills it loses events
    #[arg(long, value_name = "SIZE", value_parser = buffer_size)]
    pub buffer_size: Option<u64>,
    /// Keep a recording that lost events (the buffer's or completions
    /// short of the kernel's count), marked partial (OUT.partial, which
    /// every verb reading the trace warns of), instead of failing
    #[arg(long)]
    pub allow_loss: bool,
}

/// `--buffer-size`, in KiB. tracefs's `buffer_size_kb` is "the number of
/// kilobytes each CPU buffer holds", allocated in pages
/// (Documentation/trace/ftrace.rst, "buffer_size_kb"): whole KiB, and no
/// less than one page (4 KiB on this x86-64 machine, `getconf PAGESIZE`).
pub fn buffer_size(s: &str) -> Result<u64, String> {
    let bytes = jobs::units::parse_size(s)?;
    if bytes % 1024 != 0 {
        return Err(format!(
            "'{s}' is not a whole number of KiB (tracefs's buffer_size_kb)"
        ));
    }
    if bytes < 4096 {
        return Err(format!(
            "'{s}' is less than one 4 KiB page (the trace buffer's unit)"
        ));
    }
    Ok(bytes / 1024)
}

/// Records, says what on stderr, and returns the program's exit code; a
/// loss fails it (the outputs removed) unless `--allow-loss` marks the
/// trace partial.
pub fn run(a: &CaptureArgs) -> anyhow::Result<i32> {
    let kb = a.buffer_size.unwrap_or(capture::BUFFER_KB);
    let s = capture::run(&capture::Options {
        out: a.out.clone(),
        devices: a.devices.clone(),
        duration: a.duration.map(std::time::Duration::from_nanos),
        program: a.program.clone(),
        buffer_kb: Some(kb),
    })?;
    for line in s.lines() {
        eprintln!("cinterrupts capture: {line}");
    }
    if !s.loss.any() {
        // A whole trace written over a partial one is not partial.
        traces::partial::unmark(&a.out)?;
        return Ok(s.exit_code());
    }
    let what = s.loss.line();
    if a.allow_loss {
        traces::partial::mark(&a.out, &what)?;
        eprintln!(
            "cinterrupts capture: {} marked partial ({})",
            a.out.display(),
            traces::partial::marker(&a.out).display()
        );
        return Ok(s.exit_code());
    }
    // Not whole, and not asked to keep it: no trace that could be taken
    // for whole is left behind.
    let _ = std::fs::remove_file(&s.out);
    let _ = std::fs::remove_file(&s.irq_out);
    let _ = traces::partial::unmark(&a.out);
    anyhow::bail!(
        "capture {what}: the trace buffer holds {kb} KiB per CPU; give a larger --buffer-size (e.g. {}M), or --allow-loss to keep the trace marked partial",
        (kb * 4).div_ceil(1024).max(1)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_sizes_are_whole_kib_of_at_least_a_page() {
        assert_eq!(buffer_size("64M"), Ok(65536));
        assert_eq!(buffer_size("1G"), Ok(1 << 20));
        assert_eq!(buffer_size("4k"), Ok(4));
        assert!(buffer_size("1k").unwrap_err().contains("4 KiB page"));
        assert!(buffer_size("1500")
            .unwrap_err()
            .contains("whole number of KiB"));
        assert!(buffer_size("lots").is_err());
    }
}
