#!/bin/sh
# The replay benchmark (make bench; issue 13): real programs' allocations
# recorded once with "heaptool record -o TRACE -- CMD", then replayed with
# and without the agent at the default rate, "heaptool replay --compare
# plain agent:512K" (BENCH_ROUNDS rounds, default 20, A and B in a random
# order each round), so that the agent's overhead is timed on the
# allocator calls alone, without the programs' own work and its noise:
#   - cc1 (gcc's compiler proper) on a generated C file (bench/cc1-input.awk),
#   - python3 with PYTHONMALLOC=malloc (every object through malloc) on a
#     small script,
#   - sqlite3 on a generated SQL script,
# each where installed (a missing one is skipped, with the reason).  Prints
# a row per program for the README's overhead table: events, threads, the
# median replay times, B/A with its 95% interval, the verdict and the
# smallest difference the run could have seen; as markdown in
# bench/replay-results.md of the build directory.
#
# heaptool record comes with the recorder (issue 13's other half): without
# it this script says so and fails.
#
# usage: replay.sh BUILDDIR     environment: BENCH_ROUNDS (default 20),
#                               BENCH_PROGRAMS (default "cc1 python3
#                               sqlite3")
set -u
export LC_ALL=C
builddir=$(cd "${1:?usage: replay.sh BUILDDIR}" && pwd) || exit 1
srcdir=$(cd "$(dirname "$0")/.." && pwd)
ht=$builddir/heaptool
rounds=${BENCH_ROUNDS:-20}
programs=${BENCH_PROGRAMS:-cc1 python3 sqlite3}
results=$builddir/bench/replay-results.md
for f in "$ht" "$builddir/heaptool-replay"; do
	[ -x "$f" ] || { echo "bench: $f is not built (make bench)" >&2
	    exit 1; }
done
if ! "$ht" record --help >/dev/null 2>&1; then
	echo "bench/replay.sh: this heaptool has no 'record' command (issue" \
	    "13's recorder), so no trace of a real program can be made;" \
	    "build a heaptool with heaptool record" >&2
	exit 1
fi
command -v python3 >/dev/null 2>&1 || {
	echo "bench/replay.sh: python3 is needed to read the comparisons" >&2
	exit 1
}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/heaptool-replay-bench.XXXXXX") || exit 1
XDG_STATE_HOME=$tmp/state
export XDG_STATE_HOME
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# The system's python3: a wrapper that execs the real one (a pyenv shim)
# would end the recording at its exec.
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
cc1=$(${CC:-gcc} -print-prog-name=cc1 2>/dev/null)
case $cc1 in /*) ;; *) cc1= ;; esac
awk -v n=600 -f "$srcdir/bench/cc1-input.awk" >"$tmp/cc1-input.c"
awk 'BEGIN {
	print "create table t(a integer primary key, b text, c real);"
	print "begin;"
	for (i = 0; i < 40000; i++)
		printf "insert into t values(%d, \"row %d %x\", %d.5);\n",
		    i, i, i * 2654435761 % 4294967296, i
	print "commit;"
	print "create index tb on t(b);"
	print "select count(*), sum(length(b)) from t where c > 1000;"
	print "select substr(b, 1, 5), count(*) from t group by 1 order by 2 desc limit 3;"
}' >"$tmp/work.sql"

have() {
	case $1 in
	cc1) [ -n "$cc1" ] && [ -x "$cc1" ] ;;
	python3) [ -n "$py" ] && [ -x "$py" ] ;;
	sqlite3) command -v sqlite3 >/dev/null 2>&1 ;;
	*) return 1 ;;
	esac
}

record() {
	case $1 in
	cc1) "$ht" record -o "$tmp/$1.trace" -- "$cc1" -quiet -O0 \
	    "$tmp/cc1-input.c" -o /dev/null ;;
	python3) env PYTHONMALLOC=malloc "$ht" record -o "$tmp/$1.trace" -- \
	    "$py" "$srcdir/bench/work.py" 60000 ;;
	sqlite3) "$ht" record -o "$tmp/$1.trace" -- sqlite3 :memory: \
	    ".read $tmp/work.sql" ;;
	esac
}

printf '| program | events | threads | plain (ms) | agent 512K (ms) | B/A [95%%] | verdict |\n' \
    >"$results"
printf '|---|---|---|---|---|---|---|\n' >>"$results"
printf '%-8s %10s %4s %10s %10s %24s  %s\n' program events thr plain_ms \
    agent_ms 'B/A [95%]' verdict
for p in $programs; do
	if ! have "$p"; then
		echo "$p: not installed, skipped"
		continue
	fi
	if ! record "$p" >/dev/null 2>"$tmp/$p.err"; then
		echo "$p: heaptool record failed: $(tail -n 1 "$tmp/$p.err")"
		continue
	fi
	if ! nice "$ht" replay --compare plain agent:512K --rounds "$rounds" \
	    --format json "$tmp/$p.trace" >"$tmp/$p.json" 2>"$tmp/$p.err"; then
		echo "$p: heaptool replay failed: $(tail -n 1 "$tmp/$p.err")"
		continue
	fi
	"$ht" trace-stats --format json "$tmp/$p.trace" >"$tmp/$p.stats" ||
	    continue
	python3 - "$p" "$tmp/$p.json" "$tmp/$p.stats" "$results" <<'PY'
import json, sys
p, cmp, stats, md = sys.argv[1:]
c = json.load(open(cmp))
s = json.load(open(stats))
nthr = len(s["threads"])
v = c["verdict"]
if v == "no difference detectable" and c.get("min_detectable_ratio"):
    v += " (smallest detectable %.1f%%)" % ((c["min_detectable_ratio"] - 1) * 100)
row = (p, s["events"], nthr, c["a"]["median"] / 1e6, c["b"]["median"] / 1e6,
       "%.3f [%.3f, %.3f]" % (c["ratio"], c["ratio_lo"], c["ratio_hi"]), v)
print("%-8s %10d %4d %10.2f %10.2f %24s  %s" % row)
with open(md, "a") as f:
    f.write("| %s | %d | %d | %.2f | %.2f | %s | %s |\n" % row)
PY
done
echo "(markdown in $results)"
