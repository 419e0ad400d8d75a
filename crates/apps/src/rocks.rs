//! A RocksDB-like engine and its dump tool (TOS 4.1.2, 5.4.1, 5.5.1). To be
//! built (issue 16).
