#!/bin/sh
# Record, then replay (issue 13's acceptance, end to end): a trace that
# heaptool record makes of t/target/rec-threads (4 threads and main, half
# the blocks freed by the next thread) replays without deadlock, every op
# as many times as the trace holds it (counted by t/trace-dump, a reader
# of its own), with the trace's peak of requested bytes; so it does with
# the agent preloaded at the default rate; heaptool trace-stats counts the
# same ops and the same peak; and a trace recorded by attach from
# t/target/attach-hammer (8 threads, frees of blocks older than the
# recording) replays too, those frees skipped and counted (a realloc of
# such a block is played as an allocation); heaptool status shows the
# recording while it runs and once it is done.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/htrec.sh"

rec_setup rec-threads
[ -x "$HT_BUILDDIR/heaptool-replay" ] || bail "heaptool-replay not built"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
unset HEAPTOOL_SEED
T=120

plan 12

timeout $T "$HEAPTOOL" record -o "$HT_TMP/r.trace" -- "$FX" 2000 \
    >"$HT_TMP/r.out" 2>"$HT_TMP/r.err" &&
    "$DUMP" "$HT_TMP/r.trace" >"$HT_TMP/r.dump"
ok $? "heaptool record -- rec-threads, read back" ||
    diag "$(tail -n 3 "$HT_TMP/r.err")"
is "$(sed -n 's/^complete //p;s/^threads //p' "$HT_TMP/r.dump" | tr '\n' ' ')" \
    "1 5 " "complete, 5 threads"

# same DUMP JSON: the replay's ops and peak against the trace's, as
# trace-dump counts them; one line per difference.
cat >"$HT_TMP/same.py" <<'PY'
import json, sys
dump = {}
for l in open(sys.argv[1]):
    w = l.split()
    if w[0] == "op":
        dump[w[1]] = int(w[2])
    elif w[0] == "peak":
        peak = int(w[1])
d = json.load(open(sys.argv[2]))
bad = []
for o in d["ops"]:
    want = dump.get(o["op"], 0)
    if o["recorded"] != want or o["replayed"] != want:
        bad.append("%s: trace %d, recorded %d, replayed %d"
                   % (o["op"], want, o["recorded"], o["replayed"]))
if sum(dump.values()) != sum(o["replayed"] for o in d["ops"]):
    bad.append("ops missing from the replay's list")
if d["peak_requested"] != peak or d["recorded_peak_requested"] != peak:
    bad.append("peak %d, recorded %d, replayed %d"
               % (peak, d["recorded_peak_requested"], d["peak_requested"]))
if d["threads"] != 5 or d["failed"] != 0:
    bad.append("threads %d failed %d" % (d["threads"], d["failed"]))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY

timeout $T "$HEAPTOOL" replay --format json "$HT_TMP/r.trace" \
    >"$HT_TMP/plain.json" 2>"$HT_TMP/plain.err"
ok $? "heaptool replay ends (no deadlock)" || diag "$(cat "$HT_TMP/plain.err")"
python3 "$HT_TMP/same.py" "$HT_TMP/r.dump" "$HT_TMP/plain.json" \
    >"$HT_TMP/plain.diff"
ok $? "every op replayed as often as the trace holds it; the trace's peak of requested bytes" ||
    diag "$(cat "$HT_TMP/plain.diff")"

timeout $T "$HEAPTOOL" replay --format json --with-agent 512K \
    "$HT_TMP/r.trace" >"$HT_TMP/agent.json" 2>"$HT_TMP/agent.err" &&
    python3 "$HT_TMP/same.py" "$HT_TMP/r.dump" "$HT_TMP/agent.json" \
	>"$HT_TMP/agent.diff"
ok $? "so with the agent at 512 KiB" ||
    diag "$(cat "$HT_TMP/agent.err" "$HT_TMP/agent.diff")"

"$HEAPTOOL" trace-stats --format json "$HT_TMP/r.trace" >"$HT_TMP/st.json"
python3 - "$HT_TMP/r.dump" "$HT_TMP/st.json" >"$HT_TMP/st.diff" <<'PY'
import json, sys
dump = {}
for l in open(sys.argv[1]):
    w = l.split()
    if w[0] == "op":
        dump[w[1]] = int(w[2])
    elif w[0] == "peak":
        peak = int(w[1])
s = json.load(open(sys.argv[2]))
got = {o["op"]: o["count"] for o in s["ops"]}
bad = ["%s: %d, trace-stats %d" % (k, v, got.get(k, 0))
       for k, v in dump.items() if got.get(k, 0) != v]
if s["memory"]["peak_requested"] != peak:
    bad.append("peak %d, trace-stats %d" % (peak, s["memory"]["peak_requested"]))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
ok $? "trace-stats counts the same ops and the same peak" ||
    diag "$(cat "$HT_TMP/st.diff")"

# By attach: an 8-thread target, frees of blocks from before the recording.
. "$HT_SRCDIR/t/lib/ptrace.sh"
if ptrace_permitted && [ -x "$TARGETS/attach-hammer" ]; then
	"$TARGETS/attach-hammer" --until "$HT_TMP/stop" >"$HT_TMP/h.out" 2>&1 &
	hp=$!
	wait_line "$HT_TMP/h.out" ready || bail "attach-hammer did not start"
	timeout $T "$HEAPTOOL" record -p $hp --duration 3s -o "$HT_TMP/h.trace" \
	    >"$HT_TMP/h.rec" 2>&1 &
	rp=$!
	# heaptool status shows the recording while it runs, and once done.
	running() {
		"$HEAPTOOL" status -p $hp >"$HT_TMP/st.txt" 2>&1 &&
		    grep -Eq '^  recording +running: [0-9]+ events, [0-9]+ threads, ' \
			"$HT_TMP/st.txt"
	}
	i=0
	until running || [ $i -ge $((T * 10)) ]; do
		i=$((i + 1))
		sleep 0.1
	done
	"$HEAPTOOL" status -p $hp --json >"$HT_TMP/st.json" 2>&1
	st=$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["recording"]["state"])' "$HT_TMP/st.json" \
	    2>&1)
	is "$(running && echo running) $st" "running running" \
	    "status, text and JSON: the recording running" ||
	    diag "$(cat "$HT_TMP/st.txt")"
	wait $rp
	ok $? "record -p attach-hammer --duration 3s" ||
	    diag "$(cat "$HT_TMP/h.rec")"
	"$HEAPTOOL" status -p $hp >"$HT_TMP/st2.txt" 2>&1
	"$DUMP" "$HT_TMP/h.trace" >"$HT_TMP/h.dump"
	grep -Eq "^  recording +done: $(sed -n 's/^events //p' "$HT_TMP/h.dump") events, [0-9]+ threads, .*, 0 lost, " \
	    "$HT_TMP/st2.txt"
	ok $? "then done, with the trace's events" || diag "$(cat "$HT_TMP/st2.txt")"
	timeout $T "$HEAPTOOL" detach -p $hp >/dev/null 2>&1
	touch "$HT_TMP/stop"
	wait $hp
	timeout $T "$HEAPTOOL" replay --format json "$HT_TMP/h.trace" \
	    >"$HT_TMP/h.json" 2>"$HT_TMP/h.err"
	ok $? "its trace replays (no deadlock)" || diag "$(cat "$HT_TMP/h.err")"
	python3 - "$HT_TMP/h.dump" "$HT_TMP/h.json" >"$HT_TMP/h.diff" <<'PY'
import json, sys
dump = {}
for l in open(sys.argv[1]):
    w = l.split()
    if w[0] == "op":
        dump[w[1]] = int(w[2])
    elif w[0] in ("preexisting", "threads"):
        dump[w[0]] = int(w[1])
d = json.load(open(sys.argv[2]))
skipped = sum(d["skipped"].values())
played = sum(o["replayed"] for o in d["ops"])
ops = sum(v for k, v in dump.items() if k not in ("preexisting", "threads"))
bad = []
if played + skipped != ops:
    bad.append("played %d + skipped %d != %d events" % (played, skipped, ops))
# A realloc of an older block is played as one made from nothing; its
# frees are skipped.
if not 0 < d["skipped"]["preexisting"] <= dump["preexisting"] or \
        skipped != d["skipped"]["preexisting"]:
    bad.append("skipped %s, preexisting %d" % (d["skipped"], dump["preexisting"]))
if d["threads"] != dump["threads"] or d["threads"] < 8:
    bad.append("threads %d of %d" % (d["threads"], dump["threads"]))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
	ok $? "every event played but the frees of older blocks, skipped and counted; its 8+ threads" ||
	    diag "$(cat "$HT_TMP/h.diff")"
	is "$(sed -n 's/^complete //p' "$HT_TMP/h.dump")" 1 "the attach trace is complete"
else
	for _i in 1 2 3 4 5 6; do
		skip "${ptrace_why:-attach-hammer not built}"
	done
fi
