//! A report as a few kinds of blocks, written out as Markdown and as a
//! self-contained HTML page (figures inline), so the two cannot drift.

use std::fmt::Write;

#[derive(Clone, Debug)]
pub enum Block {
    Heading(u8, String),
    Para(String),
    Table {
        head: Vec<String>,
        rows: Vec<Vec<String>>,
    },
    /// An SVG figure: linked from Markdown by `file`, inlined in HTML.
    Figure {
        file: String,
        svg: String,
        caption: String,
    },
    Code {
        title: String,
        text: String,
    },
    /// A list of links to the level-2 headings, level 3 nested under
    /// them: a sidebar in HTML, a bullet list in Markdown.
    Contents,
}

pub fn markdown(blocks: &[Block]) -> String {
    let ids = anchors(blocks);
    let mut out = String::new();
    for b in blocks {
        match b {
            Block::Heading(level, text) => {
                let _ = writeln!(out, "{} {text}\n", "#".repeat(usize::from(*level)));
            }
            Block::Contents => {
                let entries = contents(blocks, &ids);
                if entries.is_empty() {
                    continue;
                }
                out.push_str("**Contents**\n\n");
                for e in entries {
                    // Brackets would end the link text early.
                    let text = e.text.replace('[', "\\[").replace(']', "\\]");
                    let indent = if e.nested { "  " } else { "" };
                    let _ = writeln!(out, "{indent}- [{text}](#{})", e.id);
                }
                out.push('\n');
            }
            Block::Para(text) => {
                let _ = writeln!(out, "{text}\n");
            }
            Block::Table { head, rows } => {
                let cell = |s: &str| s.replace('|', "\\|");
                let _ = writeln!(
                    out,
                    "| {} |",
                    head.iter().map(|h| cell(h)).collect::<Vec<_>>().join(" | ")
                );
                let _ = writeln!(out, "|{}", "---|".repeat(head.len()));
                for r in rows {
                    let _ = writeln!(
                        out,
                        "| {} |",
                        r.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | ")
                    );
                }
                out.push('\n');
            }
            Block::Figure { file, caption, .. } => {
                let _ = writeln!(out, "![{caption}]({file})\n");
            }
            Block::Code { title, text } => {
                let _ = writeln!(
                    out,
                    "<details><summary>{title}</summary>\n\n```ini\n{}\n```\n</details>\n",
                    text.trim_end()
                );
            }
        }
    }
    out
}

pub fn html(title: &str, blocks: &[Block]) -> String {
    let ids = anchors(blocks);
    let toc = contents(blocks, &ids);
    let with_toc = !toc.is_empty() && blocks.iter().any(|b| matches!(b, Block::Contents));
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n<title>{}</title>\n<style>\n{}</style>\n</head>\n<body{}>\n",
        escape(title),
        STYLE,
        if with_toc { " class=\"with-toc\"" } else { "" }
    );
    for (b, id) in blocks.iter().zip(&ids) {
        match b {
            Block::Heading(level, text) => {
                let id = id.as_deref().unwrap_or_default();
                let _ = writeln!(
                    out,
                    "<h{level} id=\"{}\">{}</h{level}>",
                    escape(id),
                    inline(text)
                );
            }
            Block::Contents => {
                if toc.is_empty() {
                    continue;
                }
                out.push_str("<nav class=\"toc\" aria-label=\"Contents\">\n<p class=\"toc-title\">Contents</p>\n<ul>\n");
                // A level-2 item stays open for the level-3 list under it.
                let (mut item_open, mut sub_open) = (false, false);
                for e in &toc {
                    if e.nested && !sub_open {
                        out.push_str("<ul>\n");
                        sub_open = true;
                    }
                    if !e.nested {
                        if sub_open {
                            out.push_str("</ul>\n");
                            sub_open = false;
                        }
                        if item_open {
                            out.push_str("</li>\n");
                        }
                        item_open = true;
                    }
                    let _ = write!(
                        out,
                        "<li><a href=\"#{}\" title=\"{}\">{}</a>",
                        escape(&e.id),
                        escape(&plain(&e.text)),
                        render(&spans(&e.text), false)
                    );
                    if e.nested {
                        out.push_str("</li>\n");
                    }
                }
                if sub_open {
                    out.push_str("</ul>\n");
                }
                if item_open {
                    out.push_str("</li>\n");
                }
                out.push_str("</ul>\n</nav>\n");
            }
            Block::Para(text) => {
                let _ = writeln!(out, "<p>{}</p>", inline(text));
            }
            Block::Table { head, rows } => {
                out.push_str("<div class=\"table-wrap\">\n<table>\n<tr>");
                for h in head {
                    let _ = write!(out, "<th>{}</th>", inline(h));
                }
                out.push_str("</tr>\n");
                for r in rows {
                    out.push_str("<tr>");
                    for c in r {
                        let class = match verdict_class(c) {
                            Some(v) => format!(" class=\"verdict {v}\""),
                            None => String::new(),
                        };
                        let _ = write!(out, "<td{class}>{}</td>", inline(c));
                    }
                    out.push_str("</tr>\n");
                }
                out.push_str("</table>\n</div>\n");
            }
            Block::Figure { svg, caption, .. } => {
                // The SVG's own XML declaration is not allowed inside HTML.
                let body = svg.trim_start();
                let body = match body.strip_prefix("<?xml") {
                    Some(rest) => rest.split_once("?>").map_or(body, |(_, b)| b),
                    None => body,
                };
                let _ = writeln!(
                    out,
                    "<figure>\n{}\n<figcaption>{}</figcaption>\n</figure>",
                    body.trim(),
                    inline(caption)
                );
            }
            Block::Code { title, text } => {
                let _ = writeln!(
                    out,
                    "<details><summary>{}</summary><pre>{}</pre></details>",
                    inline(title),
                    escape(text.trim_end())
                );
            }
        }
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// The CSS class of a table cell that is exactly a verdict.
fn verdict_class(cell: &str) -> Option<&'static str> {
    Some(match cell {
        "holds" => "verdict-holds",
        "holds qualitatively" => "verdict-qualitatively",
        "right direction, far off" => "verdict-far-off",
        "does not hold" => "verdict-fails",
        "not run" => "verdict-not-run",
        _ => return None,
    })
}

// A fixed sidebar on wide screens, a contents box in the flow on narrow
// ones. No `<` or `&` here: the page must stay well-formed XML.
const STYLE: &str = "body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; line-height: 1.45; max-width: 1500px; margin: 2em auto; padding: 0 1.5em; color: #222; }
body.with-toc { margin-left: 19rem; }
h1 { font-size: 1.6em; }
h2 { margin-top: 2.2em; padding-top: 0.6em; border-top: 2px solid #dde; }
h3 { margin-top: 1.6em; }
h2:target, h3:target { background: #fff6c8; }
nav.toc { position: fixed; top: 0; left: 0; bottom: 0; width: 17rem; box-sizing: border-box; overflow-y: auto; padding: 1em 0.9em; background: #f6f7f9; border-right: 1px solid #dde; font-size: 0.82em; line-height: 1.3; }
nav.toc .toc-title { font-weight: bold; font-size: 1.15em; margin: 0 0 0.6em; }
nav.toc ul { list-style: none; margin: 0; padding: 0; }
nav.toc li { margin: 0.35em 0; }
nav.toc ul ul { padding-left: 0.9em; }
nav.toc ul ul li { margin: 0.1em 0; }
nav.toc ul ul a { display: block; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; color: #667; }
nav.toc a { color: #1a4d8f; text-decoration: none; }
nav.toc a:hover { text-decoration: underline; }
@media (max-width: 60em) {
  body.with-toc { margin-left: auto; }
  nav.toc { position: static; width: auto; max-height: 24em; margin: 1em 0; border: 1px solid #dde; }
}
.table-wrap { overflow-x: auto; margin: 0.5em 0 1.5em; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f0f1f4; }
td.verdict { white-space: nowrap; font-weight: 600; }
td.verdict-holds { background: #dcf1d6; color: #1f5c17; }
td.verdict-qualitatively { background: #fdf1c7; color: #6b5300; }
td.verdict-far-off { background: #fde1c4; color: #7a3c00; }
td.verdict-fails { background: #f9d7d4; color: #8a1c14; }
td.verdict-not-run { color: #888; font-weight: normal; font-style: italic; }
figure { margin: 0.5em 0; overflow-x: auto; }
figcaption { font-size: 0.85em; color: #555; }
pre { background: #f7f7f7; padding: 0.6em; overflow-x: auto; }
code { background: #f0f1f4; padding: 0 0.2em; border-radius: 3px; font-size: 0.92em; }
summary { cursor: pointer; color: #445; }
";

pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The few Markdown inline forms the report writes: `code`, **bold** and
/// [text](url). Anything else is text.
#[derive(Clone, Debug, PartialEq)]
enum Span {
    Text(String),
    Code(String),
    Strong(Vec<Span>),
    Link(Vec<Span>, String),
}

fn spans(s: &str) -> Vec<Span> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        let found = if c == '`' {
            rest[1..]
                .find('`')
                .map(|end| (Span::Code(rest[1..1 + end].to_string()), end + 2))
        } else if let Some(after) = rest.strip_prefix("**") {
            closing_stars(after)
                .filter(|&end| end > 0)
                .map(|end| (Span::Strong(spans(&after[..end])), end + 4))
        } else if c == '[' {
            link(rest)
        } else {
            None
        };
        match found {
            Some((span, len)) => {
                if !text.is_empty() {
                    out.push(Span::Text(std::mem::take(&mut text)));
                }
                out.push(span);
                rest = &rest[len..];
            }
            None => {
                // A lone `**` stays text as a whole, not as two stars.
                let len = if rest.starts_with("**") {
                    2
                } else {
                    c.len_utf8()
                };
                text.push_str(&rest[..len]);
                rest = &rest[len..];
            }
        }
    }
    if !text.is_empty() {
        out.push(Span::Text(text));
    }
    out
}

/// Where the `**` closing a bold run starts, skipping code spans.
fn closing_stars(s: &str) -> Option<usize> {
    let mut i = 0;
    while i < s.len() {
        if s[i..].starts_with("**") {
            return Some(i);
        }
        if s[i..].starts_with('`') {
            if let Some(end) = s[i + 1..].find('`') {
                i += end + 2;
                continue;
            }
        }
        i += s[i..].chars().next().map_or(1, char::len_utf8);
    }
    None
}

/// `[text](url)` at the start of `s`, for URLs that are web addresses,
/// fragments or relative paths (no other schemes).
fn link(s: &str) -> Option<(Span, usize)> {
    let close = s.find("](")?;
    let text = &s[1..close];
    if text.is_empty() || text.contains('[') || text.contains(']') {
        return None;
    }
    let url_start = close + 2;
    let url_len = s[url_start..].find(')')?;
    let url = &s[url_start..url_start + url_len];
    let safe = url.starts_with("https://") || url.starts_with("http://") || !url.contains(':');
    if url.is_empty() || url.contains(char::is_whitespace) || !safe {
        return None;
    }
    Some((
        Span::Link(spans(text), url.to_string()),
        url_start + url_len + 1,
    ))
}

/// HTML for spans; links as plain text where a link cannot go (inside one).
fn render(spans: &[Span], links: bool) -> String {
    let mut out = String::new();
    for s in spans {
        match s {
            Span::Text(t) => out.push_str(&escape(t)),
            Span::Code(t) => {
                let _ = write!(out, "<code>{}</code>", escape(t));
            }
            Span::Strong(inner) => {
                let _ = write!(out, "<strong>{}</strong>", render(inner, links));
            }
            Span::Link(inner, url) if links => {
                let _ = write!(
                    out,
                    "<a href=\"{}\">{}</a>",
                    escape(url),
                    render(inner, false)
                );
            }
            Span::Link(inner, _) => out.push_str(&render(inner, false)),
        }
    }
    out
}

/// Escaped text with Markdown's `code`, **bold** and links as HTML.
fn inline(s: &str) -> String {
    render(&spans(s), true)
}

/// The text a reader sees: the Markdown marks gone.
fn plain(s: &str) -> String {
    fn walk(spans: &[Span], out: &mut String) {
        for s in spans {
            match s {
                Span::Text(t) | Span::Code(t) => out.push_str(t),
                Span::Strong(inner) | Span::Link(inner, _) => walk(inner, out),
            }
        }
    }
    let mut out = String::new();
    walk(&spans(s), &mut out);
    out
}

/// GitHub's anchor for a Markdown heading (github-slugger): the visible
/// text lowercased, letters, digits, `-` and `_` kept, each space a `-`,
/// everything else dropped.
pub fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in plain(s).chars() {
        if c == ' ' {
            out.push('-');
        } else if c.is_alphanumeric() || c == '-' || c == '_' {
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// Every heading's anchor, in order (`None` for other blocks): GitHub's
/// slug, with `-1`, `-2`, ... added to repeats as GitHub does, so that the
/// Markdown's links and the HTML's ids are the same.
fn anchors(blocks: &[Block]) -> Vec<Option<String>> {
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    blocks
        .iter()
        .map(|b| {
            let Block::Heading(_, text) = b else {
                return None;
            };
            let mut base = slug(text);
            if base.is_empty() {
                // GitHub would give "", no id in HTML; only here do they part.
                base = "section".into();
            }
            let mut id = base.clone();
            while seen.contains_key(&id) {
                let n = seen.get_mut(&base).expect("base seen first");
                *n += 1;
                id = format!("{base}-{n}");
            }
            seen.insert(id.clone(), 0);
            Some(id)
        })
        .collect()
}

/// One line of the contents: a level-2 heading, or a level-3 one nested
/// under it.
struct Entry {
    text: String,
    id: String,
    nested: bool,
}

fn contents(blocks: &[Block], ids: &[Option<String>]) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut under_h2 = false;
    for (b, id) in blocks.iter().zip(ids) {
        if let (Block::Heading(level @ (2 | 3), text), Some(id)) = (b, id) {
            let nested = *level == 3 && under_h2;
            under_h2 |= *level == 2;
            out.push(Entry {
                text: text.clone(),
                id: id.clone(),
                nested,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<Block> {
        vec![
            Block::Heading(2, "Fig 10 <mixed>".into()),
            Block::Para("run `cinterrupts sim` & see".into()),
            Block::Table {
                head: vec!["claim".into(), "verdict".into()],
                rows: vec![vec!["a|b".into(), "holds".into()]],
            },
            Block::Figure {
                file: "figures/fig10-sim.svg".into(),
                svg: "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"><text>x</text></svg>".into(),
                caption: "Fig 10".into(),
            },
            Block::Code {
                title: "mixed-16.fio".into(),
                text: "[sync]\nioengine=psync\n".into(),
            },
        ]
    }

    #[test]
    fn markdown_links_figures_and_escapes_pipes() {
        let md = markdown(&sample());
        assert!(md.contains("## Fig 10 <mixed>"));
        assert!(md.contains("| a\\|b | holds |"));
        assert!(md.contains("![Fig 10](figures/fig10-sim.svg)"));
        assert!(md.contains("```ini\n[sync]\nioengine=psync\n```"));
    }

    #[test]
    fn html_is_well_formed_with_figures_inline() {
        let page = html("report", &sample());
        let doc = roxmltree::Document::parse(page.trim_start_matches("<!DOCTYPE html>\n"))
            .unwrap_or_else(|e| panic!("{e}\n{page}"));
        assert!(doc.descendants().any(|n| n.has_tag_name("svg")));
        assert!(page.contains("Fig 10 &lt;mixed&gt;"));
        assert!(page.contains("<code>cinterrupts sim</code> &amp; see"));
        assert!(page.contains("<td class=\"verdict verdict-holds\">holds</td>"));
        assert!(!page.contains("<?xml"));
    }

    fn parse(page: &str) -> roxmltree::Document<'_> {
        roxmltree::Document::parse(page.trim_start_matches("<!DOCTYPE html>\n"))
            .unwrap_or_else(|e| panic!("{e}\n{page}"))
    }

    /// The experiments' shape: intro, contents, then a level-2 heading per
    /// experiment with a level-3 one per mode.
    fn report_like() -> Vec<Block> {
        vec![
            Block::Heading(
                1,
                "Calibrated interrupts: the paper's microbenchmarks, rerun".into(),
            ),
            Block::Para("**3 claims hold**, 1 does not.".into()),
            Block::Contents,
            Block::Heading(
                2,
                "Fig 8: adaptive against NVMe coalescing (Optane, one core)".into(),
            ),
            Block::Heading(
                3,
                "fig8 (simulator: the paper's Optane/P3700 profiles on its 2.0 GHz Xeon)".into(),
            ),
            Block::Heading(
                3,
                "fig8 (emulator: real threads on this machine, null device)".into(),
            ),
            Block::Heading(
                2,
                "FR Fig 13: fillsync beside each TO workload (Vanilla .. BSJ-Opt)".into(),
            ),
            Block::Heading(3, "fr-fig13 (simulator: T_D1 & T_JD)".into()),
        ]
    }

    #[test]
    fn bold_code_and_links_render_in_paragraphs_and_cells() {
        let page = html(
            "r",
            &[
                Block::Para(
                    "**12 claims hold**, see `summary.json` and [the paper](https://example.org/p?a=1&b=2)".into(),
                ),
                Block::Table {
                    head: vec!["ours".into()],
                    rows: vec![vec!["1.5 (`a / b`)".into()], vec!["**x** and **y**".into()]],
                },
            ],
        );
        parse(&page);
        assert!(page.contains(
            "<p><strong>12 claims hold</strong>, see <code>summary.json</code> and \
             <a href=\"https://example.org/p?a=1&amp;b=2\">the paper</a></p>"
        ));
        assert!(page.contains("<td>1.5 (<code>a / b</code>)</td>"));
        assert!(page.contains("<td><strong>x</strong> and <strong>y</strong></td>"));
        assert!(!page.contains("**"));
        // Markdown is left as written.
        let md = markdown(&[Block::Para("**12 claims hold**, `x`".into())]);
        assert_eq!(md, "**12 claims hold**, `x`\n\n");
    }

    #[test]
    fn escaping_holds_around_and_inside_the_marks() {
        let cells = [
            ("a < b & c", "a &lt; b &amp; c"),
            (
                "**x<y & \"z\"**",
                "<strong>x&lt;y &amp; &quot;z&quot;</strong>",
            ),
            ("`<b>&amp;`", "<code>&lt;b&gt;&amp;amp;</code>"),
            // Stars inside code are code, not bold.
            ("`a ** b` **c**", "<code>a ** b</code> <strong>c</strong>"),
            ("**`x**y`**", "<strong><code>x**y</code></strong>"),
            // Unpaired marks stay text.
            ("2 ** 3 < 9", "2 ** 3 &lt; 9"),
            ("a `b", "a `b"),
            ("****", "****"),
            // Only web, fragment and relative links; never script.
            ("[x](javascript:alert(1))", "[x](javascript:alert(1))"),
            ("[<i>](#a\"b)", "<a href=\"#a&quot;b\">&lt;i&gt;</a>"),
            ("[a](b c)", "[a](b c)"),
            ("T_D1 * 2 ± 0.5", "T_D1 * 2 ± 0.5"),
        ];
        for (md, want) in cells {
            assert_eq!(inline(md), want, "{md}");
            let page = html(
                "t",
                &[Block::Table {
                    head: vec!["h".into()],
                    rows: vec![vec![md.into()]],
                }],
            );
            assert!(page.contains(&format!("<td>{want}</td>")), "{md}\n{page}");
            parse(&page);
        }
        assert_eq!(plain("**a** `b` [c](#d)"), "a b c");
    }

    #[test]
    fn verdict_cells_get_classes() {
        let verdicts = [
            ("holds", "verdict-holds"),
            ("holds qualitatively", "verdict-qualitatively"),
            ("right direction, far off", "verdict-far-off"),
            ("does not hold", "verdict-fails"),
            ("not run", "verdict-not-run"),
        ];
        let page = html(
            "t",
            &[Block::Table {
                head: vec!["verdict".into()],
                rows: verdicts
                    .iter()
                    .map(|(v, _)| vec![v.to_string()])
                    .chain([vec!["holds, mostly".into()]])
                    .collect(),
            }],
        );
        for (v, class) in verdicts {
            assert!(
                page.contains(&format!("<td class=\"verdict {class}\">{v}</td>")),
                "{v}"
            );
            assert!(
                STYLE.contains(&format!("td.{class} ")),
                "{class} has no style"
            );
        }
        assert!(page.contains("<td>holds, mostly</td>"));
        assert!(page.contains("<div class=\"table-wrap\">"));
        assert!(!STYLE.contains('<') && !STYLE.contains('&'));
    }

    #[test]
    fn contents_links_resolve_to_heading_ids() {
        let mut blocks = report_like();
        blocks.extend(sample());
        blocks.push(Block::Heading(
            2,
            "Fig 8: adaptive against NVMe coalescing (Optane, one core)".into(),
        ));
        let page = html("r", &blocks);
        let doc = parse(&page);
        let ids: std::collections::HashSet<&str> = doc
            .descendants()
            .filter_map(|n| n.attribute("id"))
            .collect();
        let nav = doc
            .descendants()
            .find(|n| n.has_tag_name("nav"))
            .expect("a nav");
        let hrefs: Vec<&str> = nav
            .descendants()
            .filter_map(|n| n.attribute("href"))
            .collect();
        // Every level-2 and level-3 heading, none of level 1.
        assert_eq!(hrefs.len(), 7, "{hrefs:?}");
        for h in &hrefs {
            let id = h.strip_prefix('#').expect("a fragment");
            assert!(ids.contains(id), "{h} has no target in\n{page}");
        }
        // Level 3 nests under its level 2.
        let top: Vec<_> = nav
            .children()
            .find(|n| n.has_tag_name("ul"))
            .unwrap()
            .children()
            .filter(|n| n.has_tag_name("li"))
            .collect();
        assert_eq!(top.len(), 4);
        // An item is among its own descendants.
        let nested =
            |li: &roxmltree::Node| li.descendants().filter(|n| n.has_tag_name("li")).count() - 1;
        assert_eq!(top.iter().map(nested).collect::<Vec<_>>(), [2, 1, 0, 0]);
        assert!(page.contains("<body class=\"with-toc\">"));
        // The page without contents has no sidebar room kept.
        assert!(html("r", &sample()).contains("<body>\n"));
    }

    #[test]
    fn repeated_headings_get_unique_anchors_in_both() {
        let blocks = vec![
            Block::Contents,
            Block::Heading(2, "Fig 10".into()),
            Block::Heading(3, "fig10 (sim)".into()),
            Block::Heading(2, "Fig 10".into()),
            Block::Heading(3, "fig10 (sim)".into()),
            Block::Heading(2, "Fig 10".into()),
            // GitHub's slugger moves past an anchor a repeat already took.
            Block::Heading(2, "Fig 10-1".into()),
        ];
        let ids: Vec<String> = anchors(&blocks).into_iter().flatten().collect();
        assert_eq!(
            ids,
            [
                "fig-10",
                "fig10-sim",
                "fig-10-1",
                "fig10-sim-1",
                "fig-10-2",
                "fig-10-1-1"
            ]
        );
        let page = html("r", &blocks);
        let md = markdown(&blocks);
        for id in &ids {
            assert_eq!(page.matches(&format!(" id=\"{id}\"")).count(), 1, "{id}");
            assert!(page.contains(&format!("href=\"#{id}\"")), "{id}");
            assert_eq!(md.matches(&format!("](#{id})")).count(), 1, "{id}\n{md}");
        }
    }

    #[test]
    fn markdown_contents_follow_githubs_anchor_rule() {
        let md = markdown(&report_like());
        let want = "**Contents**\n\n\
            - [Fig 8: adaptive against NVMe coalescing (Optane, one core)](#fig-8-adaptive-against-nvme-coalescing-optane-one-core)\n  \
            - [fig8 (simulator: the paper's Optane/P3700 profiles on its 2.0 GHz Xeon)](#fig8-simulator-the-papers-optanep3700-profiles-on-its-20-ghz-xeon)\n  \
            - [fig8 (emulator: real threads on this machine, null device)](#fig8-emulator-real-threads-on-this-machine-null-device)\n\
            - [FR Fig 13: fillsync beside each TO workload (Vanilla .. BSJ-Opt)](#fr-fig-13-fillsync-beside-each-to-workload-vanilla--bsj-opt)\n  \
            - [fr-fig13 (simulator: T_D1 & T_JD)](#fr-fig13-simulator-t_d1--t_jd)\n\n";
        assert!(md.contains(want), "{md}");
        // The headings themselves are unchanged Markdown.
        assert!(md.contains(
            "\n### fig8 (simulator: the paper's Optane/P3700 profiles on its 2.0 GHz Xeon)\n"
        ));
        // Marks are not part of an anchor; the HTML uses the same ids.
        assert_eq!(slug("`cint` **wins**: [Fig 8](#x)"), "cint-wins-fig-8");
        assert_eq!(slug("Überblick — Größe"), "überblick--größe");
        let page = html("r", &report_like());
        assert!(page.contains(
            "<h3 id=\"fig8-simulator-the-papers-optanep3700-profiles-on-its-20-ghz-xeon\">"
        ));
    }
}
