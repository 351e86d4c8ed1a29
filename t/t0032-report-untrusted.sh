#!/bin/sh
# heaptool report opens only regular files for the modules a profile names,
# and never in a way that blocks: a profile is input we do not trust, and
# whatever its paths name by the time it is read.  An exact run of a copy
# of t/target/alloc-sites-O2 in $HT_TMP, its executable then replaced by
#   - a FIFO without a writer (a blocking open would wait for ever);
#   - a symlink to /dev/zero (a device, whose open alone may act);
# and report --detail, under timeout so that a regression fails instead of
# hanging, must finish, show the executable's frames as module+offset and
# say why its file was not used.
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

done_testing
