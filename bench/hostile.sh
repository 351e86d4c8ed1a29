#!/bin/sh
# The hostile-profile benchmark (make bench; issue 9, item 5):
# t/t0036-hostile-bounds.sh at full size.  t/lib/hthostile.py writes
#   sites   200,000 sites of 64 distinct frames (12.8M addresses, 121 MB),
#           in a module whose file is missing;
#   mods    65,536 modules nested in one, 65,536 sites of 4 frames (17 MB);
#   bare    1,200,000 sites without frames (115 MB);
#   self    2,000 sites of 64 frames in heaptool's own code (its DWARF: 128,000
#           frames, all its text's distinct addresses);
#   libc    4,000 sites of 64 frames in libc.so.6 (256,000 distinct
#           addresses: the symbolizer stops at its default limit,
#           100,000; with libc's debug information installed, each is a
#           DWARF lookup);
# and each of report (summary, --detail, --json --detail, pprof, collapsed,
# svg) and diff of the file with itself (summary, --detail, --json
# --detail) runs once under t/tap/runmax: its peak resident set against
# heaptool(1)'s bound, 64 MiB + 3 x the size of the profiles read, and its
# wall-clock and CPU time against the 5 s.  The figures are written
# to bench/hostile-results.txt and appended to bench/results.md.
#
# usage: hostile.sh BUILDDIR SRCDIR
set -u
top=${1:?usage: hostile.sh BUILDDIR SRCDIR}
src=${2:?usage: hostile.sh BUILDDIR SRCDIR}
ht=$top/heaptool
runmax=$top/t/tap/runmax
gen=$src/t/lib/hthostile.py
if ! command -v python3 >/dev/null 2>&1; then
	echo "hostile benchmark: skipped, python3 not found"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/heaptool-hostile.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# The module file of "self" must stay what the profile says.
cp "$ht" "$tmp/heaptool-code"
python3 "$gen" sites "$tmp/sites.heap" &&
    python3 "$gen" modules "$tmp/mods.heap" &&
    python3 "$gen" sites "$tmp/bare.heap" --sites 1200000 --zero-frames &&
    python3 "$gen" sites "$tmp/self.heap" --sites 2000 \
	--module "$tmp/heaptool-code" || {
	echo "hostile benchmark: hthostile.py failed" >&2
	exit 1
}
libc=/usr/lib/x86_64-linux-gnu/libc.so.6
files="sites mods bare self"
if [ -f $libc ] &&
    python3 "$gen" sites "$tmp/libc.heap" --sites 4000 --module $libc; then
	files="$files libc"
fi

row() {
	_name=$1
	_bytes=$2
	shift 2
	set -- $("$runmax" 600 "$tmp/out" "$@")
	awk -v n="$_name" -v st="$1" -v rss="$2" -v wall="$3" -v cpu="$4" \
	    -v b="$_bytes" 'BEGIN {
		bound = 64 * 1024 + 3 * b / 1024
		printf "%-34s %7s %9.1f %9.1f %5.0f%% %8.2f %8.2f  %s %s\n",
		    n, st, rss / 1024, bound / 1024, 100 * rss / bound,
		    wall, cpu, rss <= bound ? "PASS" : "MISS",
		    wall <= 5 ? "PASS" : "MISS"
	}'
}

{
echo
echo "hostile profiles (peak MiB against 64 MiB + 3 x the file's size;" \
    "5 s wall)"
printf '%-34s %7s %9s %9s %6s %8s %8s  %s\n' run status peak bound use \
    "wall s" "cpu s" "bound 5s"
for f in $files; do
	p=$tmp/$f.heap
	size=$(wc -c <"$p")
	echo "$f.heap: $size bytes"
	row "  report" $size "$ht" report "$p"
	row "  report --detail" $size "$ht" report --detail "$p"
	row "  report --json --detail" $size "$ht" report --json --detail "$p"
	for v in pprof collapsed svg; do
		row "  report --format $v" $size "$ht" report --format $v "$p"
	done
	row "  diff" $((2 * size)) "$ht" diff "$p" "$p"
	row "  diff --detail" $((2 * size)) "$ht" diff --detail "$p" "$p"
	row "  diff --json --detail" $((2 * size)) "$ht" diff --json \
	    --detail "$p" "$p"
done
} | tee "$top/bench/hostile-results.txt"
[ -f "$top/bench/results.md" ] &&
    cat "$top/bench/hostile-results.txt" >>"$top/bench/results.md"
exit 0
