#!/bin/sh
# heaptool record -- CMD (issue 13) on t/target/rec-threads: 4 threads
# allocating with malloc, calloc, realloc, posix_memalign and
# aligned_alloc under one lock, half their blocks freed by the next
# thread, each call accounted by the fixture itself.  Read back with the
# trace reader (t/trace-dump):
# - the trace is complete (END, its CRC), nothing lost;
# - the events of the fixture's own sites are, per op, exactly the
#   fixture's counts, and their peak of live requested bytes (in sequence
#   order) is the fixture's peak;
# - every free and reallocation names a live block the trace made before
#   it (or is flagged as predating the recording), no sequence number
#   repeats, each thread's events are in sequence order, every site has
#   its SITE chunk, the threads are named (4 workers and main);
# - the line record prints says the events, threads and bytes.
# Tags: a worker's calls under its tag carry it, TAG chunks name them.
# C++: libstdc++'s operators new show as new (t/target/cxx-new's 208, 14
# of them aligned) at their callers' sites, its deletes as delete[] and
# sized deletes, with sizes.
# Backpressure: with a tiny per-thread buffer (HEAPTOOL_RECORD_BUFFER=8,
# a knob for tests) the threads wait for the drain (END's waits > 0),
# and still every event is there: the same exact counts and peak.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/htrec.sh"

rec_setup rec-threads
T=120

plan 29

# record NAME ROUNDS: heaptool record -o NAME.trace -- rec-threads ROUNDS,
# then trace-dump of it (NAME.dump) for the fixture's own sites.
record() {
	timeout $T "$HEAPTOOL" record -o "$HT_TMP/$1.trace" -- "$FX" "$2" \
	    >"$HT_TMP/$1.out" 2>"$HT_TMP/$1.err"
	_s=$?
	"$DUMP" "$HT_TMP/$1.trace" "$(readlink -f "$FX")" \
	    >"$HT_TMP/$1.dump" 2>>"$HT_TMP/$1.err" || _s=1
	return $_s
}

record plain 3000
ok $? "record -o T -- rec-threads 3000" || diag "$(cat "$HT_TMP/plain.err")"
d=$HT_TMP/plain.dump
is "1 0 0" "$(get $d complete) $(get $d lost) $(get $d lost_why)" \
    "the trace is complete, nothing lost"
exact plain
ok $? "per op and at the peak, the trace holds exactly the fixture's calls"
[ "$(get $d 'op free')" -gt 1000 ] && [ "$(get $d 'op realloc-inplace')" \
    -gt 0 ] 2>/dev/null
ok $? "and they are many: $(get $d 'op free') frees, \
$(get $d 'op realloc-inplace') reallocs in place"
is "0 0 0 0" "$(get $d bad_refs) $(get $d dup_seqs) $(get $d unordered) \
$(get $d unnamed_sites)" \
    "every ref names a live block made before it; no seq twice; each \
thread in order; every site named"
[ "$(get $d threads)" -ge 5 ] 2>/dev/null
ok $? "the threads are there: $(get $d threads) (4 workers and main)"
is "$(get $d events) $(get $d threads)" \
    "$(get $d end_events) $(get $d end_threads)" \
    "END counts the events and threads the trace holds"
[ "$(get $d events)" -gt "$(get $d 'op free')" ] 2>/dev/null
ok $? "the trace holds the process's other events too (libc's)"
[ "$(get $d funcs)" -gt 10 ] && [ "$(get $d modules)" -gt 2 ] 2>/dev/null
ok $? "FUNC and MODULE chunks name the functions and modules"
size=$(wc -c <"$HT_TMP/plain.trace")
grep -Eq "^heaptool: $HT_TMP/plain.trace: $(get $d events) events, \
$(get $d threads) threads, $size bytes, 0 lost, [0-9]+ waits\$" \
    "$HT_TMP/plain.err"
ok $? "record's line says events, threads, bytes, losses, waits" ||
    diag "$(cat "$HT_TMP/plain.err")"
is "$(stat -c %a "$HT_TMP/plain.trace")" 600 "the trace has mode 0600"

# The same at -O0... not needed: one build.  Backpressure.
HEAPTOOL_RECORD_BUFFER=8
export HEAPTOOL_RECORD_BUFFER
record tiny 3000
ok $? "record with HEAPTOOL_RECORD_BUFFER=8" ||
    diag "$(cat "$HT_TMP/tiny.err")"
unset HEAPTOOL_RECORD_BUFFER
d=$HT_TMP/tiny.dump
[ "$(get $d waits)" -gt 0 ] 2>/dev/null
ok $? "the threads waited for the drain ($(get $d waits) waits in END)"
is "1 0" "$(get $d complete) $(get $d lost)" "and the trace is complete, \
nothing lost"
exact tiny
ok $? "the trace holds exactly the fixture's calls, as without waits"
is "0 0 0" "$(get $d bad_refs) $(get $d dup_seqs) $(get $d unordered)" \
    "refs, seqs and order hold under backpressure"
grep -Eq " [1-9][0-9]* waits\$" "$HT_TMP/tiny.err"
ok $? "record's line says the waits"

# C++ (t/target/cxx-new, whose header lists its allocations): libstdc++'s
# operator new calls malloc or aligned_alloc, and the recorder tells it by
# its caller: 208 news (50 + 10 new[] + 100 + 20 new[] + 4 aligned + 10
# aligned + 3 nothrow + 11 of a vector), 14 of them aligned.
CXX=$TARGETS/cxx-new-O2
timeout $T "$HEAPTOOL" record -o "$HT_TMP/cxx.trace" -- "$CXX" \
    >/dev/null 2>"$HT_TMP/cxx.err"
ok $? "record -- cxx-new" || diag "$(cat "$HT_TMP/cxx.err")"
"$DUMP" "$HT_TMP/cxx.trace" >"$HT_TMP/cxx.dump" 2>&1
is "208 14 0" "$(get "$HT_TMP/cxx.dump" 'op new') \
$(get "$HT_TMP/cxx.dump" aligned_new) $(get "$HT_TMP/cxx.dump" bad_refs)" \
    "libstdc++'s news are new events, the aligned ones with their alignment"
# Its deletes, which reach free by a tail call, are told by their call
# site (agent/callsite.h): no free at all, 10 delete[] (delete_some), and
# 120 sized deletes (100 new_churn, 10 aligned_churn, 10 of the vector's
# growth) of exactly their blocks' sizes: 100 x 40 + 10 x 192 + 4092.
is "0 10 120" "$(get "$HT_TMP/cxx.dump" 'op free') \
$(get "$HT_TMP/cxx.dump" 'op delete\[\]') \
$(get "$HT_TMP/cxx.dump" 'op delete-sized')" \
    "libstdc++'s deletes are delete events, by form"
# The site of a new is the operator's caller, as a sample's is: every
# one of the 208 is at a site in cxx-new itself, none in libstdc++.
"$DUMP" "$HT_TMP/cxx.trace" "$(readlink -f "$CXX")" >"$HT_TMP/cxx-own.dump" \
    2>&1
is 208 "$(get "$HT_TMP/cxx-own.dump" 'op new')" \
    "every new's site is the operator's caller, in the program"
"$HEAPTOOL" trace-stats "$HT_TMP/cxx.trace" >"$HT_TMP/cxx.stats" 2>&1
grep -Eq '^  delete-sized +120 +10012 ' "$HT_TMP/cxx.stats"
ok $? "the sized deletes carry their sizes (10012 bytes in all)" ||
    diag "$(sed -n '/By op/,/^$/p' "$HT_TMP/cxx.stats")"

# Tags: each worker under a tag of its own (heaptool_tag_enter); every
# call the workers made carries its tag, and the four are named.
timeout $T "$HEAPTOOL" record -o "$HT_TMP/tags.trace" -- "$FX" 1000 tags \
    >"$HT_TMP/tags.out" 2>"$HT_TMP/tags.err"
ok $? "record -- rec-threads 1000 tags" || diag "$(cat "$HT_TMP/tags.err")"
"$DUMP" "$HT_TMP/tags.trace" "$(readlink -f "$FX")" >"$HT_TMP/tags.dump" \
    2>&1
is "$(get "$HT_TMP/tags.out" tagged) 4" "$(get "$HT_TMP/tags.dump" tagged) \
$(get "$HT_TMP/tags.dump" tags)" \
    "the workers' calls carry their tags; TAG chunks name the 4"

# The fixture's output is its own; the exit status is the command's.
timeout $T "$HEAPTOOL" record -o "$HT_TMP/false.trace" -- sh -c 'exit 3' \
    >/dev/null 2>"$HT_TMP/false.err"
is 3 $? "record -- CMD exits with CMD's status"
timeout $T "$HEAPTOOL" record -o "$HT_TMP/none.trace" -- \
    "$HT_TMP/no-such-command" >/dev/null 2>"$HT_TMP/none.err"
is 127 $? "a command that does not exist: 127"
grep -q "no-such-command: No such file or directory; check the command's \
name and PATH" "$HT_TMP/none.err"
ok $? "and says so" || diag "$(cat "$HT_TMP/none.err")"

# A process that forks: the child is not recorded into the parent's file
# (its own copy of the recording is dropped at the fork).  The shell must
# not exec its last command (a program that execs is recorded up to the
# exec, heaptool(1)) and must leave through exit(3): bash, ended by its
# builtin exit (dash's leaves by _exit, without the agent's destructor).
command -v bash >/dev/null 2>&1 || bail "bash not found"
timeout $T "$HEAPTOOL" record -o "$HT_TMP/fork.trace" -- bash -c \
    "$FX 200 >/dev/null; $FX 200 >/dev/null; exit 0" >/dev/null \
    2>"$HT_TMP/fork.err"
ok $? "record -- sh running the fixture twice"
"$DUMP" "$HT_TMP/fork.trace" >"$HT_TMP/fork.dump" 2>&1
is "1 0 0 1" "$(get "$HT_TMP/fork.dump" complete) \
$(get "$HT_TMP/fork.dump" bad_refs) $(get "$HT_TMP/fork.dump" dup_seqs) \
$(get "$HT_TMP/fork.dump" threads)" \
    "the shell's trace is complete and whole, its children's not in it"

done_testing
