#!/bin/sh
# heaptool report's symbols when the files are not what the target ran, and
# the JSON schema.  Offline reports (heaptool report FILE) of exact runs of
# copies of t/target/alloc-sites-O2 made in $HT_TMP:
#   - the executable overwritten with another build (alloc-sites-O0) after
#     the run: its frames are flagged build_id_mismatch and shown as
#     module+offset, never with the other build's names;
#   - libdlfix.so (which alloc-sites dlopens from its own directory) with
#     only .symtab (strip --strip-debug): dlfix_keep by name, no file:line;
#     with only .dynsym (strip --strip-all): the exported dlfix_keep or
#     nothing, never another name, no file:line;
#   - the same file reported twice after the target exited: the same JSON;
#   - every report --json --detail here, and those of cxx-new-O2 and of a
#     sampled run, against t/data/report-schema.json (t/lib/htschema.py).
. "$(dirname "$0")/tap/libtap.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
command -v strip >/dev/null 2>&1 || skip_all "strip (binutils) not found"
for f in alloc-sites-O2 alloc-sites-O0 cxx-new-O2 libdlfix.so; do
	[ -x "$TARGETS/$f" ] ||
	    bail "$TARGETS/$f not built (make check builds it)"
done
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
unset HEAPTOOL_SEED

schema=$HT_SRCDIR/t/data/report-schema.json
validate=$HT_SRCDIR/t/lib/htschema.py

# run NAME RATE DIR: heaptool run --rate RATE -o DIR/NAME.heap -- DIR/as,
# then report --json --detail to DIR/NAME.json; a test for each step.
run() {
	timeout 60 "$HEAPTOOL" run --rate "$2" -o "$3/$1.heap" -- "$3/as" \
	    >"$HT_TMP/$1.out" 2>"$HT_TMP/$1.err"
	_st=$?
	ok $([ $_st -eq 0 ] && [ -s "$3/$1.heap" ]; echo $?) \
	    "$1: heaptool run --rate $2 writes a profile"
	[ $_st -eq 0 ] || diag "status $_st: $(head -c 1000 "$HT_TMP/$1.err")"
}

# report NAME DIR: report --json --detail DIR/NAME.heap >$HT_TMP/NAME.json
report() {
	timeout 60 "$HEAPTOOL" report --json --detail "$2/$1.heap" \
	    >"$HT_TMP/$1.json" 2>"$HT_TMP/$1.rerr"
	_st=$?
	ok $([ $_st -eq 0 ] && [ -s "$HT_TMP/$1.json" ]; echo $?) \
	    "$1: report --json --detail"
	[ $_st -eq 0 ] || diag "status $_st: $(head -c 1000 "$HT_TMP/$1.rerr")"
}

# frames NAME MODULE: one line per frame of MODULE in NAME.json:
# "function file line mismatch offset", "-" for null/absent.
frames() {
	python3 - "$HT_TMP/$1.json" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for s in d.get("sites", []):
    for f in s["frames"]:
        if f["module"] != sys.argv[2]:
            continue
        v = [f["function"], f["file"], f["line"],
             f.get("build_id_mismatch"), f["offset"]]
        print(" ".join("-" if x is None else str(x) for x in v))
EOF
}

# build-id mismatch: the executable replaced after the run
mm=$HT_TMP/mm
mkdir -p "$mm"
cp "$TARGETS/alloc-sites-O2" "$mm/as" && cp "$TARGETS/libdlfix.so" "$mm/"
run mismatch 1 "$mm"
cp "$TARGETS/alloc-sites-O0" "$mm/as"
report mismatch "$mm"
frames mismatch as >"$HT_TMP/mm.frames"
ok $([ -s "$HT_TMP/mm.frames" ]; echo $?) \
    "mismatch: the report has frames in the replaced executable"
ok $(awk '$4 != "True" { bad = 1 } END { exit bad }' "$HT_TMP/mm.frames"
    echo $?) "mismatch: every frame of it is flagged build_id_mismatch"
ok $(awk '$1 != "-" || $2 != "-" || $3 != "-" { bad = 1 } END { exit bad }' \
    "$HT_TMP/mm.frames"; echo $?) \
    "mismatch: none has a function, file or line (module+offset only)"
ok $(awk '$5 !~ /^0x[0-9a-f]+$/ || $5 == "0x0" { bad = 1 } END { exit bad }' \
    "$HT_TMP/mm.frames"; echo $?) "mismatch: each has its offset"
# The rest of the stack still symbolizes: libc and libdlfix are the same.
frames mismatch libdlfix.so >"$HT_TMP/mm.dlfix"
ok $(grep -q '^dlfix_keep .*alloc-sites\|^dlfix_keep .*dlfix\.c' \
    "$HT_TMP/mm.dlfix"; echo $?) \
    "mismatch: the unchanged libdlfix.so still has dlfix_keep with its file"
"$HEAPTOOL" report --detail "$mm/mismatch.heap" >"$HT_TMP/mm.txt" 2>&1
ok $(grep -qi 'build-id' "$HT_TMP/mm.txt" &&
    ! grep -q 'chain_a\|keep_large\|calloc_keep' "$HT_TMP/mm.txt"; echo $?) \
    "mismatch: the text report says why, names no function of the fixture"

# libdlfix.so without debug information
for kind in debug all; do
	d=$HT_TMP/strip-$kind
	mkdir -p "$d"
	cp "$TARGETS/alloc-sites-O2" "$d/as" &&
	    cp "$TARGETS/libdlfix.so" "$d/libdlfix.so" &&
	    strip --strip-$kind "$d/libdlfix.so"
	run "strip-$kind" 1 "$d"
	report "strip-$kind" "$d"
	frames "strip-$kind" libdlfix.so >"$HT_TMP/$kind.frames"
	ok $([ -s "$HT_TMP/$kind.frames" ]; echo $?) \
	    "strip-$kind: the report has frames in libdlfix.so"
	ok $(awk '$2 != "-" || $3 != "-" || $4 != "-" { bad = 1 }
	    END { exit bad }' "$HT_TMP/$kind.frames"; echo $?) \
	    "strip-$kind: no file:line, not flagged as a mismatch"
done
ok $(awk '$1 != "dlfix_keep" { bad = 1 } END { exit bad }' \
    "$HT_TMP/debug.frames"; echo $?) \
    "strip-debug: .symtab names the frame dlfix_keep"
# strip --strip-all keeps .dynsym, where the exported dlfix_keep is.
if readelf --dyn-syms "$HT_TMP/strip-all/libdlfix.so" 2>/dev/null |
    grep -q ' dlfix_keep$'; then
	want=dlfix_keep
else
	want=-
fi
ok $(awk -v w="$want" '$1 != w { bad = 1 } END { exit bad }' \
    "$HT_TMP/all.frames"; echo $?) \
    "strip-all: the frame is $want (from .dynsym), never another name"
# The stripped module's offsets are the unstripped one's: same code.
ok $(cut -d' ' -f5 "$HT_TMP/debug.frames" | sort -u >"$HT_TMP/o1"
    cut -d' ' -f5 "$HT_TMP/all.frames" | sort -u >"$HT_TMP/o2"
    [ -s "$HT_TMP/o1" ] && cmp -s "$HT_TMP/o1" "$HT_TMP/o2"; echo $?) \
    "strip-all: module+offset as with .symtab"

# offline: the profile read after the target exited
pid=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["pid"])' \
    <"$HT_TMP/strip-debug.json")
ok $(! kill -0 "$pid" 2>/dev/null; echo $?) "offline: the target $pid is gone"
"$HEAPTOOL" report --json --detail "$HT_TMP/strip-debug/strip-debug.heap" \
    >"$HT_TMP/again.json" 2>/dev/null
ok $(cmp -s "$HT_TMP/strip-debug.json" "$HT_TMP/again.json"; echo $?) \
    "offline: the same file gives the same JSON twice"

# the JSON schema
cx=$HT_TMP/cx
mkdir -p "$cx"
timeout 60 "$HEAPTOOL" run --rate 1 -o "$cx/cxx.heap" -- \
    "$TARGETS/cxx-new-O2" >/dev/null 2>"$HT_TMP/cxx.err"
ok $([ -s "$cx/cxx.heap" ]; echo $?) "cxx-new-O2: heaptool run --rate 1"
report cxx "$cx"
run sampled 4K "$HT_TMP/strip-debug"
report sampled "$HT_TMP/strip-debug"
ok $(python3 -c 'import json, sys
d = json.load(sys.stdin)
sys.exit(d["session"]["exact"] or not d["sites"])' <"$HT_TMP/sampled.json"
    echo $?) "sampled: the report is of a sampled profile, with sites"

# The validator must be able to fail: a document that breaks the schema.
python3 - "$HT_TMP/sampled.json" "$HT_TMP/broken.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["totals"]["inuse_bytes"] = -1
del d["sites"][0]["frames"][0]["address"]
d["session"]["state"] = "sleeping"
json.dump(d, open(sys.argv[2], "w"))
EOF
python3 "$validate" "$schema" "$HT_TMP/broken.json" >"$HT_TMP/broken.out" 2>&1
st=$?
ok $([ $st -eq 1 ] && [ "$(wc -l <"$HT_TMP/broken.out")" -eq 3 ]; echo $?) \
    "schema: a broken document fails with its three faults"
[ $st -eq 1 ] || diag "$(head -c 1000 "$HT_TMP/broken.out")"

for n in mismatch strip-debug strip-all cxx sampled; do
	python3 "$validate" "$schema" "$HT_TMP/$n.json" >"$HT_TMP/v.out" 2>&1
	st=$?
	ok $st "schema: $n report --json --detail conforms"
	[ $st -eq 0 ] || diag "$(head -c 2000 "$HT_TMP/v.out")"
done

done_testing
