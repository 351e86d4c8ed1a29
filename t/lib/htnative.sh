# The native-backend tests (t0060-t0063): t/target/jem-target run with an
# allocator preloaded, fed commands through a fifo.  Source after
# t/tap/libtap.sh, t/lib/ptrace.sh and t/lib/htrun.sh.

T=60
XDG_STATE_HOME=$HT_TMP/state
export XDG_STATE_HOME
unset HEAPTOOL_SEED LD_PRELOAD HEAPTOOL_AGENT MALLOC_CONF

# native_lib NAME: the path of Debian's shared library NAME (e.g.
# libjemalloc.so.2), or nothing.
native_lib() {
	for _d in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib; do
		if [ -e "$_d/$1" ]; then
			echo "$_d/$1"
			return
		fi
	done
	ldconfig -p 2>/dev/null | awk -v n="$1" '$1 == n { print $NF; exit }'
}

# start_fx NAME PRELOAD [VAR=VALUE...]: start jem-target with PRELOAD
# preloaded (and the variables set; FX_PROG names another fixture of
# the same protocol), reading the fifo $HT_TMP/NAME.in on
# descriptor 7 of ours; waits for "ready".  Sets $pid.
pids=
start_fx() {
	_n=$1
	_l=$2
	shift 2
	mkfifo "$HT_TMP/$_n.in"
	env "$@" LD_PRELOAD="$_l" "$TARGETS/${FX_PROG:-jem-target}" \
	    <"$HT_TMP/$_n.in" >"$HT_TMP/$_n.out" 2>&1 &
	pid=$!
	pids="$pids $pid"
	exec 7>"$HT_TMP/$_n.in"
	fx_out=$HT_TMP/$_n.out
	wait_for ready || bail "jem-target did not start: $(cat "$fx_out")"
}

# wait_for PATTERN: the fixture's output has a line matching PATTERN (an
# extended regular expression, anchored); within T seconds.
wait_for() {
	_i=0
	while ! grep -Eq "^$1\$" "$fx_out" 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -gt $((T * 20)) ] && return 1
		sleep 0.05
	done
	return 0
}

# fx CMD...: send a command and wait for its answer; the answer's line in
# $fx_line.  Each command's answer is told apart by a count of lines.
fx_lines=1
fx() {
	echo "$*" >&7
	fx_lines=$((fx_lines + 1))
	_i=0
	while [ "$(wc -l <"$fx_out")" -lt $fx_lines ]; do
		_i=$((_i + 1))
		[ $_i -gt $((T * 20)) ] && bail "jem-target: no answer to $*"
		sleep 0.02
	done
	fx_line=$(sed -n "${fx_lines}p" "$fx_out")
	case $fx_line in
	done*) ;;
	*) bail "jem-target: '$*': $fx_line" ;;
	esac
}

# fx_stop: quit the fixture and wait for it.
fx_stop() {
	echo quit >&7
	exec 7>&-
	wait "$pid" 2>/dev/null
}

cleanup() {
	for p in $pids; do
		kill -9 "$p" 2>/dev/null
	done
	rm -rf "$HT_TMP"
}
trap cleanup EXIT

json_get() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
v = eval(sys.argv[2])
print(json.dumps(v) if isinstance(v, (bool, type(None))) else v)' "$1" "$2" \
	    2>/dev/null
}

# ht_fails NAME WANT_STATUS PATTERN DESCRIPTION ARGS...: heaptool ARGS
# exits WANT_STATUS with one line "heaptool: ..." on stderr matching the
# extended regular expression PATTERN, and nothing on stdout.
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

# site_json FILE FUNC EXPR: EXPR (Python, over the site s) for the site of
# the report FILE whose innermost frame is in FUNC; "none" if there is no
# such site.
site_json() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
for s in j["sites"]:
    if s["frames"] and s["frames"][0].get("function") == sys.argv[2]:
        print(eval(sys.argv[3]))
        break
else:
    print("none")' "$@" 2>/dev/null
}
