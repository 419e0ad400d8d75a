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
    for ((major, minor), c) in &s.per_device {
        eprintln!(
            "cinterrupts capture: device {major},{minor}: {} queued, {} issued, {} completed; while the program ran {} completions recorded, {} I/Os completed by the kernel (/sys/dev/block/{major}:{minor}/stat)",
            c.queued, c.issued, c.completed, c.completed_while_running, c.counted
        );
    }
    for (irq, (recorded, counted)) in &s.per_irq {
        eprintln!(
            "cinterrupts capture: irq {irq}: while the program ran {recorded} recorded, {counted} counted by the kernel (/proc/interrupts)"
        );
    }
    eprintln!(
        "cinterrupts capture: {} interrupts recorded ({} counted by the kernel on its numbered lines while the program ran, /proc/interrupts); wrote {} and {}",
        s.interrupts,
        s.interrupts_counted,
        s.out.display(),
        s.irq_out.display()
    );
    if s.lost > 0 {
        eprintln!(
            "cinterrupts capture: warning: the trace buffer lost {} events (per_cpu/cpuN/stats): the recording is not whole",
            s.lost
        );
    }
    Ok(s.status.map_or(0, |st| {
        use std::os::unix::process::ExitStatusExt;
        st.code().unwrap_or_else(|| 128 + st.signal().unwrap_or(0))
    }))
}
