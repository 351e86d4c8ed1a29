#!/bin/sh
# Real programs (make bench-real; issue "right on real programs").  For
# python3, gcc's cc1, sqlite3, redis-server and node, each where installed
# (a missing one is skipped, with the reason):
#   - attach: the wall time of "heaptool attach" on a running instance,
#     the median of BENCH_RUNS attaches (each to a fresh instance);
#   - overhead: a fixed workload run plain and under "heaptool run" at the
#     default rate, interleaved, the median of the per-pair ratios and
#     their range;
#   - rate 1 totals: allocations and bytes allocated by the workload as
#     heaptool counts them at --rate 1, next to heaptrack's "calls to
#     allocation functions" and the bytes of its size histogram.  heaptrack
#     counts malloc-family and operator new calls, as heaptool does, but
#     also its own: its preloaded library links libstdc++, whose emergency
#     exception pool (some 72 KiB, one call) is counted in every program.
# The table goes to stdout and, as markdown, to bench/real-results.md in
# the build directory.
#
# usage: real.sh BUILDDIR      environment: BENCH_RUNS (default 5),
#                              BENCH_PROGRAMS (default "python3 cc1
#                              sqlite3 redis node")
set -u
export LC_ALL=C
builddir=$(cd "${1:?usage: real.sh BUILDDIR}" && pwd) || exit 1
srcdir=$(cd "$(dirname "$0")/.." && pwd)
ht=$builddir/heaptool
timeit=$builddir/bench/timeit
runs=${BENCH_RUNS:-5}
programs=${BENCH_PROGRAMS:-python3 cc1 sqlite3 redis node}
results=$builddir/bench/real-results.md
for f in "$ht" "$timeit"; do
	[ -x "$f" ] || { echo "bench: $f is not built (make bench-real)" >&2
	    exit 1; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/heaptool-real.XXXXXX") || exit 1
XDG_STATE_HOME=$tmp/state
export XDG_STATE_HOME
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now_ms() {
	date +%s%N | awk '{ printf "%.1f", $1 / 1e6 }'
}

median() {
	sort -g | awk '{ v[NR] = $1 } END {
	    if (NR == 0) { print "-"; exit }
	    if (NR % 2) print v[(NR + 1) / 2]
	    else printf "%.4g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

range() {
	sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 }
	    END { if (NR) printf "%.2f..%.2fx", lo, hi; else print "-" }'
}

# --- the workloads -------------------------------------------------------
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3 2>/dev/null)
cc1=$(${CC:-gcc} -print-prog-name=cc1 2>/dev/null)
case $cc1 in /*) ;; *) cc1= ;; esac
awk -v n=1200 -f "$srcdir/bench/cc1-input.awk" >"$tmp/cc1-input.c"

cat >"$tmp/idle.py" <<'EOF'
import sys, time
keep = []
while True:
    keep.append(bytearray(1000))
    if len(keep) > 1000:
        keep.clear()
    time.sleep(0.001)
EOF
cat >"$tmp/work.sql" <<'EOF'
create table t(a integer primary key, b text, c real);
with recursive n(i) as (select 1 union all select i + 1 from n where i < 300000)
insert into t select i, printf('row %d %s', i, hex(randomblob(16))), i * 0.5 from n;
create index tb on t(b);
select count(*), sum(length(b)) from t where c > 1000;
select substr(b, 1, 5), count(*) from t group by 1 order by 2 desc limit 3;
EOF
cat >"$tmp/work.js" <<'EOF'
const a = [];
for (let i = 0; i < 200000; i++) a.push({ i, s: 'x'.repeat(i % 50), b: Buffer.alloc(64) });
const s = JSON.stringify(a.map(o => ({ i: o.i, s: o.s })));
const zlib = require('zlib');
const z = zlib.gzipSync(Buffer.from(s));
console.log(a.length, s.length, z.length);
EOF
cat >"$tmp/idle.js" <<'EOF'
let keep = [];
setInterval(() => { keep.push(Buffer.alloc(1000)); if (keep.length > 1000) keep = []; }, 1);
EOF

# redis: a server on a unix socket, SET/GET/LPUSH from redis-benchmark,
# then SHUTDOWN NOSAVE: the "run" is the server's whole life.
redis_sock=$tmp/redis.sock
redis_work() {
	# $@: how to start the server (plain, or under a profiler)
	rm -f "$redis_sock"
	"$@" --port 0 --unixsocket "$redis_sock" --save '' --appendonly no \
	    --daemonize no >/dev/null 2>&1 &
	rp=$!
	i=0
	while [ ! -S "$redis_sock" ] && [ $i -lt 200 ]; do
		sleep 0.05; i=$((i + 1))
	done
	redis-benchmark -s "$redis_sock" -q -n 40000 -P 8 -d 100 \
	    -t set,get,lpush >/dev/null 2>&1
	redis-cli -s "$redis_sock" shutdown nosave >/dev/null 2>&1
	wait $rp
}

# cmd NAME: the workload's command line, as words; empty if absent.
have() {
	case $1 in
	python3) [ -n "$py" ] && [ -x "$py" ] ;;
	cc1) [ -n "$cc1" ] && [ -x "$cc1" ] ;;
	sqlite3) command -v sqlite3 >/dev/null 2>&1 ;;
	redis) command -v redis-server >/dev/null 2>&1 &&
	    command -v redis-benchmark >/dev/null 2>&1 &&
	    command -v redis-cli >/dev/null 2>&1 ;;
	node) command -v node >/dev/null 2>&1 ;;
	*) return 1 ;;
	esac
}

# run NAME PREFIX...: the workload, under PREFIX (nothing, or a profiler).
work() {
	name=$1
	shift
	case $name in
	python3) "$@" "$py" "$srcdir/bench/work.py" 300000 >/dev/null ;;
	cc1) "$@" "$cc1" -quiet -O0 "$tmp/cc1-input.c" \
	    -o /dev/null ;;
	sqlite3) "$@" sqlite3 :memory: ".read $tmp/work.sql" >/dev/null ;;
	redis) redis_work "$@" redis-server ;;
	node) "$@" node "$tmp/work.js" >/dev/null ;;
	esac
}

# idle NAME: start a long-running instance in the background; sets ipid.
idle() {
	case $1 in
	python3) "$py" "$tmp/idle.py" & ;;
	cc1) "$cc1" -quiet -O2 "$tmp/cc1-input.c" -o /dev/null & ;;
	sqlite3) mkfifo "$tmp/sq.$$.$r" 2>/dev/null
	    sqlite3 :memory: <"$tmp/sq.$$.$r" >/dev/null &
	    exec 7>"$tmp/sq.$$.$r" ;;
	redis) rm -f "$tmp/idle.sock"
	    redis-server --port 0 --unixsocket "$tmp/idle.sock" --save '' \
		>/dev/null 2>&1 & ;;
	node) node "$tmp/idle.js" & ;;
	esac
	ipid=$!
	pids="$pids $ipid"
	sleep 0.5
}

heaptrack_totals() {
	# $1: name.  Prints "CALLS BYTES": heaptrack's count of calls to
	# allocation functions, and the bytes of its size histogram (it
	# prints no total of bytes allocated).
	command -v heaptrack >/dev/null 2>&1 || { echo "- -"; return; }
	rm -f "$tmp"/ht.* "$tmp/hist"
	work "$1" heaptrack -o "$tmp/ht" >/dev/null 2>&1
	f=$(ls "$tmp"/ht.* 2>/dev/null | head -1)
	[ -n "$f" ] || { echo "- -"; return; }
	heaptrack_print -f "$f" -p 0 -a 0 -T 0 -l 0 -H "$tmp/hist" \
	    >/dev/null 2>&1
	awk '{ c += $2; b += $1 * $2 } END { if (NR) print c, b
	    else print "- -" }' "$tmp/hist" 2>/dev/null || echo "- -"
}

heaptool_totals() {
	rm -f "$tmp/r1.heap"
	work "$1" "$ht" run --rate 1 -o "$tmp/r1.heap" -- >/dev/null 2>&1
	"$ht" report --json "$tmp/r1.heap" 2>/dev/null | "$py" -c '
import json, sys
d = json.load(sys.stdin)
t = d["totals"]
print(t["alloc_objects"], t["alloc_bytes"],
      "exact" if d["session"].get("exact") else "NOT-exact")' 2>/dev/null || echo "- - -"
}

printf '| program | attach (median) | overhead at default rate | range | heaptool rate 1: allocations / bytes | heaptrack: calls / bytes |\n' >"$results"
printf '|---|---|---|---|---|---|\n' >>"$results"
for name in $programs; do
	if ! have "$name"; then
		echo "$name: skipped, not installed"
		continue
	fi
	: >"$tmp/att"; : >"$tmp/ratio"
	r=1
	while [ $r -le "$runs" ]; do
		idle "$name"
		t0=$(now_ms)
		if "$ht" attach "$ipid" >/dev/null 2>"$tmp/att.err"; then
			t1=$(now_ms)
			awk -v a="$t0" -v b="$t1" \
			    'BEGIN { printf "%.1f\n", b - a }' >>"$tmp/att"
			"$ht" detach -p "$ipid" >/dev/null 2>&1
		else
			echo "$name: attach failed: $(cat "$tmp/att.err")"
		fi
		kill "$ipid" 2>/dev/null
		wait "$ipid" 2>/dev/null
		exec 7>&- 2>/dev/null
		( work "$name" "$timeit" "$tmp/plain" ) >/dev/null 2>&1
		( work "$name" "$timeit" "$tmp/prof" "$ht" run \
		    -o "$tmp/def.heap" -- ) >/dev/null 2>&1
		awk 'NR == FNR { p = $1; next } { printf "%.4f\n", $1 / p }' \
		    "$tmp/plain" "$tmp/prof" >>"$tmp/ratio"
		r=$((r + 1))
	done
	att=$(median <"$tmp/att")
	ov=$(median <"$tmp/ratio")
	rg=$(range <"$tmp/ratio")
	set -- $(heaptool_totals "$name")
	hto="$1 / $2${3:+ ($3)}"
	set -- $(heaptrack_totals "$name")
	htr="$1 / $2"
	echo "$name: attach ${att} ms, overhead ${ov}x ($rg), rate 1: $hto; heaptrack: $htr"
	printf '| %s | %s ms | %sx | %s | %s | %s |\n' "$name" "$att" "$ov" \
	    "$rg" "$hto" "$htr" >>"$results"
done
echo "results: $results"
