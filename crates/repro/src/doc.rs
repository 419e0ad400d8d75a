//! The report as a few kinds of blocks, written out as Markdown and as a
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
}

pub fn markdown(blocks: &[Block]) -> String {
    let mut out = String::new();
    for b in blocks {
        match b {
            Block::Heading(level, text) => {
                let _ = writeln!(out, "{} {text}\n", "#".repeat(usize::from(*level)));
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
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>{}</title>\n<style>\n{}</style>\n</head>\n<body>\n",
        escape(title),
        STYLE
    );
    for b in blocks {
        match b {
            Block::Heading(level, text) => {
                let id = anchor(text);
                let _ = writeln!(out, "<h{level} id=\"{id}\">{}</h{level}>", escape(text));
            }
            Block::Para(text) => {
                let _ = writeln!(out, "<p>{}</p>", inline(text));
            }
            Block::Table { head, rows } => {
                out.push_str("<table>\n<tr>");
                for h in head {
                    let _ = write!(out, "<th>{}</th>", escape(h));
                }
                out.push_str("</tr>\n");
                for r in rows {
                    out.push_str("<tr>");
                    for c in r {
                        let class = match c.as_str() {
                            "holds" => " class=\"holds\"",
                            "holds qualitatively" => " class=\"partly\"",
                            "does not hold" => " class=\"fails\"",
                            "not run" => " class=\"skipped\"",
                            _ => "",
                        };
                        let _ = write!(out, "<td{class}>{}</td>", inline(c));
                    }
                    out.push_str("</tr>\n");
                }
                out.push_str("</table>\n");
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
                    escape(caption)
                );
            }
            Block::Code { title, text } => {
                let _ = writeln!(
                    out,
                    "<details><summary>{}</summary><pre>{}</pre></details>",
                    escape(title),
                    escape(text.trim_end())
                );
            }
        }
    }
    out.push_str("</body>\n</html>\n");
    out
}

const STYLE: &str = "body { font-family: sans-serif; max-width: 1500px; margin: 2em auto; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; }
th { background: #f3f3f3; }
td.holds { background: #e3f4e0; }
td.partly { background: #fdf3d0; }
td.fails { background: #fbe2e0; }
td.skipped { color: #888; }
figure { margin: 0.5em 0; overflow-x: auto; }
figcaption { font-size: 0.85em; color: #555; }
pre { background: #f7f7f7; padding: 0.6em; }
code { background: #f3f3f3; }
";

pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Escaped text with Markdown's `code` spans kept as code.
fn inline(s: &str) -> String {
    let mut out = String::new();
    for (i, part) in s.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{}</code>", escape(part));
        } else {
            out.push_str(&escape(part));
        }
    }
    out
}

fn anchor(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
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
        assert!(page.contains("<td class=\"holds\">holds</td>"));
        assert!(!page.contains("<?xml"));
    }
}
