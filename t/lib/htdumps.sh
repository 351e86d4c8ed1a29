# Helpers of the dump tests (t/t0041-dumps.sh, t/t0043-dump-safety.sh) on
# t/target/dump-target, which allocates exactly what it is told on its
# stdin; the agent is preloaded in attach mode (no ptrace needed).  Source
# it after t/tap/libtap.sh, then call dump_test_setup.

# dump_test_setup: skip or bail without what the tests need; set AGENT, FX
# and T (seconds: anything that takes longer is hung), clear the agent's
# environment, turn core dumps off (the tests make processes fail), and
# make new directories private whatever the caller's umask (a dump
# directory its group may write in is refused).
dump_test_setup() {
	umask 022
	command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
	[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
	AGENT=$HT_BUILDDIR/libheaptool-agent.so
	[ -f "$AGENT" ] || bail "$AGENT not built"
	FX=$TARGETS/dump-target
	[ -x "$FX" ] || bail "fixtures not built (make check)"
	unset HEAPTOOL_SEED LD_PRELOAD HEAPTOOL_PID HEAPTOOL_DUMP_PREFIX
	# shellcheck disable=SC3045
	ulimit -c 0 2>/dev/null
	T=60
}

# ht NAME ARGS: heaptool with a timeout; out/err in $HT_TMP/NAME.*, $st.
ht() {
	_n=$1
	shift
	timeout $T "$HEAPTOOL" "$@" >"$HT_TMP/$_n.out" 2>"$HT_TMP/$_n.err"
	st=$?
	[ $st -eq 0 ] || diag "heaptool $* (status $st):" \
	    "$(head -c 2000 "$HT_TMP/$_n.err")"
}

# wait_line FILE LINE: until FILE has the line LINE (up to $T s).
wait_line() {
	_i=0
	while ! grep -qxF "$2" "$1" 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -gt $((T * 20)) ] && return 1
		sleep 0.05
	done
	return 0
}

# count GLOB: the files that match (finished dumps only).
count() {
	_c=0
	for _f in $1; do
		[ -f "$_f" ] && _c=$((_c + 1))
	done
	echo $_c
}

# wait_files GLOB N: until at least N files match (up to $T s).
wait_files() {
	_i=0
	while [ "$(count "$1")" -lt "$2" ]; do
		_i=$((_i + 1))
		[ $_i -gt $((T * 20)) ] && return 1
		sleep 0.05
	done
	return 0
}

# Start dump-target with the agent preloaded (attach mode): $pid, its
# commands through fd 3, its answers in $HT_TMP/$1.out.
fx_start() {
	_name=$1
	rm -f "$HT_TMP/$_name.in"
	mkfifo "$HT_TMP/$_name.in"
	# No timeout(1) in between: $! must be the fixture.  It reads its
	# fifo, so it ends when this test does.
	LD_PRELOAD=$AGENT "$FX" <"$HT_TMP/$_name.in" \
	    >"$HT_TMP/$_name.out" 2>"$HT_TMP/$_name.err" &
	fxpid=$!
	exec 3>"$HT_TMP/$_name.in"
	cur=$_name
	wait_line "$HT_TMP/$_name.out" "ready $fxpid" ||
	    bail "dump-target did not start"
	pid=$fxpid
	# Its agent's thread listens shortly after the start.
	_i=0
	until "$HEAPTOOL" status -p "$pid" >/dev/null 2>&1; do
		_i=$((_i + 1))
		[ $_i -gt $((T * 20)) ] && bail "no agent in dump-target"
		sleep 0.05
	done
}

# send CMD: one command, and wait for its "done CMD".
send() {
	echo "$1" >&3
	wait_line "$HT_TMP/$cur.out" "done $1" ||
	    bail "dump-target: no answer to $1"
}

fx_quit() {
	echo quit >&3
	exec 3>&-
	wait $fxpid
	fxst=$?
}

# json_get FILE EXPR
json_get() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null
}

# file_ok DESC FILE: mode 0600, heaptool report reads it.
file_ok() {
	_m=$(stat -c %a "$2" 2>/dev/null)
	is 600 "$_m" "$1: mode 0600"
	ht rep report --json "$2"
	ok $st "$1: heaptool report reads it"
}

