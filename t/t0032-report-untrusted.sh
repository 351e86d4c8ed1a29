#!/bin/sh
# heaptool report opens only regular files for the modules a profile names,
# and never in a way that blocks: a profile is input we do not trust, and
# whatever its paths name by the time it is read.  An exact run of a copy
# of t/target/alloc-sites-O2 in $HT_TMP, its executable then replaced by
#   - a FIFO without a writer (a blocking open would wait for ever);
#   - a symlink to /dev/zero (a device, whose open alone may act);
# and report --detail, under timeout so that a regression fails instead of
# hanging, must finish, show the executable's frames as module+offset and
# say why its file was not used.  Separate debug information too: with
# libdlfix.so stripped and its .gnu_debuglink file in .debug/, the file is
# found (dlfix_keep gets dlfix.c:line); replaced by a FIFO, or by the debug
# file of another build, it is not used (and the report still finishes).
# And a dwz-compressed executable: the inlined frame's name lives in the
# dwz alternate file (.gnu_debugaltlink), which is found and used.
. "$(dirname "$0")/tap/libtap.sh"

command -v timeout >/dev/null 2>&1 || skip_all "timeout (coreutils) not found"
command -v mkfifo >/dev/null 2>&1 || skip_all "mkfifo not found"
for f in alloc-sites-O2 libdlfix.so; do
	[ -x "$TARGETS/$f" ] ||
	    bail "$TARGETS/$f not built (make check builds it)"
done
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
unset HEAPTOOL_SEED

d=$HT_TMP/u
mkdir -p "$d"
cp "$TARGETS/alloc-sites-O2" "$d/as" && cp "$TARGETS/libdlfix.so" "$d/"
timeout 60 "$HEAPTOOL" run --rate 1 -o "$d/u.heap" -- "$d/as" \
    >"$HT_TMP/run.out" 2>"$HT_TMP/run.err"
st=$?
ok $([ $st -eq 0 ] && [ -s "$d/u.heap" ]; echo $?) \
    "heaptool run --rate 1 writes a profile"
[ $st -eq 0 ] || diag "status $st: $(head -c 1000 "$HT_TMP/run.err")"

# report NAME WHY: report --detail with the executable replaced; it must
# end by itself, and note WHY for the executable.
report() {
	timeout 20 "$HEAPTOOL" report --detail "$d/u.heap" >"$HT_TMP/$1.txt" \
	    2>&1
	_st=$?
	ok $([ $_st -eq 0 ]; echo $?) "$1: report --detail finishes"
	[ $_st -eq 0 ] || diag "status $_st (124: timed out)" \
	    "$(head -c 1000 "$HT_TMP/$1.txt")"
	ok $(grep -qF "note: $d/as: $2" "$HT_TMP/$1.txt"; echo $?) \
	    "$1: the note says: $2"
	ok $(grep -q ' as+0x[0-9a-f]' "$HT_TMP/$1.txt" &&
	    ! grep -q 'chain_a\|keep_large\|calloc_keep' "$HT_TMP/$1.txt"
	    echo $?) "$1: the executable's frames are module+offset"
}

rm -f "$d/as"
mkfifo "$d/as"
report fifo "not a regular file (a FIFO)"

rm -f "$d/as"
ln -s /dev/zero "$d/as"
report device "not a regular file (a character device)"

# separate debug information through .gnu_debuglink
command -v objcopy >/dev/null 2>&1 || {
	skip "objcopy (binutils) not found: debuglink checks"
	done_testing
}
g=$HT_TMP/g
mkdir -p "$g/.debug"
cp "$TARGETS/alloc-sites-O2" "$g/as" && cp "$TARGETS/libdlfix.so" "$g/" &&
    objcopy --only-keep-debug "$g/libdlfix.so" "$g/.debug/libdlfix.so.dbg" &&
    strip --strip-debug "$g/libdlfix.so" &&
    objcopy --add-gnu-debuglink="$g/.debug/libdlfix.so.dbg" "$g/libdlfix.so"
ok $? "a stripped libdlfix.so with its debug file in .debug/"
timeout 60 "$HEAPTOOL" run --rate 1 -o "$g/g.heap" -- "$g/as" \
    >"$HT_TMP/grun.out" 2>&1
ok $? "heaptool run of it writes a profile"

# dlfix NAME: report --json --detail; prints "function file line" of the
# frames in libdlfix.so, one per line.
dlfix() {
	timeout 20 "$HEAPTOOL" report --json --detail "$g/g.heap" \
	    >"$HT_TMP/$1.json" 2>"$HT_TMP/$1.err"
	_st=$?
	ok $([ $_st -eq 0 ]; echo $?) "$1: report --json --detail finishes"
	[ $_st -eq 0 ] || diag "status $_st (124: timed out)" \
	    "$(head -c 500 "$HT_TMP/$1.err")"
	python3 - "$HT_TMP/$1.json" >"$HT_TMP/$1.frames" <<'PY'
import json, sys
for s in json.load(open(sys.argv[1]))["sites"]:
    for f in s["frames"]:
        if f["module"] == "libdlfix.so":
            print(f["function"], f["file"], f["line"])
PY
}

dlfix found
ok $(grep -q '^dlfix_keep .*dlfix\.c [0-9][0-9]*$' "$HT_TMP/found.frames"
    echo $?) "the debuglink file gives dlfix_keep its file:line"
mv "$g/.debug/libdlfix.so.dbg" "$g/.debug/keep"
mkfifo "$g/.debug/libdlfix.so.dbg"
dlfix fifo
ok $(grep -q '^dlfix_keep None None$' "$HT_TMP/fifo.frames"; echo $?) \
    "a FIFO at the debuglink's name: not used, the name from .symtab"
rm -f "$g/.debug/libdlfix.so.dbg"
# Another build's debug file at the name: its build-id differs.
printf 'int dlfix_other(void) { return 1; }\n' >"$HT_TMP/other.c"
if cc -g -shared -fPIC -Wl,--build-id -o "$HT_TMP/other.so" \
    "$HT_TMP/other.c" 2>/dev/null &&
    objcopy --only-keep-debug "$HT_TMP/other.so" \
    "$g/.debug/libdlfix.so.dbg"; then
	dlfix other
	ok $(grep -q '^dlfix_keep None None$' "$HT_TMP/other.frames"
	    echo $?) "another build's debug file at the name: not used"
else
	skip "cc could not build a shared object"
fi

# a dwz alternate file
if command -v dwz >/dev/null 2>&1; then
	z=$HT_TMP/z
	mkdir -p "$z"
	cp "$TARGETS/alloc-sites-O2" "$z/as" && cp "$z/as" "$z/as2" &&
	    cp "$TARGETS/libdlfix.so" "$z/" &&
	    dwz -m "$z/common.debug" -M "$z/common.debug" "$z/as" "$z/as2"
	ok $? "dwz moves the executable's shared DWARF to an alternate file"
	timeout 60 "$HEAPTOOL" run --rate 1 -o "$z/z.heap" -- "$z/as" \
	    >"$HT_TMP/zrun.out" 2>&1
	timeout 20 "$HEAPTOOL" report --detail "$z/z.heap" >"$HT_TMP/z.txt" 2>&1
	ok $(grep -q '\[inlined\] inl_alloc ([^)]*t/target/alloc-sites.c:' \
	    "$HT_TMP/z.txt"; echo $?) \
	    "the inlined frame is named from the dwz alternate file"
	grep 'inlined' "$HT_TMP/z.txt" | head -5 | while read -r l; do
		diag "$l"; done
else
	skip "dwz not found: alternate file check"
fi

done_testing
