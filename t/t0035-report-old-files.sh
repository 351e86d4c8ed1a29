#!/bin/sh
# heaptool report and diff of a profile whose files changed after it was
# taken: --debug-dir, --sysroot, HEAPTOOL_DEBUG_DIR and HEAPTOOL_SYSROOT,
# and what a build-id mismatch says.  An exact run of a copy of
# t/target/inline-chain-O2 (and libfxalias.so) in $HT_TMP/run, then:
#   - the executable stripped, its debug file in a directory by build-id
#     (DIR/.build-id/NN/REST.debug): without --debug-dir no file:line, with
#     it (or HEAPTOOL_DEBUG_DIR, a list in which a missing directory is
#     skipped) the inline chain, file by file, line by line;
#   - a flat directory of debug files named by .gnu_debuglink;
#   - the executable replaced by another build: the text report says so
#     once, in one note that names every place looked in and the profile's
#     build-id, never on each frame; the JSON flags every frame of it;
#     with the old debug file in a --debug-dir it stands in for the file;
#     with the old file under --sysroot (or HEAPTOOL_SYSROOT) at its path
#     it is used; heaptool diff takes the same options;
#   - usage errors: a --sysroot or --debug-dir that is not a directory.
. "$(dirname "$0")/tap/libtap.sh"
. "$HT_SRCDIR/t/lib/htcheck.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
for t in objcopy strip readelf; do
	command -v $t >/dev/null 2>&1 || skip_all "$t (binutils) not found"
done
for f in inline-chain-O2 inline-chain-lto libfxalias.so; do
	[ -x "$TARGETS/$f" ] ||
	    bail "$TARGETS/$f not built (make check builds it)"
done
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
unset HEAPTOOL_SEED HEAPTOOL_SYSROOT HEAPTOOL_DEBUG_DIR

src="--src $HT_SRCDIR/t/target/inline-chain.h"
src="$src --src $HT_SRCDIR/t/target/inline-chain.c"
src="$src --src $HT_SRCDIR/t/target/inline-chain2.c"
chain=ic2_3,ic2_2,ic2_1,ic_site_b,main

r=$HT_TMP/run
mkdir -p "$r"
cp "$TARGETS/inline-chain-O2" "$TARGETS/libfxalias.so" "$r/"
cp "$r/inline-chain-O2" "$HT_TMP/orig"
timeout 60 "$HEAPTOOL" run --rate 1 -o "$HT_TMP/p.heap" -- \
    "$r/inline-chain-O2" >"$HT_TMP/run.out" 2>"$HT_TMP/run.err"
ok $? "heaptool run --rate 1 writes a profile" ||
    diag "$(head -c 1000 "$HT_TMP/run.err")"

# report NAME [OPTION...]: report --json --detail of the profile into
# $HT_TMP/NAME.json, --detail into NAME.txt.
report() {
	_n=$1
	shift
	timeout 60 "$HEAPTOOL" report --json --detail "$@" "$HT_TMP/p.heap" \
	    >"$HT_TMP/$_n.json" 2>"$HT_TMP/$_n.err" &&
	    timeout 60 "$HEAPTOOL" report --detail "$@" "$HT_TMP/p.heap" \
	    >"$HT_TMP/$_n.txt" 2>>"$HT_TMP/$_n.err"
	ok $? "$_n: report $*" || diag "$(head -c 1000 "$HT_TMP/$_n.err")"
}

# frames NAME: "function file line mismatch" of each frame of the
# executable in NAME.json, "-" for null.
frames() {
	python3 - "$HT_TMP/$1.json" <<'EOF'
import json, sys
for s in json.load(open(sys.argv[1]))["sites"]:
    for f in s["frames"]:
        if f["module"] == "inline-chain-O2":
            v = [f["function"], f["file"], f["line"],
                 f.get("build_id_mismatch")]
            print(" ".join("-" if x is None else str(x) for x in v))
EOF
}

# the debug file by build-id in a directory
id=$(readelf -n "$r/inline-chain-O2" | awk '/Build ID/ { print $3 }')
dbg=$HT_TMP/dbg
mkdir -p "$dbg/.build-id/${id%"${id#??}"}"
objcopy --only-keep-debug "$r/inline-chain-O2" \
    "$dbg/.build-id/${id%"${id#??}"}/${id#??}.debug" &&
    strip --strip-all "$r/inline-chain-O2"
ok $? "the executable stripped, its debug file in $dbg by build-id"

report stripped
frames stripped >"$HT_TMP/stripped.frames"
ok $([ -s "$HT_TMP/stripped.frames" ] &&
    awk '$2 != "-" { bad = 1 } END { exit bad }' "$HT_TMP/stripped.frames"
    echo $?) "stripped: no file:line without its debug file"

report debugdir --debug-dir "$dbg"
label=debugdir
want chain "$HT_TMP/debugdir.json" $src --inlined 4 "$chain"
checks

HEAPTOOL_DEBUG_DIR="$HT_TMP/none::$dbg" report debugdir-env
label=HEAPTOOL_DEBUG_DIR
want chain "$HT_TMP/debugdir-env.json" $src --inlined 4 "$chain"
checks

# a flat directory: the debug file under its .gnu_debuglink name
flat=$HT_TMP/flat
mkdir -p "$flat"
cp "$dbg/.build-id/${id%"${id#??}"}/${id#??}.debug" "$flat/ic.debug" &&
    objcopy --add-gnu-debuglink="$flat/ic.debug" "$r/inline-chain-O2"
ok $? "a .gnu_debuglink to ic.debug, which lies in $flat only"
report flat --debug-dir "$flat"
label=flat
want chain "$HT_TMP/flat.json" $src --inlined 4 "$chain"
checks

# another build at the executable's path
cp "$TARGETS/inline-chain-lto" "$r/inline-chain-O2"
report mismatch
frames mismatch >"$HT_TMP/mismatch.frames"
ok $([ -s "$HT_TMP/mismatch.frames" ] &&
    awk '$1 != "-" || $4 != "True" { bad = 1 } END { exit bad }' \
    "$HT_TMP/mismatch.frames"; echo $?) \
    "mismatch: every frame of the executable flagged in JSON, no name"
n=$(grep -c "^note: $r/inline-chain-O2: build-id differs" "$HT_TMP/mismatch.txt")
is "$n" 1 "mismatch: one note for the module"
ok $(grep "^note: $r/inline-chain-O2:" "$HT_TMP/mismatch.txt" |
    grep -F "/usr/lib/debug/.build-id/${id%"${id#??}"}/${id#??}.debug" |
    grep -F "build-id $id" | grep -q -- '--sysroot DIR or --debug-dir DIR'
    echo $?) "mismatch: the note names the build-id, where it looked, what to do"
ok $(! grep -q 'build-id mismatch\]' "$HT_TMP/mismatch.txt"; echo $?) \
    "mismatch: no frame is tagged, the note says it once"
diag "$(grep '^note:' "$HT_TMP/mismatch.txt")"

report mm-debugdir --debug-dir "$flat" --debug-dir "$dbg"
label=mismatch-debugdir
want chain "$HT_TMP/mm-debugdir.json" $src --inlined 4 "$chain"
checks
ok $(! grep -q "^note: $r/inline-chain-O2" "$HT_TMP/mm-debugdir.txt"
    echo $?) "mismatch, --debug-dir: the old debug file stands in, no note"

mkdir -p "$HT_TMP/empty"
report mm-debugdir-note --debug-dir "$HT_TMP/empty"
ok $(grep "^note: $r/inline-chain-O2:" "$HT_TMP/mm-debugdir-note.txt" |
    grep -qF "$HT_TMP/empty/.build-id/${id%"${id#??}"}/${id#??}.debug"
    echo $?) "mismatch, --debug-dir without the file: the note names it too"

sys=$HT_TMP/sysroot
mkdir -p "$sys$r"
cp "$HT_TMP/orig" "$sys$r/inline-chain-O2"
report sysroot --sysroot "$sys"
label=sysroot
want chain "$HT_TMP/sysroot.json" $src --inlined 4 "$chain"
checks
HEAPTOOL_SYSROOT=$sys report sysroot-env
label=HEAPTOOL_SYSROOT
want chain "$HT_TMP/sysroot-env.json" $src --inlined 4 "$chain"
checks

timeout 60 "$HEAPTOOL" diff --json --detail --sysroot "$sys" \
    "$HT_TMP/p.heap" "$HT_TMP/p.heap" >"$HT_TMP/diff.json" 2>"$HT_TMP/diff.err"
ok $? "diff --sysroot" || diag "$(head -c 1000 "$HT_TMP/diff.err")"
ok $(grep -q '"ic_site_b"' "$HT_TMP/diff.json"; echo $?) \
    "diff --sysroot: the sites are named from the sysroot's file"
timeout 60 "$HEAPTOOL" diff --json --detail "$HT_TMP/p.heap" \
    "$HT_TMP/p.heap" >"$HT_TMP/diff0.json" 2>&1
ok $(! grep -q '"ic_site_b"' "$HT_TMP/diff0.json"; echo $?) \
    "diff without it: not named (the file is another build)"

# usage errors
for o in --debug-dir --sysroot; do
	for v in "$HT_TMP/nonexistent" "$HT_TMP/p.heap"; do
		timeout 20 "$HEAPTOOL" report $o "$v" "$HT_TMP/p.heap" \
		    >/dev/null 2>"$HT_TMP/usage.err"
		st=$?
		ok $([ $st -eq 2 ] && [ "$(wc -l <"$HT_TMP/usage.err")" -eq 1 ] &&
		    grep -q "^heaptool: $o $v: .*; give a directory" \
		    "$HT_TMP/usage.err"; echo $?) \
		    "$o ${v##*/}: a usage error (exit 2) that says why"
		[ $st -eq 2 ] || diag "status $st: $(cat "$HT_TMP/usage.err")"
	done
done

done_testing
