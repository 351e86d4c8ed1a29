#!/usr/bin/env python3
"""Checks of `heaptool diff --json --detail` output for t/t0050-diff.sh.

Usage: htdiff.py COMMAND ARGS, or htdiff.py - to read commands from
standard input, one per line (split like a shell would).  Each command
prints one line per assertion, "ok<TAB>description" or "not
ok<TAB>description", and free text (diagnostics) on other lines.  Exit
status: 0 if every assertion passed, 1 if one failed, 2 on misuse.

A site is named by its innermost frame's function (frames go from the
allocation call outwards).

Commands:
  sums DIFF
      every delta is new - old; the sites' old, new and delta add up to
      the totals in every site column, the modules' in every module
      column; statuses agree with the figures (new: nothing old, every
      change >= 0; gone: nothing new, every change <= 0; same: no change
      in use or allocated; folded: no frames); status_counts count the
      sites (without a --top fold); each site's interval holds its delta
      (and is the delta itself when exact).
  order DIFF
      sites by delta.inuse_bytes, largest first; folded lines last.
  site DIFF FUNC [--index N] KEY=VALUE...
      the one site of FUNC (at position N); each dotted KEY
      (delta.inuse_bytes, status, ...) has VALUE.
  field DIFF KEY VALUE
      a dotted key of the document has VALUE (JSON).
  zero DIFF
      every change is 0 and every site is "same".
  moved REPORT_OLD REPORT_NEW FUNC...
      in two `heaptool report --json --detail` of two runs, the site of
      each FUNC has other raw addresses but the same module offsets.
  same DIFF1 DIFF2
      the two documents are equal but for the sessions' duration_s.
"""

import json
import shlex
import sys

SITE_COLS = ("inuse_bytes", "inuse_objects", "alloc_bytes", "alloc_objects",
             "freed_bytes", "samples", "temporary_objects")
MOD_COLS = ("inuse_bytes", "inuse_objects", "alloc_bytes", "alloc_objects")
MAIN_COLS = MOD_COLS

failed = False


def report(cond, desc, *diag):
    global failed
    print("%s\t%s" % ("ok" if cond else "not ok", desc))
    if not cond:
        failed = True
        for d in diag:
            print(d)


def load(path):
    with open(path) as f:
        return json.load(f)


def base(path):
    return path.rsplit("/", 1)[-1]


def func(site):
    fr = site.get("frames") or []
    return fr[0].get("function") if fr else None


def dig(doc, key):
    for k in key.split("."):
        if isinstance(doc, list):
            doc = doc[int(k)]
        else:
            doc = doc[k]
    return doc


def cmd_sums(args):
    (path,) = args
    d = load(path)
    name = base(path)
    sites = d.get("sites", [])
    bad = []
    for i, s in enumerate(sites):
        for c in SITE_COLS:
            if s["delta"][c] != s["new"][c] - s["old"][c]:
                bad.append("site %d %s: delta %d != %d - %d" % (
                    i, c, s["delta"][c], s["new"][c], s["old"][c]))
    report(not bad, "%s: every site's delta is new - old" % name, *bad[:5])
    bad = []
    for c in SITE_COLS:
        for side in ("old", "new", "delta"):
            got = sum(s[side][c] for s in sites)
            want = d["totals"][c][side]
            if got != want:
                bad.append("%s.%s: sites sum to %d, totals say %d" % (
                    c, side, got, want))
        t = d["totals"][c]
        if t["delta"] != t["new"] - t["old"]:
            bad.append("totals.%s: delta is not new - old" % c)
    report(not bad and sites,
           "%s: the sites' old, new and delta sum to the totals in %s" % (
               name, ", ".join(SITE_COLS)), *bad)
    bad = []
    for c in MOD_COLS:
        for side in ("old", "new", "delta"):
            got = sum(m[c][side] for m in d["modules"])
            if got != d["totals"][c][side]:
                bad.append("modules %s.%s: %d, totals %d" % (
                    c, side, got, d["totals"][c][side]))
    report(not bad, "%s: the modules sum to the totals" % name, *bad)
    bad = []
    for i, s in enumerate(sites):
        st, dl = s["status"], s["delta"]
        if st == "new":
            ok = all(s["old"][c] == 0 for c in SITE_COLS) and \
                all(dl[c] >= 0 for c in SITE_COLS) and s["frames"]
        elif st == "gone":
            ok = all(s["new"][c] == 0 for c in SITE_COLS) and \
                all(dl[c] <= 0 for c in SITE_COLS) and s["frames"]
        elif st == "same":
            ok = all(dl[c] == 0 for c in MAIN_COLS) and s["frames"]
        elif st == "changed":
            ok = any(dl[c] != 0 for c in MAIN_COLS) and s["frames"]
        elif st == "folded":
            ok = not s["frames"] and s["folded_sites"] > 0
        else:
            ok = False
        if not ok:
            bad.append("site %d (%s): status %s does not fit %s" % (
                i, func(s), st, json.dumps(s)[:300]))
        lo, hi = dl["inuse_bytes_low"], dl["inuse_bytes_high"]
        if not lo <= dl["inuse_bytes"] <= hi or \
                (d["exact"] and lo != hi):
            bad.append("site %d (%s): interval %d..%d for %d" % (
                i, func(s), lo, hi, dl["inuse_bytes"]))
    report(not bad, "%s: statuses fit the figures; intervals hold "
           "the deltas" % name, *bad[:5])
    if not any(s["status"] == "folded" for s in sites):
        counts = {}
        for s in sites:
            counts[s["status"]] = counts.get(s["status"], 0) + 1
        want = {k: v for k, v in d["status_counts"].items() if v}
        report(counts == want, "%s: status_counts count the sites" % name,
               "sites: %r, status_counts: %r" % (counts, want))


def cmd_order(args):
    (path,) = args
    sites = load(path)["sites"]
    keys = [(s["status"] == "folded", -s["delta"]["inuse_bytes"])
            for s in sites]
    report(keys == sorted(keys) and sites,
           "%s: sites by growth of bytes in use, folded last" % base(path),
           "order: %r" % [(func(s), s["delta"]["inuse_bytes"])
                          for s in sites])


def cmd_site(args):
    path, fn = args[0], args[1]
    rest = args[2:]
    index = None
    if rest and rest[0] == "--index":
        index = int(rest[1])
        rest = rest[2:]
    sites = load(path)["sites"]
    found = [i for i, s in enumerate(sites) if func(s) == fn]
    desc = "%s: site %s%s %s" % (base(path), fn,
                                 "" if index is None else " #%d" % index,
                                 " ".join(rest))
    if len(found) != 1:
        report(False, desc, "%d sites of %s: %r" % (
            len(found), fn, [func(s) for s in sites]))
        return
    i = found[0]
    bad = []
    if index is not None and i != index:
        bad.append("at position %d" % i)
    for kv in rest:
        k, v = kv.split("=", 1)
        got = dig(sites[i], k)
        if str(got) != v:
            bad.append("%s is %r, not %s" % (k, got, v))
    report(not bad, desc, *bad)


def cmd_field(args):
    path, key, want = args
    got = dig(load(path), key)
    report(got == json.loads(want), "%s: %s is %s" % (base(path), key, want),
           "got %r" % (got,))


def cmd_zero(args):
    (path,) = args
    d = load(path)
    bad = []
    for c, t in d["totals"].items():
        if t["delta"] != 0 or t["old"] != t["new"]:
            bad.append("totals.%s: %r" % (c, t))
    for m in d["modules"]:
        for c in MOD_COLS:
            if m[c]["delta"] != 0:
                bad.append("module %s %s: %r" % (m["module"], c, m[c]))
    for s in d.get("sites", []):
        if s["status"] != "same" or any(s["delta"][c] != 0
                                        for c in SITE_COLS):
            bad.append("site %s: %s %r" % (func(s), s["status"],
                                           s["delta"]))
    report(not bad and d.get("sites"),
           "%s: every change is 0, every site the same" % base(path),
           *bad[:5])


def site_of(rep, fn):
    found = [s for s in rep["sites"] if func(s) == fn]
    return found[0] if len(found) == 1 else None


def cmd_moved(args):
    old, new = load(args[0]), load(args[1])
    for fn in args[2:]:
        a, b = site_of(old, fn), site_of(new, fn)
        if a is None or b is None:
            report(False, "site %s in both reports" % fn)
            continue
        aa = [f["address"] for f in a["frames"]]
        ba = [f["address"] for f in b["frames"]]
        ao = [(f["module"], f["offset"]) for f in a["frames"]]
        bo = [(f["module"], f["offset"]) for f in b["frames"]]
        report(aa[0] != ba[0] and ao == bo,
               "site %s: other addresses (%s, %s), same module offsets" % (
                   fn, aa[0], ba[0]), "offsets: %r / %r" % (ao, bo))


def strip(d):
    for k in ("old", "new"):
        d[k].pop("duration_s", None)
    return d


def cmd_same(args):
    a, b = strip(load(args[0])), strip(load(args[1]))
    diffs = []
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            diffs.append("%s: %s / %s" % (k, json.dumps(a.get(k))[:300],
                                         json.dumps(b.get(k))[:300]))
    report(not diffs, "%s and %s are the same but for durations" % (
        base(args[0]), base(args[1])), *diffs)


COMMANDS = {
    "sums": cmd_sums, "order": cmd_order, "site": cmd_site,
    "field": cmd_field, "zero": cmd_zero, "moved": cmd_moved,
    "same": cmd_same,
}


def run(argv):
    if not argv or argv[0] not in COMMANDS:
        print("htdiff.py: unknown command %r" % (argv[:1],))
        sys.exit(2)
    try:
        COMMANDS[argv[0]](argv[1:])
    except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
        report(False, "%s: %s: %s" % (" ".join(argv[:2]), type(e).__name__,
                                       e))


def main():
    if sys.argv[1:] == ["-"]:
        for line in sys.stdin:
            argv = shlex.split(line, comments=True)
            if argv:
                run(argv)
    else:
        run(sys.argv[1:])
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
