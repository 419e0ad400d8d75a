//! fio job files (stub; being written).
