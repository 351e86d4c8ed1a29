#!/bin/sh
# A pid-reuse squatter cannot pose as the agent (issue 9, item 2).  The
# squatter (t/lib/squat.py) binds "\0heaptool.P" for its own pid P, hands
# the socket to a child and exits; the pid is then given to a new process,
# the target, through /proc/sys/kernel/ns_last_pid (root only).  SO_PEERCRED
# of the squatter's socket still says P.  Every command that talks to the
# target must refuse, naming the held socket, before it sends a byte: the
# squatter's log holds only "0 bytes" lines.  attach loads the real agent,
# which cannot bind the name, and must refuse the squatter too.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/ptrace.sh"

[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ "$(uname -m)" = x86_64 ] || skip_all "attach supports x86-64 only"
[ -w /proc/sys/kernel/ns_last_pid ] ||
    skip_all "/proc/sys/kernel/ns_last_pid is not writable (needs root)"
require_ptrace
unset HEAPTOOL_SEED LD_PRELOAD HEAPTOOL_AGENT

log=$HT_TMP/squat.log
squatter=
target=
cleanup() {
	[ -n "$target" ] && kill -9 "$target" 2>/dev/null
	# The squatter's child runs in a session of its own.
	pkill -9 -f "squat.py $log" 2>/dev/null
	rm -rf "$HT_TMP"
}
trap cleanup EXIT

# Start the squatter, then a target with its pid; a few tries, since
# another process may take the pid first.
try=0
while [ $try -lt 20 ]; do
	try=$((try + 1))
	squatter=$(python3 "$HT_SRCDIR/t/lib/squat.py" "$log") || continue
	echo $((squatter - 1)) >/proc/sys/kernel/ns_last_pid
	sleep 1000 &
	target=$!
	[ "$target" = "$squatter" ] && break
	kill -9 "$target"
	wait "$target" 2>/dev/null
	pkill -9 -f "squat.py $log"
	target=
done
[ -n "$target" ] || bail "could not give the squatter's pid to a target"
diag "squatter and target: pid $target (try $try)"
ok 0 "the target has the squatter's pid, whose socket name is held"

# refused NAME COMMAND...: exit 1, one line saying the name is held.
refused() {
	_n=$1
	shift
	timeout 30 "$@" >"$HT_TMP/out" 2>"$HT_TMP/err"
	_st=$?
	[ $_st -eq 1 ] && [ "$(wc -l <"$HT_TMP/err")" -eq 1 ] &&
	    grep -q "socket name heaptool.$target is held by" "$HT_TMP/err"
	_r=$?
	ok $_r "$_n: refused, the held name named"
	[ $_r -eq 0 ] || diag "status $_st" "$(head -c 500 "$HT_TMP/err")" \
	    "$(head -c 300 "$HT_TMP/out")"
}

refused status "$HEAPTOOL" status -p "$target"
refused "status --json" "$HEAPTOOL" status --json -p "$target"
refused report "$HEAPTOOL" report --detail -p "$target"
refused dump "$HEAPTOOL" dump -p "$target" -o "$HT_TMP/d.heap"
refused start "$HEAPTOOL" start -p "$target" --dump-prefix "$HT_TMP/p"
refused stop "$HEAPTOOL" stop -p "$target"
refused detach "$HEAPTOOL" detach -p "$target"
refused attach "$HEAPTOOL" attach "$target"
ok $([ ! -e "$HT_TMP/d.heap" ]; echo $?) "no dump file was written"
ok $(! grep -qv '^0 bytes$' "$log" 2>/dev/null; echo $?) \
    "the squatter received no byte from any command"
diag "squatter's log: $(sort "$log" 2>/dev/null | uniq -c | tr '\n' ' ')"
kill -0 "$target" 2>/dev/null
ok $? "the target still runs"

done_testing
