//! `cinterrupts capture`: argument wiring for `capture` (issue 27 item 2).

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
}

/// Records, says what on stderr, and returns the program's exit code.
pub fn run(a: &CaptureArgs) -> anyhow::Result<i32> {
    let s = capture::run(&capture::Options {
        out: a.out.clone(),
        devices: a.devices.clone(),
        duration: a.duration.map(std::time::Duration::from_nanos),
        program: a.program.clone(),
    })?;
    for line in s.lines() {
        eprintln!("cinterrupts capture: {line}");
    }
    Ok(s.exit_code())
}
