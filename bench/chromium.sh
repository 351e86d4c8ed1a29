#!/bin/sh
# chromium under heaptool (issue 11): headless chromium dumps the DOM of a
# page whose script builds 100,000 objects, run by heaptool at rate 1 with
# the inline backend (chromium's executable defines malloc, free, the
# operators new and delete: PartitionAlloc's shims) and with the GOT
# backend alone, next to the same command plain under /usr/bin/time -v.
# Prints each run's summary (allocated, objects, peak, RSS), the maximum
# RSS of the plain run, and the inline coverage account (report --coverage:
# which allocator functions of chromium are hooked inline, which refused
# and why).  The figures are of the browser process, the one heaptool runs:
# its renderer, GPU and utility processes are exec'd children, which heaptool
# run does not profile (--follow-forks follows forks without exec only).
# Skips, saying why, where chromium is not installed.
#
# usage: chromium.sh [BUILDDIR]
# environment:
#   CHROMIUM=PATH  the chromium executable (default /usr/lib/chromium/chromium,
#                  the binary behind Debian's /usr/bin/chromium script: the
#                  inline default looks at CMD's executable, not a script)
#   BENCH_RUNS=N   runs of each backend (default 3)
set -u
export LC_ALL=C

builddir=$(cd "${1:-.}" && pwd) || exit 1
heaptool=$builddir/heaptool
chromium=${CHROMIUM:-/usr/lib/chromium/chromium}
results=$builddir/bench/chromium-results.txt
runs=${BENCH_RUNS:-3}

if [ ! -x "$chromium" ]; then
	echo "chromium: skipped: $chromium is not installed (CHROMIUM=PATH)" >&2
	exit 0
fi
[ -x "$heaptool" ] || { echo "chromium: $heaptool is not built" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/heaptool-chromium.XXXXXX") || exit 1
XDG_STATE_HOME=$tmp/state
export XDG_STATE_HOME
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

cat >"$tmp/page.html" <<'EOF'
<!doctype html><html><body><div id="out"></div><script>
var a = [];
for (var i = 0; i < 100000; i++) a.push({i: i, s: "item" + i, v: [i, i * 2]});
var sum = 0;
for (var j = 0; j < a.length; j++) sum += a[j].v[1];
document.getElementById("out").textContent = "objects " + a.length + " sum " + sum;
</script></body></html>
EOF

# chromium's own flags: a profile directory of this run's, no GPU process
# work that needs a display.
set -- --headless --no-sandbox --user-data-dir="$tmp/profile" \
    --dump-dom "file://$tmp/page.html"

# check OUT: the page ran (the DOM holds the script's result).
check() {
	grep -q 'objects 100000 sum' "$1" || {
		echo "chromium: the page's script did not run:" >&2
		head -c 2000 "$2" >&2
		exit 1
	}
}

{
	echo "chromium under heaptool: $("$chromium" --version 2>/dev/null)"
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load" \
	    "$(cut -d ' ' -f 1-3 /proc/loadavg)"
	echo

	/usr/bin/time -v "$chromium" "$@" >"$tmp/dom" 2>"$tmp/time" || {
		echo "chromium: plain run failed:" >&2
		tail -n 30 "$tmp/time" >&2
		exit 1
	}
	check "$tmp/dom" "$tmp/time"
	echo "plain, /usr/bin/time -v:" \
	    "$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' \
	    "$tmp/time") KiB max RSS (the largest process of the tree)"

	# The browser's allocations vary from run to run (its threads race):
	# the backends take turns, $runs runs each.
	i=0
	while [ $i -lt "$runs" ]; do
		i=$((i + 1))
		for b in got inline; do
			/usr/bin/time -v -o "$tmp/$b.time" "$heaptool" run \
			    --rate 1 --backend $b -o "$tmp/$b.heap" -- \
			    "$chromium" "$@" >"$tmp/dom" 2>"$tmp/$b.err" || {
				echo "chromium: heaptool run --backend $b" \
				    "failed:" >&2
				tail -n 30 "$tmp/$b.err" >&2
				exit 1
			}
			check "$tmp/dom" "$tmp/$b.err"
			echo
			echo "run $i: heaptool run --rate 1 --backend $b" \
			    "(browser process):"
			grep -E '^pid|^  (allocated|freed|peak|in use|RSS|coverage)' \
			    "$tmp/$b.err"
			echo "  max RSS (time -v)" \
			    "$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' \
			    "$tmp/$b.time") KiB"
		done
	done
	echo
	echo "what heaptool run said of the inline hooks (last run):"
	grep '^heaptool: inline' "$tmp/inline.err"

	echo
	echo "heaptool report --coverage (inline backend's profile):"
	"$heaptool" report --coverage "$tmp/inline.heap" 2>&1
} >"$results" 2>&1
rc=$?
cat "$results"
exit $rc
