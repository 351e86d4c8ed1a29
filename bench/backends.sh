#!/bin/sh
# The backends benchmark (make bench): bench/churn's loop (workload 1 of
# bench/run.sh) under each of heaptool's backends, next to the same binary
# plain and to the GOT backend on the same process.  Four binaries:
#   churn      glibc's malloc: plain, GOT backend at the default rate and
#              at rate 1 (heaptool run);
#   churn-own  an allocator of the executable's own (t/target/inline-alloc.c):
#              plain, inline backend (run --backend inline, the default
#              there) at the default rate and at rate 1, and --backend got,
#              which does not see it;
#   churn-jea  Debian's libjemalloc.a linked in: plain, inline, got;
#   churn-je   Debian's libjemalloc.so.2 with
#              MALLOC_CONF=prof:true,prof_active:false: plain, the jemalloc
#              backend (attach chooses it; start at the default rate) and
#              the GOT backend on the same kind of process (start --backend
#              got); and plain without MALLOC_CONF, for what opt.prof costs.
# Each run opens churn's gate (churn PAIRS gate) once attached or started,
# and churn prints its loop's own wall and CPU seconds: start-up, attach
# and the final profile, which differ by backend, are left out.  Every
# round runs every mode once, in turn, so that the drift of this shared
# machine hits all alike; a ratio is per round against the same binary
# plain (of the same round), then the median over rounds.
#
# Then bench/inline-cost.sh (with gdb): instructions per malloc/free pair,
# GOT hooks against inline hooks.
#
# usage: backends.sh [BUILDDIR]
# environment:
#   BENCH_RUNS=N     rounds (default 9)
#   BENCH_PAIRS=N    churn's pairs a run (default 20000000)
#   BENCH_INLINE_COST=0  skip bench/inline-cost.sh
set -u
export LC_ALL=C

builddir=$(cd "${1:-.}" && pwd) || exit 1
srcdir=$(cd "$(dirname "$0")/.." && pwd) || exit 1
heaptool=$builddir/heaptool
bin=$builddir/bench
runs=${BENCH_RUNS:-9}
pairs=${BENCH_PAIRS:-20000000}
results=$bin/backends-results.md
jemconf=prof:true,prof_active:false

die() {
	echo "backends: $*" >&2
	exit 1
}

case $runs in
''|*[!0-9]*|0) die "BENCH_RUNS must be a positive integer, not '$runs'" ;;
esac
case $pairs in
''|*[!0-9]*|0) die "BENCH_PAIRS must be a positive integer, not '$pairs'" ;;
esac
for f in "$heaptool" "$bin/churn" "$bin/churn-own"; do
	[ -x "$f" ] || die "$f is not built (run make bench)"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/heaptool-backends.XXXXXX") || exit 1
XDG_STATE_HOME=$tmp/state
export XDG_STATE_HOME
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# The modes: "NAME|BASE|HOW|BINARY|ARGS".  BASE is the mode it is divided
# by; HOW is plain, run (ARGS go to heaptool run) or attach (ARGS go to
# heaptool start).  The binary's environment is chosen by its name.
modes() {
	echo "churn plain|-|plain|churn|"
	echo "churn, GOT, default rate|churn plain|run|churn|"
	echo "churn, GOT, rate 1|churn plain|run|churn|--rate 1"
	echo "churn-own plain|-|plain|churn-own|"
	echo "churn-own, inline, default rate|churn-own plain|run|churn-own|--backend inline"
	echo "churn-own, inline, rate 1|churn-own plain|run|churn-own|--backend inline --rate 1"
	echo "churn-own, GOT (sees nothing)|churn-own plain|run|churn-own|--backend got"
	if [ -x "$bin/churn-jea" ]; then
		echo "churn-jea plain|-|plain|churn-jea|"
		echo "churn-jea, inline, default rate|churn-jea plain|run|churn-jea|--backend inline"
		echo "churn-jea, GOT (sees nothing)|churn-jea plain|run|churn-jea|--backend got"
	fi
	if [ -x "$bin/churn-je" ]; then
		echo "churn-je plain|-|plain|churn-je|"
		echo "churn-je, no MALLOC_CONF|churn-je plain|plain|churn-je-noprof|"
		echo "churn-je, jemalloc backend, default rate|churn-je plain|attach|churn-je|"
		echo "churn-je, GOT, default rate (attached)|churn-je plain|attach|churn-je|--backend got"
	fi
}

# wait_ready FILE: until churn said it waits at its gate.
wait_ready() {
	_n=0
	while ! grep -q '^ready' "$1" 2>/dev/null; do
		_n=$((_n + 1))
		[ $_n -lt 600 ] || return 1
		sleep 0.05
	done
}

# once HOW BINARY ARGS: one run; prints "WALL CPU" of churn's loop.
once() {
	_how=$1
	_exe=$2
	_args=$3
	_env=
	case $_exe in
	churn-je)	_env="MALLOC_CONF=$jemconf" ;;
	churn-je-noprof) _exe=churn-je ;;
	esac
	rm -f "$tmp/in" "$tmp/out"
	mkfifo "$tmp/in" || return 1
	case $_how in
	plain)	env $_env "$bin/$_exe" "$pairs" gate <"$tmp/in" \
		    >"$tmp/out" 2>"$tmp/err" & ;;
	run)	# shellcheck disable=SC2086
		env $_env "$heaptool" run $_args -o "$tmp/x.heap" -- \
		    "$bin/$_exe" "$pairs" gate <"$tmp/in" >"$tmp/out" \
		    2>"$tmp/err" & ;;
	attach)	env $_env "$bin/$_exe" "$pairs" gate <"$tmp/in" \
		    >"$tmp/out" 2>"$tmp/err" & ;;
	esac
	pid=$!
	exec 8>"$tmp/in"
	wait_ready "$tmp/out" || { echo "backends: $_exe never got ready" >&2
		cat "$tmp/err" >&2; return 1; }
	if [ "$_how" = attach ]; then
		"$heaptool" attach "$pid" >"$tmp/attach" 2>&1 &&
		    # shellcheck disable=SC2086
		    "$heaptool" start -p "$pid" $_args --no-final-dump \
		    >"$tmp/start" 2>&1 || {
			echo "backends: attach/start failed:" >&2
			cat "$tmp/attach" "$tmp/start" >&2
			return 1
		}
		# Which backend the session took, for the table.
		"$heaptool" status -p "$pid" 2>&1 |
		    sed -n 's/^  backend  *\([a-z]*\):.*/backend \1/p' |
		    head -n 1 >"$tmp/backend.$_exe.${_args:-default}"
	fi
	echo go >&8
	exec 8>&-
	wait "$pid"
	_rc=$?
	pid=
	[ $_rc -eq 0 ] || { echo "backends: $_how $_exe $_args: status $_rc" \
		>&2; head -c 2000 "$tmp/err" >&2; return 1; }
	tail -n 1 "$tmp/out"
}

modes >"$tmp/modes"
nmodes=$(wc -l <"$tmp/modes")
echo "backends: $nmodes modes, $runs rounds, churn $pairs pairs" >&2
# A round not counted: page cache, CPU frequency, the first attach.
round=0
while [ $round -le "$runs" ]; do
	m=0
	while IFS='|' read -r name base how exe args; do
		m=$((m + 1))
		t=$(once "$how" "$exe" "$args" </dev/null) || exit 1
		[ $round -eq 0 ] || echo "$round $m $t" >>"$tmp/times"
	done <"$tmp/modes"
	round=$((round + 1))
done
load=$(cut -d ' ' -f 1-3 /proc/loadavg)

# The table: per mode, its median loop time and, against its base of the
# same round, the median wall and CPU ratios and the wall ratio's range.
awk -F'|' -v times="$tmp/times" '
function median(a, n,    i, j, t) {
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ name[NR] = $1; idx[$1] = NR; base[NR] = $2 }
END {
	while ((getline l < times) > 0) {
		split(l, f, " ")
		w[f[1], f[2]] = f[3]; c[f[1], f[2]] = f[4]
		if (f[1] > rounds) rounds = f[1]
	}
	for (m = 1; m <= NR; m++) {
		b = base[m] == "-" ? 0 : idx[base[m]]
		lo = hi = 0
		for (r = 1; r <= rounds; r++) {
			t[r] = w[r, m]
			if (b) {
				rw[r] = w[r, m] / w[r, b]
				rc[r] = c[r, m] / c[r, b]
				if (r == 1 || rw[r] < lo) lo = rw[r]
				if (r == 1 || rw[r] > hi) hi = rw[r]
			}
		}
		if (b)
			printf "| %s | %.3f s | %.3fx | %.2f..%.2fx | %.3fx |\n",
			    name[m], median(t, rounds), median(rw, rounds),
			    lo, hi, median(rc, rounds)
		else
			printf "| %s | %.3f s | 1 | - | 1 |\n", name[m],
			    median(t, rounds)
	}
}' "$tmp/modes" >"$tmp/rows"

# Instructions per malloc/free pair, GOT against inline (bench/inline-cost.sh).
cost=
if [ "${BENCH_INLINE_COST:-1}" != 0 ] && command -v gdb >/dev/null 2>&1 &&
    [ -x "$bin/pairs-glibc" ] && [ -x "$bin/pairs-own" ]; then
	echo "backends: bench/inline-cost.sh" >&2
	sh "$srcdir/bench/inline-cost.sh" "$builddir" >"$tmp/cost" 2>&1 &&
	    cost=$(awk '
		/^  glibc, plain / { g0 = $3 }
		/^  glibc, GOT hooks / { g1 = $4 }
		/^  own, plain / { o0 = $3 }
		/^  own, inline hooks / { o1 = $4 }
		END {
			if (g0 == "" || g1 == "" || o0 == "" || o1 == "")
				exit 1
			printf "%d %d %d %d\n", g0, g1, o0, o1
		}' "$tmp/cost")
fi

{
	echo "# heaptool backends benchmark"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -sr), $(nproc) CPUs," \
	    "$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)."
	echo "bench/churn's loop, $pairs malloc/free pairs of 16..1039 B through"
	echo "a window of 1024 blocks, $runs rounds of every mode in turn"
	echo "(one more before, not counted).  Time: median loop wall time;"
	echo "ratio: median of the per-round wall-time ratios to the same binary"
	echo "plain, range their min..max; cpu: the same of the loop's CPU time."
	echo "Load average at the end: $load (1, 5, 15 min)."
	echo
	echo "| mode | time | ratio | range | cpu |"
	echo "|---|---:|---:|---:|---:|"
	cat "$tmp/rows"
	echo
	for f in "$tmp"/backend.*; do
		[ -f "$f" ] || continue
		_m=${f##*/backend.}
		echo "Attached churn-je, start ${_m#churn-je.}:" \
		    "$(cat "$f") (heaptool status)."
	done
	if [ -n "$cost" ]; then
		set -- $cost
		echo
		echo "Instructions per malloc/free pair (bench/inline-cost.sh, gdb" \
		    "record full, one pair_once at rate 1T):"
		echo
		echo "| hooks | plain | hooked | added a pair | added a call |"
		echo "|---|---:|---:|---:|---:|"
		echo "| GOT (glibc's malloc) | $1 | $2 | +$(($2 - $1)) |" \
		    "+$(awk -v d=$(($2 - $1)) 'BEGIN { printf "%.1f", d / 2 }') |"
		echo "| inline (the executable's own) | $3 | $4 | +$(($4 - $3)) |" \
		    "+$(awk -v d=$(($4 - $3)) 'BEGIN { printf "%.1f", d / 2 }') |"
		echo
		echo "Inline over GOT: +$(awk -v d=$((($4 - $3) - ($2 - $1))) \
		    'BEGIN { printf "%.1f", d / 2 }') instructions a call."
	else
		echo
		echo "Instructions per pair: not counted (BENCH_INLINE_COST=0," \
		    "no gdb, or bench/inline-cost.sh failed)."
	fi
} >"$results"
cat "$results"
echo "backends: results written to $results" >&2
