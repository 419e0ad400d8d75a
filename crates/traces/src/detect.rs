//! Telling a trace's format from its first bytes.

use crate::blktrace::magic_order;
use crate::csv::{alibaba, msr, tencent};
use crate::fio::{HEADER_V2, HEADER_V3};
use crate::Format;

fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

pub(crate) fn detect(head: &[u8]) -> Option<Format> {
    if head.len() >= 4 && magic_order([head[0], head[1], head[2], head[3]]).is_some() {
        return Some(Format::Blktrace);
    }
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
