#!/bin/sh
# heaptool diff, baseline and report --diff.  No golden files: two exact
# profiles (--rate 1) of t/target/diff-grow, whose sites differ in ways its
# header documents, give every figure the diff must show; t/lib/htdiff.py
# checks that the sites' old, new and delta add up to the totals in every
# column (with and without --top), that the order is by growth and that
# each status fits its figures.  The second run is loaded at another
# address (setarch -R where it works, ASLR otherwise), and its sites must
# still match.  A profile diffed with itself changes nothing.
#
# The live part attaches to t/target/attach-pipe, which keeps 1000-byte
# blocks at one site on command: a baseline after 3 blocks, then 5 more,
# and report --diff shows exactly +5000 bytes in 5 objects at that site,
# the same document as heaptool diff of the baseline file and a dump.  It
# is skipped, with the reason, where ptrace is not permitted.
. "$(dirname "$0")/tap/libtap.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
for f in diff-grow attach-pipe; do
	[ -x "$TARGETS/$f" ] ||
	    bail "$TARGETS/$f not built (make check builds it)"
done
unset HEAPTOOL_SEED LD_PRELOAD
T=60	# seconds: any command that takes longer is hung

TAB=$(printf '\t')
: >"$HT_TMP/checks"
# want COMMAND ARGS: queue a check of t/lib/htdiff.py; checks runs the
# queue in one python3 (it starts slowly) and turns its lines into TAP.
want() {
	for _a in "$@"; do
		printf "'%s' " "$(printf '%s' "$_a" | sed "s/'/'\\\\''/g")"
	done >>"$HT_TMP/checks"
	echo >>"$HT_TMP/checks"
}
checks() {
	[ -s "$HT_TMP/checks" ] || return 0
	python3 "$HT_SRCDIR/t/lib/htdiff.py" - <"$HT_TMP/checks" \
	    >"$HT_TMP/py.out" 2>&1
	_pst=$?
	: >"$HT_TMP/checks"
	_pnot=0
	while IFS= read -r _pl; do
		case $_pl in
		"ok$TAB"*) ok 0 "${_pl#"ok$TAB"}" ;;
		"not ok$TAB"*) ok 1 "${_pl#"not ok$TAB"}"; _pnot=1 ;;
		*) diag "$_pl" ;;
		esac
	done <"$HT_TMP/py.out"
	[ "$_pst" -eq 0 ] || [ "$_pnot" -ne 0 ] ||
	    ok 1 "htdiff.py failed (status $_pst)"
}

# ht NAME ARGS: heaptool ARGS, stdout in $HT_TMP/NAME.out, stderr in
# $HT_TMP/NAME.err, status in $st.
ht() {
	_n=$1
	shift
	timeout $T "$HEAPTOOL" "$@" >"$HT_TMP/$_n.out" 2>"$HT_TMP/$_n.err"
	st=$?
}
# ht_ok NAME DESCRIPTION ARGS: as ht, and it must succeed, silently on
# stderr.
ht_ok() {
	_n=$1
	_d=$2
	shift 2
	ht "$_n" "$@"
	ok $([ $st -eq 0 ] && [ ! -s "$HT_TMP/$_n.err" ]; echo $?) "$_d"
	[ $st -eq 0 ] || diag "heaptool $* (status $st):" \
	    "$(head -c 2000 "$HT_TMP/$_n.err")"
}
# ht_fails NAME STATUS PATTERN DESCRIPTION ARGS: heaptool ARGS exits
# STATUS with nothing on stdout and one line on stderr, "heaptool: "
# followed by something that matches PATTERN.
ht_fails() {
	_n=$1
	_w=$2
	_p=$3
	_d=$4
	shift 4
	ht "$_n" "$@"
	_r=$([ $st -eq "$_w" ] && [ ! -s "$HT_TMP/$_n.out" ] &&
	    [ "$(wc -l <"$HT_TMP/$_n.err")" -eq 1 ] &&
	    grep -q "^heaptool: .*$_p" "$HT_TMP/$_n.err"; echo $?)
	ok $_r "$_d"
	[ $_r -eq 0 ] || diag "status $st: $(head -c 1000 "$HT_TMP/$_n.err")"
}

# two runs of diff-grow, the second at another address
old=$HT_TMP/old.heap
new=$HT_TMP/new.heap
timeout $T "$HEAPTOOL" run --rate 1 -o "$old" -- "$TARGETS/diff-grow" 5 old \
    >"$HT_TMP/run1.out" 2>"$HT_TMP/run1.err"
ok $([ $? -eq 0 ] && [ -s "$old" ]; echo $?) \
    "heaptool run --rate 1 diff-grow 5 old writes a profile"
# Without address space randomization the executable sits at one fixed
# address; with it, anywhere but there.
norand=
setarch "$(uname -m)" -R true 2>/dev/null &&
    norand="setarch $(uname -m) -R"
timeout $T $norand "$HEAPTOOL" run --rate 1 -o "$new" -- \
    "$TARGETS/diff-grow" 12 new >"$HT_TMP/run2.out" 2>"$HT_TMP/run2.err"
ok $([ $? -eq 0 ] && [ -s "$new" ]; echo $?) \
    "heaptool run --rate 1 diff-grow 12 new writes a profile"
[ -s "$old" ] && [ -s "$new" ] ||
    bail "no profiles: $(head -c 1000 "$HT_TMP/run1.err" "$HT_TMP/run2.err")"

# usage and runtime errors: one line, the exit status of the kind
ht_fails u1 2 "two profiles needed" "diff with one profile: usage error" \
    diff "$old"
ht_fails u2 2 "only two profiles" "diff with three profiles: usage error" \
    diff "$old" "$new" "$new"
ht_fails u3 2 "not a count" "diff --top 0: usage error" \
    diff --top 0 "$old" "$new"
ht_fails u4 2 "standard input holds one profile" "diff - -: usage error" \
    diff - -
ht_fails u5 2 "unknown option" "diff --sort: usage error" \
    diff --sort alloc "$old" "$new"
ht_fails e1 1 "diff $HT_TMP/none.heap: .*; check the file name" \
    "diff of a missing file: runtime error" diff "$HT_TMP/none.heap" "$new"
ht_fails e2 1 "diff $HT_SRCDIR/t/t0050-diff.sh: .*; pass a profile" \
    "diff of a file that is no profile: runtime error" \
    diff "$old" "$HT_SRCDIR/t/t0050-diff.sh"
ht_fails e3 2 "report --diff: .*heaptool diff OLD NEW" \
    "report --diff FILE: usage error" report --diff "$old"
ht_fails e4 2 "report --diff: .*text or JSON" \
    "report --diff --format pprof: usage error" \
    report --diff --format pprof -p 1

# Two different programs: the diff is made, with a warning (heaptool
# run's own profile of true(1) stands for the other program).  The diffs
# below, of one program, have none (ht_ok wants stderr empty).
timeout $T "$HEAPTOOL" run --rate 1 -o "$HT_TMP/other.heap" -- true \
    >/dev/null 2>&1
ht w1 diff "$old" "$HT_TMP/other.heap"
pid_of() {
	timeout $T "$HEAPTOOL" report --json "$1" | python3 -c 'import json, sys
print(json.load(sys.stdin)["pid"])'
}
opid=$(pid_of "$HT_TMP/other.heap")
npid=$(pid_of "$old")
ok $([ $st -eq 0 ] && [ -s "$HT_TMP/w1.out" ] &&
    [ "$(wc -l <"$HT_TMP/w1.err")" -eq 1 ] &&
    grep -qxF "heaptool: warning: $old is a profile of diff-grow (pid $npid), $HT_TMP/other.heap of true (pid $opid): the sites of two programs seldom match; compare profiles of one program" \
	"$HT_TMP/w1.err"; echo $?) \
    "diff of two programs: made, with a warning that names both"
[ $st -eq 0 ] && [ "$(wc -l <"$HT_TMP/w1.err")" -eq 1 ] ||
    diag "status $st: $(cat "$HT_TMP/w1.err")"

# the diff, exact
ht_ok d "diff --json --detail OLD NEW" diff --json --detail "$old" "$new"
mv "$HT_TMP/d.out" "$HT_TMP/d.json"
want sums "$HT_TMP/d.json"
want order "$HT_TMP/d.json"
want field "$HT_TMP/d.json" exact true
# 7 more blocks of 1000 at grow, 3 of 300 new, 4 of 200 gone, 4 of 500
# fewer at shrink.
want field "$HT_TMP/d.json" totals.inuse_bytes.delta 5100
want site "$HT_TMP/d.json" grow --index 0 status=changed \
    delta.inuse_bytes=7000 delta.inuse_objects=7 delta.alloc_bytes=7000 \
    delta.alloc_objects=7 old.inuse_bytes=5000 new.inuse_bytes=12000 \
    delta.inuse_bytes_low=7000 delta.inuse_bytes_high=7000
want site "$HT_TMP/d.json" only_new --index 1 status=new \
    delta.inuse_bytes=900 delta.inuse_objects=3 old.inuse_bytes=0 \
    old.samples=0 new.alloc_bytes=900
want site "$HT_TMP/d.json" only_old status=gone delta.inuse_bytes=-800 \
    delta.inuse_objects=-4 delta.alloc_bytes=-800 new.inuse_bytes=0 \
    old.inuse_objects=4
want site "$HT_TMP/d.json" shrink status=changed delta.inuse_bytes=-2000 \
    delta.inuse_objects=-4 old.inuse_objects=6 new.inuse_objects=2
want site "$HT_TMP/d.json" steady status=same delta.inuse_bytes=0 \
    delta.alloc_bytes=0 old.inuse_objects=10 new.inuse_objects=10
want site "$HT_TMP/d.json" churn status=same delta.alloc_bytes=0 \
    delta.freed_bytes=0 old.alloc_objects=50 new.freed_bytes=3200 \
    old.temporary_objects=50 new.temporary_objects=50 \
    delta.temporary_objects=0
# Every block of churn is freed before its thread allocates again: it is
# short-lived; the kept blocks of grow are not.
want site "$HT_TMP/d.json" grow --index 0 old.temporary_objects=0 \
    new.temporary_objects=0
for n in 1 2 4; do
	ht_ok d$n "diff --json --detail --top $n" \
	    diff --json --detail --top $n "$old" "$new"
	mv "$HT_TMP/d$n.out" "$HT_TMP/d$n.json"
	want sums "$HT_TMP/d$n.json"
	want order "$HT_TMP/d$n.json"
	want site "$HT_TMP/d$n.json" grow --index 0 delta.inuse_bytes=7000
done
# --top keeps the largest changes either way: grow, shrink (-2000), then
# only_new (+900) and only_old (-800).
want site "$HT_TMP/d2.json" shrink --index 1 delta.inuse_bytes=-2000
want field "$HT_TMP/d2.json" sites.2.status '"folded"'
want field "$HT_TMP/d4.json" sites.3.delta.inuse_bytes -2000
checks

# The sites matched although the second run was loaded elsewhere.
ht_ok r1 "report --json --detail OLD" report --json --detail "$old"
ht_ok r2 "report --json --detail NEW" report --json --detail "$new"
a1=$(python3 -c 'import json,sys
print([s for s in json.load(open(sys.argv[1]))["sites"]
       if s["frames"] and s["frames"][0]["function"] == "grow"][0]
      ["frames"][0]["address"])' "$HT_TMP/r1.out" 2>/dev/null)
a2=$(python3 -c 'import json,sys
print([s for s in json.load(open(sys.argv[1]))["sites"]
       if s["frames"] and s["frames"][0]["function"] == "grow"][0]
      ["frames"][0]["address"])' "$HT_TMP/r2.out" 2>/dev/null)
if [ -n "$a1" ] && [ "$a1" = "$a2" ]; then
	skip "both runs at one address ($a1): no address space" \
	    "randomization and no setarch -R here"
	skip "as above"
	skip "as above"
else
	want moved "$HT_TMP/r1.out" "$HT_TMP/r2.out" grow steady shrink
	checks
fi

# a profile against itself: nothing changed
ht_ok z "diff --json --detail OLD OLD" diff --json --detail "$old" "$old"
mv "$HT_TMP/z.out" "$HT_TMP/z.json"
want zero "$HT_TMP/z.json"
want sums "$HT_TMP/z.json"
checks
ht_ok zt "diff --detail OLD OLD (text)" diff --detail "$old" "$old"
ok $(grep -q '^6 sites: 0 new, 0 gone, 0 changed, 6 same;' \
    "$HT_TMP/zt.out" && ! grep -E '^#|^    allocated' "$HT_TMP/zt.out" |
    grep -q '[-+~][0-9]'; echo $?) "text: every site the same, no change signed"

# text
ht_ok t "diff --detail --bytes OLD NEW" diff --detail --bytes "$old" "$new"
first=$(grep -m 1 -A 4 '^#1 ' "$HT_TMP/t.out")
r=$(printf '%s\n' "$first" | sed -n 1p | grep -qxF \
    '#1 changed: in use +7000 B (5000 B -> 12000 B), +7 objects (5 -> 12)' &&
    printf '%s\n' "$first" | sed -n 4p | grep -q '^      grow (.*diff-grow\.c:'
    echo $?)
ok $r "text: the grown site first, +7000 B in 7 objects, stack grow"
[ $r -eq 0 ] || diag "$first"
ok $(grep -q '^  in use  *13896 B  *18996 B  *+5100 B$' "$HT_TMP/t.out" &&
    grep -q '^deltas are exact' "$HT_TMP/t.out" &&
    grep -q '^#[0-9]* gone: in use -800 B (800 B -> 0 B), -4 objects' \
    "$HT_TMP/t.out"; echo $?) \
    "text: totals old, new and delta; a gone site all -"
ok $(grep -q '^  short-lived  *50  *50  *0$' "$HT_TMP/t.out" &&
    grep -A 3 '^#[0-9]* same: ' "$HT_TMP/t.out" |
    grep -q '^    short-lived 0 (50 -> 50)$'; echo $?) \
    "text: short-lived allocations in the totals and at the churn site"
ht_ok t2 "diff --top 2 -o FILE" diff --detail --bytes --top 2 \
    -o "$HT_TMP/t2.txt" "$old" "$new"
ok $([ ! -s "$HT_TMP/t2.out" ] &&
    grep -q '^(5 smaller sites) in use +100 B' "$HT_TMP/t2.txt"
    echo $?) "-o FILE: the diff in FILE, the fold of 5 sites summed"

# sampled: estimates marked, intervals, and still exact sums
so=$HT_TMP/s-old.heap
sn=$HT_TMP/s-new.heap
HEAPTOOL_SEED=7 timeout $T "$HEAPTOOL" run --rate 2K -o "$so" -- \
    "$TARGETS/diff-grow" 50 old >/dev/null 2>&1
HEAPTOOL_SEED=7 timeout $T "$HEAPTOOL" run --rate 2K -o "$sn" -- \
    "$TARGETS/diff-grow" 400 new >/dev/null 2>&1
ht_ok s "diff --json --detail of two sampled profiles" \
    diff --json --detail "$so" "$sn"
mv "$HT_TMP/s.out" "$HT_TMP/s.json"
want sums "$HT_TMP/s.json"
want field "$HT_TMP/s.json" exact false
checks
ht_ok st "diff of sampled profiles (text)" diff "$so" "$sn"
ok $(grep -q '^deltas are estimates' "$HT_TMP/st.out" &&
    grep -q '^  in use .* ~+.*(95% ' "$HT_TMP/st.out"; echo $?) \
    "text: sampled deltas marked ~, with the interval"

# live: baseline and report --diff
probe() {
	python3 - <<'EOF' >"$HT_TMP/probe" 2>&1
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
pid = os.fork()
if pid == 0:
    signal.pause()
    os._exit(0)
r = libc.ptrace(0x4206, pid, None, None)    # PTRACE_SEIZE
e = ctypes.get_errno()
os.kill(pid, signal.SIGKILL)
os.waitpid(pid, 0)
if r != 0:
    print(os.strerror(e))
    sys.exit(1)
EOF
}

# wait_line FILE LINE: wait (up to $T s) until FILE has the line LINE.
wait_line() {
	_i=0
	while ! grep -qx "$2" "$1" 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -gt $((T * 20)) ] && return 1
		sleep 0.05
	done
	return 0
}

LIVE_TESTS=20
if [ "$(uname -m)" != x86_64 ]; then
	why="attach supports x86-64 only"
elif ! [ -x "$HT_BUILDDIR/libheaptool-agent.so" ]; then
	why="the agent is not built"
elif ! probe; then
	why="ptrace is not permitted here: $(cat "$HT_TMP/probe")"
else
	why=
fi
if [ -n "$why" ]; then
	i=0
	while [ $i -lt $LIVE_TESTS ]; do
		skip "$why"
		i=$((i + 1))
	done
	done_testing
fi

pid=
cleanup() {
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	rm -rf "$HT_TMP"
}
trap cleanup EXIT
mkfifo "$HT_TMP/pipe.in"
"$TARGETS/attach-pipe" <"$HT_TMP/pipe.in" >"$HT_TMP/pipe.out" 2>&1 &
pid=$!
exec 7>"$HT_TMP/pipe.in"
wait_line "$HT_TMP/pipe.out" ready || bail "attach-pipe did not start"

ht_ok a1 "attach to attach-pipe" attach "$pid"
ht_ok a2 "start --rate 1" start --rate 1
ht_fails a3 1 "report --diff: no baseline for $pid; run heaptool baseline \
first" "report --diff before any baseline: runtime error" report --diff
echo "keep 3" >&7
wait_line "$HT_TMP/pipe.out" "kept 3" || bail "attach-pipe did not keep"
ht_ok b1 "baseline" baseline
bfile=$(ls "$XDG_STATE_HOME"/heaptool/baseline."$pid".*.heap 2>/dev/null)
r=$(grep -q "^heaptool: baseline of $pid saved to $bfile: session 1 \
(running), 2.93 KiB in use in 3 objects at 1 site, rate 1$" \
    "$HT_TMP/b1.out" && [ "$(stat -c %a "$bfile")" = 600 ]; echo $?)
ok $r "baseline: one line says where and what; the file is mode 0600"
[ $r -eq 0 ] || diag "$(cat "$HT_TMP/b1.out")" "$(ls -l "$bfile")"
echo "keep 5" >&7
wait_line "$HT_TMP/pipe.out" "kept 5" || bail "attach-pipe did not keep"
ht_ok l1 "report --diff --json --detail" report --diff --json --detail
mv "$HT_TMP/l1.out" "$HT_TMP/l1.json"
ht_ok l2 "dump -o NOW" dump -o "$HT_TMP/now.heap"
ht_ok l3 "diff --json --detail BASELINE NOW" diff --json --detail \
    "$bfile" "$HT_TMP/now.heap"
mv "$HT_TMP/l3.out" "$HT_TMP/l3.json"
want site "$HT_TMP/l1.json" keep_blocks --index 0 status=changed \
    delta.inuse_bytes=5000 delta.inuse_objects=5 delta.alloc_bytes=5000 \
    old.inuse_objects=3 new.inuse_objects=8
want field "$HT_TMP/l1.json" totals.inuse_bytes.delta 5000
want sums "$HT_TMP/l1.json"
want same "$HT_TMP/l1.json" "$HT_TMP/l3.json"
checks
ht_ok l4 "report --diff --detail --bytes --top 1" \
    report --diff --detail --bytes --top 1
line='#1 changed: in use +5000 B (3000 B -> 8000 B), +5 objects (3 -> 8)'
ok $(grep -qxF "$line" "$HT_TMP/l4.out"; echo $?) \
    "report --diff (text): the growth, exactly"

# A gone target: no baseline taken, no report --diff.
exec 7>&-
wait "$pid"
ht_fails g1 1 "target $pid: no such process" \
    "baseline of a target that exited: runtime error" baseline -p "$pid"
ht_fails g2 1 "target $pid: no such process" \
    "report --diff of a target that exited: runtime error" \
    report --diff -p "$pid"
pid=

done_testing
