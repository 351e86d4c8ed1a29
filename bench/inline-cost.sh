#!/bin/sh
# Instructions per malloc/free pair, GOT hooks against inline hooks,
# counted by gdb's process record (record full, finish) over one call of pair_once in
# bench/pairs-glibc (glibc's malloc through its GOT slots) and
# bench/pairs-own (an allocator of the executable's own, called directly),
# each plain and attached (a session at 1T, so that no sample is taken and
# every call takes its hook's fast path; no final profile, whose failure
# dumps send every allocation out of line).  The second call is counted:
# the first of a session seeds the thread's countdown.  callgrind cannot count the
# inline case: valgrind's threads cannot be stopped and patched by
# heaptool attach.  Prints the four counts and the cost of each backend's
# hooks per pair.
#
# usage: inline-cost.sh [BUILDDIR]
set -u
export LC_ALL=C
b=$(cd "${1:-.}" && pwd) || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/inline-cost.XXXXXX") || exit 1
XDG_STATE_HOME=$tmp/state
export XDG_STATE_HOME
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$tmp"' EXIT
command -v gdb >/dev/null 2>&1 || { echo "inline-cost: no gdb" >&2; exit 1; }

cat >"$tmp/count.py" <<'PY'
import gdb, re
gdb.execute("break pair_once")
gdb.execute("continue")
# The second call: the first of a session seeds the thread's countdown.
gdb.execute("continue")
gdb.execute("set scheduler-locking on")
gdb.execute("record full")
gdb.execute("finish", to_string=True)
info = gdb.execute("info record", to_string=True)
m = re.search(r"contains (\d+) instructions", info)
print("COUNT", m.group(1) if m else "?")
gdb.execute("record stop")
PY

# count PROG ATTACH: the instructions of one pair_once in PROG, attached
# (1) or not (0).
count() {
	rm -f "$tmp/in"
	mkfifo "$tmp/in"
	"$b/bench/$1" <"$tmp/in" >"$tmp/out" 2>&1 &
	pid=$!
	exec 8>"$tmp/in"
	while ! grep -q ready "$tmp/out"; do sleep 0.05; done
	if [ "$2" = 1 ]; then
		"$b/heaptool" attach "$pid" >"$tmp/attach" 2>&1 &&
		    "$b/heaptool" start -p "$pid" --rate 1T --no-final-dump >/dev/null ||
		    { cat "$tmp/attach" >&2; exit 1; }
	fi
	(sleep 2; echo pair >&8; echo pair >&8) &
	gdb -p "$pid" -batch -nx -ex "source $tmp/count.py" 2>/dev/null |
	    sed -n 's/^COUNT //p'
	exec 8>&-
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	pid=
}

g0=$(count pairs-glibc 0)
g1=$(count pairs-glibc 1)
o0=$(count pairs-own 0)
o1=$(count pairs-own 1)
echo "instructions per malloc/free pair (pair_once, gdb record full):"
echo "  glibc, plain          $g0"
echo "  glibc, GOT hooks      $g1   (+$((g1 - g0)))"
echo "  own, plain            $o0"
echo "  own, inline hooks     $o1   (+$((o1 - o0)))"
echo "inline hooks cost $(((o1 - o0) - (g1 - g0))) instructions a pair more" \
    "than the GOT hooks"
