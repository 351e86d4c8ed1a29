#!/bin/sh
# The cost of heaptool record (issue 13): workload 1 (bench/churn, one
# thread) and workload 2 (bench/handoff, two threads freeing each other's
# blocks) plain, under heaptool run at the default rate (sampling), and
# under heaptool record (every event written to a trace), interleaved
# round by round; the median wall time of each and the median of the
# per-round ratios to the plain run, side by side in one run.  Written to
# bench/record-results.txt too.  The trace goes to a directory of its own
# (TMPDIR), which must have room for it: about 48 bytes an event.
# usage: record.sh BUILDDIR [ROUNDS]
set -u
export LC_ALL=C
. "$(dirname "$0")/stats.sh"
builddir=$(cd "${1:-.}" && pwd) || exit 1
rounds=${2:-5}
bin=$builddir/bench
heaptool=$builddir/heaptool
out=$builddir/bench/record-results.txt
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
for f in "$heaptool" "$bin/timeit" "$bin/churn" "$bin/handoff"; do
	[ -x "$f" ] || { echo "bench: $f not built" >&2; exit 1; }
done

# timed OUT MODE CMD...: one run, "WALL USER SYS" appended to OUT.  nice
# goes outside heaptool: a command that execs another (nice CMD) is
# recorded only up to its exec.
timed() {
	_out=$1
	_mode=$2
	shift 2
	case $_mode in
	plain)	nice "$bin/timeit" "$tmp/t" "$@" >/dev/null 2>"$tmp/err" ;;
	run)	nice "$bin/timeit" "$tmp/t" "$heaptool" run -o "$tmp/x.heap" \
		    -- "$@" >/dev/null 2>"$tmp/err" ;;
	record)	nice "$bin/timeit" "$tmp/t" "$heaptool" record \
		    -o "$tmp/x.trace" -- "$@" >/dev/null 2>"$tmp/err" ;;
	esac
	_rc=$?
	if [ $_rc -ne 0 ]; then
		echo "bench: $_mode run of '$*' exited with status $_rc:" >&2
		head -c 2000 "$tmp/err" >&2
		exit 1
	fi
	cat "$tmp/t" >>"$_out"
}


{
	echo "heaptool record: median of $rounds interleaved rounds, wall s"
	printf '%-28s %8s %8s %8s %10s %10s\n' workload plain run record \
	    run/plain rec/plain
	for w in "churn 3000000" "handoff 2000"; do
		rm -f "$tmp"/plain "$tmp"/run "$tmp"/record
		i=0
		while [ $i -lt "$rounds" ]; do
			for m in plain run record; do
				# shellcheck disable=SC2086
				timed "$tmp/$m" $m "$bin/"$w
			done
			i=$((i + 1))
		done
		set -- $(bench_stats "$tmp/plain" "$tmp/run")
		p=$1 r=$2 rr=$3
		set -- $(bench_stats "$tmp/plain" "$tmp/record")
		printf '%-28s %8s %8s %8s %9sx %9sx\n' "$w" "$p" "$r" "$2" \
		    "$rr" "$3"
	done
	"$heaptool" record -o "$tmp/x.trace" -- "$bin/churn" 300000 \
	    2>&1 >/dev/null | sed 's|^heaptool: [^:]*: |trace of churn 300000: |'
} | tee "$out"
