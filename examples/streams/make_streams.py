#!/usr/bin/env python3
"""Writes the hand-made completion streams in this folder (deterministic).

Each stream is what a device's completion queue would see, as
`time_ns,id,flags,event` rows for `cinterrupts coalesce`. Device times are
the Optane P4800X's scale in the TOS paper (about 10 us per 4 KiB read).
Run: python3 make_streams.py
"""
import random

HEADER = "time_ns,id,flags,event\n"


def write(name, rows, comment):
    rows.sort(key=lambda r: (r[0], r[3] != "submit", r[1]))
    with open(name, "w") as f:
        f.write(f"# {comment}\n# written by make_streams.py\n")
        f.write(HEADER)
        for t, i, flags, ev in rows:
            f.write(f"{t},{i},{flags},{ev}\n")


def mixed(rng, ms=10):
    """A blocking reader (Urgent, TOS Table 1) beside a libaio reader that
    submits batches of 16 and marks the last Barrier (TOS 3.3, Fig. 10)."""
    rows, ident, end = [], 0, ms * 1_000_000
    t = 0
    while t < end:  # sync: one read at a time, ~10 us device + ~2 us host
        t += 10_000 + rng.randint(-500, 500)
        rows.append((t, ident, "U", "complete"))
        ident += 1
        t += 2_000
    t = 0
    while t < end:  # async: a batch of 16 completes over ~8 us, every ~40 us
        for k in range(16):
            flags = "B" if k == 15 else "-"
            rows.append((t + k * 500 + rng.randint(0, 200), ident, flags, "complete"))
            ident += 1
        t += 40_000 + rng.randint(-2_000, 2_000)
    return rows


def sync_only(rng, ms=10):
    rows, t, i = [], 0, 0
    while t < ms * 1_000_000:
        t += 12_000 + rng.randint(-500, 500)
        rows.append((t, i, "U", "complete"))
        i += 1
    return rows


def async_only(rng, ms=10):
    """libaio iodepth 256 in batches of 16: a steady stream, Barrier on each
    16th (TOS 5.3, Fig. 20)."""
    rows, t, i = [], 0, 0
    while t < ms * 1_000_000:
        t += 1_800 + rng.randint(-300, 300)  # ~550K IOPS
        rows.append((t, i, "B" if i % 16 == 15 else "-", "complete"))
        i += 1
    return rows


def storm(rng, ms=50):
    """Four pread processes: 150K Urgent completions a second (TOS 4.3)."""
    return [(k * 6_667, k, "U", "complete") for k in range(ms * 150)]


def barrier_batches(rng, n=200):
    """Batches of 4 with Barrier on the last, completing out of order, with
    submissions so strict Barrier can be compared (TOS 3.4, 4.3)."""
    rows, t, i = [], 0, 0
    for _ in range(n):
        done = []
        for k in range(4):
            flags = "B" if k == 3 else "-"
            rows.append((t, i, flags, "submit"))
            d = t + 10_000 + rng.randint(0, 4_000)
            done.append(d)
            rows.append((d, i, flags, "complete"))
            i += 1
        t = max(done) + 3_000
    return rows


if __name__ == "__main__":
    rng = random.Random(2021)
    write("mixed.csv", mixed(rng), "sync Urgent reader beside async batches of 16 with Barrier (TOS Fig. 10)")
    write("sync.csv", sync_only(rng), "blocking reads, all Urgent (TOS Fig. 20a)")
    write("async.csv", async_only(rng), "libaio iodepth 256, batches of 16, Barrier on each last (TOS Fig. 20b)")
    write("storm.csv", storm(rng), "4 pread processes: 150K Urgent completions/s (TOS Fig. 17)")
    write("barrier4.csv", barrier_batches(rng), "batches of 4, Barrier last, out-of-order completions, with submits (TOS 3.4)")
