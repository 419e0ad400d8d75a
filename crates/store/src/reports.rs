//! A run's JSON report read back as the typed union it was written from
//! (issue 39 item 3): `sim`'s and `run`'s (`--output-format json`), and
//! `exec`'s with its part as the caller's type (`exec::summary::ExecPart`;
//! `serde_json::Value` for a reader without the `exec` crate), the kind
//! told by the report's `mode`, never by a key looked up.

use std::path::Path;

use report::Document;
use serde::de::DeserializeOwned;

use crate::dir::StoreError;

/// The report in `path` as its typed document. A file that is not one
/// (unreadable, not JSON, a `mode` without its part) is one line naming
/// it.
pub fn read<E: DeserializeOwned>(path: &Path) -> Result<Document<E>, StoreError> {
    let bytes = std::fs::read(path).map_err(|e| crate::dir::io(path, e))?;
    parse(&bytes).map_err(|e| crate::dir::io(path, e))
}

/// A report's text as its typed document.
pub fn parse<E: DeserializeOwned>(bytes: &[u8]) -> Result<Document<E>, serde_json::Error> {
    serde_json::from_slice(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use report::{JobReport, Kind, Mode, RunReport};

    fn run_report(mode: Mode) -> RunReport {
        RunReport {
            mode: Some(mode),
            policy: report::PolicyInfo::of(&policy::PolicySpec::named("cint")),
            device: "optane".into(),
            duration_ns: 20_000_000,
            interrupts: 1234,
            completions: 5678,
            jobs: vec![JobReport {
                name: "r".into(),
                ..JobReport::default()
            }],
            ..RunReport::default()
        }
    }

    #[test]
    fn a_report_reads_back_as_its_kind_and_writes_the_same_bytes() {
        for (mode, want) in [(Mode::Sim, "sim"), (Mode::Emu, "emu")] {
            let text = report::json::document(&run_report(mode));
            let doc: Document = parse(text.as_bytes()).unwrap();
            assert_eq!(doc.cinterrupts.kind.mode(), want);
            assert!(matches!(
                (&doc.cinterrupts.kind, mode),
                (Kind::Sim(_), Mode::Sim) | (Kind::Emu(_), Mode::Emu)
            ));
            assert_eq!(doc.cinterrupts.interrupts, 1234);
            assert_eq!(doc.jobs.as_ref().map(Vec::len), Some(1));
            assert_eq!(doc.to_text(), text, "read back and written again");
        }
    }

    #[test]
    fn a_report_of_no_kind_is_one_line_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let text = report::json::document(&run_report(Mode::Sim));
        for (name, bad) in [
            (
                "mode.json",
                text.replace("\"mode\": \"sim\"", "\"mode\": \"fio\""),
            ),
            ("part.json", text.replace("\"run\": {", "\"exec\": {")),
            ("cut.json", text[..text.len() / 2].to_string()),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, bad).unwrap();
            let e = read::<serde_json::Value>(&path).unwrap_err().to_string();
            assert!(e.starts_with(&path.display().to_string()), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
        let e = read::<serde_json::Value>(&dir.path().join("none.json")).unwrap_err();
        assert!(e.to_string().contains("none.json"), "{e}");
    }
}
