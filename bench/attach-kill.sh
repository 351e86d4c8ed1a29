#!/bin/sh
# The tracer-death stress (make bench; issue 9 item 1): t/t0023-attach-kill.sh
# with 2,000 attaches per setting instead of 200: heaptool attach SIGKILLed
# at random instants on 8-thread allocator-hammering targets, left alone,
# under a SIGUSR1 storm, and stopped and continued, where no target may die
# or hang and each must compute what it computes without heaptool.  The
# test's TAP output goes to bench/attach-kill-results.txt; the script fails
# if any check does.
#
# usage: attach-kill.sh BUILDDIR [SRCDIR]
#     environment: BENCH_KILLS, attaches per setting (default 2000)
set -u
top=${1:?usage: attach-kill.sh BUILDDIR [SRCDIR]}
src=${2:-$(cd "$(dirname "$0")/.." && pwd)}
out=$top/bench/attach-kill-results.txt
HT_BUILDDIR=$top HT_SRCDIR=$src HT_KILL_ATTACHES=${BENCH_KILLS:-2000} \
    sh "$src/t/t0023-attach-kill.sh" >"$out" 2>&1
st=$?
grep -v '^ok ' "$out"
fails=$(grep -c '^not ok' "$out")
if [ "$st" -ne 0 ] || [ "$fails" -ne 0 ]; then
	echo "attach-kill: $fails checks failed (status $st); see $out" >&2
	exit 1
fi
echo "attach-kill: every check passed; see $out"
