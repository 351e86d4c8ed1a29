#!/bin/sh
# heaptool record -- CMD where CMD becomes another program by an exec in
# place: the trace is the last program's, from its start, complete.
# - env, then nice and a shell's exec (two execs) in front of
#   t/target/rec-threads: the trace names rec-threads, is complete, and
#   holds exactly the fixture's own account per op and its peak;
# - a shell that takes the trace's descriptor number for a file of its own
#   (exec N>file) and then execs: the recorder writes nothing into that
#   file, the program after the exec does not take it for the trace (the
#   file keeps what the shell wrote), the fixture runs to its end, and
#   record says the trace is incomplete (exit 1);
#   and the same while the shell allocates and the recorder drains: the
#   recorder writes nothing through a descriptor that is no longer its;
# - a command that forks and execs the fixture as its child: the child
#   does not record (the trace is the command's own);
# - an executable with an allocator of its own: record warns that its
#   internal calls are not recorded.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/htrec.sh"

rec_setup rec-threads
command -v env >/dev/null 2>&1 || skip_all "env not found"
command -v nice >/dev/null 2>&1 || skip_all "nice not found"
T=120

# wrapped NAME ROUNDS WRAPPER...: heaptool record -- WRAPPER... FX ROUNDS.
wrapped() {
	_n=$1 _r=$2
	shift 2
	timeout $T "$HEAPTOOL" record -o "$HT_TMP/$_n.trace" -- "$@" "$FX" \
	    "$_r" >"$HT_TMP/$_n.out" 2>"$HT_TMP/$_n.err"
	is 0 $? "$_n: record exits 0" || diag "$(cat "$HT_TMP/$_n.err")"
	grep -q "^heaptool: $HT_TMP/$_n.trace: [0-9]* events, 5 threads" \
	    "$HT_TMP/$_n.err"
	ok $? "$_n: the trace is complete, of the fixture's 5 threads" ||
	    diag "$(cat "$HT_TMP/$_n.err")"
	"$HEAPTOOL" trace-stats "$HT_TMP/$_n.trace" >"$HT_TMP/$_n.stats" 2>&1
	grep -q "^  process [0-9]*: rec-threads\$" "$HT_TMP/$_n.stats"
	ok $? "$_n: the trace is rec-threads's" ||
	    diag "$(head -n 3 "$HT_TMP/$_n.stats")"
	"$DUMP" "$HT_TMP/$_n.trace" "$(readlink -f "$FX")" \
	    >"$HT_TMP/$_n.dump" 2>>"$HT_TMP/$_n.err"
	exact "$_n"
	ok $? "$_n: every op of the fixture exactly, and its peak"
}

wrapped env 3 env
wrapped nice-sh 2 nice -n 1 sh -c 'exec "$0" "$@"'

# The shell takes the trace's number for its own file, then execs.
OTHER=$HT_TMP/other
export OTHER FX
timeout $T "$HEAPTOOL" record -o "$HT_TMP/taken.trace" -- sh -c '
	eval "exec $HEAPTOOL_RECORD_FD>\"\$OTHER\""
	echo "the shell'"'"'s own" >&"$HEAPTOOL_RECORD_FD"
	exec "$FX" 2' >"$HT_TMP/taken.out" 2>"$HT_TMP/taken.err"
st=$?
is "the shell's own" "$(cat "$OTHER")" \
    "taken: the shell's file holds what the shell wrote, nothing else"
is 1 $st "taken: record exits 1" || diag "$(cat "$HT_TMP/taken.err")"
grep -q "^heaptool: record: $HT_TMP/taken.trace is incomplete" \
    "$HT_TMP/taken.err"
ok $? "taken: record says the trace is incomplete" ||
    diag "$(cat "$HT_TMP/taken.err")"
[ -n "$(get "$HT_TMP/taken.out" "op free")" ] &&
    [ -n "$(get "$HT_TMP/taken.out" peak)" ]
ok $? "taken: the fixture ran to its end (its whole account printed)" ||
    diag "$(cat "$HT_TMP/taken.out")"

# The same shell, allocating and waiting for the recorder's drain after it
# took the number: the recorder writes nothing into the shell's file.
timeout $T "$HEAPTOOL" record -o "$HT_TMP/taken2.trace" -- sh -c '
	eval "exec $HEAPTOOL_RECORD_FD>\"\$OTHER\""
	echo "the shell'"'"'s own" >&"$HEAPTOOL_RECORD_FD"
	i=0 x=
	while [ $i -lt 3000 ]; do i=$((i + 1)); x="$x $i"; done
	sleep 1' >"$HT_TMP/taken2.out" 2>"$HT_TMP/taken2.err"
is "the shell's own" "$(cat "$OTHER")" \
    "taken, then allocating: the recorder wrote nothing into the shell's file"

# A child forked and exec'd does not record: the trace is the shell's.
timeout $T "$HEAPTOOL" record -o "$HT_TMP/child.trace" -- sh -c \
    '"$FX" 2 >/dev/null; exec "$FX" 1' >"$HT_TMP/child.out" \
    2>"$HT_TMP/child.err"
is 0 $? "child: record exits 0" || diag "$(cat "$HT_TMP/child.err")"
"$DUMP" "$HT_TMP/child.trace" "$(readlink -f "$FX")" \
    >"$HT_TMP/child.dump" 2>>"$HT_TMP/child.err"
exact child
ok $? "child: the trace holds the exec'd fixture's events only, exactly"

# An executable with an allocator of its own (t/target/own-malloc): its
# internal calls go through no GOT slot, and record says so; a program
# without one (rec-threads, above) has no such line.
timeout $T "$HEAPTOOL" record -o "$HT_TMP/own.trace" -- "$TARGETS/own-malloc" \
    >/dev/null 2>"$HT_TMP/own.err"
grep -q "^heaptool: warning: $TARGETS/own-malloc defines allocator functions of its own, not hooked inline: its internal calls to them are not recorded (the calls of other modules are)\$" \
    "$HT_TMP/own.err"
ok $? "own-malloc: record warns that its internal calls are not recorded" ||
    diag "$(cat "$HT_TMP/own.err")"
grep -q "defines allocator functions" "$HT_TMP/env.err"
ok $((! $?)) "rec-threads: no such warning"

done_testing
