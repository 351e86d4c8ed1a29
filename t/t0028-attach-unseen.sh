#!/bin/sh
# Allocators the hooks do not reach (agent/allocators.h): t/target/
# own-malloc is an executable that exports a bump allocator as malloc,
# free, calloc, realloc ... (glibc's replacement, as chromium's
# PartitionAlloc is).  heaptool attach, status (text and JSON) and report
# (text, JSON, pprof; live, and of a dump offline, so the profile carries
# it) all say that the executable defines its own malloc and that its
# internal calls to them are not seen; heaptool run's summary too.  And it
# is true: at rate 1, of 10 blocks its own code allocates and 5 that
# libc's strdup allocates through it, the report holds the 5.
#
# attach-pipe, which allocates through glibc, gets no such warning.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/ptrace.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$HT_BUILDDIR/libheaptool-agent.so" ] ||
    bail "$HT_BUILDDIR/libheaptool-agent.so not built"
for f in own-malloc attach-pipe; do
	[ -x "$TARGETS/$f" ] ||
	    bail "$TARGETS/$f not built (make check builds it)"
done
[ "$(uname -m)" = x86_64 ] || skip_all "attach supports x86-64 only"

require_ptrace

unset HEAPTOOL_SEED LD_PRELOAD HEAPTOOL_AGENT
XDG_STATE_HOME=$HT_TMP/state
export XDG_STATE_HOME
T=60
EXE=$TARGETS/own-malloc
# The text warning, as a regular expression (the path may hold dots).
exe_re=$(printf '%s' "$EXE" | sed 's/[.[\*^$]/\\&/g')
WARN="warning: $exe_re defines its own malloc, calloc, realloc, free and [0-9]* more: its internal calls to them are not seen (the calls of other modules are)"

pids=
cleanup() {
	for p in $pids; do
		kill -9 "$p" 2>/dev/null
	done
	rm -rf "$HT_TMP"
}
trap cleanup EXIT

ht() {
	_n=$1
	shift
	timeout $T "$HEAPTOOL" "$@" >"$HT_TMP/$_n.out" 2>"$HT_TMP/$_n.err"
	st=$?
	[ $st -eq 0 ] || diag "heaptool $* (status $st):" \
	    "$(head -c 2000 "$HT_TMP/$_n.err")"
}

wait_line() {
	_i=0
	while ! grep -qx "$2" "$1" 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -gt $((T * 20)) ] && return 1
		sleep 0.05
	done
	return 0
}

# start_fixture NAME PROGRAM: PROGRAM reading the fifo $HT_TMP/NAME.in on
# descriptor 8 of ours; $pid.
start_fixture() {
	mkfifo "$HT_TMP/$1.in"
	"$2" <"$HT_TMP/$1.in" >"$HT_TMP/$1.fx" 2>&1 &
	pid=$!
	pids="$pids $pid"
	exec 8>"$HT_TMP/$1.in"
	wait_line "$HT_TMP/$1.fx" ready || bail "$2 never said ready"
}

# json_unseen FILE: FILE's "unseen_allocators" name the fixture: its own
# malloc family, the calls of other modules seen.
json_unseen() {
	python3 - "$1" "$EXE" <<'EOF'
import json, sys
u = json.load(open(sys.argv[1]))["unseen_allocators"]
want = {"module": sys.argv[2], "allocator": "malloc",
        "other_modules_seen": True}
ok = len(u) == 1 and all(u[0].get(k) == v for k, v in want.items()) and \
    {"malloc", "free", "calloc", "realloc", "posix_memalign",
     "aligned_alloc", "memalign", "valloc", "pvalloc"} == set(u[0]["functions"])
if not ok:
    print(json.dumps(u))
sys.exit(0 if ok else 1)
EOF
}

plan 16

start_fixture own "$EXE"
ht attach attach "$pid"
# This fixture's free is too short to hook inline, so attach hooks none
# of its allocations inline either (their frees would go unseen, and in
# use would grow without end), says why, and warns of them all.
grep -q "^heaptool: inline: not hooked: malloc ($exe_re): free in its module cannot be hooked inline" \
    "$HT_TMP/attach.out" &&
    ! grep -q "^heaptool: inline: hooked .*\bmalloc\b" "$HT_TMP/attach.out" &&
    grep -q "^heaptool: warning: $exe_re defines its own malloc" \
        "$HT_TMP/attach.out"
ok $? "attach hooks no allocation inline whose free it cannot hook, and warns" ||
    diag "$(cat "$HT_TMP/attach.out")"
# The GOT backend alone: what it does not see is what the warning says.
ht start start -p "$pid" --rate 1 --backend got
ht status status -p "$pid"
grep -q "^  $WARN\$" "$HT_TMP/status.out"
ok $? "status says so" || diag "$(cat "$HT_TMP/status.out")"
ht status-json status -p "$pid" --json
json_unseen "$HT_TMP/status-json.out"
ok $? "status --json: unseen_allocators"
echo "keep 10" >&8
wait_line "$HT_TMP/own.fx" "kept 10" || bail "no kept 10"
echo "strdup 5" >&8
wait_line "$HT_TMP/own.fx" "duped 5" || bail "no duped 5"

ht report report -p "$pid"
grep -q "^  $WARN\$" "$HT_TMP/report.out"
ok $? "report (text) says so" || diag "$(cat "$HT_TMP/report.out")"
ht report-json report -p "$pid" --json --detail
json_unseen "$HT_TMP/report-json.out"
ok $? "report --json: unseen_allocators"
python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["totals"]
sys.exit(0 if t["alloc_objects"] == 5 and t["inuse_bytes"] == 505 else 1)' \
    "$HT_TMP/report-json.out"
ok $? "and true: of 10 own blocks and 5 of strdup, the 5 (505 bytes) are seen"
ht pprof report -p "$pid" --format pprof -o "$HT_TMP/own.pb.gz"
python3 - "$HT_SRCDIR/t/lib" "$HT_TMP/own.pb.gz" "$EXE" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import htformats
c = htformats.decode_pprof(sys.argv[2])["comments"]
w = "warning: %s defines its own malloc" % sys.argv[3]
sys.exit(0 if any(x.startswith(w) for x in c) else 1)
EOF
ok $? "report --format pprof: a comment says so"

# The profile carries it: a dump, read offline.
ht dump dump -p "$pid" -o "$HT_TMP/own.heap"
ht offline report "$HT_TMP/own.heap"
grep -q "^  $WARN\$" "$HT_TMP/offline.out"
ok $? "report of a dump says so" || diag "$(cat "$HT_TMP/offline.out")"
ht offline-json report --json "$HT_TMP/own.heap"
json_unseen "$HT_TMP/offline-json.out"
ok $? "report --json of a dump: unseen_allocators"
echo quit >&8
exec 8>&-
wait "$pid"
ok $? "the fixture ran to its end"

# heaptool run's summary.
timeout $T "$HEAPTOOL" run --rate 1 --backend got -o "$HT_TMP/run.heap" \
    -- "$EXE" \
    </dev/null >/dev/null 2>"$HT_TMP/run.err"
ok $? "heaptool run of the fixture" || diag "$(cat "$HT_TMP/run.err")"
grep -q "^  $WARN\$" "$HT_TMP/run.err"
ok $? "heaptool run's summary says so" || diag "$(cat "$HT_TMP/run.err")"

# A process of glibc's malloc: nothing to say.
start_fixture pipe "$TARGETS/attach-pipe"
ht attach2 attach "$pid"
! grep -q warning "$HT_TMP/attach2.out"
ok $? "attach to a glibc process: no warning" ||
    diag "$(cat "$HT_TMP/attach2.out")"
ht status2 status -p "$pid" --json
python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
sys.exit(0 if j["unseen_allocators"] == [] and
         j["unseen_allocators_more"] == 0 else 1)' "$HT_TMP/status2.out"
ok $? "status --json of a glibc process: unseen_allocators empty"
ht start2 start -p "$pid"
ht report2 report -p "$pid" --json
python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
sys.exit(0 if j["unseen_allocators"] == [] and not j["session"]["launched"]
         else 1)' "$HT_TMP/report2.out"
ok $? "report --json of a glibc process: unseen_allocators empty, not launched"
# What no site holds in an attached process: older blocks, or overhead
# (its stdout buffer, at least, predates the session).
ht report3 report -p "$pid"
grep -q "^  allocator .*; \(about \)\{0,1\}[0-9.]* [KMG]*i*B predates the session or is the allocator's own\$" \
    "$HT_TMP/report3.out"
ok $? "report of an attached process: what no site holds predates the session or is the allocator's" ||
    diag "$(cat "$HT_TMP/report3.out")"
echo quit >&8
exec 8>&-
wait "$pid"
