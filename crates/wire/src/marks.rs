//! The marking rules (issue 24 item 6): which requests of a program get
//! which mark, by operation, thread name, file and process title. They
//! stand for the application patches the authors made (TOS 5.4: their
//! RocksDB patch marks flush and compaction I/O non-Urgent; the OSDI
//! artifact's "app-cint"), for programs we cannot patch.
//!
//! One rule, one line, on the command line (`--mark`) or in a rules file
//! (`--rules`, `--marks-for`):
//!
//! ```text
//! [OPS] [thread=GLOB] [file=GLOB] [title=GLOB] => MARK
//! write file=*.ibd => none
//! title="*background writer*" => none
//! read,write file=*/pg_wal/* => urgent
//! ```
//!
//! - OPS: `read`, `write`, `flush` or several joined by commas; none (or
//!   `any`) is every operation. A flush is fsync/fdatasync, an aio
//!   IOCB_CMD_FSYNC/FDSYNC, and the flush command after an O_DSYNC write.
//! - `thread=`: the calling thread's name (`comm`, 15 bytes, as
//!   `prctl(PR_SET_NAME)` sets it).
//! - `file=`: the descriptor's path (`/proc/self/fd/N`); a file unlinked
//!   while open matches the path it had (the link's " (deleted)" suffix is
//!   taken off).
//! - `title=`: the process's title, `/proc/self/cmdline` with its NULs as
//!   spaces (PostgreSQL rewrites its argv: "postgres: checkpointer").
//! - A glob is `crate::glob`'s; a value with spaces is quoted, `"..."` or
//!   `'...'`.
//! - MARK: `urgent`, `barrier`, `none`, or `default` (the kernel's default
//!   marks for the call: stops the search, so that a later rule does not
//!   apply).
//!
//! Every condition of a rule must hold; the first rule that matches wins;
//! a condition on a fact the library could not learn (a thread name it
//! could not read) does not hold. The program's own RWF_URGENT /
//! RWF_BARRIER flags win over every rule (the application said what it
//! meant; rules are for those that say nothing).
//!
//! [`first`] is pure and allocates nothing: it runs per I/O inside the
//! program.

use policy::Marks;

use crate::glob::matches;

/// A mark a rule gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    Urgent,
    Barrier,
    None,
}

impl Mark {
    pub fn parse(s: &str) -> Result<Mark, String> {
        match s {
            "urgent" => Ok(Mark::Urgent),
            "barrier" => Ok(Mark::Barrier),
            "none" => Ok(Mark::None),
            _ => Err(format!("invalid mark '{s}' (urgent, barrier, none)")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Mark::Urgent => "urgent",
            Mark::Barrier => "barrier",
            Mark::None => "none",
        }
    }

    pub fn marks(self) -> Marks {
        match self {
            Mark::Urgent => Marks::URGENT,
            Mark::Barrier => Marks::BARRIER,
            Mark::None => Marks::NONE,
        }
    }
}

/// An operation, as a rule names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    Flush,
}

impl Op {
    fn bit(self) -> u8 {
        match self {
            Op::Read => 1,
            Op::Write => 2,
            Op::Flush => 4,
        }
    }
}

/// The operations a rule applies to (a bit per [`Op`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ops(u8);

impl Ops {
    pub const ANY: Ops = Ops(7);

    pub fn has(self, op: Op) -> bool {
        self.0 & op.bit() != 0
    }

    fn text(self) -> Option<String> {
        if self == Ops::ANY {
            return None;
        }
        let names: Vec<&str> = [
            (Op::Read, "read"),
            (Op::Write, "write"),
            (Op::Flush, "flush"),
        ]
        .into_iter()
        .filter(|&(o, _)| self.has(o))
        .map(|(_, n)| n)
        .collect();
        Some(names.join(","))
    }
}

/// One marking rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub ops: Ops,
    pub thread: Option<String>,
    pub file: Option<String>,
    pub title: Option<String>,
    /// `None`: the kernel's default marks (`=> default`).
    pub mark: Option<Mark>,
}

/// What the library knows of one request. `None`: unknown, or not looked
/// up because no rule asks (see [`Needs`]).
#[derive(Clone, Copy, Debug)]
pub struct Facts<'a> {
    pub op: Op,
    pub thread: Option<&'a str>,
    pub file: Option<&'a str>,
    pub title: Option<&'a str>,
}

/// Which facts some rule asks for: the others are never looked up (each
/// costs a system call or more per request).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Needs {
    pub thread: bool,
    pub file: bool,
    pub title: bool,
}

impl Needs {
    pub fn of(rules: &[Rule]) -> Needs {
        Needs {
            thread: rules.iter().any(|r| r.thread.is_some()),
            file: rules.iter().any(|r| r.file.is_some()),
            title: rules.iter().any(|r| r.title.is_some()),
        }
    }
}

/// The first rule that matches, if any.
pub fn first<'r>(rules: &'r [Rule], f: &Facts) -> Option<&'r Rule> {
    rules.iter().find(|r| r.matches(f))
}

/// Whether a glob condition holds: no condition always does; one on an
/// unknown fact never.
fn holds(cond: &Option<String>, fact: Option<&str>) -> bool {
    match cond {
        None => true,
        Some(g) => fact.is_some_and(|t| matches(g, t)),
    }
}

impl Rule {
    pub fn matches(&self, f: &Facts) -> bool {
        self.ops.has(f.op)
            && holds(&self.thread, f.thread)
            && holds(&self.file, f.file)
            && holds(&self.title, f.title)
    }

    /// One rule from its text. The error says what is wrong; the caller
    /// adds where the rule came from.
    pub fn parse(text: &str) -> Result<Rule, String> {
        let why = |w: String| format!("rule '{}': {w}", shown(text.trim()));
        let (lhs, rhs) = text
            .rsplit_once("=>")
            .ok_or_else(|| why("no '=>' (write as: [OPS] [thread=GLOB] [file=GLOB] [title=GLOB] => urgent|barrier|none|default)".into()))?;
        let mark = match rhs.trim() {
            "" => {
                return Err(why(
                    "no mark after '=>' (urgent, barrier, none, default)".into()
                ))
            }
            "default" => None,
            m => Some(Mark::parse(m).map_err(|_| {
                why(format!(
                    "invalid mark '{m}' (urgent, barrier, none, default)"
                ))
            })?),
        };
        let mut rule = Rule {
            ops: Ops(0),
            thread: None,
            file: None,
            title: None,
            mark,
        };
        for word in words(lhs).map_err(why)? {
            rule.word(&word).map_err(why)?;
        }
        if rule.ops.0 == 0 {
            rule.ops = Ops::ANY;
        }
        Ok(rule)
    }

    fn word(&mut self, w: &str) -> Result<(), String> {
        if let Some((key, glob)) = w.split_once('=') {
            let slot = match key {
                "thread" => &mut self.thread,
                "file" => &mut self.file,
                "title" => &mut self.title,
                _ => {
                    return Err(format!(
                        "unknown condition '{key}=' (thread=, file=, title=)"
                    ))
                }
            };
            if slot.is_some() {
                return Err(format!("'{key}=' given twice"));
            }
            if glob.is_empty() {
                return Err(format!("'{key}=' has an empty glob"));
            }
            check_glob(glob)?;
            *slot = Some(glob.to_string());
            return Ok(());
        }
        for op in w.split(',') {
            self.ops.0 |= match op {
                "read" => Op::Read.bit(),
                "write" => Op::Write.bit(),
                "flush" => Op::Flush.bit(),
                "any" => Ops::ANY.0,
                _ => {
                    return Err(format!(
                        "unknown word '{op}' (read, write, flush, any, thread=GLOB, file=GLOB, title=GLOB)"
                    ))
                }
            };
        }
        Ok(())
    }

    /// The rule as one line, which [`Rule::parse`] reads back: the text
    /// `CINTERRUPTS_EXEC_RULES` holds and the report shows.
    pub fn to_line(&self) -> String {
        let mut parts: Vec<String> = self.ops.text().into_iter().collect();
        for (k, v) in [
            ("thread", &self.thread),
            ("file", &self.file),
            ("title", &self.title),
        ] {
            if let Some(g) = v {
                parts.push(format!("{k}={}", quoted(g)));
            }
        }
        parts.push("=>".into());
        parts.push(self.mark.map_or("default", Mark::name).into());
        parts.join(" ")
    }

    /// `--mark-thread GLOB=MARK` / `--mark-file GLOB=MARK` (the options
    /// before `--mark`): the same rule with one condition.
    pub fn legacy(thread: bool, s: &str) -> Result<Rule, String> {
        let (glob, mark) = s
            .rsplit_once('=')
            .ok_or_else(|| format!("'{s}' is not GLOB=MARK"))?;
        if glob.is_empty() {
            return Err(format!("'{s}': the glob is empty"));
        }
        check_glob(glob)?;
        let g = Some(glob.to_string());
        let (thread, file) = if thread { (g, None) } else { (None, g) };
        Ok(Rule {
            ops: Ops::ANY,
            thread,
            file,
            title: None,
            mark: Some(Mark::parse(mark)?),
        })
    }
}

/// A glob the one-line form can carry: no newline (a line ends there), not
/// both quote characters (one of them quotes it).
fn check_glob(g: &str) -> Result<(), String> {
    if g.contains('\n') {
        return Err("a glob cannot hold a newline".into());
    }
    // The rules reach the library in an environment variable, a C string.
    if g.contains('\0') {
        return Err("a glob cannot hold a NUL byte".into());
    }
    if g.contains('"') && g.contains('\'') {
        return Err(format!("the glob {g} holds both quote characters"));
    }
    Ok(())
}

/// A glob as a rule's text carries it: bare when it can be, else quoted.
fn quoted(g: &str) -> String {
    if !g.is_empty() && !g.contains(|c: char| c.is_whitespace() || c == '"' || c == '\'') {
        g.to_string()
    } else if g.contains('"') {
        format!("'{g}'")
    } else {
        format!("\"{g}\"")
    }
}

/// The words of a rule's left side: split at whitespace, a quoted run
/// (`"..."` or `'...'`, anywhere in a word) kept whole, its quotes taken
/// off.
fn words(s: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in s.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                in_word = true;
            }
            None if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            None => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if let Some(q) = quote {
        return Err(format!("a {q} quote is not closed"));
    }
    if in_word {
        out.push(cur);
    }
    Ok(out)
}

/// The most of a rule an error message shows: enough to find it, not a
/// whole file's worth of one line.
const SHOWN: usize = 80;

/// A rule as an error shows it: cut at [`SHOWN`] characters, control
/// characters escaped (a NUL would cut the terminal's line).
fn shown(text: &str) -> String {
    let mut out = String::new();
    for (n, c) in text.chars().enumerate() {
        if n == SHOWN {
            out.push_str("...");
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The most bytes of rules `exec` hands the library: they travel in one
/// environment variable, which Linux caps at MAX_ARG_STRLEN, 32 pages =
/// 128 KiB (include/uapi/linux/binfmts.h); `execve` fails with E2BIG
/// above it. Half of it, so that a program that passes its environment on
/// with more in it is not refused either.
pub const MAX_RULES_BYTES: usize = 64 * 1024;

/// Refuses rules that would not fit in the environment (above).
pub fn check_size(rules: &[Rule]) -> Result<(), String> {
    let n: usize = rules.iter().map(|r| r.to_line().len() + 1).sum();
    if n > MAX_RULES_BYTES {
        return Err(format!(
            "the marking rules take {n} bytes ({} rules); at most {MAX_RULES_BYTES} reach the program (its environment's limit)",
            rules.len()
        ));
    }
    Ok(())
}

/// A rules file's text (`--rules FILE`, a preset): one rule a line; blank
/// lines and lines starting with `#` are skipped. An error names `name`,
/// the line and what is wrong.
pub fn parse_file(name: &str, text: &str) -> Result<Vec<Rule>, String> {
    let mut rules = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        rules.push(Rule::parse(l).map_err(|e| format!("{name}:{}: {e}", n + 1))?);
    }
    Ok(rules)
}

/// The built-in rule sets (`--marks-for`), each a rules file in
/// `crates/exec/presets/`, which users can copy and edit (they stay
/// beside the `exec` documentation that names them; these rules moved here
/// from exec, issue 38 item 1).
pub const PRESETS: [(&str, &str); 3] = [
    ("mariadb", include_str!("../../exec/presets/mariadb.rules")),
    (
        "postgres",
        include_str!("../../exec/presets/postgres.rules"),
    ),
    ("rocksdb", include_str!("../../exec/presets/rocksdb.rules")),
];

/// A preset's text by name.
pub fn preset(name: &str) -> Result<&'static str, String> {
    PRESETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| *t)
        .ok_or_else(|| {
            let names: Vec<&str> = PRESETS.iter().map(|(n, _)| *n).collect();
            format!("no preset '{name}' ({})", names.join(", "))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts<'a>(
        op: Op,
        thread: Option<&'a str>,
        file: Option<&'a str>,
        title: Option<&'a str>,
    ) -> Facts<'a> {
        Facts {
            op,
            thread,
            file,
            title,
        }
    }

    fn mark_of(rules: &[Rule], f: Facts) -> Option<Option<Mark>> {
        first(rules, &f).map(|r| r.mark)
    }

    #[test]
    fn good_lines_parse_and_print_back() {
        for (text, line) in [
            ("write file=*.ibd => none", "write file=*.ibd => none"),
            (
                "  read,write   thread=rocksdb:* =>urgent",
                "read,write thread=rocksdb:* => urgent",
            ),
            (
                "title='*background writer*' => none",
                "title=\"*background writer*\" => none",
            ),
            ("title=\"*it's*\" => barrier", "title=\"*it's*\" => barrier"),
            ("=> urgent", "=> urgent"),
            // The mark is after the last '=>': a glob may hold one.
            ("file='*a=>b*' => none", "file=*a=>b* => none"),
            ("any flush => default", "=> default"),
            (
                "flush,read file='/a\"b*' => none",
                "read,flush file='/a\"b*' => none",
            ),
        ] {
            let r = Rule::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(r.to_line(), line, "{text}");
            assert_eq!(Rule::parse(&r.to_line()).unwrap(), r, "{line} reads back");
        }
        let r = Rule::parse("write file=*.ibd title=*x* thread=t => none").unwrap();
        assert_eq!(
            (r.thread.as_deref(), r.file.as_deref(), r.title.as_deref()),
            (Some("t"), Some("*.ibd"), Some("*x*"))
        );
        assert!(!r.ops.has(Op::Read) && r.ops.has(Op::Write));
    }

    #[test]
    fn bad_lines_name_the_rule_and_what_is_wrong() {
        for (text, want) in [
            ("write file=*.ibd none", "no '=>'"),
            ("write file=*.ibd =>", "no mark after '=>'"),
            ("write => soon", "invalid mark 'soon'"),
            ("wrote => none", "unknown word 'wrote'"),
            ("read,sync => none", "unknown word 'sync'"),
            ("path=*.ibd => none", "unknown condition 'path='"),
            ("file= => none", "'file=' has an empty glob"),
            ("file=a file=b => none", "'file=' given twice"),
            ("title=\"*x => none", "quote is not closed"),
        ] {
            let e = Rule::parse(text).unwrap_err();
            assert!(e.contains(want), "{text}: {e}");
            assert!(e.starts_with(&format!("rule '{text}'")), "{e}");
        }
    }

    #[test]
    fn a_file_error_names_the_file_and_line() {
        let text = "# a comment\n\nwrite file=*.ibd => none\nread file=x => later\n";
        let e = parse_file("my.rules", text).unwrap_err();
        assert!(
            e.starts_with("my.rules:4: rule 'read file=x => later': invalid mark 'later'"),
            "{e}"
        );
        assert_eq!(parse_file("f", "# only\n  \n").unwrap(), vec![]);
    }

    #[test]
    fn each_condition_matches_alone_and_all_must_hold() {
        let by_op = vec![Rule::parse("write => none").unwrap()];
        assert_eq!(
            mark_of(&by_op, facts(Op::Write, None, None, None)),
            Some(Some(Mark::None))
        );
        assert_eq!(mark_of(&by_op, facts(Op::Read, None, None, None)), None);
        assert_eq!(mark_of(&by_op, facts(Op::Flush, None, None, None)), None);

        let by_thread = vec![Rule::parse("thread=rocksdb:low* => none").unwrap()];
        assert!(first(
            &by_thread,
            &facts(Op::Read, Some("rocksdb:low"), None, None)
        )
        .is_some());
        assert!(first(
            &by_thread,
            &facts(Op::Read, Some("rocksdb:high"), None, None)
        )
        .is_none());
        assert!(
            first(&by_thread, &facts(Op::Read, None, None, None)).is_none(),
            "unknown thread"
        );

        let by_file = vec![Rule::parse("file=*.ibd => none").unwrap()];
        assert!(first(&by_file, &facts(Op::Write, None, Some("/db/t1.ibd"), None)).is_some());
        assert!(first(&by_file, &facts(Op::Write, None, Some("/db/ibdata1"), None)).is_none());

        let by_title = vec![Rule::parse("title=*checkpointer* => none").unwrap()];
        let ckpt = Some("postgres: checkpointer");
        assert!(first(&by_title, &facts(Op::Write, None, None, ckpt)).is_some());
        assert!(first(
            &by_title,
            &facts(Op::Write, None, None, Some("postgres: walwriter"))
        )
        .is_none());

        let all = vec![Rule::parse("write thread=w title=*db* file=*.log => barrier").unwrap()];
        let f = |op, t, p, ti| first(&all, &facts(op, t, p, ti)).is_some();
        assert!(f(Op::Write, Some("w"), Some("/x.log"), Some("mydb")));
        assert!(!f(Op::Read, Some("w"), Some("/x.log"), Some("mydb")));
        assert!(!f(Op::Write, Some("v"), Some("/x.log"), Some("mydb")));
        assert!(!f(Op::Write, Some("w"), Some("/x.sst"), Some("mydb")));
        assert!(!f(Op::Write, Some("w"), Some("/x.log"), Some("other")));
    }

    #[test]
    fn the_first_match_wins_and_default_stops_the_search() {
        let rules = parse_file(
            "t",
            "write file=*.ibd => none\n\
             file=*.ibd => urgent\n\
             title=*walwriter* => default\n\
             write => barrier\n",
        )
        .unwrap();
        let ibd = Some("/d/t.ibd");
        assert_eq!(
            mark_of(&rules, facts(Op::Write, None, ibd, None)),
            Some(Some(Mark::None))
        );
        assert_eq!(
            mark_of(&rules, facts(Op::Read, None, ibd, None)),
            Some(Some(Mark::Urgent))
        );
        let ww = Some("postgres: walwriter");
        assert_eq!(
            mark_of(&rules, facts(Op::Write, None, Some("/w"), ww)),
            Some(None)
        );
        assert_eq!(
            mark_of(&rules, facts(Op::Write, None, Some("/w"), None)),
            Some(Some(Mark::Barrier))
        );
        assert_eq!(
            mark_of(&rules, facts(Op::Read, None, Some("/w"), None)),
            None
        );
        let n = Needs::of(&rules);
        assert_eq!((n.thread, n.file, n.title), (false, true, true));
    }

    #[test]
    fn legacy_options_become_one_condition_rules() {
        let r = Rule::legacy(true, "rocksdb:*=none").unwrap();
        assert_eq!(r.to_line(), "thread=rocksdb:* => none");
        let r = Rule::legacy(false, "*/a b=c*=urgent").unwrap();
        assert_eq!(r.to_line(), "file=\"*/a b=c*\" => urgent");
        assert_eq!(Rule::parse(&r.to_line()).unwrap(), r);
        assert!(Rule::legacy(true, "rocksdb")
            .unwrap_err()
            .contains("GLOB=MARK"));
        assert!(Rule::legacy(false, "x=soon")
            .unwrap_err()
            .contains("invalid mark 'soon'"));
        assert!(Rule::legacy(false, "=none").unwrap_err().contains("empty"));
        assert!(Rule::legacy(false, "a\"'=none")
            .unwrap_err()
            .contains("quote"));
        assert!(Rule::legacy(false, "a\0b=none")
            .unwrap_err()
            .contains("NUL"));
        let e = Rule::parse("file=a\0b => none").unwrap_err();
        assert!(e.contains("NUL") && e.contains("a\\u{0}b"), "{e}");
    }

    #[test]
    fn rules_that_would_not_fit_the_environment_are_refused() {
        let one = Rule::parse("write file=*.ibd => none").unwrap();
        assert!(check_size(&vec![one.clone(); 100]).is_ok());
        let e = check_size(&vec![one; 10_000]).unwrap_err();
        assert!(e.contains("10000 rules"), "{e}");
    }

    #[test]
    fn a_long_bad_rule_is_shown_cut() {
        let long = "x".repeat(10_000);
        let e = Rule::parse(&long).unwrap_err();
        assert!(e.len() < 300, "{e}");
        assert!(
            e.starts_with(&format!("rule '{}...'", "x".repeat(80))),
            "{e}"
        );
    }

    #[test]
    fn every_preset_parses_and_names_its_sources() {
        for (name, text) in PRESETS {
            let rules = parse_file(name, text).unwrap_or_else(|e| panic!("{e}"));
            assert!(!rules.is_empty(), "{name}");
            // Every rule has a comment above it citing a source (a URL).
            let mut cited = false;
            for line in text.lines().map(str::trim) {
                if line.starts_with('#') && line.contains("https://") {
                    cited = true;
                } else if !line.is_empty() && !line.starts_with('#') {
                    assert!(cited, "{name}: '{line}' cites no source above it");
                }
            }
        }
        assert!(preset("oracle")
            .unwrap_err()
            .contains("mariadb, postgres, rocksdb"));
    }

    /// The matcher's cost per request, printed (`cargo test -p
    /// cinterrupts-exec --release marks::tests::cost -- --nocapture`):
    /// the PostgreSQL preset against a backend's WAL write, which passes
    /// every rule.
    #[test]
    fn cost() {
        let rules = parse_file("postgres", preset("postgres").unwrap()).unwrap();
        let f = facts(
            Op::Write,
            Some("postgres"),
            Some("/var/lib/postgresql/15/main/pg_wal/000000010000000000000001"),
            Some("postgres: postgres pgbench [local] COMMIT"),
        );
        let n = 200_000;
        let t = std::time::Instant::now();
        let mut hits = 0;
        for _ in 0..n {
            hits += usize::from(
                first(std::hint::black_box(&rules), std::hint::black_box(&f)).is_some(),
            );
        }
        let per = t.elapsed().as_nanos() as f64 / n as f64;
        eprintln!(
            "marks::first: {per:.0} ns per request ({} rules, {hits} hits)",
            rules.len()
        );
    }
}
