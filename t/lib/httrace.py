#!/usr/bin/env python3
"""Check heaptool trace-stats and replay against t/target/tracegen's own
figures (its -e output: "key value" lines), for t0095 and t0096.

usage: httrace.py stats EXPECTED JSON   trace-stats --format json
       httrace.py text EXPECTED TEXT    trace-stats' text
       httrace.py replay EXPECTED JSON  replay --format json

Prints one line per figure that differs ("KEY: want W, got G") and exits
1 when any does, 0 when all match, 2 on a usage error.
"""
import json
import re
import sys


def expected(path):
    e = {}
    with open(path) as f:
        for line in f:
            k, v = line.split()
            e[k] = float(v) if "." in v else int(v)
    return e


def stats_keys(d):
    """The trace-stats JSON under tracegen's names."""
    m, p = d["memory"], d["profiler"]
    got = {
        "events": d["events"],
        "complete": 1 if d["complete"] else 0,
        "lost": d["lost"] if d["lost"] is not None else 0,
        "requested": m["requested"],
        "usable": m["usable"],
        "overhead_pct": m["overhead_pct"],
        "peak_requested": m["peak_requested"],
        "peak_usable": m["peak_usable"],
        "peak_live_blocks": m["peak_live_blocks"],
        "live_blocks_end": m["live_blocks_end"],
        "live_requested_end": m["live_requested_end"],
        "preexisting_frees": m["preexisting_frees"],
        "null_frees": m["null_frees"],
        # tracegen makes none: any is trace-stats' (realloc(NULL, n) has
        # no old block to match).
        "unmatched_frees": m["unmatched_frees"],
        "sites": p["sites"],
        "heaptool_rate1_bytes": p["rate1"]["bytes"],
        "heaptool_default_bytes": p["default_rate"]["bytes"],
        "agent_bytes": p["recorder_bytes"] or 0,
    }
    for o in d["ops"]:
        got["op.%s.count" % o["op"]] = o["count"]
        got["op.%s.bytes" % o["op"]] = o["bytes"]
    for c in d["size_classes"]:
        got["class.%d.count" % c["min"]] = c["count"]
        got["class.%d.bytes" % c["min"]] = c["bytes"]
    for t in d["threads"]:
        for k, j in (("events", "events"), ("allocs", "allocations"),
                     ("alloc_bytes", "bytes"), ("frees", "frees")):
            got["thread.%d.%s" % (t["thread"], k)] = t[j]
    for t in d["tags"]:
        got["tag.%d.allocs" % t["tag"]] = t["allocations"]
        got["tag.%d.bytes" % t["tag"]] = t["bytes"]
    return got


def same(want, got):
    if isinstance(want, float) or isinstance(got, float):
        return abs(want - got) <= 1e-6 * max(1.0, abs(want))
    return want == got


def compare(e, got, keys):
    bad = 0
    for k in keys:
        w = e[k]
        g = got.get(k, 0)
        if not same(w, g):
            print("%s: want %s, got %s" % (k, w, g))
            bad += 1
    return bad


def check_stats(e, path):
    with open(path) as f:
        got = stats_keys(json.load(f))
    # Every figure tracegen made, zero counts included (a missing op or
    # class must be one with no events).
    bad = compare(e, got, list(e))
    extra = [k for k in got if k not in e and got[k] != 0]
    for k in extra:
        print("%s: not expected, got %s" % (k, got[k]))
    return bad + len(extra)


def check_text(e, path):
    with open(path) as f:
        text = f.read()
    bad = 0
    pats = {
        "requested": r"^  requested +(\d+) bytes",
        "usable": r"^  usable +(\d+) bytes",
        "peak_requested": r"^  peak live requested +(\d+) bytes",
        "peak_usable": r"^  peak live usable +(\d+) bytes",
        "peak_live_blocks": r"^  peak live blocks +(\d+)",
        "heaptool_rate1_bytes": r"^  heaptool at rate 1 .*? (\d+) bytes",
        "agent_bytes": r"^  the recorder \(at its peak\) +(\d+) bytes",
    }
    for k, pat in pats.items():
        mo = re.search(pat, text, re.M)
        g = int(mo.group(1)) if mo else None
        if g != e[k]:
            print("%s: want %s, got %s" % (k, e[k], g))
            bad += 1
    mo = re.search(r"rounding +\d+ bytes \[([\d.]+)%\]", text)
    if mo is None or abs(float(mo.group(1)) - e["overhead_pct"]) > 0.0005:
        print("overhead_pct: want %.3f, got %s" %
              (e["overhead_pct"], mo and mo.group(1)))
        bad += 1
    for k, v in e.items():
        mo = re.match(r"op\.(.+)\.count$", k)
        if mo and v > 0:
            if not re.search(r"^  %s +%d +%d" % (re.escape(mo.group(1)), v,
                                                 e["op.%s.bytes" %
                                                   mo.group(1)]),
                             text, re.M):
                print("%s: no line with %d calls and %d bytes" %
                      (k, v, e["op.%s.bytes" % mo.group(1)]))
                bad += 1
    return bad


def check_replay(e, path):
    with open(path) as f:
        d = json.load(f)
    bad = 0
    missing = 0
    for o in d["ops"]:
        want = e["op.%s.count" % o["op"]]
        if o["recorded"] != want:
            print("%s recorded: want %d, got %d" % (o["op"], want,
                                                    o["recorded"]))
            bad += 1
        if o["replayed"] > want:
            print("%s replayed: %d, more than the %d recorded" %
                  (o["op"], o["replayed"], want))
            bad += 1
        frees = o["op"] in ("free", "delete")
        if not frees and o["replayed"] != want:
            print("%s replayed: want %d, got %d" % (o["op"], want,
                                                    o["replayed"]))
            bad += 1
        if o["bytes"] != e["op.%s.bytes" % o["op"]]:
            print("%s bytes: want %d, got %d" % (o["op"],
                                                 e["op.%s.bytes" % o["op"]],
                                                 o["bytes"]))
            bad += 1
        missing += want - o["replayed"]
    # The frees of preexisting blocks (free or delete) are all that is
    # not played.
    if missing != e["preexisting_frees"] or \
            d["skipped"]["preexisting"] != e["preexisting_frees"]:
        print("not played: %d, skipped preexisting %d, want %d" %
              (missing, d["skipped"]["preexisting"],
               e["preexisting_frees"]))
        bad += 1
    for k in ("unmatched", "failed"):
        if d["skipped"][k] != 0:
            print("skipped %s: %d" % (k, d["skipped"][k]))
            bad += 1
    if d["failed"] != 0 or d["substituted"] != 0:
        print("failed %d, substituted %d" % (d["failed"], d["substituted"]))
        bad += 1
    if d["peak_requested"] != e["peak_requested"] or \
            d["recorded_peak_requested"] != e["peak_requested"]:
        print("peak_requested: want %d, got %d (recorded %d)" %
              (e["peak_requested"], d["peak_requested"],
               d["recorded_peak_requested"]))
        bad += 1
    return bad


def main(argv):
    if len(argv) != 4 or argv[1] not in ("stats", "text", "replay"):
        sys.stderr.write(__doc__)
        return 2
    e = expected(argv[2])
    bad = {"stats": check_stats, "text": check_text,
           "replay": check_replay}[argv[1]](e, argv[3])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
