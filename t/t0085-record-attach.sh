#!/bin/sh
# heaptool record -p PID (issue 13) on t/target/attach-hammer, 8 threads
# hammering malloc, calloc, realloc and free, with no agent in it:
# - record attaches as heaptool attach does, records for --duration and
#   prints its line; the trace is complete (END, its CRC), lost nothing,
#   has the 8 threads and more (main, the watcher), frees of blocks that
#   predate the recording flagged so, every other ref naming a live block
#   of the trace, no sequence number twice, each thread in order;
# - record, having attached, detaches at its end (every GOT slot as
#   before); a second record hooks the agent left there again; a recording while
#   one runs is refused, and leaves the running one's file whole (even
#   given the same path) and no file of its own;
# - a recorder killed by SIGKILL: the agent ends its recording by itself,
#   the trace complete;
# - heaptool detach while a recording runs ends it first (its trace
#   complete, record exits 0), and every GOT slot holds its value from before the
#   attach, the page protections are as they were (t/lib/htgotmap.py, as
#   t0020 reads them); the target runs on and computes what it computes
#   without heaptool (its checksum), exits 0.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/htrec.sh"
. "$(dirname "$0")/lib/ptrace.sh"
. "$(dirname "$0")/lib/hthammer.sh"

rec_setup attach-hammer
[ "$(uname -m)" = x86_64 ] || skip_all "attach supports x86-64 only"
require_ptrace

XDG_STATE_HOME=$HT_TMP/state
export XDG_STATE_HOME
unset HEAPTOOL_SEED
ulimit -c 0 2>/dev/null
T=60

plan 29

pid=
stopfile=$HT_TMP/stop
cleanup() {
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	[ -n "$bg" ] && kill -9 "$bg" 2>/dev/null
	rm -rf "$HT_TMP"
}
trap cleanup EXIT

# wait_trace FILE: until the recording has written past FILE's head (at
# most T seconds).
wait_trace() {
	_i=0
	while [ "$( (wc -c <"$1") 2>/dev/null || echo 0)" -le 16 ] &&
	    [ $_i -lt $((T * 20)) ]; do
		_i=$((_i + 1))
		sleep 0.05
	done
}

timeout $T "$FX" >"$HT_TMP/plain.out" 2>/dev/null
ok $? "attach-hammer runs by itself"
want_sum=$(grep '^attach-hammer: checksum' "$HT_TMP/plain.out")

LD_BIND_NOW=1 nice -n 10 "$FX" --until "$stopfile" \
    >"$HT_TMP/target.out" 2>"$HT_TMP/target.err" &
pid=$!
wait_line "$HT_TMP/target.out" ready || bail "attach-hammer did not start"
hammer_snapshot before

timeout $T "$HEAPTOOL" record -p "$pid" -o "$HT_TMP/a.trace" \
    --duration 2s >"$HT_TMP/a.out" 2>"$HT_TMP/a.err"
ok $? "record -p PID --duration 2s (no agent there yet)" ||
    diag "$(cat "$HT_TMP/a.err")"
grep -q "^heaptool: attached to $pid" "$HT_TMP/a.out"
ok $? "record attached first, as heaptool attach does" ||
    diag "$(cat "$HT_TMP/a.out")"
"$DUMP" "$HT_TMP/a.trace" >"$HT_TMP/a.dump" 2>&1
d=$HT_TMP/a.dump
is "1 0" "$(get $d complete) $(get $d lost)" "the trace is complete, \
nothing lost" || diag "$(cat $d)"
[ "$(get $d threads)" -ge 8 ] 2>/dev/null
ok $? "it has the hammering threads: $(get $d threads) threads"
[ "$(get $d preexisting)" -gt 0 ] 2>/dev/null
ok $? "frees of blocks from before the recording are flagged: \
$(get $d preexisting)"
[ "$(get $d events)" -gt 10000 ] 2>/dev/null
ok $? "and it has many events: $(get $d events)"
is "0 0 0 0" "$(get $d bad_refs) $(get $d dup_seqs) $(get $d unordered) \
$(get $d unnamed_sites)" \
    "every other ref names a live block made before it; no seq twice; \
each thread in order; every site named"
grep -Eq "^heaptool: $HT_TMP/a.trace: $(get $d events) events, \
$(get $d threads) threads, [0-9]+ bytes, 0 lost, [0-9]+ waits\$" \
    "$HT_TMP/a.out"
ok $? "record's line says what the trace holds" ||
    diag "$(cat "$HT_TMP/a.out")"
grep -q "^heaptool: detached from $pid" "$HT_TMP/a.out"
ok $? "record, having attached, detached at its end" ||
    diag "$(cat "$HT_TMP/a.out")"
hammer_snapshot recorded
hammer_compare before recorded all
ok $? "after it every GOT slot and page protection is as before" ||
    diag "$(cat "$HT_TMP/cmp.out")"

# Again, with the agent there (idle); meanwhile another is refused.
timeout $T "$HEAPTOOL" record -p "$pid" -o "$HT_TMP/b.trace" \
    --duration 3s >"$HT_TMP/b.out" 2>"$HT_TMP/b.err" &
bg=$!
wait_trace "$HT_TMP/b.trace"
timeout $T "$HEAPTOOL" record -p "$pid" -o "$HT_TMP/c.trace" \
    --duration 1s >"$HT_TMP/c.out" 2>"$HT_TMP/c.err"
is 1 $? "a record while one runs: exit 1"
grep -q "a recording is running" "$HT_TMP/c.err"
ok $? "and says a recording is running" || diag "$(cat "$HT_TMP/c.err")"
[ ! -e "$HT_TMP/c.trace" ]
ok $? "the refused record leaves no file of its own"
# Into the running one's file: refused, and that trace left whole (below).
timeout $T "$HEAPTOOL" record -p "$pid" -o "$HT_TMP/b.trace" \
    --duration 1s >"$HT_TMP/c2.out" 2>"$HT_TMP/c2.err"
is 1 $? "a record into the running one's file: exit 1"
wait "$bg"
is 0 $? "the second record, by the agent already there"
bg=
grep -q "^heaptool: attached to $pid (agent already loaded)" "$HT_TMP/b.out"
ok $? "it hooked the agent there again, loading none" ||
    diag "$(cat "$HT_TMP/b.out")"
"$DUMP" "$HT_TMP/b.trace" >"$HT_TMP/b.dump" 2>&1
is "1 0 0 0" "$(get $HT_TMP/b.dump complete) $(get $HT_TMP/b.dump lost) \
$(get $HT_TMP/b.dump bad_refs) $(get $HT_TMP/b.dump dup_seqs)" \
    "its trace is complete and whole"

# A recorder killed (SIGKILL: no signal handler of its runs) while its
# recording runs, for --duration 10m: the agent sees it gone and ends the
# recording by itself, its trace complete, rather than run on unbounded.
"$HEAPTOOL" record -p "$pid" -o "$HT_TMP/k.trace" --duration 10m \
    >"$HT_TMP/k.out" 2>"$HT_TMP/k.err" &
bg=$!
wait_trace "$HT_TMP/k.trace"
kill -KILL "$bg"
wait "$bg" 2>/dev/null
bg=
i=0
while ! timeout $T "$HEAPTOOL" status -p "$pid" 2>&1 |
    grep -q "^  recording  *done:" && [ $i -lt $((T * 10)) ]; do
	i=$((i + 1))
	sleep 0.1
done
timeout $T "$HEAPTOOL" status -p "$pid" >"$HT_TMP/k.status" 2>&1
grep -q "^  recording  *done:" "$HT_TMP/k.status"
ok $? "a recorder killed: its recording ends by itself" ||
    diag "$(cat "$HT_TMP/k.status")"
"$DUMP" "$HT_TMP/k.trace" >"$HT_TMP/k.dump" 2>&1
is "1 0 0" "$(get $HT_TMP/k.dump complete) $(get $HT_TMP/k.dump lost) \
$(get $HT_TMP/k.dump bad_refs)" "its trace is complete and whole"

# Detach while a recording runs: it ends first, its trace complete.
timeout $T "$HEAPTOOL" record -p "$pid" -o "$HT_TMP/d.trace" \
    >"$HT_TMP/d.out" 2>"$HT_TMP/d.err" &
bg=$!
wait_trace "$HT_TMP/d.trace"
timeout $T "$HEAPTOOL" detach -p "$pid" >"$HT_TMP/detach.out" 2>&1
ok $? "detach while a recording runs" || diag "$(cat "$HT_TMP/detach.out")"
wait "$bg"
is 0 $? "the recording ended with the detach, and record exits 0" ||
    diag "$(cat "$HT_TMP/d.err")"
bg=
"$DUMP" "$HT_TMP/d.trace" >"$HT_TMP/d.dump" 2>&1
is "1 0 0" "$(get $HT_TMP/d.dump complete) $(get $HT_TMP/d.dump lost) \
$(get $HT_TMP/d.dump bad_refs)" "its trace is complete and whole"
hammer_snapshot detached
hammer_compare before detached all
ok $? "after detach every GOT slot and page protection is as before" ||
    diag "$(cat "$HT_TMP/cmp.out")"

hammer_end

done_testing
