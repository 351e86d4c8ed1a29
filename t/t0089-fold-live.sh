#!/bin/sh
# Allocator wrappers folded in the live views too (issue 14): on
# t/target/fold-target (its header comment gives the stacks), watched live
# under heaptool run --rate 1 --live,
# - heaptool top names each site at its first frame outside the built-in
#   wrappers (site_x, not xmalloc; site_g, not g_malloc0 or g_malloc;
#   site_i, whose xzalloc is inlined), at its SITE line, with its exact
#   bytes and samples; a wrapper not on the list (my_pool_alloc) stays;
# - heaptool serve's /metrics labels the same sites the same way;
# - its /debug/pprof/heap, read by go tool pprof -top, has the sites'
#   functions as the leaves, no wrapper's.
. "$(dirname "$0")/tap/libtap.sh"

FX=$TARGETS/fold-target
SRC=$HT_SRCDIR/t/target/fold-target.c
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$FX" ] || bail "$FX not built (make check builds it)"
command -v curl >/dev/null 2>&1 || skip_all "curl not found"
unset HEAPTOOL_SEED LD_PRELOAD
T=60
# No user's fold file.
XDG_CONFIG_HOME=$HT_TMP/config
export XDG_CONFIG_HOME

plan 9

run_pid=
srv=
cleanup() {
	exec 7>&- 2>/dev/null
	[ -n "$srv" ] && kill -9 $srv 2>/dev/null
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	[ -n "$run_pid" ] && wait "$run_pid" 2>/dev/null
	rm -rf "$HT_TMP"
}
trap cleanup EXIT

line() {
	grep -n "/\* SITE $1 \*/" "$SRC" | cut -d: -f1
}

mkfifo "$HT_TMP/in"
"$HEAPTOOL" run --rate 1 --live -o "$HT_TMP/f.heap" -- "$FX" wait \
    <"$HT_TMP/in" >"$HT_TMP/fx.out" 2>"$HT_TMP/run.err" &
run_pid=$!
exec 7>"$HT_TMP/in"
wait_line "$HT_TMP/fx.out" '^ready$' ||
    bail "fold-target never said ready: $(cat "$HT_TMP/run.err")"
pid=$(sed -n 's/^heaptool: running .* as pid \([0-9]*\); .*/\1/p' \
    "$HT_TMP/run.err")
[ -n "$pid" ] || bail "heaptool run --live said no pid"

timeout $T "$HEAPTOOL" top -p "$pid" --count 1 --top 0 --bytes \
    >"$HT_TMP/top.out" 2>"$HT_TMP/top.err"
ok $? "heaptool top --count 1, plain text" || diag "$(cat "$HT_TMP/top.err")"

# row FUNC LINE BYTES SAMPLES: top has the row of that site.
row() {
	grep -Eq "^ +$3 B +0 B +- +$4  $1  fold-target\.c:$2\$" "$HT_TMP/top.out"
}
row site_x "$(line site_x)" 1000 10 && row site_g "$(line site_g)" 1000 5 &&
    row site_i "$(line site_i)" 1600 4
ok $? "top: site_x, site_g and site_i at their lines, exact" ||
    diag "$(cat "$HT_TMP/top.out")"
! grep -Eq "  (xmalloc|g_malloc|g_malloc0|xzalloc)  " "$HT_TMP/top.out"
ok $? "top: no site named by a wrapper of the built-in list"
grep -Eq "^ +900 B +0 B +- +3  my_pool_alloc  fold-target\.c:" "$HT_TMP/top.out"
ok $? "top: my_pool_alloc, not on the list, stays the site"

"$HEAPTOOL" serve -p "$pid" --listen 127.0.0.1:0 --top 50 \
    >"$HT_TMP/srv.out" 2>"$HT_TMP/srv.err" &
srv=$!
wait_line "$HT_TMP/srv.out" '^heaptool serve: process .* on http://' ||
    bail "serve did not start: $(cat "$HT_TMP/srv.err")"
base=$(sed -n 's|^heaptool serve: process .* on \(http://[^/]*\)/.*|\1|p' \
    "$HT_TMP/srv.out")
curl -sS --max-time $T -o "$HT_TMP/metrics" "$base/metrics"
ok $? "serve: /metrics"
# series FUNC LINE BYTES: the site's in-use series.
series() {
	grep -Eq "^heaptool_site_inuse_bytes\{function=\"$1\",location=\"[^\"]*fold-target\.c:$2\"\} $3\$" \
	    "$HT_TMP/metrics"
}
series site_x "$(line site_x)" 1000 && series site_g "$(line site_g)" 1000 &&
    series site_i "$(line site_i)" 1600
ok $? "/metrics: site_x, site_g and site_i, exact" ||
    diag "$(grep site_inuse_bytes "$HT_TMP/metrics")"
! grep -Eq '^heaptool_site_[a-z_]*\{function="(xmalloc|g_malloc|g_malloc0|xzalloc)"' \
    "$HT_TMP/metrics"
ok $? "/metrics: no series named by a wrapper of the built-in list"

if command -v go >/dev/null 2>&1; then
	HOME=$HT_TMP timeout 120 go tool pprof -top -sample_index=inuse_space \
	    "$base/debug/pprof/heap" >"$HT_TMP/pprof.top" 2>"$HT_TMP/pprof.err"
	ok $? "go tool pprof -top reads /debug/pprof/heap" ||
	    diag "$(head -c 1000 "$HT_TMP/pprof.err")"
	# The flat column (the first) is a leaf's: the wrappers have none.
	awk '$6 == "site_x" || $6 == "site_g" || $6 == "site_i" { n++ }
	    ($6 == "xmalloc" || $6 == "g_malloc" || $6 == "g_malloc0" ||
	     $6 == "xzalloc") && $1 != "0" { bad++ }
	    END { exit !(n == 3 && bad == 0) }' "$HT_TMP/pprof.top"
	ok $? "pprof: site_x, site_g and site_i are leaves, no wrapper is" ||
	    diag "$(cat "$HT_TMP/pprof.top")"
else
	skip "go not found (Debian's golang-go)"
	skip "go not found (Debian's golang-go)"
fi
