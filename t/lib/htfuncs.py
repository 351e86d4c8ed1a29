#!/usr/bin/env python3
"""Per-function totals of a heap profile, for t/t0016-cxx-runtime.sh.

Usage:
  htfuncs.py heaptool REPORT.json FUNC...
  htfuncs.py heaptrack ALLOCATIONS LEAKED FUNC...

For each FUNC, one line "FUNC OBJECTS BYTES INUSE_OBJECTS INUSE_BYTES":
what the sites whose stack has a frame of FUNC allocated and still hold.
A function is matched by its name without a parameter list, so
"work_map()" and "work_map" both match work_map.

heaptool: REPORT.json is `heaptool report --json --detail`.  One more
line, "operator-new-sites N", counts the sites whose innermost frame is an
operator new (whose frames the agent must strip: the site is its caller).

heaptrack: ALLOCATIONS and LEAKED are the stacks heaptrack_print writes
with -F and --flamegraph-cost-type allocations and leaked (one line per
stack, frames separated by ";" and the cost last).  heaptrack gives no
bytes allocated per stack, so BYTES and INUSE_OBJECTS are printed as "-".
"""

import json
import re
import sys


def base(name):
    """A frame's function without its parameters or file."""
    if not name:
        return ""
    name = re.sub(r" \([^()]*\)$", "", name.strip())  # heaptrack's "(file)"
    i = name.find("(")
    return name[:i] if i > 0 else name


def heaptool(path, funcs):
    with open(path) as f:
        j = json.load(f)
    tot = {fn: [0, 0, 0, 0] for fn in funcs}
    opnew = 0
    for s in j.get("sites", []):
        names = {base(fr.get("function")) for fr in s["frames"]}
        if s["frames"] and (s["frames"][0].get("function") or "").startswith(
                "operator new"):
            opnew += 1
        for fn in funcs:
            if fn in names:
                t = tot[fn]
                t[0] += s["alloc_objects"]
                t[1] += s["alloc_bytes"]
                t[2] += s["inuse_objects"]
                t[3] += s["inuse_bytes"]
    for fn in funcs:
        print(fn, *tot[fn])
    print("operator-new-sites", opnew)


def stacks(path, funcs):
    tot = {fn: 0 for fn in funcs}
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            stack, _, cost = line.rpartition(" ")
            if not stack or not cost.isdigit():
                continue
            names = {base(fr) for fr in stack.rstrip(";").split(";")}
            for fn in funcs:
                if fn in names:
                    tot[fn] += int(cost)
    return tot


def heaptrack(allocs, leaked, funcs):
    a = stacks(allocs, funcs)
    b = stacks(leaked, funcs)
    for fn in funcs:
        print(fn, a[fn], "-", "-", b[fn])


def main(argv):
    if len(argv) >= 3 and argv[1] == "heaptool":
        heaptool(argv[2], argv[3:])
    elif len(argv) >= 4 and argv[1] == "heaptrack":
        heaptrack(argv[2], argv[3], argv[4:])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
