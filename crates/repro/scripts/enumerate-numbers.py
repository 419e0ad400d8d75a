#!/usr/bin/env python3
"""Enumerate the numbers of the papers' named sections (issue 23, item 7).

Lists every number in the sections NOT-REPRODUCED.md accounts for, one per
line (`FILE:LINE<TAB>NUMBER<TAB>context`). With --check FILE it reads every
markdown table of FILE that has the columns `location`, `number` and
`code`, matches each enumerated number to a row whose location names its
line (FILE:LINE or FILE:FIRST-LAST) and whose number cell lists it (read
with the same rules, as a multiset), prints the numbers no row takes
("NOT ACCOUNTED") and the row entries no number takes ("NOT IN THE
TEXT"), then the counts per paper and code; it exits 1 on any problem.

    python3 crates/repro/scripts/enumerate-numbers.py              # the list
    python3 crates/repro/scripts/enumerate-numbers.py --counts     # per paper
    python3 crates/repro/scripts/enumerate-numbers.py --check crates/repro/NOT-REPRODUCED.md
    python3 crates/repro/scripts/enumerate-numbers.py --directions # the directions

Directions (issue 36 item 3): statements without numbers count too. In the
figures DIRECTION_SCOPES names (Gyawali and Aryal's Figs 6-8, FR Fig 19b),
every direction word ("improves", "reduces", "keeps stable": DIRECTION) is
enumerated the same way and matched to the rows of the tables that have the
columns `location`, `direction` and `code` (NOT-REPRODUCED.md section 8).

The papers are read from shared/papers beside the repository
(--papers DIR to change it). Standard library only.

What counts as a number (the rules NOT-REPRODUCED.md states):
  - every run of digits that is not part of a name (P3700, c_9, E5-2660,
    T_{D1}), a citation ([7, 30]), a reference to a part of the paper
    (Figure 15(d), Table 2, Section 5.1, Algorithm 1, Lines 14-15, Gen 2),
    a section heading's number or a list item's number, an ordinal (99th,
    the percentile's name), a model name (900P); a range (12-15x) is one
    entry with both ends; "a +- b" (a table cell with its spread) is one;
    a fraction (\frac{1}{128}) is one;
  - the quantity words dozens, half, quarter, twice, double, hundreds,
    thousands, millions, "orders of magnitude", and a few spelled-out
    quantities listed in EXTRA;
  - not: spelled-out small counts of setup items (two threads, four
    processes), and fenced code blocks (the algorithm listings, whose
    numbers are listing line numbers and the constant 0);
  - the OSDI'21 bar labels of Figs 7 and 8, which the PDF extraction split
    across lines: the fragments of each panel (line ranges in OSDI_LABELS)
    are joined and split into the panel's labels (every split that gives
    the panel's label count is printed).
"""

import argparse
import os
import re
import sys

# (short name, file, [(first line, last line)], what)
SCOPES = [
    ("tos2022.txt", "cinterrupts-tos2022.txt", [(67, 545), (552, 568)],
     "TOS 2022 sections 2-5 (Tables 7 and 8 are printed inside section 6's page span)"),
    ("fastresponse.txt", "fastresponse.txt", [(86, 120), (200, 316)],
     "FastResponse sections 2.2 and 4"),
    ("gyawali.txt", "gyawali-dynamic-timeouts.txt", [(9, 218)],
     "Gyawali and Aryal, the whole text but the title, authors and references"),
]

# OSDI'21 Figs 7 and 8 (TOS Figs 10 and 11): the bar labels, per panel:
# (first line, last line, panel, label count)
OSDI_FILE = "cinterrupts-osdi2021.txt"
OSDI_LABELS = [
    (506, 514, "OSDI Fig 7(a) total IOPS, default adaptive", 2),
    (529, 537, "OSDI Fig 7(b) sync IOPS, default adaptive", 2),
    (552, 560, "OSDI Fig 7(c) sync latency, default adaptive", 2),
    (575, 583, "OSDI Fig 7(d) interrupts, default adaptive", 2),
    (623, 644, "OSDI Fig 8(a) total IOPS, thr 4 8 16 32 64", 5),
    (670, 691, "OSDI Fig 8(b) sync IOPS, thr 4 8 16 32 64", 5),
    (717, 725, "OSDI Fig 8(c) sync latency, thr 4 8 16 32 64", 5),
    (751, 770, "OSDI Fig 8(d) interrupts, thr 4 8 16 32 64", 5),
]

# The figures whose directional statements are enumerated (issue 36 item 3):
# (short name, [(first line, last line)], what)
DIRECTION_SCOPES = [
    ("gyawali.txt", [(190, 208)], "Gyawali and Aryal, Sec 4: Figs 6-8, text and captions"),
    ("fastresponse.txt", [(302, 302)], "FastResponse 4.5: Fig 19b's paragraph"),
]
DIRECTION = re.compile(
    r"\b(?:improv\w*|enhanc\w*|reduc\w*|decreas\w*|increas\w*|lowest|lower|low|highest|higher|"
    r"high|superior|similar|stable|declin\w*|rais\w*|worse|better|negatively|doesn't work well)\b",
    re.I,
)

CITATION = re.compile(r"\[\d+(?:\s*[,–-]\s*\d+)*\]")
PART = re.compile(
    r"\b(?:Figures?|Figs?\.|Fig|Tables?|Sections?|Algorithm|Lines?|Gen|Root Cause|"
    r"Article|Revision|Volume|Issue|Workshop)\s*"
    r"\d+(?:\.\d+)*(?:\s*\(\w\))?(?:\s*(?:\(\w\))|\s*(?:and|–|-|,|to)\s*\d+(?:\.\d+)*(?:\(\w\))?)*",
    re.I,
)
HEADING = re.compile(r"^\s*(?:#+\s*)?\d+(?:\.\d+)*\.?\s+(?=[A-Z*])")
LIST_ITEM = re.compile(r"^\s*-\s*\d+\.\s")
ENUM = re.compile(r"\(\d\)(?=\s+[A-Za-z])|\b\d\)\s+(?=[A-Z])")
PM = r"(?:\\pm|±|\+/-)"
NUM = r"\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)*|\.\d+"
END = r"(?!\.?\d|th\b|st\b|nd\b|rd\b|s of\b|P\b)"
FRAC = re.compile(r"\\frac\{(\d+)\}\{(\d+)\}")
TOKEN = re.compile(
    rf"(?<![A-Za-z_{{^\d.\-/])(?:(?P<pm>(?:{NUM})\s*{PM}\s*(?:{NUM}){END})"
    rf"|(?P<range>(?:{NUM})(?:x|×|%)?[–-](?:{NUM}){END})"
    rf"|(?P<num>(?:{NUM}){END}))"
)
WORDS = re.compile(
    r"\b(?:dozens|half|quarter|twice|double|hundreds|thousands|millions|orders? of magnitude|10s of)\b",
    re.I,
)
EXTRA = re.compile(
    r"\b(?:eight queues|two lines of code|one-bit|four I/O operations|two times of process scheduling)\b",
    re.I,
)


def clean(line):
    line = CITATION.sub(" ", line)
    line = PART.sub(" ", line)
    line = HEADING.sub(" ", line)
    line = LIST_ITEM.sub(" ", line)
    line = ENUM.sub(" ", line)
    return line


def numbers_of(path, ranges):
    """(line, number, context) for every number in the ranges of a file."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out = []
    fenced = False
    for no, raw in enumerate(lines, start=1):
        if raw.strip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or not any(a <= no <= b for a, b in ranges):
            continue
        line = clean(raw)
        for m in FRAC.finditer(line):
            ctx = line[max(0, m.start() - 40): m.end() + 40].replace("\t", " ")
            out.append((no, f"{m.group(1)}/{m.group(2)}", ctx.strip()))
        line = FRAC.sub(" ", line)
        for m in TOKEN.finditer(line):
            tok = m.group(0)
            if m.group("pm"):
                tok = re.sub(rf"\s*{PM}\s*", "±", tok)
            if m.group("range"):
                tok = "-".join(re.findall(NUM, tok))
            ctx = line[max(0, m.start() - 40): m.end() + 40].replace("\t", " ")
            out.append((no, tok, ctx.strip()))
        for m in list(WORDS.finditer(line)) + list(EXTRA.finditer(line)):
            ctx = line[max(0, m.start() - 40): m.end() + 40].replace("\t", " ")
            out.append((no, m.group(0).lower(), ctx.strip()))
    return out


def directions_of(papers):
    """{short name: [(line, word, context)]} for DIRECTION_SCOPES."""
    files = {short: name for short, name, _, _ in SCOPES}
    found = {}
    for short, ranges, _ in DIRECTION_SCOPES:
        with open(os.path.join(papers, files[short]), encoding="utf-8") as f:
            lines = f.read().split("\n")
        out = found.setdefault(short, [])
        for no, line in enumerate(lines, start=1):
            if not any(a <= no <= b for a, b in ranges):
                continue
            for m in DIRECTION.finditer(line):
                ctx = line[max(0, m.start() - 40): m.end() + 40].replace("\t", " ")
                out.append((no, m.group(0).lower(), ctx.strip()))
    return found


def splits(digits, n):
    """Every way to cut `digits` (labels run together, e.g. '0.590.44') into
    n labels of the form d.d or d.dd."""
    if n == 0:
        return [[]] if digits == "" else []
    res = []
    for width in (4, 3):
        head = digits[:width]
        if re.fullmatch(r"\d\.\d{1,2}", head):
            for rest in splits(digits[width:], n - 1):
                res.append([head] + rest)
    return res


def osdi_labels(papers):
    with open(os.path.join(papers, OSDI_FILE), encoding="utf-8") as f:
        lines = f.read().split("\n")
    out = []
    for a, b, panel, count in OSDI_LABELS:
        joined = "".join("".join(lines[i - 1].split()) for i in range(a, b + 1))
        cuts = []
        for cut in splits(joined, count):
            if cut not in cuts:
                cuts.append(cut)
        out.append((a, b, panel, joined, cuts))
    return out


def enumerate_all(papers):
    """{short name: [(line or (a, b), number, context)]}"""
    found = {}
    for short, name, ranges, _ in SCOPES:
        found[short] = numbers_of(os.path.join(papers, name), ranges)
    found["osdi2021.txt"] = []
    for a, b, panel, joined, cuts in osdi_labels(papers):
        seen = []
        for cut in cuts:
            for label in cut:
                if label not in seen:
                    seen.append(label)
        for label in seen:
            found["osdi2021.txt"].append(((a, b), label, f"{panel}: '{joined}' -> {cuts}"))
    return found


ROW_REF = re.compile(r"(tos2022|osdi2021|fastresponse|gyawali)\.txt:(\d+)(?:[-–](\d+))?")
CELL_FRAC = re.compile(r"(?<![\d.])(\d+)/(\d+)(?![\d.])")
# A direction word is covered by a claim, or says how the run was set up (the
# x axis, the workload, the labels), or explains a result, or is hedged ("can
# lead to", "may"): a possibility the figure does not show.
DIRECTION_CODES = ["COV", "SETUP", "WHY", "HEDGE"]
CODES = ["COV", "PAR", "GAP-C", "GAP-R", "ABS", "BASE", "INC", "HW", "TESTBED",
         "IMPL", "BG", "DESIGN", "NaN"]


def cell_tokens(cell):
    """The numbers a table cell lists, read with the text's own rules."""
    toks = [f"{m.group(1)}/{m.group(2)}" for m in CELL_FRAC.finditer(cell)]
    cell = CELL_FRAC.sub(" ", cell)
    for m in TOKEN.finditer(cell):
        tok = m.group(0)
        if m.group("pm"):
            tok = re.sub(rf"\s*{PM}\s*", "±", tok)
        if m.group("range"):
            tok = "-".join(re.findall(NUM, tok))
        toks.append(tok)
    toks += [m.group(0).lower() for m in WORDS.finditer(cell)]
    toks += [m.group(0).lower() for m in EXTRA.finditer(cell)]
    return toks


def rows_of(md_path, kind="number"):
    """Every table row with a location, a number (or, kind "direction", a
    direction) and a code column:
    [{"refs": [(file, first, last)], "entries": [token], "code": str, "line": n}]"""
    rows = []
    header = None
    with open(md_path, encoding="utf-8") as f:
        for no, line in enumerate(f, start=1):
            if not line.startswith("|"):
                header = None
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = [c.lower() for c in cells]
                continue
            if all(set(c) <= set("-: ") for c in cells):
                continue
            col = "direction" if kind == "direction" else "number"
            if not {"location", col, "code"} <= set(header) or len(cells) != len(header):
                continue
            loc = cells[header.index("location")]
            refs = [(m.group(1) + ".txt", int(m.group(2)), int(m.group(3) or m.group(2)))
                    for m in ROW_REF.finditer(loc)]
            code = cells[header.index("code")].strip("` ")
            cell = cells[header.index(col)]
            entries = ([w.strip().lower() for w in cell.split(",") if w.strip()]
                       if kind == "direction" else cell_tokens(cell))
            rows.append({"refs": refs, "entries": entries, "code": code, "line": no, "used": []})
    return rows


def match(found, rows, md_path, codes):
    """Matches every enumerated item to a row; prints what does not match.
    Returns (problems, {short: {code: count}})."""
    bad = 0
    for r in rows:
        if r["code"] not in codes:
            bad += 1
            print(f"UNKNOWN CODE\t{md_path}:{r['line']}\t{r['code']}")
    counts = {}
    for short, items in found.items():
        for where, tok, ctx in items:
            a, b = where if isinstance(where, tuple) else (where, where)
            hit = None
            for r in rows:
                if not any(f == short and first <= b and a <= last for f, first, last in r["refs"]):
                    continue
                free = [i for i, e in enumerate(r["entries"]) if e == tok and i not in r["used"]]
                if free:
                    r["used"].append(free[0])
                    hit = r
                    break
            loc = f"{short}:{a}" if a == b else f"{short}:{a}-{b}"
            if hit is None:
                bad += 1
                print(f"NOT ACCOUNTED\t{loc}\t{tok}\t{ctx}")
                continue
            counts.setdefault(short, {}).setdefault(hit["code"], 0)
            counts[short][hit["code"]] += 1
    for r in rows:
        for i, e in enumerate(r["entries"]):
            if i not in r["used"]:
                bad += 1
                print(f"NOT IN THE TEXT\t{md_path}:{r['line']}\t{e}")
    return bad, counts


def check(found, md_path, directions):
    bad, counts = match(found, rows_of(md_path), md_path, CODES)
    dbad, dcounts = match(directions, rows_of(md_path, "direction"), md_path, DIRECTION_CODES)
    bad += dbad
    total = sum(len(v) for v in found.values())
    print(f"{total} numbers; {bad} problems", file=sys.stderr)
    print("| paper | numbers | " + " | ".join(CODES) + " |")
    print("|---|---:|" + "---:|" * len(CODES))
    for short in found:
        c = counts.get(short, {})
        print(f"| {short} | {sum(c.values())} | " + " | ".join(str(c.get(k, 0)) for k in CODES) + " |")
    allc = {k: sum(counts.get(s, {}).get(k, 0) for s in found) for k in CODES}
    print(f"| all | {sum(allc.values())} | " + " | ".join(str(allc[k]) for k in CODES) + " |")
    print()
    print("| directions | words | " + " | ".join(DIRECTION_CODES) + " |")
    print("|---|---:|" + "---:|" * len(DIRECTION_CODES))
    for short in directions:
        c = dcounts.get(short, {})
        print(f"| {short} | {sum(c.values())} | "
              + " | ".join(str(c.get(k, 0)) for k in DIRECTION_CODES) + " |")
    return 1 if bad else 0


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_papers = os.path.normpath(os.path.join(here, "../../../../shared/papers"))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--papers", default=default_papers)
    ap.add_argument("--counts", action="store_true", help="numbers per paper")
    ap.add_argument("--directions", action="store_true",
                    help="list the direction words of DIRECTION_SCOPES instead of the numbers")
    ap.add_argument("--check", metavar="NOT-REPRODUCED.md",
                    help="match every number to a table row (location, number and code columns); "
                         "print what does not match and the counts per paper and code")
    args = ap.parse_args()
    found = enumerate_all(args.papers)
    directions = directions_of(args.papers)
    if args.directions:
        for short, items in directions.items():
            for where, word, ctx in items:
                print(f"{short}:{where}\t{word}\t{ctx}")
        return 0
    if args.counts:
        for short, items in found.items():
            print(f"{short}\t{len(items)}")
        return 0
    if args.check:
        return check(found, args.check, directions)
    for short, items in found.items():
        for where, tok, ctx in items:
            loc = f"{short}:{where}" if not isinstance(where, tuple) else f"{short}:{where[0]}-{where[1]}"
            print(f"{loc}\t{tok}\t{ctx}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
