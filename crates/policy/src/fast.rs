//! Sets and maps keyed by command ids, hashed with foldhash (the
//! `hashbrown` crate's default hasher) instead of std's SipHash-1-3: a
//! replay looks an id up several times per request, and SipHash was 14% of
//! `bench traces`' instructions (callgrind, issue 41 item 7). Ids come from
//! the stream being replayed, not from an adversary across a network, so a
//! keyed hash's flooding defence buys nothing here; foldhash still seeds
//! each map at random.

pub type HashSet<T> = std::collections::HashSet<T, foldhash::fast::RandomState>;
pub type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
