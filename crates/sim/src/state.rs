//! What `World` holds of the mechanisms that keep state of their own (issue
//! 26 item 3): the application run's drivers and books, the file system's
//! journal. Each depends on nothing of the world's, so that `world` holds
//! them without a module cycle; the mechanisms' code that moves the world
//! (`app`, `journal`) uses them from here. The NVMe controller
//! ([`crate::nvme`]) and the LD block layer ([`crate::blk`]) went further:
//! their state is private, behind the calls they answer.

pub(crate) mod app;
pub(crate) mod journal;
