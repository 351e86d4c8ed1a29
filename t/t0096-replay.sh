#!/bin/sh
# heaptool replay (issue 13) on traces of t/target/tracegen: 4 threads
# whose frees are made by another thread than the allocation (40% to 95%
# of them), every op of the format (malloc, calloc, realloc moved and in
# place, aligned, new, new[], each delete, free_sized, free(NULL)).  The
# replay ends (no deadlock: a timeout would fail it) and plays every
# event recorded, the same number of each op with the same bytes, but the
# frees of blocks older than the trace (skipped, counted); the peak of
# requested bytes it made is the trace's.  So it is with the agent
# preloaded (--with-agent), under a preloaded allocator (--allocator
# t/target/libslow.so), --repeat 3, and under callgrind where valgrind is;
# each op's latency histogram holds every call of the op; the text says
# the peak is the same; the JSON follows t/data/replay-schema.json.
. "$(dirname "$0")/tap/libtap.sh"

GEN=$TARGETS/tracegen
SLOW=$TARGETS/libslow.so
LIB=$HT_SRCDIR/t/lib
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$HT_BUILDDIR/heaptool-replay" ] || bail "heaptool-replay not built"
[ -x "$GEN" ] || bail "$GEN not built (make check builds it)"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
T=120

plan 23

# replay NAME OUT REPLAY-OPTIONS...: replay NAME's trace as JSON into OUT.
replay() {
	_n=$1
	_o=$2
	shift 2
	timeout $T "$HEAPTOOL" replay --format json "$@" "$HT_TMP/$_n.trace" \
	    >"$HT_TMP/$_o.json" 2>"$HT_TMP/$_o.err"
	_s=$?
	[ $_s -eq 0 ] || diag "$(cat "$HT_TMP/$_o.err")"
	return $_s
}
gen() {
	_n=$1
	shift
	"$GEN" -o "$HT_TMP/$_n.trace" -e "$@" >"$HT_TMP/$_n.want"
}
# latency_ok JSON: each op's histogram holds as many calls as it played.
latency_ok() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
lat = {x["op"]: x for x in d["latency"]}
bad = [o["op"] for o in d["ops"] if o["replayed"] and
       (lat[o["op"]]["count"] != o["replayed"] or
        sum(b["count"] for b in lat[o["op"]]["buckets"]) != o["replayed"] or
        sum(c["count"] for c in lat[o["op"]]["size_classes"]) != o["replayed"])]
print(" ".join(bad))
sys.exit(1 if bad else 0)' "$1"
}

gen cross -s 11 -t 4 -n 6000 -x 60 -P 0
ok $? "tracegen: 4 threads, 6000 events, 60% of frees cross-thread"
replay cross plain
ok $? "heaptool replay ends"
check "every op played as recorded, bytes and peak requested the trace's" \
    python3 "$LIB/httrace.py" replay "$HT_TMP/cross.want" "$HT_TMP/plain.json"
check "each op's latency histogram holds its calls" latency_ok \
    "$HT_TMP/plain.json"
is 4 "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["threads"])' \
    "$HT_TMP/plain.json")" "4 threads replayed"

gen pre -s 12 -t 4 -n 4000 -x 95 -P 25 -b 100000
ok $? "tracegen: 95% cross-thread, 25 frees of preexisting blocks"
replay pre pre
ok $? "replayed"
check "the same but the 25 preexisting frees, skipped and counted" \
    python3 "$LIB/httrace.py" replay "$HT_TMP/pre.want" "$HT_TMP/pre.json"

gen many -s 13 -t 8 -n 20000 -x 80 -P 0 -b 512
replay many many
ok $? "8 threads, 20,000 events, 80% cross-thread: no deadlock"
check "as recorded" \
    python3 "$LIB/httrace.py" replay "$HT_TMP/many.want" "$HT_TMP/many.json"

replay cross agent --with-agent 512K
ok $? "--with-agent 512K"
check "with the agent: as recorded" \
    python3 "$LIB/httrace.py" replay "$HT_TMP/cross.want" "$HT_TMP/agent.json"
replay cross slow --allocator "$SLOW" --repeat 3
ok $? "--allocator libslow.so --repeat 3"
check "under another allocator: as recorded" \
    python3 "$LIB/httrace.py" replay "$HT_TMP/cross.want" "$HT_TMP/slow.json"
is "3 3" "$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(d["runs"], len(d["time_ns"]["runs"]))' "$HT_TMP/slow.json")" \
    "three runs, three times"

if command -v valgrind >/dev/null 2>&1; then
	gen cg -s 14 -t 2 -n 1500 -x 50
	replay cg cg --callgrind
	ok $? "--callgrind"
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["instructions"]["median"] > 1500 else 1)' "$HT_TMP/cg.json"
	ok $? "counts the replay's instructions (more than one an event)"
else
	skip "valgrind not found (apt-get install valgrind)"
	skip "valgrind not found"
fi

# Many events, a small live set: the replayer's own tables (some 25 bytes
# an event) are in memory before the run is measured, so that the RSS
# growth is the allocator's (30 KB at the peak here: well under 2 MiB),
# not the tables' (some 6 MB).
gen small -s 5 -t 1 -n 400000 -a 16 -b 200 -m malloc
replay small small
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
g = d["rss_peak"] - d["rss_base"]
print("peak requested %d, RSS growth %d" % (d["peak_requested"], g))
sys.exit(0 if d["rss_peak_reset"] and g < 2 << 20 else 1)' \
    "$HT_TMP/small.json" >"$HT_TMP/small.rss" 2>&1
ok $? "the RSS growth is the allocator's, not the replayer's tables'" ||
    diag "$(cat "$HT_TMP/small.rss")"

# 10,000 threads one after another (-q), each freeing its blocks or an
# earlier thread's: played as recorded, by one thread, one after another.
gen seq -s 6 -t 10000 -n 40000 -q
replay seq seq
check "threads one after another: every op played as recorded" \
    python3 "$LIB/httrace.py" replay "$HT_TMP/seq.want" "$HT_TMP/seq.json"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print("threads %d, workers %d" % (d["threads"], d["workers"]))
sys.exit(0 if d["threads"] == 10000 and d["workers"] == 1 else 1)' \
    "$HT_TMP/seq.json" >"$HT_TMP/seq.w" 2>&1
ok $? "... by one thread, not 10000" || diag "$(cat "$HT_TMP/seq.w")"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["workers"] == 4 else 1)' "$HT_TMP/plain.json"
ok $? "4 threads at once: played by 4"

timeout $T "$HEAPTOOL" replay "$HT_TMP/cross.trace" >"$HT_TMP/text" 2>&1
grep -q "^  peak requested [0-9]* bytes (recorded [0-9]*, the same)" \
    "$HT_TMP/text"
ok $? "the text says the peak is the recorded one"
check "the JSON follows t/data/replay-schema.json" \
    python3 "$LIB/htschema.py" "$HT_SRCDIR/t/data/replay-schema.json" \
    "$HT_TMP/plain.json" "$HT_TMP/slow.json" "$HT_TMP/agent.json"
done_testing
