#!/bin/sh
# heaptool attach and the control commands in hard environments:
# - a process blocked in read(2) on a pipe: the read completes correctly
#   afterwards; a second attach reconnects and never loads the agent twice;
#   a library dlopen'ed after the attach is profiled; a stopped target is
#   refused without a hang; a target that exits is reported gone and
#   forgotten, and so is a reused pid (another start time);
# - a busy loop that makes no system call: attach --timeout 1s gives up
#   cleanly and the process runs on untouched;
# - a zombie, a pid that does not exist, a SIGSTOPped process: one-line
#   errors, and the process is left as it was;
# - a process in its own mount namespace whose view lacks the agent's path:
#   attach stages a copy in its /tmp; a staged name held by a file that is
#   not the agent is refused;
# - an unprivileged user can neither attach to a root process nor talk to
#   the agent of a root process;
# - a process whose main thread has exited (pthread_exit) is attached to,
#   profiled and detached from through its live thread.
# Parts that need root, unshare or setpriv are skipped with the reason.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/htcheck.sh"
. "$(dirname "$0")/lib/ptrace.sh"
. "$(dirname "$0")/lib/htrun.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$HT_BUILDDIR/libheaptool-agent.so" ] ||
    bail "$HT_BUILDDIR/libheaptool-agent.so not built"
for f in attach-pipe attach-spin attach-leaderexit libdlfix.so; do
	[ -x "$TARGETS/$f" ] ||
	    bail "$TARGETS/$f not built (make check builds it)"
done
[ "$(uname -m)" = x86_64 ] || skip_all "attach supports x86-64 only"

require_ptrace

XDG_STATE_HOME=$HT_TMP/state
export XDG_STATE_HOME
unset HEAPTOOL_SEED LD_PRELOAD HEAPTOOL_AGENT
# shellcheck disable=SC3045
ulimit -c 0 2>/dev/null
T=60

# ht NAME ARGS...: heaptool ARGS, with a timeout, as $as (e.g. setpriv
# ...) when set; stdout and stderr in $HT_TMP/NAME.out and .err.
as=
# ht_fails NAME WANT_STATUS PATTERN DESCRIPTION ARGS...: heaptool ARGS
# exits WANT_STATUS with one line "heaptool: ..." on stderr that matches
# the extended regular expression PATTERN, and nothing on stdout.
ht_fails() {
	_n=$1
	_w=$2
	_p=$3
	_d=$4
	shift 4
	ht "$_n" "$@"
	if [ $st -eq "$_w" ] && [ ! -s "$HT_TMP/$_n.out" ] &&
	    [ "$(wc -l <"$HT_TMP/$_n.err")" -eq 1 ] &&
	    grep -Eq "^heaptool: .*$_p" "$HT_TMP/$_n.err"; then
		ok 0 "$_d"
	else
		ok 1 "$_d"
		diag "heaptool $*: status $st (want $_w)" \
		    "stdout: $(head -c 500 "$HT_TMP/$_n.out")" \
		    "stderr: $(head -c 1000 "$HT_TMP/$_n.err")"
	fi
}

wait_line() {
	_i=0
	while ! grep -qx "$2" "$1" 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -gt $((T * 20)) ] && return 1
		sleep 0.05
	done
	return 0
}

json_get() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
v = eval(sys.argv[2])
print(json.dumps(v) if isinstance(v, (bool, type(None))) else v)' "$1" "$2" \
	    2>/dev/null
}

# Field NAME of /proc/PID/status, e.g. proc_field 123 State.
proc_field() {
	sed -n "s/^$2:[[:space:]]*//p" "/proc/$1/status" 2>/dev/null
}

# The distinct agent files mapped in PID, and its agent mappings.
agent_files() {
	grep 'heaptool-agent' "/proc/$1/maps" 2>/dev/null |
	    awk '{print $6}' | sort -u | wc -l
}
agent_maps() {
	grep -c 'heaptool-agent' "/proc/$1/maps" 2>/dev/null
}

# start_pipe NAME [CMD...]: start attach-pipe (or CMD) reading the fifo
# $HT_TMP/NAME.in; the caller then opens the fifo for writing on a file
# descriptor of its own, which unblocks the target's open.  Sets $pid;
# output in $HT_TMP/NAME.out.
pids=
start_pipe() {
	_n=$1
	shift
	[ $# -gt 0 ] || set -- "$TARGETS/attach-pipe"
	mkfifo "$HT_TMP/$_n.in"
	"$@" <"$HT_TMP/$_n.in" >"$HT_TMP/$_n.out" 2>&1 &
	pid=$!
	pids="$pids $pid"
}

cleanup() {
	for p in $pids; do
		kill -CONT "$p" 2>/dev/null
		kill -9 "$p" 2>/dev/null
	done
	[ -n "$staged" ] && rm -f "$staged"
	rm -rf "$HT_TMP"
}
staged=
trap cleanup EXIT

# usage errors need no process
ht_fails u1 2 "no process given" "attach without a PID: usage error" attach
ht_fails u2 2 "not a process ID" "attach abc: usage error" attach abc
ht_fails u3 2 "not a duration" "attach --timeout junk: usage error" \
    attach --timeout 5x 1
ht_fails u4 2 "must be at least 1" "start --rate 0: usage error" \
    start --rate 0 -p 1
ht_fails u5 2 "no target: no -p and no current target; run heaptool \
attach PID first" "status with no target: usage error" status
ht_fails u6 2 "no target" "report with no file and no target: usage error" \
    report
ht_fails u7 2 "no output file" "dump without -o: usage error" dump -p 1

# a target blocked in read(2) on a pipe
start_pipe pipe
exec 7>"$HT_TMP/pipe.in"
wait_line "$HT_TMP/pipe.out" ready || bail "attach-pipe did not start"
p1=$pid

ht_ok a1 "attach to a process blocked in read(2)" attach "$p1"
is 1 "$(agent_files "$p1")" "the agent is mapped"
echo hello >&7
wait_line "$HT_TMP/pipe.out" "got: hello"
ok $? "the interrupted read(2) completes with the right data"
grep -q "read error" "$HT_TMP/pipe.out"
ok $((! $?)) "the read never failed (no EINTR surfaced)"

nmaps=$(agent_maps "$p1")
ht_ok a2 "attach again" attach "$p1"
is "heaptool: attached to $p1 (agent already loaded)" \
    "$(cat "$HT_TMP/a2.out")" "a second attach reconnects"
is "1 $nmaps" "$(agent_files "$p1") $(agent_maps "$p1")" \
    "a second attach does not load the agent again"

# A library loaded after the attach is hooked: its allocations are seen.
ht_ok s1 "start --rate 1" start --rate 1
echo dlopen >&7
wait_line "$HT_TMP/pipe.out" "dlopen done"
ok $? "the target dlopens libdlfix.so after the attach"
echo "keep 5" >&7
wait_line "$HT_TMP/pipe.out" "kept 5"
ht_ok r1 "report of the target" report --json --detail
label="dlopen after attach"
want wellformed "$HT_TMP/r1.out"
want site "$HT_TMP/r1.out" --src "$HT_SRCDIR/t/target/dlfix.c" \
    --func dlfix_keep --module libdlfix.so inuse_bytes=693 \
    inuse_objects=9
want site "$HT_TMP/r1.out" --src "$HT_SRCDIR/t/target/attach-pipe.c" \
    --func keep_blocks inuse_bytes=5000 inuse_objects=5
checks

# A stopped target: a clear error, no hang, and it stays stopped.
kill -STOP "$p1"
i=0
while [ "$(proc_field "$p1" State | cut -c1)" != T ] && [ $i -lt 200 ]; do
	i=$((i + 1))
	sleep 0.05
done
ht_fails st1 1 "stopped.*kill -CONT" \
    "status of a stopped target: clear error" status
is T "$(proc_field "$p1" State | cut -c1)" "the target is still stopped"
kill -CONT "$p1"
echo again >&7
wait_line "$HT_TMP/pipe.out" "got: again"
ok $? "the target reads on after SIGCONT"

# A target that exits is reported gone.  Its session left a final
# profile (t/t0027-attach-final.sh has the rest): the other commands say
# where it is, and it stays the current target for report; once that
# profile is gone, so is the target, forgotten.
echo quit >&7
exec 7>&-
wait "$p1"
ok $? "the target exits normally"
ht_fails g1 1 "target $p1: no such process \\(it exited\\); its final \
profile is $XDG_STATE_HOME/heaptool/final\\.$p1\\.[0-9]*\\.heap: heaptool \
report -p $p1 reads it\$" "a target that exited: clear error, its final \
profile named" status
rm -f "$XDG_STATE_HOME"/heaptool/final."$p1".*.heap
ht_fails g1b 1 "target $p1: no such process \\(it exited\\); attach to a \
running process\$" "without its final profile: clear error" status
ht_fails g2 2 "no target" "... and it is forgotten" status

# A pid reused by another process (another start time) is gone as well.
mkdir -p "$XDG_STATE_HOME/heaptool"
echo "$$ 1" >"$XDG_STATE_HOME/heaptool/target"
ht_fails g3 1 "target $$: no such process \\(it exited\\)" \
    "a current target whose pid was reused: reported gone" status
[ ! -e "$XDG_STATE_HOME/heaptool/target" ]
ok $? "... and forgotten"

# a busy loop without system calls
"$TARGETS/attach-spin" >"$HT_TMP/spin.out" 2>&1 &
p2=$!
pids="$pids $p2"
wait_line "$HT_TMP/spin.out" ready || bail "attach-spin did not start"
ht_fails b1 1 "safe point" \
    "attach --timeout 1s to a busy loop: gives up, says why" \
    attach --timeout 1s "$p2"
is "0 0" "$(proc_field "$p2" TracerPid) $(agent_files "$p2")" \
    "the busy loop is not traced and has no agent"
is R "$(proc_field "$p2" State | cut -c1)" "the busy loop runs on"
kill -USR1 "$p2"
wait "$p2"
ok $? "the busy loop takes its signal and exits normally"
grep -q '^spins [1-9]' "$HT_TMP/spin.out"
ok $? "the busy loop kept spinning"

# a zombie, a pid that does not exist, a stopped process
# A child that exits under a parent that never waits (a shell would reap
# it before exec'ing anything).
python3 -c 'import os, sys, time
pid = os.fork()
if pid == 0:
    os._exit(0)
open(sys.argv[1], "w").write("%d\n" % pid)
time.sleep(60)' "$HT_TMP/zpid" &
zparent=$!
pids="$pids $zparent"
i=0
while [ $i -lt 200 ]; do
	zpid=$(cat "$HT_TMP/zpid" 2>/dev/null)
	[ -n "$zpid" ] && [ "$(proc_field "$zpid" State | cut -c1)" = Z ] &&
	    break
	i=$((i + 1))
	sleep 0.05
done
is Z "$(proc_field "$zpid" State | cut -c1)" "a zombie to attach to"
ht_fails z1 1 "zombie" "attach to a zombie: clear error" attach "$zpid"
kill "$zparent" 2>/dev/null

pid_max=$(cat /proc/sys/kernel/pid_max)
ht_fails n1 1 "attach $pid_max: no such process; check the PID" \
    "attach to a pid that does not exist: clear error" attach "$pid_max"
ht_fails n2 1 "target $pid_max: no such process" \
    "status -p of a pid that does not exist: clear error" \
    status -p "$pid_max"

start_pipe stopped
exec 8>"$HT_TMP/stopped.in"
wait_line "$HT_TMP/stopped.out" ready || bail "attach-pipe did not start"
p3=$pid
kill -STOP "$p3"
i=0
while [ "$(proc_field "$p3" State | cut -c1)" != T ] && [ $i -lt 200 ]; do
	i=$((i + 1))
	sleep 0.05
done
ht_fails t1 1 "stopped.*kill -CONT" "attach to a stopped process: clear \
error" attach "$p3"
is "T 0 0" "$(proc_field "$p3" State | cut -c1) $(proc_field "$p3" \
    TracerPid) $(agent_files "$p3")" \
    "the stopped process stays stopped, untraced, without the agent"
kill -CONT "$p3"
echo still >&8
wait_line "$HT_TMP/stopped.out" "got: still"
ok $? "after SIGCONT it reads on"

# another mount namespace, whose view lacks the agent
if [ "$(id -u)" -ne 0 ]; then
	skip "mount namespace: needs root (unshare -m, mount)"
elif ! command -v unshare >/dev/null 2>&1; then
	skip "mount namespace: unshare not found"
elif ! unshare -m --propagation private true 2>/dev/null; then
	skip "mount namespace: unshare -m is not permitted here"
else
	case $HT_TMP/ in
	"$HT_BUILDDIR"/*) inbuild=1 ;;
	*) inbuild=0 ;;
	esac
	if [ $inbuild -eq 1 ]; then
		skip "mount namespace: the test directory is inside the build \
directory that the namespace hides"
	else
		cp "$TARGETS/attach-pipe" "$HT_TMP/attach-pipe"
		start_pipe mntns unshare -m --propagation private sh -c \
		    'mount -t tmpfs heaptool-test "$1" && exec "$2"' sh \
		    "$HT_BUILDDIR" "$HT_TMP/attach-pipe"
		exec 6>"$HT_TMP/mntns.in"
		wait_line "$HT_TMP/mntns.out" ready ||
		    bail "attach-pipe in a mount namespace did not start"
		p4=$pid
		[ ! -e "/proc/$p4/root$HT_BUILDDIR/libheaptool-agent.so" ]
		ok $? "the namespace's view lacks the agent's path"
		ht_ok m1 "attach to a process in another mount namespace" \
		    attach "$p4"
		staged=$(grep -o '/tmp/heaptool-agent-0-[0-9a-f]*\.so' \
		    "/proc/$p4/maps" | head -n 1)
		[ -n "$staged" ]
		ok $? "it loaded a copy staged in its /tmp ($staged)"
		if [ -n "$staged" ]; then
			is "644 0" \
			    "$(stat -c '%a %u' "/proc/$p4/root$staged")" \
			    "the copy is mode 0644, owned by the target's user"
			cmp -s "$HT_BUILDDIR/libheaptool-agent.so" \
			    "/proc/$p4/root$staged"
			ok $? "the copy is the agent"
		fi
		ht_ok m2 "start in the namespace" start --rate 1
		echo "keep 3" >&6
		wait_line "$HT_TMP/mntns.out" "kept 3"
		ht_ok m3 "report of the process in the namespace" \
		    report --json --detail
		label="mount namespace"
		want site "$HT_TMP/m3.out" --src \
		    "$HT_SRCDIR/t/target/attach-pipe.c" --func keep_blocks \
		    inuse_bytes=3000 inuse_objects=3
		checks
		echo quit >&6
		exec 6>&-
		wait "$p4"
		ok $? "the process in the namespace exits normally"

		# A staged name that holds something else is refused.  The
		# name is the agent's content hash: keep the name, change
		# what is in it (owned by nobody, like an attacker's file).
		if [ -n "$staged" ]; then
			rm -f "$staged"
			echo "not the agent" >"$staged"
			chown 65534 "$staged" 2>/dev/null
			start_pipe mntns2 unshare -m --propagation private \
			    sh -c 'mount -t tmpfs heaptool-test "$1" &&
			    exec "$2"' sh "$HT_BUILDDIR" "$HT_TMP/attach-pipe"
			exec 6>"$HT_TMP/mntns2.in"
			wait_line "$HT_TMP/mntns2.out" ready ||
			    bail "attach-pipe in a namespace did not start"
			p5=$pid
			ht_fails m4 1 \
			    "is not this heaptool's agent.*remove it" \
			    "a staged name held by another file: refused" \
			    attach "$p5"
			is "0 not the agent" "$(agent_files "$p5") \
$(cat "$staged")" "the process has no agent and the file is untouched"
			echo quit >&6
			exec 6>&-
			wait "$p5"
		fi
	fi
fi

# other namespaces and a deleted program file (root only)
if [ "$(id -u)" -ne 0 ]; then
	skip "network and pid namespaces, deleted program: need root"
elif ! command -v unshare >/dev/null 2>&1 ||
    ! unshare -n -p -f true 2>/dev/null; then
	skip "network and pid namespaces: unshare -n -p -f not permitted here"
else
	# A network namespace of its own: the agent's abstract socket lives
	# there, and heaptool must enter it to connect.
	start_pipe netns unshare -n "$TARGETS/attach-pipe"
	exec 6>"$HT_TMP/netns.in"
	wait_line "$HT_TMP/netns.out" ready ||
	    bail "attach-pipe in a network namespace did not start"
	p6=$pid
	[ "$(stat -L -c %i "/proc/$p6/ns/net")" != \
	    "$(stat -L -c %i /proc/self/ns/net)" ]
	ok $? "a process in its own network namespace"
	ht_ok nn1 "attach to it" attach "$p6"
	ht_ok nn2 "status of it (heaptool enters its network namespace)" \
	    status --json
	is true "$(json_get "$HT_TMP/nn2.out" 'j["hooked"]')" \
	    "... and its agent answers"
	ht_ok nn3 "detach from it" detach
	echo quit >&6
	exec 6>&-
	wait "$p6"
	ok $? "it exits normally"

	# A pid namespace of its own: the agent names its socket after the
	# pid it sees (1 here), not the one we see.
	start_pipe pidns unshare -p -f "$TARGETS/attach-pipe"
	exec 6>"$HT_TMP/pidns.in"
	wait_line "$HT_TMP/pidns.out" ready ||
	    bail "attach-pipe in a pid namespace did not start"
	p7=$(pgrep -P "$pid" 2>/dev/null | head -n 1)
	pids="$pids $p7"
	is "1" "$(proc_field "$p7" NSpid | awk '{print $NF}')" \
	    "a process that is pid 1 in its own pid namespace ($p7 here)"
	ht_ok pn1 "attach to it" attach "$p7"
	ht_ok pn2 "start in it" start --rate 1
	echo "keep 4" >&6
	wait_line "$HT_TMP/pidns.out" "kept 4"
	ht_ok pn3 "report of it" report --json --detail
	label="pid namespace"
	want site "$HT_TMP/pn3.out" --src "$HT_SRCDIR/t/target/attach-pipe.c" \
	    --func keep_blocks inuse_bytes=4000 inuse_objects=4
	checks
	ht_ok pn4 "detach from it" detach
	echo quit >&6
	exec 6>&-
	wait "$pid"
	ok $? "it exits normally"

	# The program's file deleted while it runs (after the attach): the
	# live report reads it from the process's own mapping
	# (/proc/PID/map_files).
	cp "$TARGETS/attach-pipe" "$HT_TMP/deleted-pipe"
	start_pipe deleted "$HT_TMP/deleted-pipe"
	exec 6>"$HT_TMP/deleted.in"
	wait_line "$HT_TMP/deleted.out" ready ||
	    bail "a copy of attach-pipe did not start"
	p8=$pid
	ht_ok d1 "attach to a copy of attach-pipe" attach "$p8"
	rm -f "$HT_TMP/deleted-pipe"
	grep -q 'deleted-pipe (deleted)' "/proc/$p8/maps"
	ok $? "its file is deleted"
	ht_ok d2 "start in it" start --rate 1
	echo "keep 2" >&6
	wait_line "$HT_TMP/deleted.out" "kept 2"
	ht_ok d3 "report of it" report --json --detail
	label="deleted program"
	want site "$HT_TMP/d3.out" --src "$HT_SRCDIR/t/target/attach-pipe.c" \
	    --func keep_blocks inuse_bytes=2000 inuse_objects=2
	checks
	ht_ok d4 "detach from it" detach
	echo quit >&6
	exec 6>&-
	wait "$p8"
	ok $? "it exits normally"
fi

# an unprivileged user and a root process
nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
if [ "$(id -u)" -ne 0 ]; then
	skip "unprivileged user: needs root to run as nobody"
elif ! command -v setpriv >/dev/null 2>&1; then
	skip "unprivileged user: setpriv not found"
elif ! $nobody test -x "$HEAPTOOL"; then
	skip "unprivileged user: nobody cannot run $HEAPTOOL"
else
	as=$nobody
	ht_fails p1 1 "not permitted" \
	    "nobody cannot attach to a root process" attach "$p3"
	as=
	is "0 0" "$(proc_field "$p3" TracerPid) $(agent_files "$p3")" \
	    "the root process is untraced and has no agent"
	echo unaffected >&8
	wait_line "$HT_TMP/stopped.out" "got: unaffected"
	ok $? "the root process reads on"

	ht_ok p2 "root attaches to it" attach "$p3"
	as=$nobody
	ht_fails p3 1 "refused" \
	    "nobody cannot talk to the root process's agent" \
	    status -p "$p3"
	ht_fails p4 1 "refused" "nobody cannot detach it" detach -p "$p3"
	as=
	ht_ok p5 "root still can" status -p "$p3" --json
	is true "$(json_get "$HT_TMP/p5.out" 'j["hooked"]')" \
	    "the hooks are still installed"
fi
echo quit >&8
exec 8>&-
wait "$p3"
ok $? "the process of the stopped and unprivileged parts exits normally"

# A process whose main thread ended with pthread_exit: its leader is a
# zombie thread, whose /proc/PID/root, maps, mem, fd, net and ns are gone.
# heaptool reads them through the live thread instead: attach, start,
# report (a site of the live thread, in the main program, symbolized),
# status and detach work, and the process reads on as before.
start_pipe leader "$TARGETS/attach-leaderexit"
pl=$pid
exec 8>"$HT_TMP/leader.in"
wait_line "$HT_TMP/leader.out" ready
ok $? "a process whose main thread has exited (its leader a zombie)"
is Z "$(proc_field "$pl" State | cut -c1)" "... its leader is a zombie"
[ ! -e "/proc/$pl/root/" ] && [ ! -s "/proc/$pl/maps" ]
ok $? "... and its /proc/$pl/root and maps are gone"
ht_ok l1 "attach to it" attach --timeout 10 "$pl"
is 1 "$(agent_files "$(ls "/proc/$pl/task" | grep -vx "$pl" | head -n 1)")" \
    "the agent is mapped (in the live thread's maps)"
ht_ok l2 "start --rate 1 in it" start --rate 1
echo "keep 4" >&8
wait_line "$HT_TMP/leader.out" "kept 4"
ht_ok l3 "report of it" report --json --detail
label="main thread exited"
want exact "$HT_TMP/l3.out"
want site "$HT_TMP/l3.out" --src "$HT_SRCDIR/t/target/attach-leaderexit.c" \
    --func keep_blocks --module attach-leaderexit --chain keep_blocks,reader \
    inuse_bytes=4000 inuse_objects=4
checks
ht_ok l4 "status of it" status --json
is true "$(json_get "$HT_TMP/l4.out" 'j["hooked"]')" "... its hooks are in"
ht_ok l5 "detach from it" detach
is 0 "$(proc_field "$pl" TracerPid)" "the process is untraced"
echo hello >&8
wait_line "$HT_TMP/leader.out" "got: hello"
ok $? "the process reads on"
echo quit >&8
exec 8>&-
wait "$pl"
ok $? "and exits normally"
grep -q '^sum [0-9]' "$HT_TMP/leader.out"
ok $? "... with its checksum"

done_testing
