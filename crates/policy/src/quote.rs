//! How an error echoes the input it refuses: one bounded, printable line.
//! Every front door (job files, completion streams, profiles) quotes through
//! here, so a 1 MB value or a stray carriage return never reaches a terminal
//! whole (issue 12 item 14, and the README's "one line" convention).

/// Longest piece of the input an error quotes, in characters. A hostile value
/// (1 MB of `A`, say) is cut here so the error stays one readable line.
pub const MAX_QUOTED_CHARS: usize = 60;

/// Longest message built around quoted input (a parser's own message, such
/// as toml's, may carry input it did not cut).
pub const MAX_MESSAGE_CHARS: usize = 300;

/// `s` as an error may quote it: control characters (NUL, escape, a stray
/// carriage return) and other unprintable ones (bidi overrides) escaped as
/// Rust writes them (`\0`, `\u{1b}`), and cut to [`MAX_QUOTED_CHARS`] with an
/// ellipsis and the full length when longer.
pub fn quoted(s: &str) -> String {
    cut(s, MAX_QUOTED_CHARS, true)
}

/// A whole message on one line: control characters escaped and cut to
/// [`MAX_MESSAGE_CHARS`], for text whose parts were not quoted one by one.
pub fn one_line(s: &str) -> String {
    cut(s, MAX_MESSAGE_CHARS, false)
}

/// The 1-based line of a byte offset in a file's text (an offset past the
/// end is on the last line): where a parser's span points, for an error
/// that names its file and line (TOML profiles, sweep specs, application
/// files).
pub fn line_of(text: &str, offset: usize) -> usize {
    1 + text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

/// A parser's message of several lines (toml's, with its caret drawing
/// removed by the caller or not) on one: each non-empty line trimmed,
/// joined by `; `.
pub fn joined_lines(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// Control characters escaped, nothing cut: for text whose quoted parts are
/// already bounded.
pub fn escape_controls(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

fn cut(s: &str, max: usize, unprintable: bool) -> String {
    let mut out = String::new();
    for (n, c) in s.chars().enumerate() {
        if n == max {
            out.push_str(&format!("\u{2026} ({} bytes)", s.len()));
            return out;
        }
        match c {
            '\\' | '\'' | '"' => out.push(c),
            c if unprintable || c.is_control() => out.extend(c.escape_debug()),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joined_lines_trims_and_drops_the_empty_ones() {
        assert_eq!(
            joined_lines("  expected `=`\n\n  at x \n"),
            "expected `=`; at x"
        );
        assert_eq!(joined_lines("one"), "one");
        assert_eq!(joined_lines("\n \n"), "");
    }

    #[test]
    fn line_of_counts_the_newlines_before_an_offset() {
        let text = "a = 1\nb = 2\n\nc = 3";
        assert_eq!(line_of(text, 0), 1);
        assert_eq!(line_of(text, 5), 1, "the newline itself ends line 1");
        assert_eq!(line_of(text, 6), 2);
        assert_eq!(line_of(text, 13), 4);
        assert_eq!(line_of(text, 1000), 4, "past the end: the last line");
    }

    #[test]
    fn quoting_escapes_and_cuts() {
        assert_eq!(quoted("4k"), "4k");
        assert_eq!(quoted("a\0b\x1b"), "a\\0b\\u{1b}");
        assert_eq!(quoted("1\r55"), "1\\r55");
        assert_eq!(quoted("caf\u{e9} 'x'"), "caf\u{e9} 'x'");
        let long = "A".repeat(1000);
        let q = quoted(&long);
        assert!(q.starts_with(&"A".repeat(MAX_QUOTED_CHARS)));
        assert_eq!(
            q.chars().count(),
            MAX_QUOTED_CHARS + " \u{2026} (1000 bytes)".len() - 3
        );
        assert!(q.ends_with("\u{2026} (1000 bytes)"), "{q}");
    }

    #[test]
    fn a_message_is_one_bounded_line() {
        assert_eq!(one_line("a\nb\tc"), "a\\nb\\tc");
        assert_eq!(one_line("x 'y'"), "x 'y'");
        let long = format!("invalid '{}'", "9".repeat(1_000_000));
        let l = one_line(&long);
        assert!(l.chars().count() < MAX_MESSAGE_CHARS + 20, "{}", l.len());
        assert!(!l.contains('\n'));
        assert_eq!(escape_controls("a\tb"), "a\\tb");
    }
}
