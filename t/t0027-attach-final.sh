#!/bin/sh
# The final profile of an attached process (agent/final.h): t/target/
# final-target, attached and started at rate 1, keeps 5 blocks of 1000
# bytes and then ends as the test tells it: exit(7), a SIGSEGV fault,
# abort(), a SIGFPE, a SIGSEGV sent by kill, and around handlers of its own
# (one that recovers, installed before the attach or after the start; one
# that chains to the handler it replaced, then dies of the signal).
#
# Each end is first run without heaptool: with heaptool it must end the
# same way (the same exit status, or the same signal and the same core
# dump flag; core dumps are enabled where the kernel writes them to a
# file in the process's directory, not to a crash collector).  Then
# heaptool report -p PID, the process gone, says how it ended and reads
# its final profile: the 5 blocks, exactly, at keep_blocks.
#
# With start --follow-forks (t/target/prefork), a worker forked after the
# start writes a final profile of its own, of its own session.
#
# No final profile: after _exit (no exit handlers run), after start
# --no-final-dump, after detach.  The directory: the target's
# $XDG_STATE_HOME/heaptool; with no XDG_STATE_HOME and HOME=/, the agent
# falls back to /var/tmp/heaptool-UID, which heaptool finds through what
# heaptool start remembered.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/ptrace.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$HT_BUILDDIR/libheaptool-agent.so" ] ||
    bail "$HT_BUILDDIR/libheaptool-agent.so not built"
for f in final-target prefork; do
	[ -x "$TARGETS/$f" ] ||
	    bail "$TARGETS/$f not built (make check builds it)"
done
[ "$(uname -m)" = x86_64 ] || skip_all "attach supports x86-64 only"

require_ptrace

unset HEAPTOOL_SEED LD_PRELOAD HEAPTOOL_AGENT
XDG_STATE_HOME=$HT_TMP/state
export XDG_STATE_HOME
STATE=$XDG_STATE_HOME/heaptool
T=60
END="python3 $HT_SRCDIR/t/lib/htend.py --timeout $T"
FIX=$TARGETS/final-target
ATTACH="timeout $T $HEAPTOOL attach {pid} >/dev/null && timeout $T $HEAPTOOL start --rate 1 >/dev/null"

# Core dumps: only where the kernel writes a file into the process's own
# directory (a core_pattern without '|' or '/'), which the test removes.
core=
pattern=$(cat /proc/sys/kernel/core_pattern 2>/dev/null)
case $pattern in
"" | "|"* | /*) diag "core_pattern '$pattern': the core dump flag is" \
    "compared with core dumps off" ;;
*) core=--core ;;
esac
mkdir "$HT_TMP/cwd" || bail "mkdir"

# ending NAME ATTACH_CMD COMMAND... : run the fixture, keep 5 blocks, then
# the commands; its ending in $HT_TMP/NAME.end ("exited N" or "signaled N
# core C"), its pid in $pid, its output in $HT_TMP/NAME.out.
ending() {
	_n=$1
	_pre=$2
	shift 2
	set -- "$@"
	_args=
	for _c in "$@"; do
		_args="$_args --send '$_c'"
	done
	# shellcheck disable=SC2086
	eval "$END $core --cwd '$HT_TMP/cwd' \
	    ${_pre:+--pre \"\$_pre\"} --send 'keep 5' --expect 'kept 5' \
	    $_args -- '$FIX' $fixargs" >"$HT_TMP/$_n.run" \
	    2>"$HT_TMP/$_n.err"
	_st=$?
	rm -f "$HT_TMP"/cwd/core*
	pid=$(sed -n 's/^pid //p' "$HT_TMP/$_n.run")
	grep -E '^(exited|signaled) ' "$HT_TMP/$_n.run" >"$HT_TMP/$_n.end"
	sed -n 's/^out: //p' "$HT_TMP/$_n.run" >"$HT_TMP/$_n.out"
	[ $_st -eq 0 ] || diag "$_n: $(cat "$HT_TMP/$_n.run" "$HT_TMP/$_n.err")"
	return $_st
}

# same NAME: the attached run ended as the plain one.
same() {
	cmp -s "$HT_TMP/$1-plain.end" "$HT_TMP/$1.end" &&
	    cmp -s "$HT_TMP/$1-plain.out" "$HT_TMP/$1.out"
	ok $? "$1: ends as without heaptool ($(cat "$HT_TMP/$1-plain.end"))" ||
	    diag "without: $(cat "$HT_TMP/$1-plain.end" "$HT_TMP/$1-plain.out")" \
	    "with: $(cat "$HT_TMP/$1.end" "$HT_TMP/$1.out")"
}

# final NAME HOW: heaptool report -p $pid reads the final profile, says
# HOW the process ended ("exited", "was killed by SIGSEGV"), and the
# profile holds the 5 blocks of keep_blocks, exactly.
final() {
	timeout $T "$HEAPTOOL" report -p "$pid" --json --detail \
	    >"$HT_TMP/$1.json" 2>"$HT_TMP/$1.rerr"
	_st=$?
	ok $_st "$1: report -p PID of the gone process" ||
	    diag "$(cat "$HT_TMP/$1.rerr")"
	grep -q "^heaptool: $pid $2 at .*; reading its final profile $STATE/final\.$pid\.[0-9]*\.heap\$" \
	    "$HT_TMP/$1.rerr"
	ok $? "$1: it says: $pid $2, reading its final profile" ||
	    diag "$(cat "$HT_TMP/$1.rerr")"
	python3 - "$HT_TMP/$1.json" "$pid" "$3" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
t, s = j["totals"], j["session"]
sig = None if sys.argv[3] == "-" else int(sys.argv[3])
sites = [x for x in j["sites"]
         if any(f["function"] == "keep_blocks" for f in x["frames"])]
bad = []
if j["pid"] != int(sys.argv[2]):
    bad.append("pid %s" % j["pid"])
if not s["final"] or s["signal"] != sig or s["at_exit"] != (sig is None):
    bad.append("session %s" % s)
if t["inuse_objects"] != 5 or t["inuse_bytes"] != 5000:
    bad.append("totals %s" % t)
if len(sites) != 1 or sites[0]["inuse_objects"] != 5:
    bad.append("sites %s" % j["sites"])
if bad:
    print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF
	ok $? "$1: the final profile holds the 5 blocks of keep_blocks"
}

fixargs=
plan 46

# Exit and the fatal signals, each compared with a plain run.
for e in "exit7:exit 7:exited:-" "segv:segv:was killed by SIGSEGV:11" \
    "abort:abort:was killed by SIGABRT:6" "fpe:fpe:was killed by SIGFPE:8" \
    "kill:kill:was killed by SIGSEGV:11"; do
	n=${e%%:*}
	r=${e#*:}
	cmd=${r%%:*}
	r=${r#*:}
	how=${r%%:*}
	sig=${r#*:}
	ending "$n-plain" "" "$cmd"
	ending "$n" "$ATTACH" "$cmd"
	same "$n"
	final "$n" "$how" "$sig"
done

# A handler of the program's that recovers, put after the start (it
# replaces the agent's) and before the attach (the agent leaves it): the
# fault is the program's business, and the exit writes the profile.
ending catch-plain "" catch segv "exit 0"
ending catch "$ATTACH" catch segv "exit 0"
same catch
final catch exited -
fixargs=-c
ending early-plain "" segv "exit 0"
ending early "$ATTACH" segv "exit 0"
same early
final early exited -
fixargs=

# A handler of the program's that chains to the one it found (the
# agent's): the agent writes the profile and returns to it, and it dies
# of the signal.
ending chain-plain "" chain segv
ending chain "$ATTACH" chain segv
same chain
final chain "was killed by SIGSEGV" 11

# _exit runs no exit handler: nothing is written, and nothing stale is
# read for the pid.
ending quick-plain "" "_exit 3"
ending quick "$ATTACH" "_exit 3"
same quick
timeout $T "$HEAPTOOL" report -p "$pid" >/dev/null 2>"$HT_TMP/quick.rerr"
[ $? -eq 1 ] && grep -q "no such process" "$HT_TMP/quick.rerr" &&
    ! ls "$STATE"/final."$pid".* 2>/dev/null | grep -q '\.heap$'
ok $? "_exit: no final profile, report -p PID says the process is gone" ||
    diag "$(cat "$HT_TMP/quick.rerr")"

# start --no-final-dump; and a detach before the end.
ending optout "timeout $T $HEAPTOOL attach {pid} >/dev/null && timeout $T $HEAPTOOL start --no-final-dump >/dev/null && timeout $T $HEAPTOOL status -p {pid} --json >$HT_TMP/optout.status" segv
python3 -c 'import json, sys
f = json.load(open(sys.argv[1]))["final_profile"]
sys.exit(0 if not f["armed"] else 1)' "$HT_TMP/optout.status"
ok $? "start --no-final-dump: status says no final profile is armed"
[ "$(cat "$HT_TMP/optout.end")" = "$(cat "$HT_TMP/segv-plain.end")" ] &&
    ! ls "$STATE"/final."$pid".* 2>/dev/null | grep -q '\.heap$'
ok $? "start --no-final-dump: the same end, no final profile"
SIGS="grep ^SigCgt: /proc/{pid}/status"
ending detached "$SIGS >$HT_TMP/sig.before && $ATTACH && $SIGS >$HT_TMP/sig.during && timeout $T $HEAPTOOL detach -p {pid} >/dev/null && $SIGS >$HT_TMP/sig.after" segv
[ "$(cat "$HT_TMP/detached.end")" = "$(cat "$HT_TMP/segv-plain.end")" ] &&
    ! ls "$STATE"/final."$pid".* 2>/dev/null | grep -q '\.heap$'
ok $? "detach before the end: the same end, no final profile"
# SigCgt: the caught signals, bit N-1 for signal N.  SIGSEGV, SIGBUS,
# SIGABRT, SIGFPE and SIGILL are 11, 7, 6, 8 and 4.  (glibc's own, for
# threads, appear with the agent's thread: not the test's business.)
python3 - "$HT_TMP/sig.before" "$HT_TMP/sig.during" "$HT_TMP/sig.after" <<'EOF'
import sys
b, d, a = (int(open(p).read().split()[1], 16) for p in sys.argv[1:])
fatal = sum(1 << (n - 1) for n in (11, 7, 6, 8, 4))
sys.exit(0 if b & fatal == 0 and d & fatal == fatal and a & fatal == 0
         else 1)
EOF
ok $? "the fatal signals are caught once started, at their default after detach" ||
    diag "$(cat "$HT_TMP/sig.before" "$HT_TMP/sig.during" "$HT_TMP/sig.after")"

# status of an armed target: the directory, in text and JSON.
ending status "$ATTACH && timeout $T $HEAPTOOL status -p {pid} >$HT_TMP/status.txt && timeout $T $HEAPTOOL status -p {pid} --json >$HT_TMP/status.json" "exit 0"
grep -q "^  final profile   at exit or on a fatal signal, to $STATE/final\.$pid\.\*\.heap\$" \
    "$HT_TMP/status.txt"
ok $? "status: where the final profile goes" ||
    diag "$(cat "$HT_TMP/status.txt")"
python3 -c 'import json, sys
f = json.load(open(sys.argv[1]))["final_profile"]
sys.exit(0 if f["armed"] and f["directory"] == sys.argv[2] else 1)' \
    "$HT_TMP/status.json" "$STATE"
ok $? "status --json: final_profile armed, its directory"

# No XDG_STATE_HOME and HOME=/ in the target: /var/tmp/heaptool-UID, found
# through the record heaptool start left in this user's state directory.
uid=$(id -u)
before=$(ls /var/tmp/heaptool-"$uid" 2>/dev/null | grep -c '^final\.')
END="env -u XDG_STATE_HOME HOME=/ $END"
ending vartmp "$(echo "$ATTACH" | sed "s|timeout|env XDG_STATE_HOME=$XDG_STATE_HOME timeout|g")" segv
END=${END#env -u XDG_STATE_HOME HOME=/ }
timeout $T "$HEAPTOOL" report -p "$pid" >/dev/null 2>"$HT_TMP/vartmp.rerr"
ok $? "no home: report -p PID finds the final profile" ||
    diag "$(cat "$HT_TMP/vartmp.rerr")"
grep -q "reading its final profile /var/tmp/heaptool-$uid/final\.$pid\.[0-9]*\.heap\$" \
    "$HT_TMP/vartmp.rerr"
ok $? "no home: it is in /var/tmp/heaptool-$uid" ||
    diag "$(cat "$HT_TMP/vartmp.rerr")"
rm -f /var/tmp/heaptool-"$uid"/final."$pid".*.heap
[ "$before" -eq 0 ] && rmdir /var/tmp/heaptool-"$uid" 2>/dev/null
ls "$STATE"/final."$pid".*.where >/dev/null 2>&1
ok $? "heaptool start remembered where it would go"

# A pre-fork server, followed: each process's own final profile.
wait_re() {
	_i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -gt $((T * 20)) ] && return 1
		sleep 0.05
	done
}
mkfifo "$HT_TMP/pf.in"
"$TARGETS/prefork" <"$HT_TMP/pf.in" >"$HT_TMP/pf.out" 2>&1 &
spid=$!
exec 9>"$HT_TMP/pf.in"
wait_re "$HT_TMP/pf.out" '^ready ' || bail "prefork did not start"
timeout $T "$HEAPTOOL" attach "$spid" >/dev/null &&
    timeout $T "$HEAPTOOL" start -p "$spid" --rate 1 --follow-forks \
	>/dev/null || bail "attach or start of prefork failed"
echo fork >&9
wait_re "$HT_TMP/pf.out" '^worker ' || bail "no worker"
w=$(awk '/^worker /{ print $2 }' "$HT_TMP/pf.out")
echo "work $w 5" >&9
wait_re "$HT_TMP/pf.out" "^worked $w 5 " || bail "the worker did not work"
echo quit >&9
exec 9>&-
wait "$spid"
ok $? "the followed server and its worker end as they would"
timeout $T "$HEAPTOOL" report -p "$w" --json >"$HT_TMP/w.json" \
    2>"$HT_TMP/w.err"
grep -q "^heaptool: $w exited at .*; reading its final profile $STATE/final\.$w\.[0-9]*\.heap\$" \
    "$HT_TMP/w.err"
ok $? "the worker's own final profile, under its pid" ||
    diag "$(cat "$HT_TMP/w.err")"
python3 - "$HT_TMP/w.json" "$w" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
t = j["totals"]
# Its own session from the fork: 16 blocks of 64 at once, then 5 of 100
# kept and 5 of 200 freed.
sys.exit(0 if j["pid"] == int(sys.argv[2]) and j["session"]["final"] and
         t["inuse_bytes"] == 16 * 64 + 5 * 100 and
         t["alloc_objects"] == 16 + 10 else 1)
EOF
ok $? "and it holds the worker's session, exactly"
