//! The emulator's one error type.

/// Why a run could not start or finish. One line each.
#[derive(Debug, thiserror::Error)]
pub enum EmuError {
    /// A job the emulator cannot run as written.
    #[error(transparent)]
    Job(#[from] jobs::Refused),
    #[error("{0}")]
    Config(String),
    #[error("{0}")]
    Backend(String),
    #[error("the emulator stalled: {0}")]
    Stalled(String),
    /// A `bench emu` measurement that could not be taken.
    #[error("{0}")]
    Bench(String),
}
