//! One error type for every reader: what went wrong, and where.

use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TraceError {
    /// A text row: its file, line (from 1) and field.
    #[error("{origin}:{line}: {field}: {why}")]
    Row {
        origin: String,
        line: u64,
        field: &'static str,
        why: String,
    },
    /// A binary record: its file and the byte offset where it starts.
    #[error("{origin}: byte {offset}: {field}: {why}")]
    Record {
        origin: String,
        offset: u64,
        field: &'static str,
        why: String,
    },
    /// A fixed-size binary record (vscsi, oracleGeneral, lcs): its file,
    /// its number (from 1, as lines are) and the byte offset where it
    /// starts; `record 0` is the file's header.
    #[error("{origin}: record {record} (byte {offset}): {field}: {why}")]
    Entry {
        origin: String,
        record: u64,
        offset: u64,
        field: &'static str,
        why: String,
    },
    /// The input could not be read past this line or byte.
    #[error("{origin}:{at}: cannot read: {reason}")]
    Read {
        origin: String,
        at: u64,
        reason: String,
    },
    #[error("{path}: cannot open: {reason}")]
    Open { path: String, reason: String },
    /// The trace as a whole (its format could not be told).
    #[error("{origin}: {why}")]
    Format { origin: String, why: String },
}
