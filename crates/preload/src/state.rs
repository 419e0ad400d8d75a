//! The library's global state in one place (issue 38 item 1): the
//! configuration exec passed in the environment, read once per process
//! image, the counters of what this process saw, and the threads it
//! boosted, which its record at exit holds. Everything else builds on
//! these, and they on nothing of the library's.

use std::sync::{Mutex, OnceLock};

use wire::{Config, Live};

/// What this process saw, counted from any thread (a forked child starts
/// from zero: `report`'s fork handler).
pub(crate) static LIVE: Live = Live::new();
static CONFIG: OnceLock<Option<Config>> = OnceLock::new();

/// exec's configuration, read from the environment at the first call;
/// `None` when exec did not set it (the library then does nothing).
pub(crate) fn config() -> Option<&'static Config> {
    CONFIG.get_or_init(Config::from_env).as_ref()
}

/// Whether the data moves through the page cache (a modelled device).
pub(crate) fn modelled() -> bool {
    config()
        .and_then(|c| c.route.as_ref())
        .is_some_and(|r| r.modelled)
}

/// The threads of this process given the boost (a forked child starts
/// with none: its parent reports them).
pub(crate) static BOOSTS: Mutex<Vec<wire::Boosted>> = Mutex::new(Vec::new());
