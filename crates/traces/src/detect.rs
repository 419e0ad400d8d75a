//! Telling a trace's format from its first bytes: a binary format's magic
//! (blktrace, lcs) or record shape (vscsi's version field, as libCacheSim
//! tests it), a text format's header or the shape of its first row, and
//! last oracleGeneral's record shape (it has no magic or header).

use crate::blktrace::magic_order;
use crate::csv::{alibaba, msr, tencent};
use crate::fio::{HEADER_V2, HEADER_V3};
use crate::{lcs, oracle, tectonic, thesios, vscsi, Format};

fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

pub(crate) fn detect(head: &[u8]) -> Option<Format> {
    if head.len() >= 4 && magic_order([head[0], head[1], head[2], head[3]]).is_some() {
        return Some(Format::Blktrace);
    }
    if lcs::is_lcs(head) {
        return Some(Format::Lcs);
    }
    // libCacheSim's `test_vscsi_version` tests two records (MAX_TEST).
    if vscsi::version_of(head, 2).is_some() {
        return Some(Format::Vscsi);
    }
    if let Some(f) = detect_text(head) {
        return Some(f);
    }
    if oracle::looks_like(head) {
        return Some(Format::OracleGeneral);
    }
    None
}

fn detect_text(head: &[u8]) -> Option<Format> {
    let text = String::from_utf8_lossy(head);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    if line.starts_with(HEADER_V2) {
        return Some(Format::FioV2);
    }
    if line.starts_with(HEADER_V3) {
        return Some(Format::FioV3);
    }
    if line.starts_with("TIME(s)") || line.starts_with("Tracing block") {
        return Some(Format::Biosnoop);
    }
    if thesios::is_header(line) {
        return Some(Format::Thesios);
    }
    if line.starts_with('#') || tectonic::is_header(line) {
        // Baleen's traces may open with `#` lines; the header is among them.
        let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
        if lines
            .any(|l| tectonic::is_header(l) || (!l.starts_with('#') && tectonic::is_baleen_row(l)))
        {
            return Some(Format::Tectonic);
        }
    }
    if tectonic::is_baleen_row(line) {
        return Some(Format::Tectonic);
    }
    for (header, format) in [
        (msr::HEADER, Format::Msr),
        (alibaba::HEADER, Format::Alibaba),
        (tencent::HEADER, Format::Tencent),
    ] {
        let squeezed: String = line.chars().filter(|c| !c.is_whitespace()).collect();
        if squeezed.eq_ignore_ascii_case(header) {
            return Some(format);
        }
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    if words.len() >= 7 {
        if let Some((a, b)) = words[0].split_once(',') {
            if digits(a) && digits(b) && digits(words[1]) && words[3].contains('.') {
                return Some(Format::Blkparse);
            }
        }
    }
    let f: Vec<&str> = line.split(',').map(str::trim).collect();
    match f.len() {
        7 if matches!(f[3], "Read" | "Write") && digits(f[0]) => return Some(Format::Msr),
        5 if matches!(f[1], "R" | "W") && digits(f[0]) && digits(f[4]) => {
            return Some(Format::Alibaba)
        }
        5 if matches!(f[3], "0" | "1") && f.iter().all(|x| digits(x)) => {
            return Some(Format::Tencent)
        }
        _ => {}
    }
    if words.len() == 5 && words.iter().all(|w| digits(w)) && matches!(words[4], "0" | "1") {
        return Some(Format::Disksim);
    }
    None
}
