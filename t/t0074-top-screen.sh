#!/bin/sh
# heaptool top's full screen, driven in tmux: an 80x24 pane (as over ssh),
# keys typed with send-keys, the screen read with capture-pane, every wait
# a bounded polling loop on what the pane shows (no sleep is an
# assertion).  The target is t/target/top-grow at rate 1, whose sites grow
# at known, different rates: fast (4000 bytes a tick) faster than slow
# (1000), big (8 MiB) not at all.  So:
# - under --sort growth fast is the first site, and under the in-use sort
#   (key i) big is; g comes back to growth, s cycles to alloc (big first);
# - p freezes the numbers (the screen stays the same while the target
#   allocates on, as a second heaptool top without a terminal shows) and
#   resumes them;
# - Enter on the selected site shows its stack, more frames than the one
#   its line names (fast, feed, main), and Enter again hides them;
# - b takes a baseline; a resize redraws at the new size;
# - q ends top with status 0 and the pane's shell is back, the terminal as
#   it was (icanon and echo on again, the screen's lines gone).
. "$(dirname "$0")/tap/libtap.sh"

T=60
. "$HT_SRCDIR/t/lib/httop.sh"
tmux_start

plan 19

start_grow g
# The screen's last line, the keys: at row 24 when the screen fits.
HELP='^q quit  i/g/a/s sort  j/k move  Enter stack  p pause  b baseline'

keys "$HEAPTOOL top -p $grow_pid --sort growth --interval 300ms; echo \"top exited \$?\"" Enter
wait_for screen_has "$HELP"
ok $? "top takes the screen" || diag "$(cat "$HT_TMP/screen")"
is "$(sed -n 24p "$HT_TMP/screen" | cut -c1-20)" "q quit  i/g/a/s sort" \
    "the keys are on the last of 24 lines"
screen
sed -n 1p "$HT_TMP/screen" | grep -Eq "^pid $grow_pid \(top-grow\), session 1 running, rate 1 \(exact\), [0-9.]+ s$" &&
    sed -n 2p "$HT_TMP/screen" | grep -Eq '^in use .* objects \(exact\), allocated ' &&
    sed -n 3p "$HT_TMP/screen" | grep -Eq '^RSS [0-9.]+ [KMG]iB; growth '
ok $? "the session line, the totals (exact) and the RSS" ||
    diag "$(cat "$HT_TMP/screen")"

wait_for first_is fast
ok $? "--sort growth: the fastest-growing site first" ||
    diag "first: '$first'" "$(cat "$HT_TMP/screen")"
sed -n '/function  file:line/,$p' "$HT_TMP/screen" | cut -c45- |
    sed -n '2,3s/  .*//p' | tr '\n' ' ' >"$HT_TMP/order"
is "$(cat "$HT_TMP/order")" "fast slow " "then the slower one"
grep -Eq "  fast  top-grow\\.c:$(site_line fast)\$" "$HT_TMP/screen"
ok $? "the site's function and file:line"

keys i
wait_for screen_has '^[0-9]+ sites by inuse' && wait_for first_is big
ok $? "i: by bytes in use, the biggest site first" ||
    diag "$(cat "$HT_TMP/screen")"
keys g
wait_for screen_has '^[0-9]+ sites by growth' && wait_for first_is fast
ok $? "g: by growth again" || diag "$(cat "$HT_TMP/screen")"
keys s
wait_for screen_has '^[0-9]+ sites by alloc' && wait_for first_is big
ok $? "s: the next sort, by bytes allocated" || diag "$(cat "$HT_TMP/screen")"
keys g

# Pause: the screen must not change while the target allocates on.
keys p
wait_for screen_has '\[PAUSED\]'
ok $? "p: paused, and the screen says so"
screen
cp "$HT_TMP/screen" "$HT_TMP/paused"
objs=$(sed -n 's/^in use .* in \([0-9]*\) objects.*/\1/p' "$HT_TMP/paused")
# later: the target holds 20 objects more than the paused screen shows
# (a second, 2 of them per 100 ms tick), some refreshes' worth.
later() {
	_n=$(timeout $T "$HEAPTOOL" top -p "$grow_pid" --count 1 2>/dev/null |
	    sed -n 's/^in use .* in \([0-9]*\) objects.*/\1/p')
	[ -n "$_n" ] && [ "$_n" -ge $((objs + 20)) ]
}
wait_for later || bail "the target did not allocate on"
screen
cmp -s "$HT_TMP/paused" "$HT_TMP/screen"
ok $? "paused, the numbers stay while the target grows" ||
    diag "$(diff "$HT_TMP/paused" "$HT_TMP/screen")"
keys p
moved() {
	screen_lacks '\[PAUSED\]' &&
	    ! grep -q "^in use .* in $objs objects" "$HT_TMP/screen"
}
wait_for moved
ok $? "p again: the numbers move on" || diag "$(cat "$HT_TMP/screen")"

# Expand: the first site (fast) selected, its stack under it.
keys k k k k k k k k
wait_for screen_has '^>.*  fast  top-grow\.c:'
ok $? "k: the first site is selected (marked >)" ||
    diag "$(cat "$HT_TMP/screen")"
keys Enter
expanded() {
	screen
	sed -n '/^>.*  fast  /,$p' "$HT_TMP/screen" |
	    sed -n '2,/^[ >] *[0-9]/p' >"$HT_TMP/frames"
	grep -q '^      fast  top-grow\.c:' "$HT_TMP/frames" &&
	    grep -q '^      feed  top-grow\.c:' "$HT_TMP/frames" &&
	    grep -q '^      main  top-grow\.c:' "$HT_TMP/frames"
}
wait_for expanded
ok $? "Enter: the site's stack, fast called by feed called by main" ||
    diag "$(cat "$HT_TMP/screen")"
keys Enter
wait_for screen_lacks '^      feed  top-grow\.c:'
ok $? "Enter again: collapsed" || diag "$(cat "$HT_TMP/screen")"

keys b
wait_for screen_has 'baseline taken' &&
    wait_for screen_has '^RSS .* since the baseline$'
ok $? "b: a baseline, growth counted from it" || diag "$(cat "$HT_TMP/screen")"

# A smaller terminal: the screen is drawn again at its size.
tm resize-window -t t -x 70 -y 16 >/dev/null 2>&1
resized() {
	screen
	sed -n 16p "$HT_TMP/screen" | grep -Eq "$HELP"
}
wait_for resized
ok $? "a resize redraws at the new size (70x16)" ||
    diag "$(cat "$HT_TMP/screen")"

keys q
wait_for screen_has '^top exited 0$'
ok $? "q: top exits with status 0" || diag "$(cat "$HT_TMP/screen")"
keys "stty -a | grep -o -- '-*icanon\\|-*echo ' | tr '\\n' ' '; echo" Enter
wait_for screen_has '^icanon echo *$' && screen_lacks "$HELP"
ok $? "the shell is back, the terminal as it was" ||
    diag "$(cat "$HT_TMP/screen")"
