//! What `World` holds of the mechanisms that keep state of their own (issue
//! 26 item 3): the application run's drivers and books, the LD block
//! layer's pieces, the file system's journal. Each depends on nothing of
//! the world's, so that `world` holds them without a module cycle; the
//! mechanisms' code that moves the world (`app`, `block`, `journal`) uses
//! them from here.

pub(crate) mod app;
pub(crate) mod block;
pub(crate) mod journal;
