#!/bin/sh
# How heaptool top ends, and what it refuses:
# - the target exits (t/target/top-grow exit N): top, without a terminal,
#   has printed its blocks and ends with one line on stderr, status 1;
# - the target's agent is detached: the same;
# - on the screen (in tmux, 80x24), the target killed under it: top gives
#   the terminal back and then says why in one line, status 1;
# - SIGTERM and SIGINT (^C typed) end it by that signal, the terminal
#   given back (icanon and echo on, the screen's lines gone);
# - bad options are usage errors (status 2, one line), and a process
#   without an agent a runtime error before the screen is taken.
. "$(dirname "$0")/tap/libtap.sh"

T=60
. "$HT_SRCDIR/t/lib/httop.sh"

plan 14

HELP='^q quit  i/g/a/s sort  j/k move  Enter stack  p pause  b baseline'

# one_line FILE ERE: FILE is one line that matches ERE.
one_line() {
	[ "$(wc -l <"$1")" -eq 1 ] && grep -Eq -- "$2" "$1"
}

# The target exits while top prints plain text.
start_grow e exit 15
timeout $T "$HEAPTOOL" top -p "$grow_pid" --interval 200ms \
    >"$HT_TMP/exit.out" 2>"$HT_TMP/exit.err"
st=$?
wait "$run_pid" 2>/dev/null
run_pid=
is $st 1 "the target exits: top ends with status 1"
one_line "$HT_TMP/exit.err" "^heaptool: top: target $grow_pid: "
ok $? "with one line on stderr" || diag "$(cat "$HT_TMP/exit.err")"
grep -q "^heaptool top: 1$" "$HT_TMP/exit.out" &&
    grep -q "  fast  top-grow\\.c:" "$HT_TMP/exit.out"
ok $? "after the blocks it printed" || diag "$(head -20 "$HT_TMP/exit.out")"
grow_pid=

# The agent is detached under top.
start_grow d
timeout $T "$HEAPTOOL" top -p "$grow_pid" --interval 200ms \
    >"$HT_TMP/det.out" 2>"$HT_TMP/det.err" &
top_pid=$!
wait_for grep -qs '^heaptool top: 2$' "$HT_TMP/det.out" ||
    bail "top printed no second block"
timeout $T "$HEAPTOOL" detach -p "$grow_pid" >/dev/null 2>&1 ||
    bail "detach failed"
wait "$top_pid"
is $? 1 "the agent detached: top ends with status 1"
one_line "$HT_TMP/det.err" "^heaptool: top: target $grow_pid: .*detached"
ok $? "saying so in one line" || diag "$(cat "$HT_TMP/det.err")"
kill -9 "$grow_pid" 2>/dev/null
wait "$run_pid" 2>/dev/null
run_pid=

tmux_start
# restored: the shell is back with the terminal as it was.
restored() {
	screen_has '^icanon echo *$' && screen_lacks "$HELP"
}
modes() {
	keys "stty -a | grep -o -- '-*icanon\\|-*echo ' | tr '\\n' ' '; echo" \
	    Enter
}
tmux_top() {
	keys "clear; $HEAPTOOL top -p $grow_pid --interval 300ms 2>&1; echo \"top exited \$?\"" Enter
	wait_for screen_has "$HELP" || bail "top took no screen"
}

# The target killed under the screen.
start_grow k
tmux_top
kill -9 "$grow_pid"
wait "$run_pid" 2>/dev/null
run_pid=
wait_for screen_has '^top exited 1$'
ok $? "the target killed: top exits with status 1" ||
    diag "$(cat "$HT_TMP/screen")"
grep -Eq "^heaptool: top: target $grow_pid: " "$HT_TMP/screen" &&
    [ "$(grep -c '^heaptool: ' "$HT_TMP/screen")" -eq 1 ]
ok $? "one line says why, on the terminal given back" ||
    diag "$(cat "$HT_TMP/screen")"
modes
wait_for restored
ok $? "the terminal is as it was" || diag "$(cat "$HT_TMP/screen")"

# Signals.
start_grow s
tmux_top
top_pid=$(pgrep -n -P "$(tm display-message -p -t t '#{pane_pid}')" -x heaptool)
[ -n "$top_pid" ] || bail "no heaptool top in the pane"
kill -TERM "$top_pid"
wait_for screen_has '^top exited 143$'
ok $? "SIGTERM: top ends by it" || diag "$(cat "$HT_TMP/screen")"
modes
wait_for restored
ok $? "and gives the terminal back" || diag "$(cat "$HT_TMP/screen")"
tmux_top
keys C-c
# The shell drops the rest of a command line whose command SIGINT
# killed: the status is asked for on a line of its own.
wait_for screen_lacks "$HELP" || bail "^C did not end top"
keys 'echo "status $?"' Enter
wait_for screen_has '(^|\$ )status 130$'
ok $? "^C: top ends by SIGINT" || diag "$(cat "$HT_TMP/screen")"
modes
wait_for restored
ok $? "and gives the terminal back" || diag "$(cat "$HT_TMP/screen")"

# Refusals.
usage() {
	timeout $T "$HEAPTOOL" top -p "$grow_pid" "$@" >"$HT_TMP/u.out" \
	    2>"$HT_TMP/u.err"
	[ $? -eq 2 ] && [ ! -s "$HT_TMP/u.out" ] &&
	    one_line "$HT_TMP/u.err" "^heaptool: top: "
}
usage --sort objects && usage --interval 10ms && usage --count 0 &&
    usage --top x && usage extra && usage --nope
ok $? "bad options: usage errors, status 2, one line" ||
    diag "$(cat "$HT_TMP/u.err")"
# A process without an agent: the shell of the pane.
pane=$(tm display-message -p -t t '#{pane_pid}')
timeout $T "$HEAPTOOL" top -p "$pane" >"$HT_TMP/n.out" 2>"$HT_TMP/n.err"
[ $? -eq 1 ] && [ ! -s "$HT_TMP/n.out" ] &&
    one_line "$HT_TMP/n.err" "^heaptool: top: target $pane: no agent"
ok $? "a process without an agent: one line, status 1" ||
    diag "$(cat "$HT_TMP/n.err")"
