#!/usr/bin/env python3
"""Checks of heaptool report's export formats for t/t0030-report-formats.sh.

Usage: htformats.py - (commands on standard input, one per line, split like
a shell would, # comments), or htformats.py COMMAND ARGS.  Each assertion
prints "ok<TAB>description" or "not ok<TAB>description", anything else is a
diagnostic; the exit status is 1 if an assertion failed.

Every check compares a format with the JSON report (--json --detail) of the
same profile and options, which is the reference: both print one view.

Commands:
  consistent REPORT [--top N] [--threshold SIZE] [--sort COLUMN]
      totals are the sums of the sites in every column (live_samples null in
      both, or summed); no value is negative; the sites are in the order of
      the sort column; --top keeps at most N sites and --threshold only
      sites at or above SIZE in use or allocated, the others folded into
      one last site with empty frames, and kept + folded = site_count.
      At rate 1: samples = allocated objects and live samples = objects in
      use, site by site.
  same-totals REPORT1 REPORT2
      the totals and modules of two reports of one profile are equal (the
      options that fold sites never change them).
  site REPORT NAME KEY=N...
      the one site whose innermost frame is NAME has these figures.
  peak PEAK_REPORT REPORT
      the report --at-peak's in use is the peak of the other report, its
      allocated figures the other's (the whole session), and it says
      session.at_peak.
  text TEXT REPORT
      a --detail --bytes text report: its summary and its site lines add up
      (in use bytes and objects, allocated bytes and objects) and equal the
      JSON totals.
  pprof FILE REPORT [--src SOURCE --func NAME...]
      FILE is gzip'd profile.proto: string table, sample and period types,
      period = rate; one sample per JSON site in the same order with equal
      values (alloc_objects, alloc_space, inuse_objects, inuse_space); its
      locations expand, line by line, to exactly the site's frames
      (function, file, line; inlined ones first within a location), at the
      frame's address - 1, in a mapping holding the address, named after its
      module; the executable's (named as the command) with a build-id;
      each NAME is the leaf of one sample, at the line of its "SITE NAME"
      marker in SOURCE.
  collapsed FILE REPORT --key KEY
      FILE is collapsed stacks: one line per site whose KEY is not 0, in
      the sites' order, the frames outermost first equal to the site's
      function names (module+offset when unknown), values = KEY, their sum
      = totals.KEY; no name holds ';' or white space.
  mkprofile OUT [--hostile] [--wrap]
      write a sampled profile (format version 2, rate 4096) of a program
      "prog" whose module is not on this machine: site A (two frames) with
      a peak, site B (one frame) allocated after the peak, and a record for
      5 sites the agent folded.  --hostile puts terminal escapes (ESC, BEL,
      the C1 CSI U+009B, a byte that is not UTF-8) in the command, the
      module's path and a thread's name.  --wrap adds five sites whose
      every figure is 2^64 - 1 (their sums would wrap).
  interval REPORT INDEX LOW HIGH
      site INDEX's 95% interval is [LOW, HIGH], give or take 1.
  field REPORT PATH VALUE
      the value at PATH (keys joined by dots; "sites[*].KEY" is the list
      of every site's KEY) is VALUE, read as JSON.
  svg FILE COLLAPSED --total REPORT:KEY [--src SOURCE --func NAME...]
      FILE is well-formed XML; one <g class="f"> with one rect per node of
      the tree of COLLAPSED's stacks (plus the root) that is at least half
      a pixel of 1180 wide (the narrower are left out), and none for the
      others; the root's value is
      totals.KEY of REPORT
      and its rect is full width; every frame's width is its share of it;
      each NAME has a frame whose title gives NAME and SOURCE:line of its
      marker.
"""

import gzip
import json
import math
import os
import re
import shlex
import sys
import xml.etree.ElementTree as ET

failed = False
FIGURES = ("inuse_bytes", "inuse_objects", "alloc_bytes", "alloc_objects",
           "samples", "live_samples")


def report(cond, desc, *diag):
    global failed
    print(("ok\t" if cond else "not ok\t") + desc)
    if not cond:
        failed = True
        for d in diag:
            print(d)
    return cond


def base(path):
    return os.path.basename(path) if path else ""


def load(path):
    with open(path) as fp:
        return json.load(fp)


def markers(src):
    found = {}
    with open(src) as fp:
        for n, text in enumerate(fp, 1):
            for m in re.finditer(r"/\* SITE (\w+) \*/", text):
                found[m.group(1)] = n
    return found


def parse_opts(args, names):
    """--name VALUE pairs (repeatable --func) and the positional rest."""
    opts, rest = {"func": []}, []
    while args:
        a = args.pop(0)
        if a.startswith("--") and a[2:] in names:
            if a == "--func":
                opts["func"].append(args.pop(0))
            else:
                opts[a[2:]] = args.pop(0)
        else:
            rest.append(a)
    return opts, rest


SIZE_RE = re.compile(r"^(\d+)([KMGT]?)(?:i?B)?$", re.I)


def size(s):
    m = SIZE_RE.match(s)
    if not m:
        raise SystemExit("bad size %s" % s)
    return int(m.group(1)) * 1024 ** " KMGT".index(
        (m.group(2) or " ").upper())


SORT_KEYS = {
    "inuse": ("inuse_bytes", "alloc_bytes", "samples"),
    "alloc": ("alloc_bytes", "inuse_bytes", "alloc_objects"),
    "objects": ("inuse_objects", "alloc_objects", "inuse_bytes"),
}


def cmd_consistent(args):
    opts, rest = parse_opts(args, ("top", "threshold", "sort"))
    rep = load(rest[0])
    what = " ".join("--%s %s" % (k, v) for k, v in sorted(opts.items())
                    if k != "func") or "no options"
    tot, sites = rep["totals"], rep.get("sites")
    if not report(isinstance(sites, list) and len(sites) > 0,
                  "%s: the report lists sites" % what):
        return
    bad = []
    for k in FIGURES:
        vals = [s.get(k) for s in sites]
        if tot.get(k) is None or None in vals:
            if not (tot.get(k) is None and all(v is None for v in vals)):
                bad.append("  %s: total %s, sites %s" % (k, tot.get(k),
                                                          vals))
        elif tot[k] != sum(vals):
            bad.append("  %s: total %d, sum of sites %d" % (k, tot[k],
                                                            sum(vals)))
    report(not bad, "%s: totals are the sums of the sites in every column"
           % what, *bad)
    neg = []
    for where, d in [("totals", tot)] + [("site %d" % i, s)
                                          for i, s in enumerate(sites)]:
        for k, v in d.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) \
                    and v < 0:
                neg.append("  %s.%s = %s" % (where, k, v))
    for m in rep.get("modules") or []:
        for k, v in m.items():
            if isinstance(v, int) and v < 0:
                neg.append("  module %s.%s = %s" % (m.get("module"), k, v))
    report(not neg, "%s: no value is negative" % what, *neg[:10])
    for k in ("inuse_bytes", "alloc_bytes"):
        msum = sum(m[k] for m in rep.get("modules") or [])
        report(msum == tot[k], "%s: modules add up to totals.%s" % (what, k),
               "  %d vs %d" % (msum, tot[k]))
    kept = [s for s in sites if s.get("frames") or not s.get("folded_sites")]
    folded = [s for s in sites if s.get("folded_sites")]
    report(len(folded) <= 1 and (not folded or sites[-1] is folded[0]),
           "%s: at most one folded site, the last" % what)
    nfold = sum(s["folded_sites"] for s in folded)
    report(len(kept) + nfold == tot["site_count"],
           "%s: %d shown + %d folded = %d sites" % (what, len(kept), nfold,
                                                    tot["site_count"]))
    if rep["session"]["rate"] == 1:
        bad = ["  site %d: %d samples, %d objects allocated; %s live, %d "
               "in use" % (i, s["samples"], s["alloc_objects"],
                           s["live_samples"], s["inuse_objects"])
               for i, s in enumerate(sites)
               if s["samples"] != s["alloc_objects"] or
               s["live_samples"] != s["inuse_objects"]]
        report(not bad, "%s: rate 1: every object is a sample" % what,
               *bad[:5])
    keys = SORT_KEYS[opts.get("sort", "inuse")]
    order = [tuple(s[k] for k in keys) for s in kept]
    report(order == sorted(order, reverse=True),
           "%s: sites in the order of %s" % (what, keys[0]),
           "  %s" % order[:20])
    if "top" in opts:
        report(len(kept) <= int(opts["top"]),
               "%s: at most %s sites shown" % (what, opts["top"]))
    if "threshold" in opts:
        t = size(opts["threshold"])
        small = [s for s in kept if s["inuse_bytes"] < t and
                 s["alloc_bytes"] < t]
        report(not small, "%s: no site shown below the threshold" % what,
               *["  %d/%d" % (s["inuse_bytes"], s["alloc_bytes"])
                 for s in small])
        if folded and "top" not in opts:
            f = folded[0]
            report(f["inuse_bytes"] < t * nfold and
                   f["alloc_bytes"] < t * nfold,
                   "%s: the folded sites are each below it" % what)


def cmd_same_totals(args):
    a, b = load(args[0]), load(args[1])
    ta = dict(a["totals"])
    tb = dict(b["totals"])
    report(ta == tb, "%s and %s: same totals" % (base(args[0]),
                                                base(args[1])),
           "  %s" % ta, "  %s" % tb)
    report(a.get("modules") == b.get("modules"),
           "%s and %s: same modules" % (base(args[0]), base(args[1])))


def cmd_site(args):
    rep = load(args[0])
    name = args[1]
    found = [s for s in rep["sites"]
             if s["frames"] and s["frames"][0]["function"] == name]
    if not report(len(found) == 1, "site %s: exactly one" % name,
                  "  %d found" % len(found)):
        return
    bad = []
    for kv in args[2:]:
        k, v = kv.split("=")
        if found[0].get(k) != int(v):
            bad.append("  %s: want %s, got %s" % (k, v, found[0].get(k)))
    report(not bad, "site %s: %s" % (name, " ".join(args[2:])), *bad)


def cmd_peak(args):
    peak, now = load(args[0]), load(args[1])
    tp, tn = peak["totals"], now["totals"]
    report(peak["session"].get("at_peak") is True and
           now["session"].get("at_peak") is False,
           "at peak: session.at_peak says which report is which")
    report(tp["inuse_bytes"] == tn["peak_inuse_bytes"] and
           tp["peak_inuse_bytes"] == tn["peak_inuse_bytes"],
           "at peak: in use = the session's peak %d" %
           tn["peak_inuse_bytes"], "  in use at peak %d, peak %d" %
           (tp["inuse_bytes"], tp["peak_inuse_bytes"]))
    same = ("alloc_bytes", "alloc_objects", "samples", "freed_bytes",
            "site_count")
    report(all(tp[k] == tn[k] for k in same),
           "at peak: allocated, samples and freed are the whole session's",
           *["  %s: %s vs %s" % (k, tp[k], tn[k]) for k in same
             if tp[k] != tn[k]])
    report(tp["inuse_bytes"] >= tn["inuse_bytes"],
           "at peak: in use at least what it is now")


# ---- text

SUMMARY_INUSE = re.compile(r"^  in use +(\d+) B in (\d+) objects? ")
SUMMARY_ALLOC = re.compile(r"^  allocated +(\d+) B in (\d+) objects? ")
ROW = re.compile(r"^(?:#\d+|\(\d+ smaller sites?\)) (.*)$")
ROW_INUSE = re.compile(r"in use (\d+) B (?:\([\d.]+%\) )?in (\d+) objects?")
ROW_ALLOC = re.compile(r"allocated (\d+) B (?:\([\d.]+%\) )?in (\d+) "
                       r"objects?")


def cmd_text(args):
    rep = load(args[1])
    summary, rows = None, [0, 0, 0, 0]
    alloc = None
    nrows = 0
    with open(args[0]) as fp:
        for line in fp:
            m = SUMMARY_INUSE.match(line)
            if m:
                summary = [int(m.group(1)), int(m.group(2))]
            m = SUMMARY_ALLOC.match(line)
            if m:
                alloc = [int(m.group(1)), int(m.group(2))]
            m = ROW.match(line)
            if m:
                a, b = ROW_INUSE.search(m.group(1)), \
                    ROW_ALLOC.search(m.group(1))
                if a and b:
                    nrows += 1
                    rows = [rows[0] + int(a.group(1)),
                            rows[1] + int(a.group(2)),
                            rows[2] + int(b.group(1)),
                            rows[3] + int(b.group(2))]
    if not report(summary is not None and alloc is not None,
                  "text: summary lines found"):
        return
    t = rep["totals"]
    want = [t["inuse_bytes"], t["inuse_objects"], t["alloc_bytes"],
            t["alloc_objects"]]
    report(nrows == len(rep["sites"]), "text: %d site lines, as many as "
           "JSON sites" % nrows, "  JSON has %d" % len(rep["sites"]))
    report(summary + alloc == want, "text: summary = JSON totals",
           "  text %s, JSON %s" % (summary + alloc, want))
    report(rows == want, "text: site lines add up to the summary",
           "  sum %s, summary %s" % (rows, want))


# ---- pprof

def varint(buf, i):
    shift = v = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7f) << shift
        if b < 0x80:
            return v, i
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def fields(buf):
    """The (field, value) pairs of a message: ints for varints, bytes for
    length-delimited; other wire types are refused."""
    i, out = 0, []
    while i < len(buf):
        key, i = varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = varint(buf, i)
        elif wire == 2:
            n, i = varint(buf, i)
            if i + n > len(buf):
                raise ValueError("field %d runs past its message" % field)
            v, i = bytes(buf[i:i + n]), i + n
        else:
            raise ValueError("wire type %d" % wire)
        out.append((field, v))
    return out


def msg(buf):
    """A message as {field: [values]}."""
    d = {}
    for f, v in fields(buf):
        d.setdefault(f, []).append(v)
    return d


def one(d, f, default=0):
    return d.get(f, [default])[-1]


def ints(d, f):
    """A repeated integer field, packed or not."""
    out = []
    for v in d.get(f, []):
        if isinstance(v, bytes):
            i = 0
            while i < len(v):
                x, i = varint(v, i)
                out.append(x)
        else:
            out.append(v)
    return out


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def decode_pprof(path):
    with open(path, "rb") as fp:
        raw = fp.read()
    p = msg(gzip.decompress(raw))
    strings = [s.decode("utf-8") for s in p.get(6, [])]
    S = lambda i: strings[i]
    prof = {"gzip": raw[:2] == b"\x1f\x8b", "strings": strings}
    prof["sample_type"] = [(S(one(m, 1)), S(one(m, 2))) for m in
                           map(msg, p.get(1, []))]
    pt = msg(one(p, 11, b""))
    prof["period_type"] = (S(one(pt, 1)), S(one(pt, 2)))
    prof["period"] = signed(one(p, 12))
    prof["default_sample_type"] = S(one(p, 14))
    prof["comments"] = [S(i) for i in ints(p, 13)]
    prof["mappings"] = {}
    for m in map(msg, p.get(3, [])):
        prof["mappings"][one(m, 1)] = {
            "start": one(m, 2), "limit": one(m, 3), "offset": one(m, 4),
            "file": S(one(m, 5)), "build_id": S(one(m, 6)),
            "has_functions": one(m, 7)}
    funcs = {}
    for f in map(msg, p.get(5, [])):
        funcs[one(f, 1)] = (S(one(f, 2)), S(one(f, 3)), S(one(f, 4)))
    prof["functions"] = funcs
    locs = {}
    for l in map(msg, p.get(4, [])):
        lines = [msg(x) for x in l.get(4, [])]
        locs[one(l, 1)] = {
            "mapping": one(l, 2), "address": one(l, 3),
            "lines": [(funcs[one(x, 1)], signed(one(x, 2))) for x in lines]}
    prof["locations"] = locs
    prof["samples"] = [{"locations": [locs[i] for i in ints(s, 1)],
                        "values": [signed(v) for v in ints(s, 2)],
                        "labels": {S(one(m, 1)): S(one(m, 2))
                                   for m in map(msg, s.get(3, []))}}
                       for s in map(msg, p.get(2, []))]
    return prof


def shown(site):
    """The frames of a site that the exports show: from its site_frame,
    the first not folded as an allocator wrapper."""
    return site["frames"][site.get("site_frame", 0):]


def cmd_pprof(args):
    opts, rest = parse_opts(args, ("src", "func"))
    path, rep = rest[0], load(rest[1])
    try:
        prof = decode_pprof(path)
    except Exception as e:
        report(False, "pprof: decodes (gzip, protobuf)",
               "  %s: %s" % (type(e).__name__, e))
        return
    report(prof["gzip"], "pprof: gzip-compressed")
    report(prof["strings"][:1] == [""], "pprof: string_table[0] is \"\"")
    report(prof["sample_type"] == [("alloc_objects", "count"),
                                   ("alloc_space", "bytes"),
                                   ("inuse_objects", "count"),
                                   ("inuse_space", "bytes")],
           "pprof: sample types", "  %s" % prof["sample_type"])
    report(prof["period_type"] == ("space", "bytes") and
           prof["period"] == rep["session"]["rate"],
           "pprof: period space/bytes = the rate %d" %
           rep["session"]["rate"],
           "  %s %s" % (prof["period_type"], prof["period"]))
    sites = rep["sites"]
    report(len(prof["samples"]) == len(sites),
           "pprof: one sample per site (%d)" % len(sites),
           "  %d samples" % len(prof["samples"]))
    keys = ("alloc_objects", "alloc_bytes", "inuse_objects", "inuse_bytes")
    bad_v, bad_f, bad_a, bad_m = [], [], [], []
    for i, (smp, site) in enumerate(zip(prof["samples"], sites)):
        # The exports show the stack from the site's frame, the first
        # outside the allocator wrappers folded (JSON keeps them all).
        frames = shown(site)
        want = [site[k] for k in keys]
        if smp["values"] != want:
            bad_v.append("  sample %d: %s, site %s" % (i, smp["values"],
                                                      want))
        # A location without lines is an address nothing is known of
        # (no function, no file): pprof names it by address and module.
        got = []
        for loc in smp["locations"]:
            if not loc["lines"]:
                got.append(("<address %#x>" % (loc["address"] + 1), None,
                            None))
            got.extend((fn[0], fn[2] or None, line or None)
                       for fn, line in loc["lines"])
        if frames:
            exp = [("<address %s>" % f["address"], None, None)
                   if f["function"] is None and f["file"] is None else
                   (f["function"] or
                    ("%s+%s" % (f["module"], f["offset"]) if f["module"]
                     else f["address"]), f["file"], f["line"])
                   for f in frames]
        else:
            exp = [("(%d smaller site%s)" % (site["folded_sites"],
                                             "" if site["folded_sites"] == 1
                                             else "s"), None, None)]
        if got != exp:
            bad_f.append("  sample %d:\n    got  %s\n    want %s" %
                         (i, got, exp))
        # Each location stands for the frames of one address.
        addrs = []
        for f in frames:
            if not addrs or addrs[-1] != f["address"]:
                addrs.append(f["address"])
        got_a = [loc["address"] for loc in smp["locations"]]
        if frames and got_a != [int(a, 16) - 1 for a in addrs]:
            bad_a.append("  sample %d: %s vs %s" % (i, [hex(a) for a in
                                                        got_a], addrs))
        fi = 0
        for loc in smp["locations"]:
            if not frames:
                break
            f = frames[fi]
            fi += max(len(loc["lines"]), 1)
            m = prof["mappings"].get(loc["mapping"])
            if f["module"] is None:
                continue
            if m is None or not (m["start"] <= loc["address"] < m["limit"]) \
                    or base(m["file"]) != f["module"]:
                bad_m.append("  sample %d: %s in %s" % (i, f["address"], m))
    report(not bad_v, "pprof: sample values = the JSON sites' values",
           *bad_v[:5])
    report(not bad_f, "pprof: locations expand to the sites' frames "
           "(function, file, line)", *bad_f[:3])
    report(not bad_a, "pprof: one location per address, at address - 1",
           *bad_a[:3])
    report(not bad_m, "pprof: locations in the mapping of their module",
           *bad_m[:3])
    tot = rep["totals"]
    sums = [sum(s["values"][k] for s in prof["samples"]) for k in range(4)]
    report(sums == [tot[k] for k in keys], "pprof: samples add up to the "
           "JSON totals", "  %s vs %s" % (sums, [tot[k] for k in keys]))
    ids = [m["build_id"] for m in prof["mappings"].values()
           if base(m["file"]) == rep["command"]]
    report(len(ids) == 1 and re.match(r"^[0-9a-f]{16,}$", ids[0]) is not None,
           "pprof: the executable's mapping has its build-id in hex",
           "  %s" % ids)
    if opts.get("src"):
        lines = markers(opts["src"])
        for name in opts["func"]:
            hits = [s for s in prof["samples"] if s["locations"] and
                    s["locations"][0]["lines"][0][0][0] == name]
            ok = len(hits) == 1
            if ok:
                fn, line = hits[0]["locations"][0]["lines"][0]
                ok = base(fn[2]) == base(opts["src"]) and \
                    line == lines[name]
            report(ok, "pprof: %s is a leaf at %s:%d" %
                   (name, base(opts["src"]), lines[name]),
                   *["  %s" % h["locations"][0]["lines"] for h in hits])


# ---- collapsed

def sane(name):
    out = []
    for ch in name:
        if ch == ";":
            out.append(":")
        elif ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7f:
            out.append("_")
        else:
            out.append(ch)
    return "".join(out)


def read_collapsed(path):
    out = []
    with open(path, encoding="utf-8") as fp:
        for n, line in enumerate(fp, 1):
            m = re.match(r"^(\S+) (\d+)\n$", line)
            if not m:
                raise ValueError("line %d: %r" % (n, line))
            out.append((m.group(1).split(";"), int(m.group(2))))
    return out


def cmd_collapsed(args):
    opts, rest = parse_opts(args, ("key",))
    key = opts["key"]
    rep = load(rest[1])
    try:
        lines = read_collapsed(rest[0])
    except (OSError, ValueError) as e:
        report(False, "collapsed: every line is \"a;b;c value\"", "  %s" % e)
        return
    report(True, "collapsed: every line is \"a;b;c value\"")
    total = rep["totals"][key]
    got = sum(v for _, v in lines)
    report(got == total, "collapsed: values add up to totals.%s = %d" %
           (key, total), "  sum %d" % got)
    want = []
    for s in rep["sites"]:
        if s[key] == 0:
            continue
        if s["frames"]:
            names = [sane(f["function"] or
                          ("%s+%s" % (f["module"], f["offset"])
                           if f["module"] else f["address"]))
                     for f in reversed(shown(s))]
        else:
            names = [sane("(%d smaller site%s)" % (
                s["folded_sites"], "" if s["folded_sites"] == 1 else "s"))]
        want.append((names, s[key]))
    report(lines == want, "collapsed: one line per site, outermost frame "
           "first, as the JSON frames", *["  got  %s\n  want %s" % (a, b)
                                          for a, b in zip(lines, want)
                                          if a != b][:3])


# ---- svg

def cmd_svg(args):
    opts, rest = parse_opts(args, ("total", "src", "func"))
    rep, key = opts["total"].split(":")
    total = load(rep)["totals"][key]
    try:
        root = ET.parse(rest[0]).getroot()
    except (OSError, ET.ParseError) as e:
        report(False, "svg: well-formed XML", "  %s" % e)
        return
    report(True, "svg: well-formed XML")
    ns = "{http://www.w3.org/2000/svg}"
    report(root.tag == ns + "svg", "svg: an <svg> document", "  %s" %
           root.tag)
    frames = [g for g in root.iter(ns + "g") if g.get("class") == "f"]
    rects = [g.findall(ns + "rect") for g in frames]
    report(all(len(r) == 1 for r in rects), "svg: one rect per frame")
    report(root.find(".//" + ns + "script") is not None and
           not any(s.get("href") or s.get("{http://www.w3.org/1999/xlink}"
                                          "href")
                   for s in root.iter(ns + "script")),
           "svg: its script is inline")
    tree = {}
    for names, value in read_collapsed(rest[1]):
        for i in range(1, len(names) + 1):
            tree[tuple(names[:i])] = tree.get(tuple(names[:i]), 0) + value
    # Wide enough: value / total * 1180 >= 0.5, in integers.
    wide = {p for p, value in tree.items() if value * 2360 >= total}
    report(len(frames) == len(wide) + 1,
           "svg: %d frames = %d nodes of the collapsed stacks (%d narrower "
           "than 0.5 px left out) + the root" %
           (len(frames), len(wide), len(tree) - len(wide)))
    if not frames:
        return
    r0 = frames[0]
    full = float(rects[0][0].get("width"))
    report(r0.get("data-d") == "0" and int(r0.get("data-v")) == total,
           "svg: the root holds the total %d" % total,
           "  root %s" % r0.attrib)
    report(abs(full - 1180) < 0.01, "svg: the root is full width",
           "  width %s" % full)
    bad = []
    for g, r in zip(frames, rects):
        w = float(r[0].get("width"))
        want = int(g.get("data-v")) / total * full if total else full
        if abs(w - want) > 0.01 or int(g.get("data-v")) <= 0:
            bad.append("  %s: width %s, want %.2f" % (g.get("data-n"), w,
                                                      want))
    report(not bad, "svg: every frame's width is its share of the total",
           *bad[:5])
    titles = {g.get("data-n"): g.find(ns + "title").text for g in frames}
    if opts.get("src"):
        lines = markers(opts["src"])
        for name in opts["func"]:
            t = titles.get(name) or ""
            want = "%s:%d" % (base(opts["src"]), lines[name])
            report(t.startswith(name + "\n") and want in t,
                   "svg: %s's title gives its function and %s" %
                   (name, want), "  title %r" % t)


def cmd_mkprofile(args):
    import struct
    u16 = lambda v: struct.pack("<H", v)
    u32 = lambda v: struct.pack("<I", v)
    u64 = lambda v: struct.pack("<Q", v)
    f64 = lambda v: struct.pack("<d", v)

    def rec(t, payload):
        return u32(t) + u32(len(payload)) + payload

    hostile = "--hostile" in args[1:]
    esc = b"\x1b]0;owned\x07\x1b[31m\xc2\x9b2J\xff"
    cmd = b"prog" + (esc if hostile else b"")
    meta = b"".join(u64(v) for v in (4242, 1, 4096)) + u32(2) + u32(0)
    meta += b"".join(u64(v) for v in (
        10 ** 9, 3 * 10 ** 9, 61940, 2 * 10 ** 9, 65536, 0, 21, 11,
        0, 0, 0, 0))
    meta += u16(len(cmd)) + cmd
    path = b"/nonexistent/prog" + (esc if hostile else b"")
    bid = bytes(range(1, 21))
    mod = u64(0x400000) + u64(0x400000) + u64(0x404000) + u16(len(bid)) + \
        bid + u16(len(path)) + path

    def site(inuse, iobj, alloc, aobj, samples, live, ivar, avar, pbytes,
             pobj, frames, folded):
        return rec(4, b"".join(u64(v) for v in (inuse, iobj, alloc, aobj,
                                                 samples, live)) +
                   f64(ivar) + f64(avar) + u64(pbytes) + u64(pobj) +
                   u32(len(frames)) + b"".join(u64(f) for f in frames) +
                   u32(folded))

    out = b"HEAPPROF" + u32(2) + u32(0) + rec(1, meta) + rec(2, mod)
    if hostile:
        name = b"w\x1b[2J" + b"\xc2\x9b"
        out += rec(3, u32(77) + b"".join(u64(v) for v in (8192, 2, 8192, 2,
                                                           2)) +
                   u16(len(name)) + name)
    out += site(40960, 10, 81920, 20, 15, 8, 1e8, 2e8, 61440, 15,
                [0x401000, 0x402000], 0)
    out += site(8192, 2, 8192, 2, 2, 2, 4e6, 4e6, 0, 0, [0x403000], 0)
    out += site(1000, 3, 3000, 9, 4, 1, 1e6, 3e6, 500, 1, [], 5)
    if "--wrap" in args[1:]:
        big = 2 ** 64 - 1
        for k in range(5):
            out += site(big, big, big, big, big, big, 1e30, 1e30, big, big,
                        [0x401100 + 16 * k], 0)
    out += rec(0, b"")
    with open(args[0], "wb") as fp:
        fp.write(out)


def cmd_interval(args):
    rep = load(args[0])
    s = rep["sites"][int(args[1])]
    lo, hi = int(args[2]), int(args[3])
    report(abs(s["inuse_bytes_low"] - lo) <= 1 and
           abs(s["inuse_bytes_high"] - hi) <= 1,
           "site %s: 95%% interval [%d, %d]" % (args[1], lo, hi),
           "  got [%s, %s]" % (s["inuse_bytes_low"], s["inuse_bytes_high"]))


def cmd_field(args):
    rep = load(args[0])
    v = rep
    for k in args[1].split("."):
        if k.endswith("[*]"):
            v = v.get(k[:-3]) or []
            continue
        v = [x.get(k) for x in v] if isinstance(v, list) else v.get(k)
    want = json.loads(args[2])
    report(v == want, "%s: %s is %s" % (base(args[0]), args[1], args[2]),
           "  got %s" % json.dumps(v))


COMMANDS = {
    "consistent": cmd_consistent,
    "same-totals": cmd_same_totals,
    "site": cmd_site,
    "peak": cmd_peak,
    "mkprofile": cmd_mkprofile,
    "field": cmd_field,
    "interval": cmd_interval,
    "text": cmd_text,
    "pprof": cmd_pprof,
    "collapsed": cmd_collapsed,
    "svg": cmd_svg,
}


def run(argv):
    if not argv or argv[0] not in COMMANDS:
        report(False, "htformats: unknown command %s" % " ".join(argv[:1]))
        return
    try:
        COMMANDS[argv[0]](argv[1:])
    except SystemExit as e:
        if e.code not in (None, 0, 1):
            report(False, "htformats %s: %s" % (argv[0], e.code))
    except Exception as e:
        report(False, "htformats %s: %s: %s" % (argv[0], type(e).__name__,
                                                 e))


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "-":
        for text in sys.stdin:
            argv = shlex.split(text, comments=True)
            if argv:
                run(argv)
    elif len(sys.argv) >= 2 and sys.argv[1] in COMMANDS:
        run(sys.argv[1:])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
