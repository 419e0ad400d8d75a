//! A worker's page cache (`pagecache.c`): an LRU of pages whose content is
//! in memory. Pages being read are tracked by the worker, not here.

use std::collections::{BTreeMap, HashMap};

#[derive(Debug)]
pub struct PageCache {
    capacity: u64,
    clock: u64,
    /// Page -> its last use.
    stamp: HashMap<u64, u64>,
    /// Last use -> page, oldest first.
    order: BTreeMap<u64, u64>,
}

impl PageCache {
    pub fn new(capacity: u64) -> PageCache {
        PageCache {
            capacity,
            clock: 0,
            stamp: HashMap::new(),
            order: BTreeMap::new(),
        }
    }

    /// Is the page cached? A hit moves it to the newest end (`get_page`,
    /// `bump_page_in_lru`).
    pub fn hit(&mut self, page: u64) -> bool {
        match self.stamp.get(&page).copied() {
            Some(old) => {
                self.order.remove(&old);
                self.clock += 1;
                self.order.insert(self.clock, page);
                self.stamp.insert(page, self.clock);
                true
            }
            None => false,
        }
    }

    /// The page's content is now in memory (a read completed); the oldest
    /// page makes room (`get_page` reuses `oldest_page`).
    pub fn insert(&mut self, page: u64) {
        if self.capacity == 0 || self.hit(page) {
            return;
        }
        while self.stamp.len() as u64 >= self.capacity {
            match self.order.pop_first() {
                Some((_, old)) => {
                    self.stamp.remove(&old);
                }
                None => break,
            }
        }
        self.clock += 1;
        self.order.insert(self.clock, page);
        self.stamp.insert(page, self.clock);
    }
}
