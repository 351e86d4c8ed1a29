#!/bin/sh
# heaptool trace-stats (issue 13) on traces that t/target/tracegen writes
# with the trace writer, against the figures tracegen computes itself as
# it makes the events (its -e lines; t/lib/httrace.py compares): every
# count and byte total by op, size class, thread and tag, requested and
# usable bytes and the rounding overhead, the peaks, the profiler's memory
# at rate 1 and at the default rate, the recorder's; in JSON (checked
# against t/data/trace-stats-schema.json too) and in text.  Several seeds
# and shapes (4 threads with cross-thread frees and preexisting frees, one
# thread); a trace with losses shows them; one cut short says so on its
# first line and in a warning, and still has the figures of what it holds.
. "$(dirname "$0")/tap/libtap.sh"

GEN=$TARGETS/tracegen
LIB=$HT_SRCDIR/t/lib
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$GEN" ] || bail "$GEN not built (make check builds it)"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"

plan 17

# stats NAME TRACEGEN-ARGS...: the trace, tracegen's figures, trace-stats'
# JSON and text.
stats() {
	_n=$1
	shift
	"$GEN" -o "$HT_TMP/$_n.trace" -e "$@" >"$HT_TMP/$_n.want" &&
	    "$HEAPTOOL" trace-stats --format json "$HT_TMP/$_n.trace" \
		>"$HT_TMP/$_n.json" 2>"$HT_TMP/$_n.err" &&
	    "$HEAPTOOL" trace-stats "$HT_TMP/$_n.trace" >"$HT_TMP/$_n.txt" \
		2>>"$HT_TMP/$_n.err"
}

for args in "-s 1 -t 4 -n 3000 -x 40 -P 7" "-s 2 -t 4 -n 5000 -x 90 -P 0 -b 70000" \
    "-s 3 -t 1 -n 2000 -P 3 -a 1 -b 300"; do
	n=$(echo "$args" | tr -d ' -')
	stats "$n" $args
	ok $? "tracegen $args; trace-stats, JSON and text"
	check "JSON figures are tracegen's ($args)" \
	    python3 "$LIB/httrace.py" stats "$HT_TMP/$n.want" "$HT_TMP/$n.json"
	check "text figures are tracegen's ($args)" \
	    python3 "$LIB/httrace.py" text "$HT_TMP/$n.want" "$HT_TMP/$n.txt"
done
check "the JSON follows t/data/trace-stats-schema.json" \
    python3 "$LIB/htschema.py" "$HT_SRCDIR/t/data/trace-stats-schema.json" \
    "$HT_TMP"/*.json

# The first line: a whole trace, its events and threads.
is "trace $HT_TMP/s1t4n3000x40P7.trace: 3000 events, 4 threads" \
    "$(head -n 1 "$HT_TMP/s1t4n3000x40P7.txt")" "the first line names the trace"

# Losses: END's lost count, shown and in the JSON.
stats lost -s 4 -t 2 -n 500 -L 17
grep -q "LOST 17 events" "$HT_TMP/lost.txt"
ok $? "17 lost events are shown"
is "17" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["lost"])' \
    "$HT_TMP/lost.json")" "and in the JSON's lost"

# Cut short: no END.  The events are all there; the first line says so.
stats cut -s 5 -t 3 -n 800 -E
ok $? "a trace without END is analysed"
head -n 1 "$HT_TMP/cut.txt" | grep -q "^INCOMPLETE trace .*(no END chunk)"
ok $? "its first line says it is incomplete ($(head -n 1 "$HT_TMP/cut.txt"))"
check "its figures are those of its events" \
    python3 "$LIB/httrace.py" stats "$HT_TMP/cut.want" "$HT_TMP/cut.json"
grep -q "^heaptool: warning: .*incomplete" "$HT_TMP/cut.err"
ok $? "and a warning on stderr"
done_testing
