//! What every verb that reads a trace says about it (issue 41 item 0):
//! a partial trace (`traces::partial`, `capture --allow-loss`) is warned of
//! on stderr and marked in the verb's output; `--sort` picks the order
//! check (`traces::order`).

use std::path::Path;

/// `--sort`'s order: sorted through the window, else checked.
pub fn order(sort: bool) -> traces::Order {
    if sort {
        traces::Order::Sort
    } else {
        traces::Order::Check
    }
}

/// What the trace at `trace` lost, if it is marked partial; the warning
/// is printed on stderr (one line).
pub fn partial(trace: &Path) -> Option<String> {
    let loss = traces::partial(trace)?;
    eprintln!("cinterrupts: {}", traces::partial::warning(trace, &loss));
    Some(loss)
}

/// The line a text report ends with for a partial trace.
pub fn partial_line(loss: &str) -> String {
    format!("partial: true ({loss})\n")
}

/// A JSON document's `partial` (and `partial_loss`) for a partial trace.
pub fn mark_json(doc: &mut serde_json::Value, loss: Option<&str>) {
    if let Some(loss) = loss {
        doc["partial"] = serde_json::Value::Bool(true);
        doc["partial_loss"] = serde_json::Value::String(loss.to_string());
    }
}

/// A report page's (`--report DIR`'s `index.html`) line for a partial
/// trace, under its title.
pub fn mark_page(page: &Path, loss: &str) -> anyhow::Result<()> {
    let html = std::fs::read_to_string(page)?;
    let escaped = loss
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let line = format!("<p><b>partial: true</b> ({escaped}): its results undercount.</p>\n");
    let at = html.find("</h1>\n").map_or(0, |i| i + "</h1>\n".len());
    let marked = format!("{}{line}{}", &html[..at], &html[at..]);
    crate::output::write_file(page, marked.as_bytes())
}
