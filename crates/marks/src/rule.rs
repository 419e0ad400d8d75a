//! The marking rules: which requests get which mark, by operation,
//! process, thread, file, process title and volume. The syntax is the
//! crate's (its README, documented once); this module parses it, prints it
//! back, and matches a request's facts against it.
//!
//! [`first`] is pure and allocates nothing: it runs per I/O inside the
//! program under `exec` (the preload library).

use policy::Marks;

use crate::glob::matches;

/// A mark a rule gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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

/// The rule's syntax in one line, as errors show it.
pub const SYNTAX: &str = "[OPS] [thread=GLOB] [file=GLOB] [title=GLOB] [comm=GLOB] [volume=GLOB] => urgent|barrier|none|default";

/// One marking rule.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rule {
    pub ops: Ops,
    pub thread: Option<String>,
    pub file: Option<String>,
    pub title: Option<String>,
    /// The process's command name (`comm=`).
    pub comm: Option<String>,
    /// The volume a trace's request went to (`volume=`).
    pub volume: Option<String>,
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
    pub comm: Option<&'a str>,
    pub volume: Option<&'a str>,
}

impl<'a> Facts<'a> {
    /// A request of which only the operation is known.
    pub fn op(op: Op) -> Facts<'a> {
        Facts {
            op,
            thread: None,
            file: None,
            title: None,
            comm: None,
            volume: None,
        }
    }
}

/// Which facts some rule asks for: the others are never looked up (each
/// costs a system call or more per request).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Needs {
    pub thread: bool,
    pub file: bool,
    pub title: bool,
    pub comm: bool,
    pub volume: bool,
}

impl Needs {
    pub fn of(rules: &[Rule]) -> Needs {
        Needs {
            thread: rules.iter().any(|r| r.thread.is_some()),
            file: rules.iter().any(|r| r.file.is_some()),
            title: rules.iter().any(|r| r.title.is_some()),
            comm: rules.iter().any(|r| r.comm.is_some()),
            volume: rules.iter().any(|r| r.volume.is_some()),
        }
    }

    /// Refuses a rule that asks for a fact `known` says this source of
    /// requests never has (a block trace has no thread or file; `exec`
    /// sees no volume): such a rule would never match, silently. The
    /// error names the rule and `source`.
    pub fn check(known: Needs, source: &str, rules: &[Rule]) -> Result<(), String> {
        for r in rules {
            for (key, asks, has) in [
                ("thread", r.thread.is_some(), known.thread),
                ("file", r.file.is_some(), known.file),
                ("title", r.title.is_some(), known.title),
                ("comm", r.comm.is_some(), known.comm),
                ("volume", r.volume.is_some(), known.volume),
            ] {
                if asks && !has {
                    return Err(format!(
                        "rule '{}': {source} has no '{key}=' to match",
                        shown(&r.to_line())
                    ));
                }
            }
        }
        Ok(())
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
            && holds(&self.comm, f.comm)
            && holds(&self.volume, f.volume)
    }

    /// One rule from its text. The error says what is wrong; the caller
    /// adds where the rule came from.
    pub fn parse(text: &str) -> Result<Rule, String> {
        let why = |w: String| format!("rule '{}': {w}", shown(text.trim()));
        let (lhs, rhs) = text
            .rsplit_once("=>")
            .ok_or_else(|| why(format!("no '=>' (write as: {SYNTAX})")))?;
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
            comm: None,
            volume: None,
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
                "comm" => &mut self.comm,
                "volume" => &mut self.volume,
                _ => {
                    return Err(format!(
                        "unknown condition '{key}=' (thread=, file=, title=, comm=, volume=)"
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
                        "unknown word '{op}' (read, write, flush, any, thread=GLOB, file=GLOB, title=GLOB, comm=GLOB, volume=GLOB)"
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
            ("comm", &self.comm),
            ("volume", &self.volume),
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
            comm: None,
            volume: None,
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
            thread,
            file,
            title,
            ..Facts::op(op)
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
    fn comm_and_volume_match_and_a_source_without_them_refuses_them() {
        let rules = vec![Rule::parse("read comm=db* volume=nvme0n1 => barrier").unwrap()];
        assert_eq!(
            rules[0].to_line(),
            "read comm=db* volume=nvme0n1 => barrier"
        );
        let f = Facts {
            comm: Some("dbd"),
            volume: Some("nvme0n1"),
            ..Facts::op(Op::Read)
        };
        assert!(first(&rules, &f).is_some());
        assert!(first(&rules, &Facts { volume: None, ..f }).is_none());
        let all = Needs {
            thread: true,
            file: true,
            title: true,
            comm: true,
            volume: true,
        };
        assert!(Needs::check(all, "x", &rules).is_ok());
        let e = Needs::check(
            Needs {
                volume: false,
                ..all
            },
            "exec",
            &rules,
        )
        .unwrap_err();
        assert!(e.contains("exec has no 'volume='"), "{e}");
    }
}
