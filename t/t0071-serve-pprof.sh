#!/bin/sh
# heaptool serve's /debug/pprof/heap read by go tool pprof (golang-go), on
# t/target/attach-pipe attached at rate 1, whose sites are known exactly:
# keep_blocks (20 x 1000 bytes) and dlfix_keep (9 x 77 bytes, in a
# dlopen'ed library).  The served profile's top entry is keep_blocks, in
# space and in objects, under its own name (symbolized by heaptool).
# ?seconds=2 is a delta: 5 more blocks kept once the first of its two
# profiles is taken (the server's --verbose line says when) make
# keep_blocks +5000 bytes, +5 objects, and dlfix_keep, unchanged, is not in
# it; ?gc=1 is accepted.  A session started during a delta makes it a 503;
# SIGTERM during one ends serve (status 0) and answers it with a 503.
# After detach, and once the process is gone, the profile is a 503 with
# the reason, and serve goes on.  A delta of what was freed
# (t/target/dump-target freeing its blocks) has negative values, as go
# tool pprof reads them.
. "$(dirname "$0")/tap/libtap.sh"
. "$HT_SRCDIR/t/lib/ptrace.sh"
. "$HT_SRCDIR/t/lib/htserve.sh"

serve_attach_prereq
[ -x "$TARGETS/dump-target" ] ||
    bail "$TARGETS/dump-target not built (make check builds it)"
command -v go >/dev/null 2>&1 || skip_all "go not found (golang-go)"
# go keeps its caches and pprof its fetched profiles under these.
export HOME="$HT_TMP/home" GOPATH="$HT_TMP/go" GOCACHE="$HT_TMP/gocache" \
    PPROF_TMPDIR="$HT_TMP/pprof"
mkdir -p "$HOME" "$PPROF_TMPDIR"
go tool pprof -h >/dev/null 2>&1 || skip_all "go tool pprof does not run"

fixture_start
serve_start s -p $fx

# pprof NAME ARGS: go tool pprof -top ARGS, output in $HT_TMP/NAME.top;
# its first entry's value and name in $top_value and $top_name.
pprof() {
	_n=$1
	shift
	timeout $T go tool pprof -top "$@" >"$HT_TMP/$_n.top" 2>"$HT_TMP/$_n.perr"
	_s=$?
	set -- $(awk '/^ *flat  *flat%/ { getline; print $1, $6; exit }' \
	    "$HT_TMP/$_n.top")
	top_value=${1-}
	top_name=${2-}
	return $_s
}

pprof p1 -unit=B "$base/debug/pprof/heap"
ok $? "go tool pprof reads /debug/pprof/heap"
[ $? -eq 0 ] || diag "$(head -c 2000 "$HT_TMP/p1.perr")"
is "20000B keep_blocks" "$top_value $top_name" \
    "its top entry: keep_blocks, 20000 bytes in use"
ok $(grep -q '^Type: inuse_space$' "$HT_TMP/p1.top" &&
    grep -Eq '^ +693B .* dlfix_keep$' "$HT_TMP/p1.top"; echo $?) \
    "inuse_space by default; dlfix_keep's 693 bytes, named, in its library"
pprof p2 -sample_index=alloc_objects "$base/debug/pprof/heap"
is "20 keep_blocks" "$top_value $top_name" \
    "alloc_objects: keep_blocks, 20 objects"
get gz /debug/pprof/heap
ok $([ "$code" = 200 ] &&
    [ "$(head -c 2 "$HT_TMP/gz.body" | od -An -tx1 | tr -d ' ')" = 1f8b ] &&
    grep -qi '^content-type: application/octet-stream' "$HT_TMP/gz.head"
    echo $?) "the body is gzip'd, as Go serves it"
for t in alloc_objects alloc_space inuse_objects inuse_space; do
	timeout $T go tool pprof -raw "$HT_TMP/gz.body" 2>/dev/null |
	    grep -q "$t" || break
done
ok $? "the sample types alloc_objects, alloc_space, inuse_objects, inuse_space"

# The delta: go tool pprof asks for it; once the server has taken the
# first profile, 5 more blocks.
nfirst=0
delta_begun() {
	nfirst=$((nfirst + 1))
	wait_line "$HT_TMP/s.err" 'first profile taken' $nfirst ||
	    bail "no delta began"
}
pprof d1 -unit=B "$base/debug/pprof/heap?seconds=2" >/dev/null &
pp=$!
others="$others $pp"
delta_begun
fixture_do 'keep 5' 'kept 5'
stopped $pp
is 0 "$st" "go tool pprof reads ?seconds=2"
[ "$st" -eq 0 ] || diag "$(head -c 2000 "$HT_TMP/d1.perr")"
set -- $(awk '/^ *flat  *flat%/ { getline; print $1, $6; exit }' "$HT_TMP/d1.top")
is "5000B keep_blocks" "${1-} ${2-}" \
    "the delta: keep_blocks +5000 bytes, the blocks kept during it"
ok $(! grep -q dlfix_keep "$HT_TMP/d1.top"; echo $?) \
    "the delta: dlfix_keep, unchanged, is not in it"
ok $(grep -q '^Duration: 2' "$HT_TMP/d1.top"; echo $?) \
    "the delta's duration is the 2 seconds"

get d2 '/debug/pprof/heap?seconds=2&gc=1' &
gp=$!
delta_begun
fixture_do 'keep 3' 'kept 3'
wait $gp
pprof d2 -sample_index=alloc_objects "$HT_TMP/d2.body"
ok $([ "$top_value $top_name" = "3 keep_blocks" ] &&
    ! grep -q dlfix_keep "$HT_TMP/d2.top"; echo $?) \
    "?gc=1 accepted: a delta of 3 objects allocated at keep_blocks"

get d3 '/debug/pprof/heap?seconds=2' &
gp=$!
delta_begun
timeout $T "$HEAPTOOL" start -p $fx --rate 1 --restart >/dev/null 2>&1 ||
    bail "start --restart failed"
wait $gp
ok $(grep -q "^heaptool: target $fx: a new session (2) began" \
    "$HT_TMP/d3.body"; echo $?) "a session started during a delta: 503, why"

# SIGTERM while a delta waits its 100 seconds.
get d4 '/debug/pprof/heap?seconds=100' &
gp=$!
others="$others $gp"
delta_begun
kill -TERM $s_pid
stopped $s_pid
is 0 "$st" "SIGTERM during a delta: serve ends, status 0"
wait $gp
# (get ran in the background: its status is in the headers only.)
ok $(grep -q '^HTTP/1.1 503' "$HT_TMP/d4.head" &&
    grep -q '^heaptool: serve: stopping' "$HT_TMP/d4.body"; echo $?) \
    "the waiting delta is answered 503"
[ $? -eq 0 ] || diag "$(cat "$HT_TMP/d4.head" "$HT_TMP/d4.body" "$HT_TMP/d4.curl")"

serve_start s2 -p $fx --cache 0
timeout $T "$HEAPTOOL" detach -p $fx >/dev/null 2>&1 || bail "detach failed"
get g1 /debug/pprof/heap
ok $([ "$code" = 503 ] && [ "$(wc -l <"$HT_TMP/g1.body")" -eq 1 ] &&
    grep -q "^heaptool: target $fx: " "$HT_TMP/g1.body"; echo $?) \
    "after detach: 503, one line why"
[ $? -eq 0 ] || diag "status $code: $(cat "$HT_TMP/g1.body")"
echo quit >&7
stopped $fx
get g2 /debug/pprof/heap
ok $([ "$code" = 503 ] &&
    grep -q "^heaptool: target $fx: no such process" "$HT_TMP/g2.body"
    echo $?) "the process gone: 503, no such process"
get g3 /debug/pprof/
ok $([ "$code" = 200 ] && alive $s2_pid; echo $?) "serve goes on"

# What shrinks: t/target/dump-target keeps 10 x 1000 bytes at dt_keep and
# 3 x 500 at dt_other, and frees them all during a delta, whose values are
# then negative, as pprof reads them.
exec 7>&-
rm -f "$HT_TMP/fx.in" "$HT_TMP/fx.out"
mkfifo "$HT_TMP/fx.in"
"$TARGETS/dump-target" <"$HT_TMP/fx.in" >"$HT_TMP/fx.out" 2>&1 &
fx=$!
exec 7>"$HT_TMP/fx.in"
wait_line "$HT_TMP/fx.out" '^ready' || bail "dump-target did not start"
timeout $T "$HEAPTOOL" attach "$fx" >/dev/null 2>&1 || bail "attach failed"
timeout $T "$HEAPTOOL" start -p "$fx" --rate 1 >/dev/null 2>&1 ||
    bail "start failed"
fixture_do 'alloc 10 1000' 'done alloc 10 1000'
fixture_do 'other 3 500' 'done other 3 500'
serve_start s3 -p $fx
nfirst=0
get n1 '/debug/pprof/heap?seconds=2' &
gp=$!
wait_line "$HT_TMP/s3.err" 'first profile taken' || bail "no delta began"
fixture_do free 'done free'
wait $gp
pprof n1 -unit=B "$HT_TMP/n1.body"
ok $([ "$top_value $top_name" = "-10000B dt_keep" ] &&
    grep -Eq '^ +-1500B .* dt_other$' "$HT_TMP/n1.top"; echo $?) \
    "a delta of what was freed: dt_keep -10000 bytes, dt_other -1500"
[ $? -eq 0 ] || diag "$(cat "$HT_TMP/n1.top")"
pprof n2 -sample_index=alloc_space "$HT_TMP/n1.body"
ok $(grep -q 'Total samples = 0 *$' "$HT_TMP/n2.top"; echo $?) \
    "and nothing allocated during it"
done_testing
