//! `cinterrupts coalesce` on a completion stream (CSV `time_ns,id,flags,
//! event`, `policy::stream`): one strategy's interrupts as they come, or
//! every strategy's on its defaults over the one stream.
//!
//! The stream is read and replayed row by row, never held: a stream of any
//! length takes the same memory, and from a live pipe the interrupts come
//! out as the rows come in.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;

use policy::stream::{comparison_table, Outcome, Reader, Replayer, StreamError};
use policy::PolicySpec;
use report::file::AtomicFile;

/// Every strategy of the catalogue on its defaults (`--policy all`).
pub fn every_strategy() -> Vec<PolicySpec> {
    policy::catalogue::STRATEGIES
        .iter()
        .map(|s| PolicySpec::named(s.name))
        .collect()
}

/// Replays the stream through `spec`, its interrupts' CSV into `sink` as
/// they come: flushed whenever the input would wait, so that from a live
/// pipe what is known is shown before waiting for more. The outcome and
/// the sink back.
pub fn replay<R: Read, W: Write>(
    input: BufReader<R>,
    origin: &str,
    spec: &PolicySpec,
    sink: Option<W>,
) -> Result<(Outcome, Option<W>), StreamError> {
    let mut replayer = Replayer::new(spec, origin, sink)?;
    let mut reader = Reader::new(input, origin);
    loop {
        if reader.get_ref().buffer().is_empty() {
            replayer.flush_csv()?;
        }
        let Some(row) = reader.next_row()? else {
            break;
        };
        replayer.feed(&row)?;
    }
    replayer.finish()
}

/// Every strategy on its defaults over the one stream, read once: the
/// comparison table.
pub fn compare_all(input: impl BufRead, origin: &str) -> Result<String, StreamError> {
    let mut replayers = every_strategy()
        .iter()
        .map(|s| Replayer::<io::Sink>::new(s, origin, None))
        .collect::<Result<Vec<_>, _>>()?;
    for row in Reader::new(input, origin) {
        let row = row?;
        for r in &mut replayers {
            r.feed(&row)?;
        }
    }
    let mut outcomes = Vec::new();
    for r in replayers {
        outcomes.push(r.finish()?.0);
    }
    Ok(comparison_table(&outcomes))
}

/// The stream at `input` (`-` or none: stdin), buffered, and its name for
/// errors.
fn open_input(input: Option<&Path>) -> Result<(BufReader<Box<dyn Read>>, String), String> {
    match input {
        Some(p) if p.as_os_str() != "-" => {
            let f = File::open(p).map_err(|e| format!("{}: cannot read: {e}", p.display()))?;
            Ok((BufReader::new(Box::new(f)), p.display().to_string()))
        }
        _ => Ok((BufReader::new(Box::new(io::stdin())), "<stdin>".to_string())),
    }
}

/// Where the interrupts' CSV goes.
enum Sink {
    /// Written as it comes, flushed whenever the input would wait.
    Stdout(BufWriter<io::Stdout>),
    /// Whole or not at all, opened before the first row is read.
    File(AtomicFile),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Stdout(w) => w.write(buf),
            Sink::File(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Stdout(w) => w.flush(),
            Sink::File(w) => w.flush(),
        }
    }
}

/// A stream error on one line; a failed write names where it was going.
fn stream_error(e: StreamError, output: Option<&Path>) -> String {
    match (e, output) {
        (StreamError::Write(reason), Some(p)) => format!("{}: cannot write: {reason}", p.display()),
        (StreamError::Write(reason), None) => format!("<stdout>: cannot write: {reason}"),
        (e, _) => e.to_string(),
    }
}

/// `cinterrupts coalesce` on the stream at `input` (`-` or none: stdin):
/// [`replay`] through `spec`, the interrupts' CSV into the file `output`
/// (whole or not at all), else onto stdout unless `csv` is false. The
/// outcome, or one line naming the file at fault.
pub fn replay_path(
    input: Option<&Path>,
    spec: &PolicySpec,
    output: Option<&Path>,
    csv: bool,
) -> Result<Outcome, String> {
    let sink = match output {
        // The destination is checked (and its temporary file made) before
        // a row is read, so a bad output fails at once.
        Some(path) => {
            Some(Sink::File(AtomicFile::create(path).map_err(|e| {
                format!("{}: cannot write: {e}", path.display())
            })?))
        }
        None if csv => Some(Sink::Stdout(BufWriter::new(io::stdout()))),
        None => None,
    };
    let (input, origin) = open_input(input)?;
    let (outcome, sink) =
        replay(input, &origin, spec, sink).map_err(|e| stream_error(e, output))?;
    if let (Some(Sink::File(f)), Some(path)) = (sink, output) {
        f.commit()
            .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    }
    Ok(outcome)
}

/// [`compare_all`] on the stream at `input` (`-` or none: stdin).
pub fn compare_path(input: Option<&Path>) -> Result<String, String> {
    let (input, origin) = open_input(input)?;
    compare_all(input, &origin).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const STREAM: &str = "time_ns,id,flags,event\n0,1,-,submit\n1000,1,-,complete\n2000,2,U,submit\n3000,2,U,complete\n";

    #[test]
    fn one_strategy_writes_its_interrupts_and_all_compare() {
        let (o, csv) = replay(
            BufReader::new(STREAM.as_bytes()),
            "s",
            &PolicySpec::named("default"),
            Some(Vec::new()),
        )
        .unwrap();
        assert_eq!(o.interrupts(), 2);
        let csv = String::from_utf8(csv.unwrap()).unwrap();
        assert_eq!(csv.lines().count(), 3, "{csv}");
        let t = compare_all(STREAM.as_bytes(), "s").unwrap();
        for s in policy::catalogue::STRATEGIES {
            assert!(t.contains(s.name), "{t}");
        }
        let Err(e) = replay(
            BufReader::new("time_ns,id,flags,event\nx\n".as_bytes()),
            "s",
            &PolicySpec::named("default"),
            None::<Vec<u8>>,
        ) else {
            panic!("a bad row is an error");
        };
        assert!(e.to_string().starts_with("s:2"), "{e}");
    }
}
