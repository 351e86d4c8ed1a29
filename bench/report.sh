#!/bin/sh
# The report benchmark (make bench; issue "reports").  bench/report-gen
# writes a profile of 20,000 sites of 8 to 20 frames over 50 real shared
# libraries of this machine (real build-ids, so every module is opened and
# symbolized); then, median of BENCH_RUNS runs each:
#   - heaptool report FILE                      (summary: no symbols needed)
#   - heaptool report --detail FILE             (every frame symbolized)
#   - heaptool report --format json --detail FILE
# Targets: summary <= 200 ms, detail <= 2 s.  The figures are appended to
# bench/results.md (make bench's report) and written to
# bench/report-results.txt.
#
# usage: report.sh BUILDDIR     environment: BENCH_RUNS (default 5)
set -u
top=${1:?usage: report.sh BUILDDIR}
runs=${BENCH_RUNS:-5}
ht=$top/heaptool
tmp=$(mktemp -d "${TMPDIR:-/tmp}/heaptool-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
XDG_STATE_HOME=$tmp/state
export XDG_STATE_HOME

prof=$tmp/report.heap
if ! "$top/bench/report-gen" "$prof" >"$tmp/gen.out" 2>&1; then
	echo "report benchmark: skipped, $(cat "$tmp/gen.out")"
	exit 0
fi

now_ms() {
	date +%s%N | awk '{ printf "%.1f", $1 / 1e6 }'
}

# timeit NAME ARGS...: runs heaptool report ARGS FILE $runs times, appends
# the milliseconds of each run to $tmp/NAME; a failure ends the benchmark.
timeit() {
	_n=$1
	shift
	: >"$tmp/$_n"
	_r=0
	while [ "$_r" -lt "$runs" ]; do
		_t0=$(now_ms)
		if ! "$ht" report "$@" "$prof" >"$tmp/out" 2>"$tmp/err"; then
			echo "report benchmark: heaptool report $* failed:" \
			    "$(head -c 500 "$tmp/err")" >&2
			exit 1
		fi
		_t1=$(now_ms)
		awk -v a="$_t0" -v b="$_t1" 'BEGIN { printf "%.1f\n", b - a }' \
		    >>"$tmp/$_n"
		_r=$((_r + 1))
	done
}

median() {
	sort -n | awk '{ v[NR] = $1 } END {
	    if (NR % 2) m = v[(NR + 1) / 2]
	    else m = (v[NR / 2] + v[NR / 2 + 1]) / 2
	    printf "%s %s %s", m, v[1], v[NR] }'
}
verdict() {
	awk -v v="$1" -v t="$2" 'BEGIN { print (v <= t) ? "PASS" : "MISS" }'
}

# One untimed run first: the page cache holds the 50 libraries for all.
"$ht" report --detail "$prof" >/dev/null 2>&1
timeit summary
timeit detail --detail
timeit json --format json --detail

row() {
	set -- "$1" "$2" $(median <"$tmp/$3")
	printf '%-44s %8s ms %16s %7s ms %s\n' "$1" "$3" "$4..$5" "$2" \
	    "$(verdict "$3" "$2")"
}
{
echo
echo "report: $(cat "$tmp/gen.out"), median of $runs runs"
printf '%-44s %11s %16s %10s %s\n' measure median range target result
row "report FILE (summary)" 200 summary
row "report --detail FILE (symbolized)" 2000 detail
row "report --format json --detail FILE" 2000 json
} | tee "$top/bench/report-results.txt"
[ -f "$top/bench/results.md" ] &&
    cat "$top/bench/report-results.txt" >>"$top/bench/results.md"
exit 0
