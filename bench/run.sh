#!/bin/sh
# The overhead benchmark (make bench).  Runs each workload plain and under
# "heaptool run" at the default rate, interleaved (plain, heaptool, plain,
# heaptool, ...) so that drifts of this shared, noisy machine hit both sides
# alike, and prints per workload the median of the per-pair time ratios and
# their range, against the targets of the foundation issue.  If heaptool
# accepts a rate that never samples (--rate 1T), a third run per round gives
# the cost of the GOT hooks alone.  The table also goes, as markdown, to
# bench/results.md in the build directory.
#
# usage: run.sh [BUILDDIR]	(make bench passes the build directory)
# environment:
#   BENCH_RUNS=N          rounds per workload (default 7)
#   BENCH_WORKLOADS=LIST  which workloads, e.g. "1 3" (default
#                         "1 2 3 4 5 6 7 8"; "none" with BENCH_CALLGRIND=1
#                         counts only)
#   BENCH_BASE=DIR        also run DIR's heaptool (another build, e.g. of
#                         main) in each round, between plain and this
#                         build's: a before/after of the same rounds
#   BENCH_CALLGRIND=1     also count instructions per malloc/free pair of
#                         workload 1 with valgrind (plain, hooks, sampling)
#
# Times are wall clock; "cpu" is user + sys of the command and of what it
# waited for, as wait4 reports it.

set -u
export LC_ALL=C

builddir=$(cd "${1:-.}" && pwd) || exit 1
srcdir=$(cd "$(dirname "$0")/.." && pwd) || exit 1
. "$srcdir/bench/stats.sh"
heaptool=$builddir/heaptool
agent=$builddir/libheaptool-agent.so
bin=$builddir/bench
runs=${BENCH_RUNS:-7}
workloads=${BENCH_WORKLOADS:-1 2 3 4 5 6 7 8}
base=${BENCH_BASE:-}
results=$bin/results.md

die() {
	echo "bench: $*" >&2
	exit 1
}

case $runs in
''|*[!0-9]*|0) die "BENCH_RUNS must be a positive integer, not '$runs'" ;;
esac
[ -z "$base" ] || [ -x "$base/heaptool" ] ||
    die "BENCH_BASE: $base/heaptool is not built"
for f in "$heaptool" "$bin/timeit" "$bin/churn" "$bin/handoff" "$bin/large" \
    "$bin/threads"
do
	[ -x "$f" ] || die "$f is not built (run make bench)"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/heaptool-bench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# Workload sizes: each takes about 0.3-1 s plain on the 2-core development
# machine.  The iteration counts are arguments so that they show in the
# table's footnotes exactly as run.
churn_pairs=30000000
handoff_rounds=6000
large_pairs=30000000
threads_small_pairs=30000000
threads_large_pairs=20000000
cc1_funcs=1200
cc1_flags=-O0

# Workload 4 runs gcc's cc1 directly: heaptool run profiles only its direct
# child, and the gcc driver would make cc1 a grandchild.
cc1=$(${CC:-gcc} -print-prog-name=cc1 2>/dev/null)
case $cc1 in
/*)	[ -x "$cc1" ] || cc1= ;;
*)	cc1= ;;
esac

# The cc1 input: see bench/cc1-input.awk.
gen_cc1_input() {
	awk -v n="$cc1_funcs" -f "$srcdir/bench/cc1-input.awk" \
	    >"$bin/cc1-input.c"
}

# Per workload: its name in the table, its target (the foundation issue's
# ratio, measured on the 2-core development machine) and its command.
workload_name() {
	case $1 in
	1) echo "1 churn: 1 thread, 16..1039 B, window 1024" ;;
	2) echo "2 handoff: 2 threads, cross-thread frees" ;;
	3) echo "3 large: 128 KiB blocks" ;;
	4) echo "4 cc1: gcc $cc1_flags, $cc1_funcs functions" ;;
	5) echo "5 threads: 8 threads, 16..1039 B" ;;
	6) echo "6 threads: 1 thread, the same pairs" ;;
	7) echo "7 threads: 8 threads, 128 KiB blocks" ;;
	8) echo "8 threads: 1 thread, the same pairs" ;;
	esac
}

workload_target() {
	case $1 in
	1|2|5|6) echo 1.10 ;;
	3|7|8) echo 2.00 ;;
	4) echo 1.03 ;;
	esac
}

# The command of a workload, quoted for the caller's eval "set -- ...".
workload_cmd() {
	case $1 in
	1) echo "\"\$bin/churn\" $churn_pairs" ;;
	2) echo "\"\$bin/handoff\" $handoff_rounds" ;;
	3) echo "\"\$bin/large\" $large_pairs" ;;
	4) echo "\"\$cc1\" -quiet $cc1_flags \"\$bin/cc1-input.c\"" \
	    "-o \"\$tmp/cc1.s\"" ;;
	5) echo "\"\$bin/threads\" 8 $threads_small_pairs small" ;;
	6) echo "\"\$bin/threads\" 1 $threads_small_pairs small" ;;
	7) echo "\"\$bin/threads\" 8 $threads_large_pairs large" ;;
	8) echo "\"\$bin/threads\" 1 $threads_large_pairs large" ;;
	esac
}

# timed OUT MODE CMD...: run CMD plain (MODE "plain"), under heaptool run at
# the default rate ("heaptool"; "base": BENCH_BASE's heaptool) or at a rate
# that never samples ("hooks");
# append "WALL USER SYS" to OUT.  Dies if the command fails: a benchmark of
# a broken run means nothing.
timed() {
	_out=$1
	_mode=$2
	shift 2
	case $_mode in
	plain)	"$bin/timeit" "$tmp/t" "$@" >/dev/null 2>"$tmp/err" ;;
	heaptool)
		"$bin/timeit" "$tmp/t" "$heaptool" run -o "$tmp/x.heap" -- \
		    "$@" >/dev/null 2>"$tmp/err" ;;
	base)
		"$bin/timeit" "$tmp/t" "$base/heaptool" run -o "$tmp/x.heap" \
		    -- "$@" >/dev/null 2>"$tmp/err" ;;
	hooks)	"$bin/timeit" "$tmp/t" "$heaptool" run --rate 1T \
		    -o "$tmp/x.heap" -- "$@" >/dev/null 2>"$tmp/err" ;;
	esac
	_rc=$?
	if [ $_rc -ne 0 ]; then
		echo "bench: $_mode run of '$*' exited with status $_rc:" >&2
		head -c 2000 "$tmp/err" >&2
		exit 1
	fi
	cat "$tmp/t" >>"$_out"
}

# Does this heaptool accept a rate that never samples?
hooks_variant=0
if "$heaptool" run --rate 1T -o "$tmp/probe.heap" -- true \
    >/dev/null 2>&1; then
	hooks_variant=1
fi
# And does it run at all?  Say why not before timing anything.
if ! "$heaptool" run -o "$tmp/probe.heap" -- "$bin/churn" 1000 \
    >/dev/null 2>"$tmp/err"; then
	echo "bench: heaptool run fails on a trivial workload:" >&2
	cat "$tmp/err" >&2
	exit 1
fi

: >"$tmp/rows"
for w in $workloads; do
	case $w in
	none)	continue ;;
	1|2|3|5|6|7|8) ;;
	4)	if [ -z "$cc1" ]; then
			echo "bench: workload 4 skipped: no cc1 found" \
			    "(${CC:-gcc} -print-prog-name=cc1)" >&2
			continue
		fi
		gen_cc1_input ;;
	*)	die "unknown workload '$w'" ;;
	esac
	eval "set -- $(workload_cmd "$w")"
	echo "bench: $(workload_name "$w"): $runs rounds" >&2
	: >"$tmp/plain"; : >"$tmp/heaptool"; : >"$tmp/hooks"; : >"$tmp/base"
	# One unmeasured run warms the page cache and the CPU frequency.
	timed "$tmp/warm" plain "$@"
	i=0
	while [ $i -lt "$runs" ]; do
		timed "$tmp/plain" plain "$@"
		[ -z "$base" ] || timed "$tmp/base" base "$@"
		timed "$tmp/heaptool" heaptool "$@"
		[ $hooks_variant -eq 0 ] || timed "$tmp/hooks" hooks "$@"
		i=$((i + 1))
	done
	target=$(workload_target "$w")
	set -- $(bench_stats "$tmp/plain" "$tmp/heaptool")
	verdict=$(awk -v r="$3" -v t="$target" \
	    'BEGIN { print (r <= t ? "PASS" : "MISS") }')
	printf '%s|%s|%s|%s|%s|%s|%s|<= %.2fx|%s\n' \
	    "$(workload_name "$w")" "$1" "$2" "$3" "$4" "$5" "$6" \
	    "$target" "$verdict" >>"$tmp/rows"
	if [ -n "$base" ]; then
		set -- $(bench_stats "$tmp/plain" "$tmp/base")
		printf '%s|%s|%s|%s|%s|%s|%s|%s|%s\n' \
		    "  before (BENCH_BASE's heaptool)" "$1" "$2" "$3" "$4" \
		    "$5" "$6" "-" "-" >>"$tmp/rows"
	fi
	if [ $hooks_variant -eq 1 ]; then
		set -- $(bench_stats "$tmp/plain" "$tmp/hooks")
		printf '%s|%s|%s|%s|%s|%s|%s|%s|%s\n' \
		    "  GOT hooks only (--rate 1T)" "$1" "$2" "$3" "$4" "$5" \
		    "$6" "-" "-" >>"$tmp/rows"
	fi
done

# Other work on this 2-core machine skews wall times (the ratios less than
# the times, since rounds interleave); say so next to the table.
load=$(cut -d ' ' -f 1 /proc/loadavg 2>/dev/null)
load_note=$(awk -v l="${load:-0}" 'BEGIN {
	if (l > 1.5)
		printf "Load average %s at the end (the benchmark itself " \
		    "accounts for about 1): other work was running, and " \
		    "the ratios are less reliable than usual.", l
}')

# The text table, then the markdown one.
{
	echo
	echo "heaptool overhead: heaptool run (default rate 512 KiB) vs plain;"
	echo "$runs interleaved rounds; ratio = median of per-round wall-time"
	echo "ratios, range = min..max; cpu = median ratio of user+sys."
	echo
	printf '%-44s %7s %8s %7s %12s %6s %8s %s\n' workload plain \
	    heaptool ratio range cpu target result
	awk -F'|' '{
		printf "%-44s %6.3fs %7.3fs %6.3fx %12s %5.2fx %8s %s\n",
		    $1, $2, $3, $4, sprintf("%.2f..%.2fx", $5, $6), $7, $8, $9
	}' "$tmp/rows"
	[ -z "$load_note" ] || echo "$load_note"
	echo
}

{
	echo "# heaptool overhead benchmark"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -sr), $(nproc) CPUs," \
	    "$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)," \
	    "$(ldd --version 2>/dev/null | sed -n '1s/.* /glibc /p')."
	echo "heaptool run at the default rate (512 KiB) against the plain"
	echo "program, $runs interleaved rounds.  Ratio: median of the"
	echo "per-round wall-time ratios; range: their min..max; cpu: median"
	echo "ratio of user+sys time."
	echo
	echo "| workload | plain | heaptool | ratio | range | cpu | target |" \
	    "result |"
	echo "|---|---:|---:|---:|---:|---:|---:|---|"
	awk -F'|' '{
		sub(/^ +/, "", $1)
		printf "| %s | %.3f s | %.3f s | %.3fx | %.2f..%.2fx | %.2fx",
		    $1, $2, $3, $4, $5, $6, $7
		printf " | %s | %s |\n", $8, $9
	}' "$tmp/rows"
	echo
	echo "Workloads: (1) bench/churn $churn_pairs, (2) bench/handoff" \
	    "$handoff_rounds (256 blocks per thread per round)," \
	    "(3) bench/large $large_pairs, (4) cc1 $cc1_flags on a" \
	    "generated file of $cc1_funcs functions, (5-8) bench/threads" \
	    "8 or 1 $threads_small_pairs small, 8 or 1" \
	    "$threads_large_pairs large (the pairs shared by the threads)."
	[ -z "$base" ] || echo "Before: $base/heaptool, in the same rounds."
	[ -z "$load_note" ] || { echo; echo "$load_note"; }
} >"$results"

# Instructions per malloc/free pair of workload 1, counted by callgrind: the
# count is the same from run to run, unlike times on this machine.  The
# difference between runs of P and 2P pairs cancels start-up and exit.  The
# agent is preloaded through its environment protocol, not heaptool run,
# which would put valgrind's launcher rather than the workload under the
# agent; $$ of the shell that execs the workload is the workload's pid, since
# valgrind follows the exec in the same process.  (Valgrind's launcher, which
# it execs on the way, loads the agent too, but execs the tool before it exits,
# so no profile is written from it and it costs no counted instructions.)
cg_pairs=1000000

# cg_ir RATE PAIRS: instructions of one run of workload 1 (RATE empty: no
# agent), or nothing if valgrind failed.
cg_ir() {
	if [ -z "$1" ]; then
		_sh='exec "$0" "$@"'
	else
		_sh="HEAPTOOL_PID=\$\$ LD_PRELOAD='$agent' HEAPTOOL_RATE=$1"
		_sh="$_sh HEAPTOOL_OUTPUT='$tmp/cg.heap' exec \"\$0\" \"\$@\""
	fi
	valgrind --tool=callgrind --trace-children=yes \
	    --callgrind-out-file="$tmp/cg.%p" \
	    /bin/sh -c "$_sh" "$bin/churn" "$2" >/dev/null 2>"$tmp/cg.err" ||
	    return 1
	sed -n 's/^==[0-9]*== Collected : //p' "$tmp/cg.err" | tail -n 1
}

# cg_pair RATE: instructions per malloc/free pair.
cg_pair() {
	_a=$(cg_ir "$1" $cg_pairs) && _b=$(cg_ir "$1" $((2 * cg_pairs))) &&
	    [ -n "$_a" ] && [ -n "$_b" ] || {
		echo "bench: valgrind failed:" >&2
		tail -n 20 "$tmp/cg.err" >&2
		exit 1
	}
	awk -v a="$_a" -v b="$_b" -v p=$cg_pairs \
	    'BEGIN { printf "%.1f\n", (b - a) / p }'
}

if [ "${BENCH_CALLGRIND:-0}" = 1 ]; then
	command -v valgrind >/dev/null 2>&1 ||
	    die "BENCH_CALLGRIND=1 but valgrind is not installed"
	[ -f "$agent" ] || die "BENCH_CALLGRIND=1 but $agent is not built"
	echo "bench: callgrind, workload 1, $cg_pairs and" \
	    "$((2 * cg_pairs)) pairs" >&2
	cg_plain=$(cg_pair "") || exit 1
	cg_hooks=$(cg_pair 1099511627776) || exit 1
	cg_rate=$(cg_pair 524288) || exit 1
	{
		echo
		echo "## Instructions per malloc/free pair" \
		    "(callgrind, workload 1)"
		echo
		echo "| run | instructions per pair | ratio |"
		echo "|---|---:|---:|"
		awk -v p="$cg_plain" -v h="$cg_hooks" -v r="$cg_rate" 'BEGIN {
			printf "| plain | %.1f | 1.00x |\n", p
			printf "| agent, hooks only (rate 1T) |"
			printf " %.1f | %.2fx |\n", h, h / p
			printf "| agent, default rate (512 KiB) |"
			printf " %.1f | %.2fx |\n", r, r / p
		}'
	} >>"$results"
	sed -n '/^## Instructions/,$p' "$results"
	echo
fi
echo "bench: results written to $results" >&2
