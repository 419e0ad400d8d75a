//! Where `exec`'s marking rules come from (`--mark`, `--rules FILE`,
//! `--mark-thread`, `--mark-file`, `--marks-for DB`): the files and presets
//! read once, the rules in the order they apply, and `--print-rules`'s
//! listing of them. The rules themselves are `wire::marks`'.

use crate::marks;
use crate::Rule;

/// A rules file (`--rules`) or a preset (`--marks-for`): its name, text
/// and rules, parsed once.
#[derive(Clone, Debug)]
pub struct RulesFile {
    pub name: String,
    pub text: String,
    pub rules: Vec<Rule>,
}

impl RulesFile {
    /// A rules file, refused in one line naming `path` when it cannot be
    /// read, is too large or holds a bad rule.
    pub fn load(path: &str) -> Result<RulesFile, String> {
        // Bounded before it is read: no more can reach the program anyway.
        let len = std::fs::metadata(path)
            .map_err(|e| format!("{path}: {e}"))?
            .len();
        if len > 4 * marks::MAX_RULES_BYTES as u64 {
            return Err(format!(
                "{path}: {len} bytes is not a rules file (at most {} bytes of rules reach the program)",
                marks::MAX_RULES_BYTES
            ));
        }
        let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
        let rules = marks::parse_file(path, &text)?;
        Ok(RulesFile {
            name: path.to_string(),
            text,
            rules,
        })
    }

    /// A database's built-in rules (`crates/exec/presets/NAME.rules`).
    pub fn preset(name: &str) -> Result<RulesFile, String> {
        let text = marks::preset(name)?;
        let rules = marks::parse_file(&format!("preset {name}"), text)?;
        Ok(RulesFile {
            name: name.to_string(),
            text: text.to_string(),
            rules,
        })
    }
}

/// The marking rules of a run by where each came from; the first
/// matching rule of all, in this order, wins.
#[derive(Clone, Copy, Debug)]
pub struct Sources<'a> {
    pub mark: &'a [Rule],
    pub rules: &'a [RulesFile],
    pub mark_thread: &'a [Rule],
    pub mark_file: &'a [Rule],
    pub marks_for: &'a [RulesFile],
}

impl Sources<'_> {
    /// Every marking rule in the order they apply.
    pub fn all(&self) -> Vec<Rule> {
        let mut rules = self.mark.to_vec();
        rules.extend(self.rules.iter().flat_map(|f| f.rules.iter().cloned()));
        rules.extend(self.mark_thread.iter().cloned());
        rules.extend(self.mark_file.iter().cloned());
        rules.extend(self.marks_for.iter().flat_map(|f| f.rules.iter().cloned()));
        rules
    }

    /// `--print-rules`: a rules file whose rules are [`Self::all`], each
    /// part headed by the option it came from.
    pub fn listing(&self) -> String {
        let mut s = String::new();
        let lines = |s: &mut String, head: &str, rules: &[Rule]| {
            if !rules.is_empty() {
                *s += &format!("# {head}\n");
                for r in rules {
                    *s += &format!("{}\n", r.to_line());
                }
                *s += "\n";
            }
        };
        lines(&mut s, "--mark", self.mark);
        for f in self.rules {
            s += &format!("# --rules {}\n{}\n", f.name, f.text.trim_end());
            s += "\n";
        }
        lines(&mut s, "--mark-thread", self.mark_thread);
        lines(&mut s, "--mark-file", self.mark_file);
        for f in self.marks_for {
            s += &format!("# --marks-for {}\n{}\n", f.name, f.text.trim_end());
        }
        if s.is_empty() {
            s = "# no marking rules: the program's flags, then the kernel's defaults\n".into();
        }
        s
    }
}

/// Under `--observe` the library has no device to route a ring through,
/// and its rings were the kernel's, uncounted, while the report said
/// `io_uring: "route"` (issue 38 item 5: 6.5K of MariaDB's ~54K io_uring
/// writes counted, those by pwrite alone): the mode used is `pass`, and
/// the report says so.
pub const OBSERVE_IO_URING: &str = "--observe: the program's io_uring rings are the kernel's (--io-uring pass), their requests neither counted nor marked (each ring named in not_routed); without --observe they are routed and counted";

/// The io_uring mode the run uses: `route` needs the device, so observing
/// passes rings to the kernel (refuse stays refuse).
pub fn observed_io_uring(observe: bool, asked: crate::IoUring) -> crate::IoUring {
    match (observe, asked) {
        (true, crate::IoUring::Route) => crate::IoUring::Pass,
        (_, m) => m,
    }
}
