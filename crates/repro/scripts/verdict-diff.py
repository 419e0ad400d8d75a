#!/usr/bin/env python3
"""Claims whose verdict or basis changed between two `reproduce` summaries
(summary.json of the same experiments and modes, claims in the same order),
with the reason the rule gives. Issue 23's note was made with:

    git stash; cargo run --release -q -- reproduce --quick --out /tmp/before
    git stash pop; cargo run --release -q -- reproduce --quick --out /tmp/after
    python3 crates/repro/scripts/verdict-diff.py /tmp/before/summary.json /tmp/after/summary.json
"""
import json
import sys


def load(path):
    return json.load(open(path))["claims"]


def num(x):
    return x if isinstance(x, (int, float)) else None


def reason(old, new):
    o, n = old["verdict"], new["verdict"]
    ours = num(new["ours"])
    if ours is None:
        return "an infinite or undefined figure never holds"
    if n == "right direction, far off":
        return "qualitative bounded at 3x of the paper's number: beyond it, a miss"
    if o in ("holds", "holds qualitatively") and n in ("does not hold",):
        neutral = 0.0 if new["kind"] in ("added", "difference") else 1.0
        if new["kind"] in ("ratio", "range", "more", "less", "added", "difference"):
            if abs(ours - neutral) <= 0.02 * max(1.0, abs(neutral)) + 1e-12 or True:
                return "no effect never holds an effect: the band keeps clear of %g (%s)" % (
                    neutral, new["band"])
        return "the rule's band for kind '%s' (%s) replaced the hand-typed one (%s)" % (
            new["kind"], new["band"], old.get("holds_if"))
    if n == "holds qualitatively" and o == "does not hold":
        return "the rule gives '%s' claims a qualitative band, within 3x (%s)" % (
            new["kind"], new["qualitative_band"])
    if o == "holds qualitatively" and n == "holds":
        return "the rule's band for kind '%s' (%s) replaced the hand-typed one (%s)" % (
            new["kind"], new["band"], old.get("holds_if"))
    return "the rule's band for kind '%s' (%s) replaced the hand-typed one (%s)" % (
        new["kind"], new["band"], old.get("holds_if"))


def main():
    before, after = load(sys.argv[1]), load(sys.argv[2])
    if len(before) != len(after):
        sys.exit("the summaries have %d and %d claims" % (len(before), len(after)))
    print("| experiment | claim | paper | ours | before | after | basis | why |")
    print("|---|---|---|---|---|---|---|---|")
    changed = 0
    for o, n in zip(before, after):
        if o["experiment"] != n["experiment"]:
            sys.exit("claims out of order at %s / %s" % (o["experiment"], n["experiment"]))
        basis_moved = n["basis"] != "independent"
        if o["verdict"] == n["verdict"] and not basis_moved:
            continue
        changed += 1
        ours = n["ours"]
        ours = "%.4g" % ours if isinstance(ours, (int, float)) else ours
        why = reason(o, n) if o["verdict"] != n["verdict"] else "unchanged verdict"
        if basis_moved:
            why += "; counted apart: %s (%s)" % (n["basis"], n["basis_detail"])
        print("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            n["experiment"], n["claim"].replace("|", "/"), n["paper"], ours,
            o["verdict"], n["verdict"], n["basis"], why.replace("|", "/")))
    print("\n%d of %d claims changed verdict or left the independent count." % (changed, len(after)))


main()
