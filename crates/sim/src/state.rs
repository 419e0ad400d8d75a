//! What `World` holds of the application run (issue 26 item 3): its
//! drivers and books, with no dependency on the world's, so that `world`
//! holds them without a module cycle; `app` moves them. The other
//! mechanisms went further: their state is private, behind the calls they
//! answer ([`crate::cpu`], [`crate::nvme`], [`crate::blk`], [`crate::fs`],
//! [`crate::polling`]).

pub(crate) mod app;
