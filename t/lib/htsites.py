#!/usr/bin/env python3
"""The exact sites of a fixture in a heaptool report (t0090, t0091).

usage: htsites.py REPORT.json PREFIX [--by-tag] [--second FRAME]
                  [--second-of FNPREFIX=FRAME]... KEY=BYTES/OBJECTS...

Every site whose innermost frame is a function named PREFIX... must be one
of the KEYs (its function, or with --by-tag its function/tag) and have
exactly BYTES and OBJECTS in use and allocated; every KEY must be there,
once.  With --second, each such site's second frame is FRAME, or for a
function named FNPREFIX... the FRAME of a --second-of.  Prints what
differs, "; "-separated (nothing when all holds).
"""
import json
import sys


def main(argv):
    report, prefix = argv[0], argv[1]
    by_tag = False
    second = None
    second_of = []
    want = {}
    args = argv[2:]
    while args:
        a = args.pop(0)
        if a == "--by-tag":
            by_tag = True
        elif a == "--second":
            second = args.pop(0)
        elif a == "--second-of":
            p, f = args.pop(0).split("=")
            second_of.append((p, f))
        else:
            k, v = a.split("=")
            b, o = v.split("/")
            want[k] = (int(b), int(o))
    j = json.load(open(report))
    got = {}
    bad = []
    for s in j["sites"]:
        f = s["frames"][0].get("function") if s["frames"] else None
        if f is None or not f.startswith(prefix):
            continue
        k = "%s/%s" % (f, s["tag"]) if by_tag else f
        if k in got:
            bad.append("two sites at %s" % k)
        got[k] = (s["inuse_bytes"], s["inuse_objects"], s["alloc_bytes"],
                  s["alloc_objects"])
        if second is not None:
            w = next((fr for p, fr in second_of if f.startswith(p)), second)
            chain = [x.get("function") for x in s["frames"][:2]]
            if chain != [f, w]:
                bad.append("%s: stack %r" % (f, chain))
    for k, (b, o) in want.items():
        if got.get(k) != (b, o, b, o):
            bad.append("%s: %r, want %d bytes in %d objects" %
                       (k, got.get(k), b, o))
    for k in got:
        if k not in want:
            bad.append("%s: a site, with %r" % (k, got[k]))
    print("; ".join(bad))


main(sys.argv[1:])
