//! The two bits software attaches to a command (TOS 3.1): Urgent and Barrier.

use std::fmt;

/// Urgent and Barrier as the device sees them in a command.
///
/// The kernel never sends both: a merge whose union holds both is marked
/// Urgent (TOS 4.1.1), so a device that receives both treats the command as
/// Urgent ([`Marks::normalized`]). "Explicitly unmarked" (an application
/// passing both RWF flags) is a syscall-level meaning and is resolved before a
/// command is built; see the jobs crate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Marks {
    pub urgent: bool,
    pub barrier: bool,
}

impl Marks {
    pub const NONE: Marks = Marks {
        urgent: false,
        barrier: false,
    };
    pub const URGENT: Marks = Marks {
        urgent: true,
        barrier: false,
    };
    pub const BARRIER: Marks = Marks {
        urgent: false,
        barrier: true,
    };
    pub const BOTH: Marks = Marks {
        urgent: true,
        barrier: true,
    };

    pub fn is_marked(self) -> bool {
        self.urgent || self.barrier
    }

    /// U+B becomes U (TOS 4.1.1: "we mark the merged request as Urgent").
    pub fn normalized(self) -> Marks {
        if self.urgent {
            Marks::URGENT
        } else {
            self
        }
    }

    /// A request built by merging two: the union of their bits, normalized
    /// (TOS 4.1.1, "a superset of the bits in its children").
    pub fn merge(self, other: Marks) -> Marks {
        Marks {
            urgent: self.urgent || other.urgent,
            barrier: self.barrier || other.barrier,
        }
        .normalized()
    }

    /// Each child of a split keeps the parent's bits (TOS 4.1.1).
    pub fn split(self) -> Marks {
        self
    }

    /// Parses the stream notation `-`, `U`, `B`, `UB` (also `BU`).
    pub fn parse(s: &str) -> Option<Marks> {
        match s {
            "-" | "" => Some(Marks::NONE),
            "U" => Some(Marks::URGENT),
            "B" => Some(Marks::BARRIER),
            "UB" | "BU" => Some(Marks::BOTH),
            _ => None,
        }
    }
}

impl fmt::Display for Marks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match (self.urgent, self.barrier) {
            (false, false) => "-",
            (true, false) => "U",
            (false, true) => "B",
            (true, true) => "UB",
        })
    }
}

/// Requests by mark: TOS 4.1.1, both bits count as Urgent on the device.
/// The reports' type (`report::ByMark` re-exports it) and the preload
/// library's counters' (`wire::Counts`), here so that neither needs the other.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ByMark {
    pub urgent: u64,
    pub barrier: u64,
    pub unmarked: u64,
}

impl ByMark {
    pub fn total(&self) -> u64 {
        self.urgent + self.barrier + self.unmarked
    }

    /// One request with these bits (TOS 4.1.1: both count as Urgent).
    pub fn count(&mut self, urgent: bool, barrier: bool) {
        match (urgent, barrier) {
            (true, _) => self.urgent += 1,
            (false, true) => self.barrier += 1,
            (false, false) => self.unmarked += 1,
        }
    }

    pub fn add(&mut self, o: &ByMark) {
        self.urgent += o.urgent;
        self.barrier += o.barrier;
        self.unmarked += o.unmarked;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_takes_union_and_both_becomes_urgent() {
        assert_eq!(Marks::NONE.merge(Marks::NONE), Marks::NONE);
        assert_eq!(Marks::NONE.merge(Marks::BARRIER), Marks::BARRIER);
        assert_eq!(Marks::URGENT.merge(Marks::NONE), Marks::URGENT);
        assert_eq!(Marks::URGENT.merge(Marks::BARRIER), Marks::URGENT);
        assert_eq!(Marks::BARRIER.merge(Marks::BARRIER), Marks::BARRIER);
    }

    #[test]
    fn split_children_inherit() {
        for m in [Marks::NONE, Marks::URGENT, Marks::BARRIER] {
            assert_eq!(m.split(), m);
        }
    }

    #[test]
    fn parse_and_display_round_trip() {
        for s in ["-", "U", "B", "UB"] {
            assert_eq!(Marks::parse(s).unwrap().to_string(), s);
        }
        assert_eq!(Marks::parse("X"), None);
        assert_eq!(Marks::parse("u"), None);
    }
}
