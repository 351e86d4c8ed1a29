#!/bin/sh
# Demangling (cli/demangle.c, libiberty) and --short-names on real programs:
# a Rust program built here with Debian's rustc, with legacy and with v0
# symbol mangling, run under heaptool run --rate 1: its sites are named
# rtest::demo::allocates and rtest::demo::boxes (with the legacy hash or
# the v0 crate disambiguator; without either under --short-names), with
# their exact bytes; C++ names of t/target/cxx-new-O2 with their template
# arguments shortened.  t/demangle-t checks the same on symbol strings.
. "$(dirname "$0")/tap/libtap.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
# rustup's rustc may come first in PATH; the test wants Debian's.
RUSTC=/usr/bin/rustc
[ -x "$RUSTC" ] || skip_all "$RUSTC not found (apt-get install rustc)"
XDG_CONFIG_HOME=$HT_TMP/config
export XDG_CONFIG_HOME

# names JSON [--short]: "objects bytes" of the sites shown at or above
# each of rtest's two functions, then the name given to each, one line.
cat >"$HT_TMP/names.py" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
out = []
for fn in ("allocates", "boxes"):
    objs = byts = 0
    names = set()
    for s in d["sites"]:
        shown = s["frames"][s["site_frame"]:]
        hit = [f["function"] for f in shown
               if f["function"] and re.search(r"::demo::%s\b" % fn,
                                              f["function"])]
        if hit:
            objs += s["alloc_objects"]
            byts += s["alloc_bytes"]
            names.update(hit)
    out.append("%d %d %s" % (objs, byts, " ".join(sorted(names))))
print(" | ".join(out))
PY

for mangling in legacy v0; do
	bin=$HT_TMP/rtest-$mangling
	# Legacy is rustc 1.63's default (naming it needs -Z unstable-options);
	# v0 is stable there.
	flags=
	[ $mangling = v0 ] && flags="-C symbol-mangling-version=v0"
	timeout 300 "$RUSTC" --edition 2021 --crate-name rtest -g -O $flags \
	    -o "$bin" \
	    "$HT_SRCDIR/t/target/rust-alloc.rs" >"$HT_TMP/rustc.out" 2>&1
	if [ $? -ne 0 ]; then
		ok 1 "rustc ($mangling mangling) builds the fixture"
		diag "$(head -c 2000 "$HT_TMP/rustc.out")"
		continue
	fi
	ok 0 "rustc ($mangling mangling) builds the fixture"
	if [ $mangling = v0 ]; then
		ok $(nm "$bin" | grep -q ' _RNvNtCs[0-9A-Za-z]*_5rtest4demo9allocates$'
		    echo $?) "v0: the symbol of rtest::demo::allocates is a v0 one"
	else
		ok $(nm "$bin" | grep -q ' _ZN5rtest4demo9allocates17h[0-9a-f]\{16\}E$'
		    echo $?) "legacy: the symbol is _ZN5rtest4demo9allocates17h...E"
	fi
	timeout 60 "$HEAPTOOL" run --rate 1 -o "$HT_TMP/$mangling.heap" -- \
	    "$bin" >"$HT_TMP/run.out" 2>"$HT_TMP/run.err"
	ok $([ $? -eq 0 ] && grep -q '^done 10066$' "$HT_TMP/run.out"; echo $?) \
	    "$mangling: heaptool run --rate 1 runs it"
	timeout 60 "$HEAPTOOL" report --json --detail "$HT_TMP/$mangling.heap" \
	    >"$HT_TMP/$mangling.json" 2>"$HT_TMP/err"
	timeout 60 "$HEAPTOOL" report --json --detail --short-names \
	    "$HT_TMP/$mangling.heap" >"$HT_TMP/$mangling-short.json" 2>>"$HT_TMP/err"
	got=$(python3 "$HT_TMP/names.py" "$HT_TMP/$mangling.json" 2>&1)
	if [ $mangling = v0 ]; then
		want='^10 80360 rtest\[[0-9a-f]+\]::demo::allocates [|] 7 3584 rtest\[[0-9a-f]+\]::demo::boxes$'
	else
		want='^10 80360 rtest::demo::allocates::h[0-9a-f]{16} [|] 7 3584 rtest::demo::boxes::h[0-9a-f]{16}$'
	fi
	ok $(echo "$got" | grep -Eq "$want"; echo $?) \
	    "$mangling: the sites at rtest::demo::allocates and ::boxes, demangled, exact"
	[ -n "$got" ] && diag "got: $got"
	is "10 80360 rtest::demo::allocates | 7 3584 rtest::demo::boxes" \
	    "$(python3 "$HT_TMP/names.py" "$HT_TMP/$mangling-short.json" 2>&1)" \
	    "$mangling --short-names: rtest::demo::allocates, rtest::demo::boxes"
	timeout 60 "$HEAPTOOL" report --detail --short-names \
	    "$HT_TMP/$mangling.heap" >"$HT_TMP/$mangling.txt" 2>>"$HT_TMP/err"
	ok $(grep -q '^      rtest::demo::boxes (.*rust-alloc.rs:[0-9]*)$' \
	    "$HT_TMP/$mangling.txt"; echo $?) \
	    "$mangling: text --short-names: rtest::demo::boxes (rust-alloc.rs:N)"
	# The global allocator's layers are folded: the site's frame is
	# not one of them.
	ok $(python3 - "$HT_TMP/$mangling.json" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
bad = [s["frames"][s["site_frame"]]["function"] for s in d["sites"]
       if s["frames"] and re.match(r"(__rust_|__rdl_|alloc::alloc::|<?alloc(\[[0-9a-f]+\])?::raw_vec::)",
                                   s["frames"][s["site_frame"]]["function"] or "")]
sys.exit(1 if bad else 0)
PY
	    echo $?) "$mangling: no site shown at the global allocator's layers"
done

# C++: template arguments shortened, the rest as it was.
if [ -x "$TARGETS/cxx-new-O2" ]; then
	timeout 60 "$HEAPTOOL" run --rate 1 -o "$HT_TMP/cxx.heap" -- \
	    "$TARGETS/cxx-new-O2" >/dev/null 2>&1
	timeout 60 "$HEAPTOOL" report --detail --no-fold "$HT_TMP/cxx.heap" \
	    >"$HT_TMP/cxx.txt" 2>&1
	timeout 60 "$HEAPTOOL" report --detail --no-fold --short-names \
	    "$HT_TMP/cxx.heap" >"$HT_TMP/cxx-short.txt" 2>&1
	ok $(grep -q '^      \(\[inlined\] \)\{0,1\}std::vector<int, std::allocator<int> >::push_back(int&&) (' \
	    "$HT_TMP/cxx.txt" &&
	    grep -q '^      \(\[inlined\] \)\{0,1\}std::vector<…>::push_back(int&&) (' \
	    "$HT_TMP/cxx-short.txt" &&
	    ! grep -q 'std::allocator<int>' "$HT_TMP/cxx-short.txt"
	    echo $?) "C++: std::vector<…>::push_back(int&&) with --short-names"
	ok $([ "$(grep -c '^      ' "$HT_TMP/cxx.txt")" = \
	    "$(grep -c '^      ' "$HT_TMP/cxx-short.txt")" ]; echo $?) \
	    "C++: --short-names changes names, not frames"
else
	skip "$TARGETS/cxx-new-O2 not built"
	skip "$TARGETS/cxx-new-O2 not built"
fi
done_testing
