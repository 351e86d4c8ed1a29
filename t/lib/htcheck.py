#!/usr/bin/env python3
"""Checks of `heaptool report --json --detail` output for the shell tests.

Usage: htcheck.py COMMAND ARGS, or htcheck.py - to read commands from
standard input, one per line (split like a shell would, # comments).
Each command prints one line per assertion, "ok<TAB>description" or
"not ok<TAB>description", and free text (diagnostics) on other lines; the
shell test numbers the assertions and passes the rest on as TAP diagnostics.
Exit status: 0 if every assertion passed, 1 if one failed, 2 on misuse.

Sites are found by their frames: frames go from the allocation call (the
caller of malloc or operator new) outwards, so the site of a fixture function
NAME is the one whose innermost frame is NAME (with --any-frame, whose stack
passes through NAME).  Expected lines come from "SITE NAME" marker comments in
the fixture's source, found by the same name.

Commands:
  wellformed REPORT
      the keys of DESIGN.md section 2 are there; totals are the sums of the
      sites.
  exact REPORT
      invariants of --rate 1: every figure exact (samples = allocated
      objects, live samples = objects in use, freed = allocated - in use,
      intervals of width zero), no sample dropped, session.exact true.
  site REPORT --src FILE --func NAME [--any-frame] [--module BASENAME]
       [--chain F1,F2,...] KEY=N... KEY>=N...
       [--marker MARKER] [--sum]
      the one site of NAME: its innermost frame (or the frame of NAME) is
      NAME at the file:line of marker NAME (or MARKER, for a function with
      several allocation lines), in module BASENAME; the stack begins
      (at that frame) with the chain F1, F2, ...; each KEY (inuse_bytes,
      inuse_objects, alloc_bytes, alloc_objects, samples) is exactly N, or
      at least N.  With --sum, the sites of NAME at the marker may be
      many (e.g. one per interrupted stack below a signal handler) and the
      figures are their sums.
  field REPORT KEY.KEY... VALUE
      a scalar of the report has this value (e.g. session.rate 1).
  no-agent-frames REPORT
      no frame belongs to the agent.
  sampled REPORT --rate R --src FILE NAME:SIZE:COUNT:kept|churn...
      sampled estimates of sites that allocated COUNT blocks of SIZE bytes
      each and kept or freed them all: each estimate within 4 standard
      deviations of the truth, each site's sample count and their sum within
      4 sqrt(n) of what the rate predicts.
  same-sites REPORT1 REPORT2 NAME...
      the sites of NAME have the same samples and estimates in both reports.
  chain REPORT --src FILE... [--inlined K] F1,F2,...
      exactly one site whose frames begin with the functions F1, F2, ...;
      F1's frame at the file:line of marker "SITE F1", each Fk's (k > 1) at
      that of marker "CALL Fk>Fk-1" (the line where Fk calls Fk-1), in the
      FILE that has the marker; with --inlined K, the first K frames are
      one address, all but the K-th inlined into it.
"""

import json
import math
import os
import re
import shlex
import sys

SITE_KEYS = ("inuse_bytes", "inuse_objects", "alloc_bytes", "alloc_objects",
             "samples", "inuse_bytes_low", "inuse_bytes_high", "frames")
FRAME_KEYS = ("address", "module", "function", "file", "line", "inlined")
TOTAL_KEYS = ("inuse_bytes", "inuse_objects", "alloc_bytes", "alloc_objects",
              "freed_bytes", "peak_inuse_bytes", "samples", "live_samples")
SUMMED_KEYS = ("inuse_bytes", "inuse_objects", "alloc_bytes", "alloc_objects",
               "samples")

failed = False


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


def fn_is(name, want):
    """A frame's function is want: plain (DWARF), demangled with a
    parameter list, or mangled (_Z8keep_newm, _ZL8keep_newm)."""
    if not name:
        return False
    if name == want or name.startswith(want + "("):
        return True
    return re.match(r"_ZL?%d%s" % (len(want), re.escape(want)),
                    name) is not None


def fmt_frame(f):
    return "%s %s:%s [%s]%s" % (f.get("function"), base(f.get("file")),
                                f.get("line"), base(f.get("module")),
                                " (inlined)" if f.get("inlined") else "")


def fmt_stack(site, n=8):
    frames = site.get("frames") or []
    lines = ["    #%d %s" % (i, fmt_frame(f)) for i, f in
             enumerate(frames[:n])]
    if len(frames) > n:
        lines.append("    ... %d more" % (len(frames) - n))
    return "\n".join(lines)


_loaded = {}


def load(path):
    if path not in _loaded:
        try:
            with open(path) as fp:
                _loaded[path] = json.load(fp)
        except (OSError, ValueError) as e:
            report(False, "%s is a JSON report" % base(path), "  %s" % e)
            sys.exit(1)
    return _loaded[path]


def markers(src):
    found = {}
    with open(src) as fp:
        for n, text in enumerate(fp, 1):
            for m in re.finditer(r"/\* SITE (\w+) \*/", text):
                if m.group(1) in found:
                    raise SystemExit("%s: marker %s twice" %
                                     (src, m.group(1)))
                found[m.group(1)] = n
    return found


def find_sites(rep, func, any_frame=False):
    """Sites whose innermost frame is func; with any_frame, those whose stack
    passes through func.  Returns [(site, index of func's frame)]."""
    out = []
    for s in rep.get("sites") or []:
        frames = s.get("frames") or []
        for i, f in enumerate(frames if any_frame else frames[:1]):
            if fn_is(f.get("function"), func):
                out.append((s, i))
                break
    return out


def top_sites(rep, n=12):
    sites = sorted(rep.get("sites") or [],
                   key=lambda s: -(s.get("alloc_bytes") or 0))
    out = ["  largest sites by allocated bytes:"]
    for s in sites[:n]:
        out.append("  inuse %s/%s alloc %s/%s:" % (
            s.get("inuse_bytes"), s.get("inuse_objects"),
            s.get("alloc_bytes"), s.get("alloc_objects")))
        out.append(fmt_stack(s, 4))
    return out


def cmd_wellformed(args):
    # --may-be-empty: a run at a sampling rate where taking no sample at all
    # is a legitimate outcome (a short program at the default rate).
    may_be_empty = "--may-be-empty" in args
    args = [a for a in args if a != "--may-be-empty"]
    rep = load(args[0])
    missing = [k for k in ("totals", "sites") if k not in rep]
    missing += ["totals." + k for k in TOTAL_KEYS
                if k not in rep.get("totals", {})]
    sites = rep.get("sites") or []
    for i, s in enumerate(sites):
        missing += ["sites[%d].%s" % (i, k) for k in SITE_KEYS if k not in s]
        for j, f in enumerate(s.get("frames") or []):
            missing += ["sites[%d].frames[%d].%s" % (i, j, k)
                        for k in FRAME_KEYS if k not in f]
    report(not missing, "report has the keys of DESIGN.md section 2",
           *["  missing: " + m for m in missing[:20]])
    if not may_be_empty:
        report(len(sites) > 0, "report lists sites (%d)" % len(sites))
    tot = rep.get("totals", {})
    bad = []
    for k in SUMMED_KEYS:
        total = sum(s.get(k) or 0 for s in sites)
        if tot.get(k) != total:
            bad.append("  totals.%s = %s, sum of sites = %d" %
                       (k, tot.get(k), total))
    report(not bad, "totals are the sums of the sites", *bad)


def cmd_exact(args):
    rep = load(args[0])
    t = rep.get("totals", {})
    g = lambda k: t.get(k) or 0
    checks = [
        (g("samples") == g("alloc_objects"),
         "samples %d = allocated objects %d" % (g("samples"),
                                                g("alloc_objects"))),
        (g("live_samples") == g("inuse_objects"),
         "live samples %d = objects in use %d" % (g("live_samples"),
                                                  g("inuse_objects"))),
        (g("freed_bytes") == g("alloc_bytes") - g("inuse_bytes"),
         "freed %d = allocated %d - in use %d" % (
             g("freed_bytes"), g("alloc_bytes"), g("inuse_bytes"))),
        (g("peak_inuse_bytes") >= g("inuse_bytes"),
         "peak %d >= in use %d" % (g("peak_inuse_bytes"), g("inuse_bytes"))),
    ]
    for ok_, desc in checks:
        report(ok_, "rate 1 totals: " + desc)
    dropped = (rep.get("agent") or {}).get("dropped_samples")
    report(dropped == 0 and (rep.get("session") or {}).get("exact") is True,
           "rate 1, no sample dropped (%s), called exact" % dropped)
    bad = []
    for s in rep.get("sites") or []:
        if not (s.get("inuse_bytes_low") == s.get("inuse_bytes") ==
                s.get("inuse_bytes_high")) or \
                s.get("samples") != s.get("alloc_objects"):
            bad.append("  site: samples %s alloc_objects %s, in use %s "
                       "in [%s, %s]\n%s" % (
                           s.get("samples"), s.get("alloc_objects"),
                           s.get("inuse_bytes"), s.get("inuse_bytes_low"),
                           s.get("inuse_bytes_high"), fmt_stack(s, 3)))
    report(not bad, "rate 1 sites: one sample per object, exact intervals",
           *bad[:5])


def cmd_site(args):
    rep = load(args.pop(0))
    src = func = module = marker = None
    chain = []
    any_frame = summed = inlined = False
    want = {}
    atleast = {}
    while args:
        a = args.pop(0)
        if a == "--src":
            src = args.pop(0)
        elif a == "--func":
            func = args.pop(0)
        elif a == "--marker":
            marker = args.pop(0)
        elif a == "--sum":
            summed = True
        elif a == "--module":
            module = args.pop(0)
        elif a == "--chain":
            chain = args.pop(0).split(",")
        elif a == "--any-frame":
            any_frame = True
        elif a == "--inlined":
            # The innermost frame is an inlined function: it and the
            # function it was inlined into are two frames of one address.
            inlined = True
        elif ">=" in a:
            k, v = a.split(">=", 1)
            atleast[k] = int(v)
        elif "=" in a:
            k, v = a.split("=", 1)
            want[k] = int(v)
        else:
            raise SystemExit("site: bad argument " + a)
    if src is None or func is None:
        raise SystemExit("site: --src and --func are required")
    marker = marker or func
    line = markers(src).get(marker)
    if line is None:
        raise SystemExit("%s has no marker SITE %s" % (src, marker))

    # Sites whose frame of func is at the marker's line; if there are none,
    # all sites of func, so that the line check below says what it got.
    found = find_sites(rep, func, any_frame)
    found = [(s, i) for s, i in found
             if (s["frames"][i].get("line") == line and
                 base(s["frames"][i].get("file")) == base(src))] or found
    name = func if marker == func else "%s (%s)" % (func, marker)
    if summed:
        if not report(len(found) > 0, "%s: sites found (%d)" %
                      (name, len(found)), *top_sites(rep)):
            return
        site = {k: sum(s.get(k) or 0 for s, _ in found)
                for k in SUMMED_KEYS}
        site["frames"] = found[0][0].get("frames")
        idx = found[0][1]
        _check_site(site, idx, name, src, line, module, chain, any_frame,
                    want, atleast, inlined)
        return
    if not report(len(found) == 1, "%s: exactly one site" % name,
                  "  %d sites found" % len(found),
                  *([fmt_stack(s) for s, _ in found] or top_sites(rep))):
        if not found:
            return
    site, idx = found[0]
    _check_site(site, idx, name, src, line, module, chain, any_frame, want,
                atleast, inlined)


def _check_site(site, idx, func, src, line, module, chain, any_frame, want,
                atleast, inlined=False):
    frames = site.get("frames") or []
    f = frames[idx]
    if inlined:
        g = frames[idx + 1] if idx + 1 < len(frames) else {}
        report(f.get("inlined") is True and g.get("inlined") is False and
               f.get("address") == g.get("address"),
               "%s: an inlined frame, then its caller at the same address"
               % func, fmt_stack(site))
    where = "%s:%s" % (base(f.get("file")), f.get("line"))
    report(base(f.get("file")) == base(src) and f.get("line") == line,
           "%s: %s frame at %s:%d" % (func, "its" if any_frame else
                                      "innermost", base(src), line),
           "  got %s" % where, fmt_stack(site))
    if module is not None:
        report(base(f.get("module")) == module,
               "%s: frame in module %s" % (func, module),
               "  got module %s" % f.get("module"), fmt_stack(site))
    if chain:
        got = [fr.get("function") for fr in frames[idx:idx + len(chain)]]
        report(len(got) == len(chain) and
               all(fn_is(g, w) for g, w in zip(got, chain)),
               "%s: stack %s" % (func, " <- ".join(chain)),
               "  got %s" % " <- ".join(str(g) for g in got),
               fmt_stack(site))
    if want:
        bad = ["  %s: want %d, got %s" % (k, v, site.get(k))
               for k, v in sorted(want.items()) if site.get(k) != v]
        report(not bad, "%s: %s exact" % (func, " ".join(
            "%s=%d" % kv for kv in sorted(want.items()))), *bad)
    for k, v in sorted(atleast.items()):
        report((site.get(k) or 0) >= v, "%s: %s >= %d" % (func, k, v),
               "  got %s" % site.get(k))


def cmd_field(args):
    rep = load(args[0])
    v = rep
    for k in args[1].split("."):
        v = v.get(k) if isinstance(v, dict) else None
    report(str(v) == args[2], "%s is %s" % (args[1], args[2]),
           "  got %s" % v)


def cmd_no_agent_frames(args):
    rep = load(args[0])
    bad = []
    for s in rep.get("sites") or []:
        for f in s.get("frames") or []:
            if base(f.get("module")).startswith("libheaptool-agent"):
                bad.append(fmt_stack(s))
                break
    report(not bad, "no frame of the agent in any stack", *bad[:3])


def site_sd(s):
    """The standard deviation behind a site's reported 95% interval."""
    est, lo, hi = (s.get("inuse_bytes") or 0, s.get("inuse_bytes_low") or 0,
                   s.get("inuse_bytes_high") or 0)
    if lo > 0:
        return (hi - lo) / 3.92
    return (hi - est) / 1.96


def cmd_sampled(args):
    rep = load(args.pop(0))
    rate = src = None
    specs = []
    while args:
        a = args.pop(0)
        if a == "--rate":
            rate = float(args.pop(0))
        elif a == "--src":
            src = args.pop(0)
        else:
            name, size, count, kind = a.split(":")
            specs.append((name, int(size), int(count), kind))
    if rate is None or src is None or not specs:
        raise SystemExit("sampled: --rate, --src and specs are required")
    lines = markers(src)
    all_exp = all_got = 0.0
    for name, size, count, kind in specs:
        truth = size * count
        # Each block is sampled with p = 1 - exp(-(size + 1) / rate).
        p = -math.expm1(-(size + 1) / rate)
        exp_n = count * p
        found = find_sites(rep, name)
        if not report(len(found) == 1, "%s: exactly one site" % name,
                      "  %d sites found" % len(found),
                      *[fmt_stack(s) for s, _ in found]):
            if not found:
                all_exp += exp_n
                continue
        s, _ = found[0]
        f = (s.get("frames") or [{}])[0]
        report(base(f.get("file")) == base(src) and
               f.get("line") == lines.get(name),
               "%s: innermost frame at %s:%s" % (name, base(src),
                                                 lines.get(name)),
               "  got %s:%s" % (base(f.get("file")), f.get("line")))
        n = s.get("samples") or 0
        all_exp += exp_n
        all_got += n
        report(abs(n - exp_n) <= 4 * math.sqrt(exp_n) + 1,
               "%s: %d samples, %.1f expected" % (name, n, exp_n),
               "  bound 4 sqrt(n) = %.1f" % (4 * math.sqrt(exp_n)))
        est = s.get("inuse_bytes") or 0
        lo = s.get("inuse_bytes_low") or 0
        hi = s.get("inuse_bytes_high") or 0
        if kind == "kept":
            sd = site_sd(s)
            z = (est - truth) / sd if sd > 0 else float("inf")
            print("%s: truth %d, estimate %d, 95%% interval [%d, %d], "
                  "sd %.0f, error %.2f sd, %d samples" %
                  (name, truth, est, lo, hi, sd, z if est != truth else 0, n))
            report(lo <= est <= hi, "%s: estimate inside its interval" %
                   name, "  %d not in [%d, %d]" % (est, lo, hi))
            report(est == truth or abs(est - truth) <= 4 * sd,
                   "%s: in-use estimate within 4 sd of %d" % (name, truth),
                   "  estimate %d, sd %.0f" % (est, sd))
            alloc = s.get("alloc_bytes") or 0
            report(alloc == est, "%s: kept blocks: allocated = in use" %
                   name, "  alloc %d, in use %d" % (alloc, est))
            objs = s.get("inuse_objects") or 0
            report(abs(objs * size - est) <= size,
                   "%s: objects estimate = bytes estimate / %d" %
                   (name, size), "  %d objects, %d bytes" % (objs, est))
        else:
            report(est == 0 and (s.get("inuse_objects") or 0) == 0,
                   "%s: freed blocks: nothing in use" % name,
                   "  in use %s bytes, %s objects" %
                   (est, s.get("inuse_objects")))
            # Horvitz-Thompson variance of the allocated bytes, from the
            # math: count (1 - p) / p size^2.
            sd = math.sqrt(count * (1 - p) / p) * size
            alloc = s.get("alloc_bytes") or 0
            print("%s: allocated truth %d, estimate %d, sd %.0f, "
                  "error %.2f sd, %d samples" %
                  (name, truth, alloc, sd, (alloc - truth) / sd, n))
            report(abs(alloc - truth) <= 4 * sd,
                   "%s: allocated estimate within 4 sd of %d" %
                   (name, truth), "  estimate %d, sd %.0f" % (alloc, sd))
    report(abs(all_got - all_exp) <= 4 * math.sqrt(all_exp) + 1,
           "sample count %d of these sites plausible: %.1f expected" %
           (all_got, all_exp))
    tot = rep.get("totals", {}).get("samples") or 0
    report(tot >= all_got, "total samples %d >= samples of these sites %d" %
           (tot, all_got))


def cmd_same_sites(args):
    a, b = load(args[0]), load(args[1])
    bad = []
    for name in args[2:]:
        sa, sb = find_sites(a, name), find_sites(b, name)
        va = [(s.get("samples"), s.get("inuse_bytes"), s.get("alloc_bytes"))
              for s, _ in sa]
        vb = [(s.get("samples"), s.get("inuse_bytes"), s.get("alloc_bytes"))
              for s, _ in sb]
        if not va or va != vb:
            bad.append("  %s: %s vs %s" % (name, va, vb))
    report(not bad, "same seed, same samples and estimates at %s" %
           ", ".join(args[2:]), *bad)


def call_markers(srcs):
    """{name: (file, line)} of the SITE and CALL markers of srcs."""
    found = {}
    for src in srcs:
        with open(src) as fp:
            for n, text in enumerate(fp, 1):
                for m in re.finditer(r"/\* (?:SITE|CALL) ([\w>]+) \*/",
                                     text):
                    if m.group(1) in found:
                        raise SystemExit("marker %s twice" % m.group(1))
                    found[m.group(1)] = (src, n)
    return found


def cmd_chain(args):
    rep = load(args.pop(0))
    srcs = []
    inlined = 0
    chain = None
    while args:
        a = args.pop(0)
        if a == "--src":
            srcs.append(args.pop(0))
        elif a == "--inlined":
            inlined = int(args.pop(0))
        else:
            chain = a.split(",")
    if not srcs or not chain:
        raise SystemExit("chain: --src and a chain are required")
    marks = call_markers(srcs)
    want = []
    for k, fn in enumerate(chain):
        key = fn if k == 0 else "%s>%s" % (fn, chain[k - 1])
        if key not in marks:
            raise SystemExit("chain: no marker %s" % key)
        want.append((fn, base(marks[key][0]), marks[key][1]))
    name = " <- ".join(chain)
    found = [s for s in rep.get("sites") or []
             if len(s.get("frames") or []) >= len(chain) and
             all(fn_is(f.get("function"), w)
                 for f, w in zip(s["frames"], chain))]
    if not report(len(found) == 1, "%s: exactly one site" % name,
                  "  %d sites found" % len(found), *top_sites(rep)):
        return
    frames = found[0]["frames"]
    got = [(f.get("function"), base(f.get("file")), f.get("line"))
           for f in frames[:len(chain)]]
    report(all(g[1:] == w[1:] for g, w in zip(got, want)),
           "%s: each frame at its marker's file:line" % name,
           *["  %s: want %s:%s, got %s:%s" % (w[0], w[1], w[2], g[1], g[2])
             for g, w in zip(got, want) if g[1:] != w[1:]])
    if inlined:
        head = frames[:inlined]
        report(len(set(f.get("address") for f in head)) == 1 and
               [f.get("inlined") for f in head] ==
               [True] * (inlined - 1) + [False],
               "%s: the first %d frames are one address, %d inlined" %
               (name, inlined, inlined - 1), fmt_stack(found[0]))


COMMANDS = {
    "chain": cmd_chain,
    "wellformed": cmd_wellformed,
    "exact": cmd_exact,
    "site": cmd_site,
    "field": cmd_field,
    "no-agent-frames": cmd_no_agent_frames,
    "sampled": cmd_sampled,
    "same-sites": cmd_same_sites,
}


def run(argv):
    """Run one command; a misuse or a crash is a failed assertion."""
    if not argv or argv[0] not in COMMANDS:
        report(False, "htcheck: unknown command %s" % " ".join(argv[:1]))
        return
    try:
        COMMANDS[argv[0]](argv[1:])
    except SystemExit as e:
        if e.code not in (None, 0, 1):
            report(False, "htcheck %s: %s" % (argv[0], e.code))
    except Exception as e:
        report(False, "htcheck %s: %s: %s" % (argv[0], type(e).__name__, e))


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "-":
        # Python starts slowly (half a second on a busy box): the tests
        # send all the checks of a report through one process.
        for text in sys.stdin:
            argv = shlex.split(text, comments=True)
            if argv:
                run(argv)
    elif len(sys.argv) >= 3 and sys.argv[1] in COMMANDS:
        run(sys.argv[1:])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
