#!/usr/bin/env python3
"""Compare the frames of `heaptool report --json --detail` with
llvm-symbolizer's.

Usage: htllvm.py [--symbolizer PROG] [--llvm-arg ARG]... [--sites N]
                 [--seed S] [--basenames] [--verbose] --module NAME=PATH...
                 REPORT.json

For every address of the report's sites (or of N sites drawn at random with
seed S) in a module given with --module (PATH: the file to ask about, which
may be another copy of the module with the same code, e.g. the original of
a stripped or dwz-compressed one), asks
`llvm-symbolizer --inlining --obj=PATH` about the module offset minus one
(the call instruction of the return address, as heaptool looks it up; each
--llvm-arg is passed on, e.g. --debug-file-directory=DIR) and
compares its frames, innermost first, with heaptool's frames of that address:
the same number of frames, and for each the same function, file and line.

On the same basis:
  - a file is compared after lexical normalization (os.path.normpath), as
    heaptool prints it.  LLVM 14 joins a relative DW_AT_comp_dir C with a
    DWARF 5 entry of directory 0, which already is C, and prints C/C/NAME;
    heaptool prints C/NAME: that difference alone is counted as "llvm 14
    comp_dir".
  - an unknown function, file or line is "??", "??" or 0 in llvm-symbolizer,
    null in heaptool.
  - a function may be another name of the same address (heaptool prefers
    a module's public name among aliases, llvm-symbolizer takes one from
    the symbol table's order, prints a .symtab name's "@VERSION", and an
    inlined C function's DW_AT_linkage_name where heaptool prints its
    DW_AT_name: glibc's __GI__IO_doallocbuf for _IO_doallocbuf): counted as
    "alias" when both names are ELF symbols of the module (or its debug
    files) at one address.
  - where llvm-symbolizer names no function (a stripped module, whose
    .dynsym lacks it) and heaptool gives the name of the module's symbol at
    or below the address from its debug file's .symtab (_start): counted as
    "unnamed by llvm".
  - LLVM 14 names the outermost frame after any symbol at or below the
    address, even one of a section that is not loaded (GCC's LTO marks its
    early debug information in .debug_info with symbols NAME.c.HASH): for
    such a frame the function is llvm-symbolizer --functions=short's (the
    DWARF name), counted as "llvm 14 debug symbol".
With --basenames, files are compared by their last component only (to
measure a symbolizer that prints paths another way).

Prints one line of totals, then one line per address that differs; exit 0
when at least one frame was compared and none differs, 1 otherwise, 2 on
misuse.
"""

import json
import os
import random
import re
import subprocess
import sys


def usage(msg):
    sys.stderr.write("htllvm.py: %s\n" % msg)
    sys.exit(2)


def parse_args(argv):
    opts = {"symbolizer": "llvm-symbolizer", "sites": 0, "seed": 1,
            "modules": {}, "verbose": False, "report": None,
            "basenames": False, "llvm_args": []}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--symbolizer", "--sites", "--seed", "--module",
                 "--llvm-arg"):
            if i + 1 >= len(argv):
                usage(a + " needs a value")
            v = argv[i + 1]
            i += 2
            if a == "--symbolizer":
                opts["symbolizer"] = v
            elif a == "--sites":
                opts["sites"] = int(v)
            elif a == "--seed":
                opts["seed"] = int(v)
            elif a == "--llvm-arg":
                opts["llvm_args"].append(v)
            else:
                if "=" not in v:
                    usage("--module NAME=PATH")
                name, path = v.split("=", 1)
                opts["modules"][name] = path
            continue
        if a == "--verbose":
            opts["verbose"] = True
        elif a == "--basenames":
            opts["basenames"] = True
        elif opts["report"] is None:
            opts["report"] = a
        else:
            usage("one report only")
        i += 1
    if opts["report"] is None or not opts["modules"]:
        usage("give --module NAME=PATH and REPORT.json")
    return opts


def heaptool_frames(sites):
    """{(module, offset): [(function, file, line)]}, innermost first."""
    out = {}
    for s in sites:
        fr = s["frames"]
        i = 0
        while i < len(fr):
            # One address: its inlined frames, then the real function
            # (a recursive call repeats an address: a new lookup).
            j = i
            while j < len(fr) - 1 and fr[j]["inlined"] and \
                    fr[j + 1]["address"] == fr[i]["address"]:
                j += 1
            j += 1
            key = (fr[i]["module"], int(fr[i]["offset"], 16))
            out[key] = [(f["function"], f["file"], f["line"] or 0)
                        for f in fr[i:j]]
            i = j
    return out


def llvm_frames(prog, args, path, offsets, functions="linkage"):
    """{offset: [(function, file, line)]} of llvm-symbolizer."""
    inp = "".join("0x%x\n" % (o - 1) for o in offsets)
    r = subprocess.run([prog, "--inlining", "--demangle",
                        "--functions=" + functions] + args + ["--obj=" + path],
                       input=inp, capture_output=True, text=True, check=True,
                       errors="replace")
    blocks = r.stdout.split("\n\n")
    res = {}
    for o, b in zip(offsets, blocks):
        lines = [x for x in b.split("\n") if x != ""]
        frames = []
        for k in range(0, len(lines) - 1, 2):
            fn = lines[k]
            # FILE:LINE:COLUMN (LLVM prints the column, 0 if unknown)
            m = re.match(r"^(.*):(\d+):\d+$", lines[k + 1]) or \
                re.match(r"^(.*):(\d+)$", lines[k + 1])
            f, ln = (m.group(1), int(m.group(2))) if m else (lines[k + 1], 0)
            frames.append((None if fn == "??" else fn,
                           None if f == "??" else f, ln))
        res[o] = frames
    if len(blocks) < len(offsets):
        raise RuntimeError("llvm-symbolizer answered %d of %d addresses"
                           % (len(blocks), len(offsets)))
    return res


def tool(cmd):
    """The standard output of a tool (readelf, nm), as text."""
    return subprocess.run(cmd, capture_output=True, text=True,
                          errors="replace").stdout


def debug_files(path, dirs):
    """The separate debug files of path: by build-id under /usr/lib/debug
    and dirs, by .gnu_debuglink next to it or in its .debug/."""
    found = []
    r = tool(["readelf", "-n", path])
    m = re.search(r"Build ID: ([0-9a-f]+)", r)
    if m:
        for d in dirs + ["/usr/lib/debug"]:
            found.append("%s/.build-id/%s/%s.debug" % (d, m.group(1)[:2],
                                                     m.group(1)[2:]))
    r = tool(["readelf", "-p", ".gnu_debuglink", path])
    m = re.search(r"^\s*\[\s*0\]\s+(\S+)", r, re.M)
    if m:
        here = os.path.dirname(path)
        found += [os.path.join(here, m.group(1)),
                os.path.join(here, ".debug", m.group(1))]
    return [f for f in found if os.path.isfile(f)]


_aliases = {}
_unloaded = {}


def unloaded_names(path):
    """The names of path's symbols in sections that are not loaded."""
    if path in _unloaded:
        return _unloaded[path]
    alloc = set()
    r = tool(["readelf", "-SW", path])
    for line in r.splitlines():
        m = re.match(r"^\s*\[\s*(\d+)\](.*)$", line)
        if not m:
            continue
        # NAME TYPE ADDRESS OFFSET SIZE ES [FLAGS] LINK INFO ALIGN
        p = m.group(2).split()
        if len(p) == 10 and "A" in p[6]:
            alloc.add(int(m.group(1)))
    names = set()
    r = tool(["readelf", "-sW", path])
    for line in r.splitlines():
        p = line.split()
        if len(p) >= 8 and p[0].endswith(":") and p[6].isdigit() and \
                int(p[6]) not in alloc:
            names.add(p[7])
    _unloaded[path] = names
    return names


def names_at(path, dirs):
    """{name: set of addresses} of the ELF symbols of path and its debug
    files, versions stripped."""
    if path in _aliases:
        return _aliases[path]
    names = {}
    for f in [path] + debug_files(path, dirs):
        for flags in (["--defined-only"], ["--defined-only", "-D"]):
            r = tool(["nm"] + flags + [f])
            for line in r.splitlines():
                p = line.split()
                if len(p) == 3:
                    names.setdefault(p[2].split("@")[0], set()).add(
                        int(p[0], 16))
    _aliases[path] = names
    return names


def same_file(ours, theirs, basenames=False):
    """'same', 'comp_dir' (the LLVM 14 doubling) or None."""
    if ours is None or theirs is None:
        return "same" if ours == theirs else None
    if basenames:
        return "same" if os.path.basename(ours) == \
            os.path.basename(theirs) else None
    if os.path.normpath(theirs) == ours:
        return "same"
    # theirs == X/X/REST with X relative: LLVM 14's C/C/NAME.
    if not theirs.startswith("/"):
        parts = theirs.split("/")
        for n in range(1, len(parts) // 2 + 1):
            if parts[:n] == parts[n:2 * n] and \
                    os.path.normpath("/".join(parts[n:])) == ours:
                return "comp_dir"
    return None


def main(argv):
    opts = parse_args(argv)
    with open(opts["report"]) as fp:
        report = json.load(fp)
    sites = [s for s in report["sites"] if s["frames"]]
    if opts["sites"] and len(sites) > opts["sites"]:
        sites = random.Random(opts["seed"]).sample(sites, opts["sites"])
    ours = heaptool_frames(sites)
    bymod = {}
    skipped = 0
    for mod, off in ours:
        if mod in opts["modules"]:
            bymod.setdefault(mod, []).append(off)
        else:
            skipped += 1
    counts = {"frames": 0, "addresses": 0, "identical": 0, "alias": 0,
              "comp_dir": 0, "debugsym": 0, "unnamed": 0, "differ": 0}
    dirs = [a.split("=", 1)[1] for a in opts["llvm_args"]
            if a.startswith("--debug-file-directory=")]
    diffs = []
    aliases = []
    for mod in sorted(bymod):
        path = opts["modules"][mod]
        offs = sorted(bymod[mod])
        theirs = llvm_frames(opts["symbolizer"], opts["llvm_args"], path,
                             offs)
        unloaded = unloaded_names(path)
        redo = [o for o in offs if theirs[o] and theirs[o][-1][0] in unloaded]
        debugsym = set()
        if redo:
            short = llvm_frames(opts["symbolizer"], opts["llvm_args"], path,
                                redo, "short")
            for o in redo:
                if short[o]:
                    theirs[o][-1] = (short[o][-1][0],) + theirs[o][-1][1:]
                    debugsym.add(o)
        for off in offs:
            a, b = ours[(mod, off)], theirs[off]
            counts["addresses"] += 1
            counts["frames"] += max(len(a), len(b))
            kinds = []
            bad = len(a) != len(b)
            for k in range(min(len(a), len(b))):
                fa, fb = a[k], b[k]
                kind = "same"
                fbn = fb[0]
                if k == len(b) - 1 and fbn is not None and "(" not in fbn:
                    fbn = fbn.split("@")[0]
                if fa[0] != fb[0]:
                    na = names_at(path, dirs)
                    if fa[0] in na and fbn in na and na[fa[0]] & na[fbn]:
                        kind = "alias"
                        aliases.append((mod, off, fa[0], fb[0]))
                    elif k == len(b) - 1 and fb[0] is None and \
                            fa[0] in na and min(na[fa[0]]) < off:
                        kind = "unnamed"
                    else:
                        kind = None
                sf = same_file(fa[1], fb[1], opts["basenames"])
                if sf is None or fa[2] != fb[2] or kind is None:
                    bad = True
                if kind == "same" and k == len(b) - 1 and off in debugsym:
                    kind = "debugsym"
                kinds.append(kind if sf == "same" else sf)
            if bad:
                counts["differ"] += max(len(a), len(b))
                diffs.append((mod, off, a, b))
                continue
            for kind in kinds:
                key = "identical" if kind == "same" else kind
                counts[key] += 1
    print("compared %d frames at %d addresses: %d identical, %d alias, "
          "%d llvm 14 comp_dir, %d llvm 14 debug symbol, %d unnamed by "
          "llvm, %d differ; %d addresses in other modules not compared"
          % (counts["frames"], counts["addresses"], counts["identical"],
             counts["alias"], counts["comp_dir"], counts["debugsym"],
             counts["unnamed"], counts["differ"], skipped))
    for mod, off, x, y in aliases:
        print("alias: %s+0x%x: heaptool %s, llvm %s" % (mod, off, x, y))
    for mod, off, a, b in diffs:
        print("differs: %s+0x%x" % (mod, off))
        print("  heaptool: %s" % a)
        print("  llvm:     %s" % b)
    if opts["verbose"]:
        for (mod, off), a in sorted(ours.items()):
            print("%s+0x%x %s" % (mod, off, a))
    return 0 if counts["frames"] > 0 and counts["differ"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
