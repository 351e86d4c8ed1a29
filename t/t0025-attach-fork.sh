#!/bin/sh
# An agent that is loaded but does not serve is brought up by a later
# attach, and the children of profiled processes can be profiled:
# - a memory-starved attach (the target's RLIMIT_AS lowered with prlimit so
#   that the agent loads but its thread's stack cannot be mapped): attach
#   fails with the true cause, again while the limit holds, and once the
#   limit is restored an attach brings the agent up and a rate-1 session
#   is exact;
# - a pre-fork server (t/target/prefork) attached and detached, then a
#   worker forked after that: attach to the worker brings up the agent it
#   inherited, and a rate-1 session of its own (its own epoch, socket and
#   dump files named by its pid) counts its allocations exactly, nothing of
#   its parent's; the same for a worker forked while the parent is
#   attached with a session running, which goes on untouched;
# - start --follow-forks: every worker forked afterwards profiles itself
#   from its first allocation (exact at rate 1), with the parent's settings
#   and its own socket and dump files; the parent's status lists them and
#   theirs names the parent;
# - the fork child of a heaptool run process can be attached, and run
#   --follow-forks profiles the children it forks;
# - heaptool attach killed at random instants while it brings a worker's
#   agent up: the worker lives on, and a last attach brings it up.
# Tests that need prlimit are skipped with the reason where it is absent.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/htcheck.sh"
. "$(dirname "$0")/lib/ptrace.sh"
. "$(dirname "$0")/lib/htrun.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$HT_BUILDDIR/libheaptool-agent.so" ] ||
    bail "$HT_BUILDDIR/libheaptool-agent.so not built"
[ -x "$TARGETS/prefork" ] ||
    bail "$TARGETS/prefork not built (make check builds it)"
[ "$(uname -m)" = x86_64 ] || skip_all "attach supports x86-64 only"

require_ptrace

XDG_STATE_HOME=$HT_TMP/state
export XDG_STATE_HOME
unset HEAPTOOL_SEED LD_PRELOAD HEAPTOOL_AGENT
# shellcheck disable=SC3045
ulimit -c 0 2>/dev/null
T=60
SRC=$HT_SRCDIR/t/target/prefork.c

# ht_fails NAME PATTERN DESCRIPTION ARGS...: heaptool ARGS exits 1 with one
# line on stderr that matches the extended regular expression PATTERN.
ht_fails() {
	_n=$1
	_p=$2
	_d=$3
	shift 3
	ht "$_n" "$@"
	if [ $st -eq 1 ] && [ "$(wc -l <"$HT_TMP/$_n.err")" -eq 1 ] &&
	    grep -Eq "^heaptool: .*$_p" "$HT_TMP/$_n.err"; then
		ok 0 "$_d"
	else
		ok 1 "$_d"
		diag "heaptool $*: status $st (want 1)" \
		    "stderr: $(head -c 1000 "$HT_TMP/$_n.err")"
	fi
}

json_get() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
v = eval(sys.argv[2])
print(json.dumps(v) if isinstance(v, (bool, type(None), list)) else v)' \
	    "$1" "$2" 2>/dev/null
}

# wait_re FILE ERE: wait (up to $T s) until a line of FILE matches ERE.
wait_re() {
	_i=0
	while ! grep -Eq "$2" "$1" 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -gt $((T * 20)) ] && return 1
		sleep 0.05
	done
	return 0
}

agent_mapped() {
	grep -q 'heaptool-agent' "/proc/$1/maps" 2>/dev/null
}

# The sites whose innermost frame is function $2, in report $1.
nsites() {
	json_get "$1" "len([s for s in j['sites'] if s['frames'] and
	    s['frames'][0]['function'] == '$2'])"
}

pids=
cleanup() {
	for p in $pids; do
		kill -9 "$p" 2>/dev/null
	done
	rm -rf "$HT_TMP"
}
trap cleanup EXIT

# start_server NAME [CMD...]: a prefork (or CMD) reading the fifo
# $HT_TMP/NAME.in, written on fd 9 by the caller.  Sets $srv to its pid
# (the one it prints), output in $HT_TMP/NAME.out.
start_server() {
	_n=$1
	shift
	[ $# -gt 0 ] || set -- "$TARGETS/prefork"
	mkfifo "$HT_TMP/$_n.in"
	"$@" <"$HT_TMP/$_n.in" >"$HT_TMP/$_n.out" 2>"$HT_TMP/$_n.err" &
	pids="$pids $!"
	exec 9>"$HT_TMP/$_n.in"
	wait_re "$HT_TMP/$_n.out" '^ready ' || bail "$* did not start"
	srv=$(awk '/^ready /{ print $2 }' "$HT_TMP/$_n.out")
	pids="$pids $srv"
	out=$HT_TMP/$_n.out
}

# fork_worker: the server forks a worker; sets $w to its pid.
fork_worker() {
	_k=$(grep -c '^worker ' "$out")
	echo fork >&9
	_i=0
	while [ "$(grep -c '^worker ' "$out")" -le "$_k" ]; do
		_i=$((_i + 1))
		[ $_i -gt $((T * 20)) ] && bail "no worker forked"
		sleep 0.05
	done
	w=$(awk '/^worker /{ print $2 }' "$out" | tail -n 1)
	pids="$pids $w"
}

# work PID N: the worker keeps N blocks and churns N; wait for its line.
work() {
	echo "work $1 $2" >&9
	wait_re "$out" "^worked $1 $2 " || bail "worker $1 did not work"
}

# report_of NAME PID: heaptool report --json --detail of PID.
report_of() {
	ht_ok "$1" "report of $2" report -p "$2" --json --detail
}

# worker_sites REPORT INIT N: a worker's exact sites after one "work N"
# (INIT: the worker_init blocks counted, 0 or 16).
worker_sites() {
	want exact "$1"
	want site "$1" --src "$SRC" --func worker_keep \
	    inuse_bytes=$((100 * $3)) inuse_objects="$3" \
	    alloc_bytes=$((100 * $3)) alloc_objects="$3"
	want site "$1" --src "$SRC" --func worker_churn inuse_bytes=0 \
	    inuse_objects=0 alloc_bytes=$((200 * $3)) alloc_objects="$3"
	want field "$1" totals.alloc_objects $((2 * $3 + $2))
	want field "$1" totals.inuse_bytes $((100 * $3 + 64 * $2))
	if [ "$2" -gt 0 ]; then
		want site "$1" --src "$SRC" --func worker_init \
		    inuse_bytes=$((64 * $2)) inuse_objects="$2" \
		    alloc_bytes=$((64 * $2)) alloc_objects="$2"
	fi
}

# ---------------------------------------------------------------------------
# A memory-starved attach, then recovery.
have_prlimit=0
command -v prlimit >/dev/null 2>&1 && have_prlimit=1
if [ $have_prlimit -eq 1 ]; then
	start_server starved
	p=$srv
	# The agent's span in memory (its PT_LOAD segments): the limit is
	# raised from just above it, 32 KiB at a time, until the agent loads
	# (dlopen needs its span and a little heap) but the 256 KiB stack of
	# its thread cannot be mapped.
	span=$(python3 - "$HT_BUILDDIR/libheaptool-agent.so" <<'EOF'
import struct, sys
d = open(sys.argv[1], "rb").read()
phoff, = struct.unpack_from("<Q", d, 32)
phentsize, phnum = struct.unpack_from("<HH", d, 54)
hi = 0
for i in range(phnum):
    t, _, _, vaddr, _, _, memsz = struct.unpack_from("<IIQQQQQ", d,
                                                     phoff + i * phentsize)
    if t == 1:
        hi = max(hi, vaddr + memsz)
print((hi + 4095) // 4096 * 4)
EOF
)
	slack=$span
	found=0
	while [ "$slack" -lt $((span + 2048)) ]; do
		vm=$(sed -n 's/^VmSize:[[:space:]]*\([0-9]*\) kB/\1/p' \
		    "/proc/$p/status")
		prlimit --pid "$p" --as=$(((vm + slack) * 1024)): ||
		    bail "prlimit --pid $p failed"
		ht m0 attach "$p"
		if [ $st -eq 0 ]; then
			break
		fi
		if agent_mapped "$p"; then
			found=1
			break
		fi
		slack=$((slack + 32))
	done
	ok $((! found)) "a limit found at which the agent loads but cannot \
start (address space + $slack KiB)"
	[ $found -eq 1 ] || diag "last attach: status $st" \
	    "$(head -c 1000 "$HT_TMP/m0.err")"
	grep -Eq "^heaptool: attach $p: the agent is loaded but (its thread \
could not start|could not map its tables): Cannot allocate memory; free \
memory" "$HT_TMP/m0.err" && [ "$(wc -l <"$HT_TMP/m0.err")" -eq 1 ]
	ok $? "the starved attach fails with the true cause"
	[ $? -eq 0 ] || diag "$(cat "$HT_TMP/m0.err")"
	ht_fails m1 "the agent is loaded but (its thread could not start|could \
not map its tables): Cannot allocate memory; free memory.*attach again" \
	    "attach again while starved: the same true cause" attach "$p"
	echo "keep 1" >&9
	wait_re "$out" '^kept 1 '
	ok $? "the starved process runs on"
	prlimit --pid "$p" --as=unlimited:unlimited ||
	    bail "prlimit --pid $p failed"
	ht_ok m2 "with the limit restored, attach works" attach "$p"
	grep -q "brought up" "$HT_TMP/m2.out"
	ok $? "... by bringing up the loaded agent"
	[ $? -eq 0 ] || diag "$(cat "$HT_TMP/m2.out")"
	is 1 "$(grep heaptool-agent "/proc/$p/maps" | awk '{ print $6 }' |
	    sort -u | wc -l)" "the agent is the one loaded before, not another"
	ht_ok m3 "start --rate 1" start -p "$p" --rate 1
	echo "keep 50" >&9
	wait_re "$out" '^kept 50 '
	report_of m4 "$p"
	label="after a starved attach"
	want exact "$HT_TMP/m4.out"
	want site "$HT_TMP/m4.out" --src "$SRC" --func parent_keep \
	    inuse_bytes=15000 inuse_objects=50 alloc_bytes=15000 \
	    alloc_objects=50
	checks
	echo quit >&9
	exec 9>&-
	wait
else
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17; do
		skip "prlimit not installed (util-linux)"
	done
fi

# ---------------------------------------------------------------------------
# A pre-fork server: attach, detach, then a worker forked after that.
start_server pf
p=$srv
ht_ok a1 "attach to the server" attach "$p"
ht_ok a2 "start and stop a session in it" start -p "$p" --rate 1
echo "keep 3" >&9
wait_re "$out" '^kept 3 '
ht_ok a3 "detach from the server" detach -p "$p"
fork_worker
w1=$w
agent_mapped "$w1"
ok $? "the worker inherited the agent"
ht_ok a4 "attach to the worker" attach "$w1"
grep -q "brought up" "$HT_TMP/a4.out"
ok $? "attach brings up the inherited agent"
[ $? -eq 0 ] || diag "$(cat "$HT_TMP/a4.out")"
ht_ok a5 "status of the worker" status -p "$w1" --json
is "$w1 none true" "$(json_get "$HT_TMP/a5.out" 'j["pid"]') \
$(json_get "$HT_TMP/a5.out" 'j["session"]["state"]') \
$(json_get "$HT_TMP/a5.out" 'j["hooked"]')" \
    "the worker's own agent: its pid, no session inherited, hooked"
mkdir "$HT_TMP/dumps"
ht_ok a6 "start --rate 1 in the worker, with dumps" start -p "$w1" --rate 1 \
    --dump-prefix "$HT_TMP/dumps/w" --dump-interval 100ms
ht_ok a7 "status of the worker" status -p "$w1" --json
ep1=$(json_get "$HT_TMP/a7.out" 'j["session"]["epoch"]')
work "$w1" 20
report_of a8 "$w1"
label="worker after detach"
worker_sites "$HT_TMP/a8.out" 0 20
want field "$HT_TMP/a8.out" pid "$w1"
checks
is 0 "$(nsites "$HT_TMP/a8.out" parent_keep)" \
    "nothing of the parent's session in the worker's profile"
i=0
while [ ! -e "$HT_TMP/dumps/w.$w1.1.heap" ] && [ $i -lt $((T * 20)) ]; do
	i=$((i + 1))
	sleep 0.05
done
ok $((i >= T * 20)) "the worker's dumps are named by its pid"
ht_ok a9 "the worker's dump reads" report --json "$HT_TMP/dumps/w.$w1.1.heap"
is "$w1 $ep1" "$(json_get "$HT_TMP/a9.out" 'j["pid"]') \
$(json_get "$HT_TMP/a9.out" 'j["session"]["epoch"]')" \
    "the dump is the worker's, of its own epoch"
ht_ok a10 "attach to the server again" attach "$p"
ht_ok a11 "a new session in the server" start -p "$p" --rate 1
echo "keep 4" >&9
wait_re "$out" '^kept 4 '
report_of a12 "$p"
label="server after its worker's session"
want exact "$HT_TMP/a12.out"
want site "$HT_TMP/a12.out" --src "$SRC" --func parent_keep \
    inuse_bytes=1200 inuse_objects=4 alloc_bytes=1200 alloc_objects=4
checks
is 0 "$(nsites "$HT_TMP/a12.out" worker_keep)" \
    "nothing of the worker's in the server's profile"

# A worker forked while the server is attached, its session running.
fork_worker
w2=$w
ht_ok b1 "attach to a worker of an attached server" attach "$w2"
grep -q "brought up" "$HT_TMP/b1.out"
ok $? "attach brings up the inherited agent"
ht_ok b2 "start --rate 1 in the worker" start -p "$w2" --rate 1
ht_ok b3 "status of the worker" status -p "$w2" --json
ep2=$(json_get "$HT_TMP/b3.out" 'j["session"]["epoch"]')
ht_ok b4 "status of the server" status -p "$p" --json
eps=$(json_get "$HT_TMP/b4.out" 'j["session"]["epoch"]')
[ -n "$ep2" ] && [ -n "$eps" ] && [ "$ep2" -gt "$eps" ]
ok $? "the worker's session is a new epoch ($ep2, after the server's $eps)"
work "$w2" 10
report_of b5 "$w2"
label="worker of an attached server"
worker_sites "$HT_TMP/b5.out" 0 10
checks
is 0 "$(nsites "$HT_TMP/b5.out" parent_keep)" \
    "nothing of the server's running session in the worker's profile"
echo "keep 2" >&9
wait_re "$out" '^kept 2 '
report_of b6 "$p"
label="the server's session after the fork"
want exact "$HT_TMP/b6.out"
want site "$HT_TMP/b6.out" --src "$SRC" --func parent_keep \
    inuse_bytes=1800 inuse_objects=6 alloc_bytes=1800 alloc_objects=6
checks

# ---------------------------------------------------------------------------
# start --follow-forks: every worker forked afterwards, from its first
# allocation.
ht_ok f1 "start --follow-forks in the server" start -p "$p" --rate 1 \
    --restart --follow-forks --dump-prefix "$HT_TMP/dumps/f" \
    --dump-interval 100ms
fork_worker
w3=$w
fork_worker
w4=$w
ht_ok f2 "status of the server" status -p "$p" --json
is "true" "$(json_get "$HT_TMP/f2.out" 'j["follow_forks"]')" \
    "the server's session follows forks"
is "yes yes" "$(json_get "$HT_TMP/f2.out" '"yes" if '"$w3"' in j["children"] else "no"') \
$(json_get "$HT_TMP/f2.out" '"yes" if '"$w4"' in j["children"] else "no"')" \
    "the server's status lists both followed workers"
ht_ok f3 "text status of the server" status -p "$p"
grep -Eq "children .*running: .*$w4" "$HT_TMP/f3.out"
ok $? "... as text too"
ht_ok f4 "status of a followed worker" status -p "$w3" --json
is "$p true running 1" "$(json_get "$HT_TMP/f4.out" 'j["parent"]') \
$(json_get "$HT_TMP/f4.out" 'j["follow_forks"]') \
$(json_get "$HT_TMP/f4.out" 'j["session"]["state"]') \
$(json_get "$HT_TMP/f4.out" 'j["session"]["rate"]')" \
    "the worker follows its parent, with its rate"
ht_ok f5 "text status of a followed worker" status -p "$w3"
grep -q "follows  *its parent $p" "$HT_TMP/f5.out"
ok $? "... as text too"
work "$w3" 10
work "$w4" 5
report_of f6 "$w3"
label="followed worker 1"
worker_sites "$HT_TMP/f6.out" 16 10
checks
report_of f7 "$w4"
label="followed worker 2"
worker_sites "$HT_TMP/f7.out" 16 5
checks
i=0
while [ ! -e "$HT_TMP/dumps/f.$w4.1.heap" ] && [ $i -lt $((T * 20)) ]; do
	i=$((i + 1))
	sleep 0.05
done
ok $((i >= T * 20)) "a followed worker writes its dumps, named by its pid"
ht_ok f8 "its dump reads" report --json "$HT_TMP/dumps/f.$w4.1.heap"
is "$w4" "$(json_get "$HT_TMP/f8.out" 'j["pid"]')" "the dump is the worker's"
ht_ok f9 "attach to a followed worker reconnects" attach "$w3"
grep -q "agent already loaded" "$HT_TMP/f9.out"
ok $? "... to the agent serving in it"

# heaptool attach killed while it brings a worker's agent up.
ht_ok k0 "stop following" start -p "$p" --rate 1 --restart
fork_worker
w5=$w
dead=0
for ms in 1 3 5 8 11 14 17 20 25 30; do
	timeout -s KILL "0.0$(printf %02d "$ms")" "$HEAPTOOL" attach "$w5" \
	    >/dev/null 2>&1
	kill -0 "$w5" 2>/dev/null || dead=1
done
work "$w5" 3
ok $dead "the worker survives attaches killed at 1 to 30 ms"
ht_ok k1 "a last attach to it" attach "$w5"
ht_ok k2 "start in it" start -p "$w5" --rate 1 --restart
work "$w5" 7
report_of k3 "$w5"
label="worker after killed attaches"
worker_sites "$HT_TMP/k3.out" 0 7
checks
echo quit >&9
exec 9>&-
wait

# ---------------------------------------------------------------------------
# The fork child of a heaptool run process; run --follow-forks.
start_server run "$HEAPTOOL" run --rate 1 -o "$HT_TMP/run.heap" -- \
    "$TARGETS/prefork"
p=$srv
echo "keep 2" >&9
wait_re "$out" '^kept 2 '
fork_worker
w6=$w
ht_ok r1 "attach to the fork child of heaptool run" attach "$w6"
grep -q "brought up" "$HT_TMP/r1.out"
ok $? "attach brings up the agent heaptool run preloaded"
ht_ok r2 "start --rate 1 in it" start -p "$w6" --rate 1
work "$w6" 6
report_of r3 "$w6"
label="fork child of heaptool run"
worker_sites "$HT_TMP/r3.out" 0 6
checks
echo quit >&9
exec 9>&-
wait
ht_ok r4 "the run's profile reads" report --json --detail "$HT_TMP/run.heap"
label="heaptool run's own profile"
want field "$HT_TMP/r4.out" pid "$p"
want site "$HT_TMP/r4.out" --src "$SRC" --func parent_keep inuse_bytes=600 \
    inuse_objects=2 alloc_bytes=600 alloc_objects=2
checks
is 0 "$(nsites "$HT_TMP/r4.out" worker_keep)" \
    "the child's session wrote nothing over the run's profile"

start_server runf "$HEAPTOOL" run --rate 1 --follow-forks \
    -o "$HT_TMP/runf.heap" -- "$TARGETS/prefork"
p=$srv
fork_worker
w7=$w
ht_ok g1 "status of a child of run --follow-forks" status -p "$w7" --json
is "$p true" "$(json_get "$HT_TMP/g1.out" 'j["parent"]') \
$(json_get "$HT_TMP/g1.out" 'j["follow_forks"]')" \
    "it follows the process heaptool run started"
work "$w7" 4
report_of g2 "$w7"
label="child of run --follow-forks"
worker_sites "$HT_TMP/g2.out" 16 4
checks
echo quit >&9
exec 9>&-
wait
done_testing
