# What the tests of heaptool serve (t0070 to t0073) share: their
# prerequisites, a fixture with known sites (t/target/attach-pipe, attached
# at rate 1: 20 blocks of 1000 bytes at keep_blocks and 9 of 77 at
# dlfix_keep), a server started on a free port, and the kill of every
# process they started, at exit.  Source after t/tap/libtap.sh (and
# t/lib/ptrace.sh for serve_attach_prereq).

# serve_prereq: heaptool, curl and python3, or skip; then T=60 and the
# cleanup at exit.
serve_prereq() {
	[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
	command -v curl >/dev/null 2>&1 || skip_all "curl not found"
	command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
	unset HEAPTOOL_SEED LD_PRELOAD HEAPTOOL_AGENT MALLOC_CONF
	T=60
	fx=
	srv=
	others=
	trap serve_cleanup EXIT
}

# serve_attach_prereq: serve_prereq, and what an attach needs.
serve_attach_prereq() {
	serve_prereq
	[ "$(uname -m)" = x86_64 ] || skip_all "attach supports x86-64 only"
	[ -x "$HT_BUILDDIR/libheaptool-agent.so" ] ||
	    bail "the agent is not built"
	[ -x "$TARGETS/attach-pipe" ] ||
	    bail "$TARGETS/attach-pipe not built (make check builds it)"
	require_ptrace
}

serve_cleanup() {
	for _p in $srv $others $fx; do
		kill -9 "$_p" 2>/dev/null
	done
	rm -rf "$HT_TMP"
}

# fixture_start [EXE]: attach-pipe (or EXE, a link to it) in $fx, its
# commands written to fd 7 and its output in $HT_TMP/fx.out; attached, a
# session at rate 1, and its two sites made (20000 bytes at keep_blocks,
# 693 at dlfix_keep).
fixture_start() {
	rm -f "$HT_TMP/fx.in" "$HT_TMP/fx.out"
	mkfifo "$HT_TMP/fx.in"
	"${1:-$TARGETS/attach-pipe}" <"$HT_TMP/fx.in" >"$HT_TMP/fx.out" 2>&1 &
	fx=$!
	exec 7>"$HT_TMP/fx.in"
	wait_line "$HT_TMP/fx.out" '^ready$' || bail "attach-pipe did not start"
	timeout $T "$HEAPTOOL" attach "$fx" >"$HT_TMP/attach.err" 2>&1 ||
	    bail "attach: $(cat "$HT_TMP/attach.err")"
	timeout $T "$HEAPTOOL" start -p "$fx" --rate 1 \
	    >"$HT_TMP/start.err" 2>&1 ||
	    bail "start: $(cat "$HT_TMP/start.err")"
	fixture_do dlopen 'dlopen done'
	fixture_do 'keep 20' 'kept 20'
}

# fixture_do COMMAND REPLY: send the fixture COMMAND and wait for REPLY.
fixture_do() {
	echo "$1" >&7
	wait_line "$HT_TMP/fx.out" "^$2\$" || bail "attach-pipe: no '$2'"
}

# serve_start NAME ARGS...: heaptool serve ARGS --verbose on a free
# loopback port, in the background: its pid in $srv (and in $NAME_pid),
# stdout and stderr in $HT_TMP/NAME.out and .err, and once it listens its
# base URL (http://127.0.0.1:PORT) in $base.
serve_start() {
	_n=$1
	shift
	"$HEAPTOOL" serve --verbose --listen 127.0.0.1:0 "$@" \
	    >"$HT_TMP/$_n.out" 2>"$HT_TMP/$_n.err" &
	srv="$srv $!"
	eval "${_n}_pid=$!"
	wait_line "$HT_TMP/$_n.out" '^heaptool serve: process .* on http://' ||
	    bail "serve did not start: $(cat "$HT_TMP/$_n.err")"
	base=$(sed -n 's|^heaptool serve: process .* on \(http://[^/]*\)/.*|\1|p' \
	    "$HT_TMP/$_n.out")
}

# get NAME PATH [CURL ARGS...]: fetch $base/PATH into $HT_TMP/NAME.body,
# the headers into NAME.head; the status code in $code.
get() {
	_n=$1
	_u=$2
	shift 2
	code=$(curl -sS --max-time $T -D "$HT_TMP/$_n.head" \
	    -o "$HT_TMP/$_n.body" -w '%{http_code}' "$@" "$base$_u" \
	    2>"$HT_TMP/$_n.curl")
	[ -s "$HT_TMP/$_n.curl" ] && diag "curl $base$_u: $(cat "$HT_TMP/$_n.curl")"
	return 0
}

# alive PID: the process runs (not a zombie).
alive() {
	[ -d "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}

# stopped PID: wait (at most T s) for a child to end; its status in $st.
stopped() {
	_i=0
	while alive "$1"; do
		_i=$((_i + 1))
		[ $_i -gt $((T * 20)) ] && { st=124; return 1; }
		sleep 0.05
	done
	wait "$1"
	st=$?
}
