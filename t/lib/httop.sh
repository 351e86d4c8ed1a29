# What the heaptool top tests (t0074 to t0076) share: t/target/top-grow
# started under heaptool run --rate 1 --live (no ptrace needed: its agent
# serves from the start), a private tmux server whose one pane is an 80x24
# terminal, and bounded polling loops on what that pane shows.  Source it
# after t/tap/libtap.sh, with T set (seconds: anything that takes longer
# is hung).

unset HEAPTOOL_SEED LD_PRELOAD
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$TARGETS/top-grow" ] ||
    bail "$TARGETS/top-grow not built (make check builds it)"

grow_pid=
run_pid=
tmux_on=0
top_cleanup() {
	[ -n "$grow_pid" ] && kill -9 "$grow_pid" 2>/dev/null
	[ -n "$run_pid" ] && wait "$run_pid" 2>/dev/null
	[ $tmux_on -eq 1 ] && tm kill-server 2>/dev/null
	rm -rf "$HT_TMP"
}
trap top_cleanup EXIT

# wait_for CMD...: run CMD every 0.1 s until it succeeds, for at most T
# seconds; nonzero when it never did.
wait_for() {
	_i=0
	until "$@"; do
		_i=$((_i + 1))
		[ $_i -gt $((T * 10)) ] && return 1
		sleep 0.1
	done
	return 0
}

# start_grow NAME [ARGS]: top-grow ARGS under heaptool run --rate 1 --live,
# its profile in $HT_TMP/NAME.heap; its pid in grow_pid once it is ready
# (heaptool run's own in run_pid).
start_grow() {
	_n=$1
	shift
	"$HEAPTOOL" run --rate 1 --live -o "$HT_TMP/$_n.heap" -- \
	    "$TARGETS/top-grow" "$@" >"$HT_TMP/$_n.fx" 2>"$HT_TMP/$_n.run" &
	run_pid=$!
	wait_for grep -qsx ready "$HT_TMP/$_n.fx" ||
	    bail "top-grow never said ready: $(cat "$HT_TMP/$_n.run")"
	grow_pid=$(sed -n 's/^heaptool: running .* as pid \([0-9]*\); .*/\1/p' \
	    "$HT_TMP/$_n.run")
	[ -n "$grow_pid" ] || bail "heaptool run --live said no pid"
}

# site_line NAME: the line number of the allocation marked "SITE NAME" in
# the fixture.
site_line() {
	grep -n "/\* SITE $1 \*/" "$HT_SRCDIR/t/target/top-grow.c" |
	    cut -d: -f1
}

# The tmux server: its own socket and no configuration of the user's.
tm() {
	tmux -S "$HT_TMP/tmux.sock" -f /dev/null "$@"
}

# tmux_start: a detached session "t" with one 80x24 pane running sh, in
# which the tests type commands.
tmux_start() {
	command -v tmux >/dev/null 2>&1 ||
	    skip_all "tmux not found (apt-get install tmux)"
	TERM=xterm tm new-session -d -x 80 -y 24 -s t \
	    "env PS1='$ ' TERM=screen sh" ||
	    bail "tmux new-session failed"
	tmux_on=1
}

# screen: what the pane shows now, a line per row, into $HT_TMP/screen.
screen() {
	tm capture-pane -p -t t >"$HT_TMP/screen"
}

# screen_has ERE: the pane shows a line that matches ERE.
screen_has() {
	screen
	grep -Eq -- "$1" "$HT_TMP/screen"
}

# screen_lacks ERE: it shows none.
screen_lacks() {
	screen
	! grep -Eq -- "$1" "$HT_TMP/screen"
}

# first_site: the function of the first site on the screen (the line
# after the header), into $first.
first_site() {
	screen
	first=$(sed -n '/^ *in use .*function  file:line/{n;p;q;}' \
	    "$HT_TMP/screen" | cut -c45- | sed 's/  .*//')
}

# first_is NAME: the first site on the screen is NAME.
first_is() {
	first_site
	[ "$first" = "$1" ]
}

# keys KEY...: type keys into the pane.
keys() {
	tm send-keys -t t "$@"
}
