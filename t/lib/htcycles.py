#!/usr/bin/env python3
"""The module graph of agent/ and cli/, and its cycles, for t/t0002-zones.sh.

Usage: htcycles.py [--edges] ROOT [ZONE...]   (zones: agent cli by default)

A module is a .c file and its header: X.c and X.h are module X.  A file
X-foo.c belongs to module X when X has a private header X-int.h (as an
injector split by concern behind one internal header); so do X-foo.h and
X-int.h.  Within one zone, module A depends on module B when a .c file of
A uses a name that a header it includes (directly, or through other
headers of the zone) declares and that is B's:
  - a function or variable is the module's whose .c file defines it, so a
    header like cli.h, which declares functions of several modules, makes
    its includer depend on those whose functions it calls;
  - a type, macro, enum constant or inline function is the module's whose
    header declares it (a forward declaration "struct X;" is the module's
    whose header has the body).
A .c including its own header or its module's private header, or using its
own module's names, is no edge; nor is another module's header that a .c
includes for its own declarations only.  A header of another module that
it uses nothing of is an edge ("nothing used": an include to drop).  The
names are read from the text (comments and strings removed, top-level
declarations), not from the compiler.

Prints each set of modules in a cycle (a strongly connected component) as
    ZONE/: cycle among A.c B.c ...
        A.c -> B.c -> A.c
        A.c -> C.c -> B.c -> A.c
        A.c -> B.c: #include "b.h" (b_open, b_close)
its elementary cycles, shortest first (the first SHOW of them), then every
edge within the set with the include and the names that make it; with
--edges, every edge of the graph first.  Exit status 1 if there is a
cycle, 0 if none, 2 on misuse.
"""

import os
import re
import sys
from collections import deque

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)
TOKEN = re.compile(r'[A-Za-z_]\w*|\S')
KEYWORDS = {
    "auto", "break", "case", "char", "const", "continue", "default", "do",
    "double", "else", "enum", "extern", "float", "for", "goto", "if",
    "inline", "int", "long", "register", "restrict", "return", "short",
    "signed", "sizeof", "static", "struct", "switch", "typedef", "union",
    "unsigned", "void", "volatile", "while", "_Bool", "_Noreturn",
    "_Thread_local", "__thread", "__attribute__", "__asm__", "asm",
}


def strip(text):
    """The text without comments, string and character literals."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j) or " ")
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(" 0 ")
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def code(text):
    """Stripped text without preprocessor lines (continued ones too)."""
    lines, skip = [], False
    for line in strip(text).split("\n"):
        if skip or line.lstrip().startswith("#"):
            skip = line.rstrip().endswith("\\")
            continue
        lines.append(line)
    return "\n".join(lines)


def names(text):
    return {t for t in TOKEN.findall(strip(text))
            if (t[0].isalpha() or t[0] == "_") and t not in KEYWORDS}


def defined(text):
    """The functions and variables a .c file defines for others (not
    static), from its top level: a declaration that ends in a body and has
    a parameter list is a function definition; one that ends in ";"
    without "extern" or "typedef" defines a variable."""
    toks = TOKEN.findall(code(text))
    out, decl, i = set(), [], 0
    while i < len(toks):
        t = toks[i]
        if t == "{":
            depth, j = 1, i + 1
            while j < len(toks) and depth > 0:
                depth += {"{": 1, "}": -1}.get(toks[j], 0)
                j += 1
            i = j
            if "(" in decl and "=" not in decl:
                name = function_name(decl)
                if name and not {"static", "typedef"} & set(decl):
                    out.add(name)
                decl = []
            else:
                # A struct, union or enum body, or an initializer.
                decl.append("{}")
            continue
        if t == ";":
            if decl and not {"static", "extern", "typedef"} & set(decl):
                name = variable_name(decl)
                if name:
                    out.add(name)
            decl = []
        else:
            decl.append(t)
        i += 1
    return out


IDENT = re.compile(r"[A-Za-z_]\w*$")


def unattributed(decl):
    """decl without its __attribute__((...)) and asm(...) groups."""
    toks, i = [], 0
    while i < len(decl):
        if decl[i] in ("__attribute__", "__asm__", "asm"):
            depth, i = 0, i + 1
            while i < len(decl):
                depth += {"(": 1, ")": -1}.get(decl[i], 0)
                i += 1
                if depth == 0:
                    break
            continue
        toks.append(decl[i])
        i += 1
    return toks


def function_name(decl):
    """The identifier before a definition's parameter list."""
    toks = unattributed(decl)
    for k, t in enumerate(toks):
        if t == "(" and k > 0 and IDENT.match(toks[k - 1]) and \
                toks[k - 1] not in KEYWORDS:
            return toks[k - 1]
    return None


def variable_name(decl):
    """The variable a top-level declaration ending in ";" defines: the last
    identifier before its initializer or array size, after its type (and
    after a struct body); None for a prototype or a bare type."""
    toks = unattributed(decl)
    end = len(toks)
    for stop in ("=", "["):
        if stop in toks:
            end = min(end, toks.index(stop))
    head = toks[:end]
    if "(" in head:
        return None   # a prototype, or a pointer to a function
    if "{}" in head:
        head = head[len(head) - head[::-1].index("{}"):]
    elif len(head) < 2:
        return None   # no type: not a declaration we know
    cand = [t for t in head if IDENT.match(t) and t not in KEYWORDS]
    return cand[-1] if cand else None


DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", re.M)


def declared(text):
    """What a header declares: its macros, typedefs, struct, union and
    enum tags with a body, enum constants, function prototypes and inline
    functions, extern variables; and apart, the tags it only declares
    ("struct ht_sym;": an opaque handle, or another header's type)."""
    out = set(DEFINE.findall(text))
    forward = set()
    toks = TOKEN.findall(code(text))
    decl, i = [], 0
    while i < len(toks):
        t = toks[i]
        if t == "{":
            depth, j = 1, i + 1
            while j < len(toks) and depth > 0:
                depth += {"{": 1, "}": -1}.get(toks[j], 0)
                j += 1
            body = toks[i + 1:j - 1]
            # The body of "struct X {", "enum X {", "enum {".
            tagged = len(decl) >= 2 and decl[-2] in ("struct", "union",
                                                      "enum")
            if tagged:
                out.add(decl[-1])
            if decl[-1:] == ["enum"] or (tagged and decl[-2] == "enum"):
                item = True
                for w in body:
                    if item and IDENT.match(w):
                        out.add(w)
                    item = w == ","
            if "(" in decl and "=" not in decl and "typedef" not in decl:
                name = function_name(decl)
                if name:
                    out.add(name)
                decl = []
            else:
                decl.append("{}")
            i = j
            continue
        if t == ";":
            if "typedef" in decl:
                toks2 = unattributed(decl)
                m = [toks2[k + 2] for k in range(len(toks2) - 2)
                     if toks2[k] == "(" and toks2[k + 1] == "*" and
                     IDENT.match(toks2[k + 2])]
                idents = [w for w in toks2 if IDENT.match(w) and
                          w not in KEYWORDS]
                if m:
                    out.add(m[0])
                elif idents:
                    out.add(idents[-1])
            elif len(decl) == 2 and decl[0] in ("struct", "union", "enum"):
                forward.add(decl[1])
            elif "(" in decl:
                name = function_name(decl)
                if name:
                    out.add(name)
            elif "extern" in decl:
                name = variable_name(decl)
                if name:
                    out.add(name)
            decl = []
        else:
            decl.append(t)
        i += 1
    return out, forward - out


def modules_of(zone_dir):
    """{file: module} for the .c and .h files of a zone."""
    files = sorted(f for f in os.listdir(zone_dir)
                   if f.endswith((".c", ".h")) and
                   os.path.isfile(os.path.join(zone_dir, f)))
    private = {f[:-len("-int.h")] for f in files if f.endswith("-int.h")}
    mod = {}
    for f in files:
        stem = f[:-2]
        if f.endswith("-int.h"):
            mod[f] = stem[:-len("-int")]
            continue
        # X-foo.c is X's when X has a private header; the longest such X.
        owners = [p for p in private if stem.startswith(p + "-")]
        mod[f] = max(owners, key=len) if owners else stem
    return mod


def module_name(m, mod):
    return m + ".c" if m + ".c" in mod else m


def graph(root, zone):
    zdir = os.path.join(root, zone)
    mod = modules_of(zdir)
    text = {f: open(os.path.join(zdir, f), errors="replace").read()
            for f in mod}
    incs = {f: [h for h in INCLUDE.findall(strip_keep_includes(text[f]))
                if h in mod and h.endswith(".h")] for f in mod}
    decls = {f: declared(text[f]) for f in mod if f.endswith(".h")}
    owner = {}   # name -> modules whose .c files define it, or the header
    for f in mod:
        if f.endswith(".c"):
            for s in defined(text[f]):
                owner.setdefault(s, set()).add(mod[f])
    for f, (full, _) in sorted(decls.items()):
        for s in full:
            if s not in owner:
                owner[s] = {mod[f]}
    # A forward declaration is the type's header's; an opaque handle (no
    # header has its body) its own header's.
    provides = {f: full | forward for f, (full, forward) in decls.items()}
    fwd_owner = {(f, s): owner.get(s, {mod[f]})
                 for f, (_, forward) in decls.items() for s in forward}
    edges = {}   # (a, b) -> [reasons]

    for f in mod:
        if not f.endswith(".c"):
            continue
        a = mod[f]
        used = names(text[f])
        # Headers reachable from f, each with the direct include of f it
        # comes through.
        via, todo = {}, deque()
        for h in incs[f]:
            if h not in via:
                via[h] = h
                todo.append(h)
        while todo:
            h = todo.popleft()
            for g in incs[h]:
                if g not in via:
                    via[g] = via[h]
                    todo.append(g)
        # What f uses of each header: a function or variable is the
        # module's that defines it, anything else (a type, a macro, an
        # inline function) the module's whose header it is.  f's own
        # module's names are no edge, wherever they are declared.
        uses = {}
        for h in via:
            for s in provides[h] & used:
                mods = fwd_owner.get((h, s)) or owner.get(s) or {mod[h]}
                if a in mods:
                    continue
                for b in mods:
                    uses.setdefault((b, via[h]), set()).add(s)
        # Another module's header that f uses nothing of is still a
        # dependency (one to remove).
        for h in incs[f]:
            if mod[h] != a and not provides[h] & used:
                uses.setdefault((mod[h], h), set())
        where = "" if f == module_name(a, mod) else " in %s" % f
        for (b, h), syms in sorted(uses.items()):
            r = edges.setdefault((a, b), [])
            why = '#include "%s"%s (%s)' % (
                h, where, ", ".join(sorted(syms)) or "nothing used")
            if why not in r:
                r.append(why)
    return mod, edges


def strip_keep_includes(text):
    """Comments removed, but the strings of #include lines kept."""
    return "\n".join(line for line in
                     re.sub(r"/\*.*?\*/", " ", text, flags=re.S).split("\n")
                     if not line.lstrip().startswith("//"))


def sccs(nodes, succ):
    """Tarjan's strongly connected components."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(succ.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def cycles(comp, succ, cap=10000):
    """The elementary cycles within comp (at most cap), each from its
    smallest module, shortest first."""
    comp = sorted(comp)
    rank = {v: k for k, v in enumerate(comp)}
    out = []
    for s in comp:
        stack = [(s, [s])]
        while stack and len(out) < cap:
            v, path = stack.pop()
            for w in sorted(succ.get(v, ()), reverse=True):
                if w == s:
                    out.append(path + [s])
                elif w in rank and rank[w] > rank[s] and w not in path:
                    stack.append((w, path + [w]))
    return sorted(out, key=lambda c: (len(c), c))


SHOW = 12   # cycles printed per set


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    show_edges = "--edges" in argv
    argv = [a for a in argv if a != "--edges"]
    root, zones = argv[1], argv[2:] or ["agent", "cli"]
    found = False
    for zone in zones:
        if not os.path.isdir(os.path.join(root, zone)):
            continue
        mod, edges = graph(root, zone)
        if show_edges:
            for (a, b), whys in sorted(edges.items()):
                for why in whys:
                    print("%s/%s -> %s: %s" % (zone, module_name(a, mod),
                                               module_name(b, mod), why))
        succ = {}
        for a, b in edges:
            succ.setdefault(a, set()).add(b)
        for comp in sccs(set(mod.values()), succ):
            if len(comp) < 2:
                continue
            found = True
            nm = lambda m: module_name(m, mod)
            print("%s/: cycle among %s" % (zone, " ".join(map(nm, comp))))
            cyc = cycles(set(comp), succ)
            for c in cyc[:SHOW]:
                print("    " + " -> ".join(map(nm, c)))
            if len(cyc) > SHOW:
                print("    (%s more cycles)" % (len(cyc) - SHOW if
                                               len(cyc) < 10000 else
                                               "and many"))
            for (a, b), whys in sorted(edges.items()):
                if a in comp and b in comp:
                    for why in whys:
                        print("    %s -> %s: %s" % (nm(a), nm(b), why))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
