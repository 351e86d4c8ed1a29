#!/bin/sh
# heaptool report on profiles that are corrupt or not files (issue 9).
# A real profile of t/target/alloc-sites-O2 at rate 1 is the material:
#   - one byte flipped anywhere (each of 40 offsets spread over the file):
#     the CRC-32 in END refuses it with "checksum mismatch", exit 1, never
#     a report with a wrong figure;
#   - a FIFO with no writer, a character device, a directory: refused at
#     once as "not a regular file" (a blocking open would hang: timeout
#     turns a hang into a failure);
#   - a flipped bit in a figure, which only the CRC can catch, too;
#   - the intact file still reads, and so does a version 2 file (no CRC);
#   - terminal escapes in a profile's command, module path and thread
#     name (ESC, BEL, the C1 CSI U+009B, a byte that is not UTF-8) reach
#     no output raw: not stderr's notes, nor any format (pprof unzipped).
. "$(dirname "$0")/tap/libtap.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
[ -x "$TARGETS/alloc-sites-O2" ] ||
    bail "$TARGETS/alloc-sites-O2 not built (make check builds it)"
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"

prof=$HT_TMP/as.heap
timeout 60 "$HEAPTOOL" run --rate 1 -o "$prof" -- "$TARGETS/alloc-sites-O2" \
    >"$HT_TMP/run.out" 2>&1
ok $? "heaptool run --rate 1 writes a profile"
timeout 10 "$HEAPTOOL" report --json "$prof" >"$HT_TMP/good.json" 2>&1
ok $? "the intact profile reads"

# refused FILE WHAT: report FILE exits 1 within 5 s, one line naming WHY.
refused() {
	timeout 5 "$HEAPTOOL" report --detail "$1" >"$HT_TMP/out" \
	    2>"$HT_TMP/err"
	_st=$?
	[ $_st -eq 1 ] && [ ! -s "$HT_TMP/out" ] &&
	    [ "$(wc -l <"$HT_TMP/err")" -eq 1 ] && grep -q "$2" "$HT_TMP/err"
	_r=$?
	ok $_r "$3"
	[ $_r -eq 0 ] ||
	    diag "status $_st" "stdout: $(head -c 300 "$HT_TMP/out")" \
	    "stderr: $(head -c 300 "$HT_TMP/err")"
}

size=$(wc -c <"$prof")
i=0
bad=0
while [ $i -lt 40 ]; do
	off=$((16 + (size - 20) * i / 39))
	python3 - "$prof" "$HT_TMP/flip.heap" "$off" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[int(sys.argv[3])] ^= 0x10
open(sys.argv[2], "wb").write(b)
PY
	timeout 5 "$HEAPTOOL" report --detail "$HT_TMP/flip.heap" \
	    >/dev/null 2>"$HT_TMP/err"
	if [ $? -ne 1 ] || ! grep -q 'checksum mismatch\|record' "$HT_TMP/err"
	then
		bad=$((bad + 1))
		diag "offset $off: $(head -c 300 "$HT_TMP/err")"
	fi
	i=$((i + 1))
done
is 0 "$bad" "a byte flipped at any of 40 offsets is refused"
# A bit of a figure (META's peak_inuse_bytes, at payload offset 48): no
# check but the CRC can see it.
python3 - "$prof" "$HT_TMP/flip.heap" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[16 + 8 + 48 + 2] ^= 0x01
open(sys.argv[2], "wb").write(b)
PY
refused "$HT_TMP/flip.heap" 'checksum mismatch (stored [0-9a-f]*, computed' \
    "a flipped bit in a figure: checksum mismatch"

# A version 2 file: the same records with an empty END, no CRC to check,
# and META without the last 60 bytes that versions 4 to 7 appended (its
# TIMELINE records, version 8's, are skipped there as any unknown type, and
# SITE's tails of versions 7 and 10 are bytes a version 2 reader leaves).
python3 - "$prof" "$HT_TMP/v2.heap" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
assert b[8:12] == struct.pack("<I", 10)
b[8:12] = struct.pack("<I", 2)
t, n = struct.unpack_from("<II", b, 16)
assert t == 1
del b[16 + 8 + n - 60:16 + 8 + n]
struct.pack_into("<I", b, 20, n - 60)
assert struct.unpack("<II", b[-12:-4]) == (0, 4)
del b[-8:]
b += struct.pack("<I", 0)
open(sys.argv[2], "wb").write(b)
PY
timeout 10 "$HEAPTOOL" report --json "$HT_TMP/v2.heap" >"$HT_TMP/v2.json" 2>&1
ok $? "a version 2 profile (no checksum) still reads"
python3 - "$HT_TMP/good.json" "$HT_TMP/v2.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
# Short-lived allocations are a version 10 figure: unknown (null) in 2.
for k in ("temporary_objects", "temporary_samples"):
    if b["totals"].pop(k) is not None:
        sys.exit(1)
    a["totals"].pop(k)
sys.exit(0 if a["totals"] == b["totals"] and a["modules"] == b["modules"]
         else 1)
PY
ok $? "and gives the same totals and modules"

mkfifo "$HT_TMP/fifo" || bail "mkfifo failed"
refused "$HT_TMP/fifo" 'not a regular file' "a FIFO is refused at once"
refused /dev/null 'not a regular file' "a device is refused"
refused "$HT_TMP" 'not a regular file' "a directory is refused"

# escapes
python3 "$HT_SRCDIR/t/lib/htformats.py" mkprofile "$HT_TMP/esc.heap" --hostile
ok $? "a profile with escapes in its strings"
for f in text json collapsed svg pprof; do
	timeout 10 "$HEAPTOOL" report --detail --format $f \
	    -o "$HT_TMP/esc.$f" "$HT_TMP/esc.heap" 2>"$HT_TMP/esc.$f.err"
	_st=$?
	[ $f = pprof ] && gzip -dc <"$HT_TMP/esc.$f" >"$HT_TMP/esc.$f.raw" &&
	    mv "$HT_TMP/esc.$f.raw" "$HT_TMP/esc.$f"
	python3 - "$f" "$HT_TMP/esc.$f" "$HT_TMP/esc.$f.err" <<'PY'
import re, sys
# Any C0 control but newline (and tab), DEL, a C1 control, a byte that is
# not UTF-8.  pprof is binary (lengths and varints take any value): there
# only the strings matter, so look for the escapes as the profile had them.
bad = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xff")
raw = re.compile(rb"\x1b\]0;owned|owned\x07|\xc2\x9b2J|\x1b\[31m")
for i, p in enumerate(sys.argv[2:]):
    data = open(p, "rb").read()
    m = (raw if sys.argv[1] == "pprof" and i == 0 else bad).search(data)
    if m:
        print("# %s: %r at %d" % (p, m.group(0), m.start()))
        sys.exit(1)
PY
	_py=$?
	ok $([ $_st -eq 0 ] && [ $_py -eq 0 ]; echo $?) \
	    "--format $f: no raw escape on stdout or stderr"
done
grep -q 'prog?]0;owned??\[31m?2J?' "$HT_TMP/esc.text"
ok $? "text: each escape character shows as '?'"
grep -q 'prog?]0;owned??\[31m??2J?' "$HT_TMP/esc.pprof"
ok $? "pprof: the strings hold '?' for each escape byte"

# Sums that would wrap: five sites of 2^64 - 1 bytes and objects.
python3 "$HT_SRCDIR/t/lib/htformats.py" mkprofile "$HT_TMP/wrap.heap" --wrap
timeout 10 "$HEAPTOOL" report --detail "$HT_TMP/wrap.heap" >"$HT_TMP/wrap.txt"
ok $? "a profile whose sums would wrap: report reads it"
grep -q '^  in use  *16.0 EiB in 18446744073709551615 objects' \
    "$HT_TMP/wrap.txt" && grep -q 'warning: figures passed 2^64 - 1' \
    "$HT_TMP/wrap.txt"
ok $? "text: the sums stop at 2^64 - 1, and a warning says so"
timeout 10 "$HEAPTOOL" report --json "$HT_TMP/wrap.heap" >"$HT_TMP/wrap.json"
python3 - "$HT_TMP/wrap.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["totals"]
sys.exit(0 if t["saturated"] is True and
         t["inuse_objects"] == 2 ** 64 - 1 and
         t["inuse_bytes_high"] >= t["inuse_bytes"] >= t["inuse_bytes_low"]
         else 1)
PY
ok $? "JSON: totals.saturated, the maximum, an interval around it"
python3 "$HT_SRCDIR/t/lib/htformats.py" mkprofile "$HT_TMP/small.heap"
timeout 10 "$HEAPTOOL" diff "$HT_TMP/wrap.heap" "$HT_TMP/small.heap" \
    >"$HT_TMP/wrap.diff"
grep -q '^  in use .* ~-' "$HT_TMP/wrap.diff" &&
    ! grep -q '^  in use .* ~+' "$HT_TMP/wrap.diff" &&
    grep -q 'warning: figures passed 2^64 - 1' "$HT_TMP/wrap.diff"
ok $? "diff: old > new is a decrease, never a wrapped increase; warned"

done_testing
