#!/bin/sh
# The errors of heaptool trace-stats and replay (issue 13), each one line
# "heaptool: <what>: <why>; <what to do>": a damaged trace (a byte
# changed: the checksum), a file that is no trace, one that is missing, a
# trace cut short for replay (trace-stats reads what it has: its first
# line says so), an allocator ld.so cannot preload (it would only warn and
# run on without it), a replayer that is not there; and the usage errors
# (exit 2) of a missing trace, an unknown format, a setup that is none, a
# --compare with one setup, --rounds 1, --alpha 2.
. "$(dirname "$0")/tap/libtap.sh"

GEN=$TARGETS/tracegen
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$GEN" ] || bail "$GEN not built (make check builds it)"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"

plan 35

# fails STATUS PATTERN DESCRIPTION COMMAND...: COMMAND exits STATUS with
# one line on stderr matching PATTERN and the form of heaptool's errors.
fails() {
	_st=$1
	_pat=$2
	_d=$3
	shift 3
	timeout 60 "$@" >"$HT_TMP/out" 2>"$HT_TMP/err"
	_s=$?
	is "$_st" "$_s" "$_d: exit $_st"
	_l=$(wc -l <"$HT_TMP/err")
	grep -q "^heaptool: .*: .*; " "$HT_TMP/err" &&
	    grep -q -- "$_pat" "$HT_TMP/err" && [ "$_l" -eq 1 ]
	ok $? "$_d: one line ($(head -n 1 "$HT_TMP/err"))"
}

"$GEN" -o "$HT_TMP/good.trace" -s 41 -t 2 -n 300
# A byte of an event changed, its chunk still well formed: the CRC.
cp "$HT_TMP/good.trace" "$HT_TMP/bad.trace"
python3 -c 'import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[len(b) // 2] ^= 0x40
open(p, "wb").write(b)' "$HT_TMP/bad.trace"
fails 1 "damaged.*record it again" "trace-stats of a damaged trace" \
    "$HEAPTOOL" trace-stats "$HT_TMP/bad.trace"
fails 1 "damaged.*record it again" "replay of a damaged trace" \
    "$HEAPTOOL" replay "$HT_TMP/bad.trace"
echo "hello" >"$HT_TMP/text.trace"
fails 1 "not a heaptool trace" "a text file" \
    "$HEAPTOOL" trace-stats "$HT_TMP/text.trace"
fails 1 "No such file" "a missing file" \
    "$HEAPTOOL" replay "$HT_TMP/none.trace"

# Cut short in the middle of a chunk.
head -c $(( $(wc -c <"$HT_TMP/good.trace") * 2 / 3 )) "$HT_TMP/good.trace" \
    >"$HT_TMP/cut.trace"
fails 1 "incomplete.*record it again" "replay of a trace cut short" \
    "$HEAPTOOL" replay "$HT_TMP/cut.trace"
"$HEAPTOOL" trace-stats "$HT_TMP/cut.trace" >"$HT_TMP/cut.txt" 2>/dev/null
ok $? "trace-stats reads what it has"
head -n 1 "$HT_TMP/cut.txt" | grep -q "^INCOMPLETE trace .*(cut short in a chunk"
ok $? "and says it is cut short first ($(head -n 1 "$HT_TMP/cut.txt"))"

fails 1 "cannot be preloaded.*shared library" "an allocator that is no library" \
    "$HEAPTOOL" replay --allocator "$HT_TMP/text.trace" "$HT_TMP/good.trace"
fails 1 "HEAPTOOL_REPLAY" "no replayer" \
    env HEAPTOOL_REPLAY="$HT_TMP/none" "$HEAPTOOL" replay "$HT_TMP/good.trace"

fails 2 "no trace given" "trace-stats without a trace" \
    "$HEAPTOOL" trace-stats
fails 2 "not a format" "--format xml" \
    "$HEAPTOOL" replay --format xml "$HT_TMP/good.trace"
fails 2 "not a setup" "--compare plain fast" \
    "$HEAPTOOL" replay --compare plain fast "$HT_TMP/good.trace"
fails 2 "needs two setups" "--compare with one setup" \
    "$HEAPTOOL" replay --compare plain
fails 2 "not a number" "--rounds 1" \
    "$HEAPTOOL" replay --compare plain plain --rounds 1 "$HT_TMP/good.trace"
fails 2 "not a probability" "--alpha 2" \
    "$HEAPTOOL" replay --compare plain plain --alpha 2 "$HT_TMP/good.trace"
fails 2 "not a rate" "agent:0" \
    "$HEAPTOOL" replay --compare plain agent:0 "$HT_TMP/good.trace"

# SIGTERM to heaptool replay --repeat: the replayer running is ended
# (none is left), the run directory removed, the runs done shown (when one
# ended first), and the exit status is 128 + 15.
"$GEN" -o "$HT_TMP/long.trace" -s 9 -t 2 -n 300000 >/dev/null
mkdir "$HT_TMP/tmp"
TMPDIR=$HT_TMP/tmp "$HEAPTOOL" replay --repeat 1000 "$HT_TMP/long.trace" \
    >"$HT_TMP/term.out" 2>"$HT_TMP/term.err" &
bg=$!
sleep 3
kill -TERM "$bg"
wait "$bg"
is $? 143 "SIGTERM: replay exits 143"
grep -q "^heaptool: replay: stopped by signal 15 (Terminated) after [0-9]* of its 1000 runs" \
    "$HT_TMP/term.err"
ok $? "SIGTERM: it says it was stopped, after how many runs" ||
    diag "$(cat "$HT_TMP/term.err")"
if grep -q "after 0 of" "$HT_TMP/term.err"; then
	skip "no run ended within 3 s, none to show"
else
	grep -q "^replay of .*long.trace: 300000 events" "$HT_TMP/term.out"
	ok $? "SIGTERM: the runs done are shown" ||
	    diag "$(cat "$HT_TMP/term.out")"
fi
i=0
while pgrep -f "heaptool-replay.*long.trace" >/dev/null && [ $i -lt 50 ]; do
	i=$((i + 1))
	sleep 0.1
done
pgrep -f "heaptool-replay.*long.trace" >/dev/null
ok $((! $?)) "SIGTERM: no replayer is left running"
is "$(ls "$HT_TMP/tmp")" "" "SIGTERM: the run directory is removed"
done_testing
