#!/bin/sh
# What heaptool run says besides the profile (issue 10, item 8):
# - with --live, the pid a live report needs (heaptool report -p PID), and
#   it is the profiled process's; without --live, nothing;
# - a statically linked program (t/target/inject-static), by path or
#   through PATH, is refused before it runs, since LD_PRELOAD cannot load
#   the agent into it; the dynamic loader run as a program is not refused;
#   and attach to a static program no longer advises heaptool run;
# - the summary of a launched session calls what no site holds the
#   allocator's overhead, never memory that predates the session (the
#   session began with the process), and the JSON says launched.
. "$(dirname "$0")/tap/libtap.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$TARGETS/inject-static" ] ||
    bail "$TARGETS/inject-static not built (make check builds it)"
unset HEAPTOOL_SEED LD_PRELOAD
T=60
TRUE=$(command -v true)
[ -n "$TRUE" ] && [ "${TRUE#/}" != "$TRUE" ] || TRUE=/bin/true

plan 11

timeout $T "$HEAPTOOL" run --live -o "$HT_TMP/live.heap" -- "$TRUE" \
    >/dev/null 2>"$HT_TMP/live.err"
pid=$(sed -n "s|^heaptool: running $TRUE as pid \([0-9]*\); heaptool report -p \1 reads its live profile\$|\1|p" \
    "$HT_TMP/live.err")
[ -n "$pid" ]
ok $? "run --live says the pid" || diag "$(cat "$HT_TMP/live.err")"
timeout $T "$HEAPTOOL" report --json "$HT_TMP/live.heap" >"$HT_TMP/live.json"
got=$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["pid"])' "$HT_TMP/live.json")
is "$pid" "$got" "the pid is the profiled process's"
timeout $T "$HEAPTOOL" run -o "$HT_TMP/plain.heap" -- "$TRUE" \
    >/dev/null 2>"$HT_TMP/plain.err"
! grep -q "running .* as pid" "$HT_TMP/plain.err"
ok $? "without --live it does not"

# The session began with the process: nothing predates it but the
# loader's blocks.
grep -q "^  allocator .* in no site: the allocator's overhead (block headers, rounding) and the loader's blocks from before the agent\$" \
    "$HT_TMP/plain.err" && ! grep -q predates "$HT_TMP/plain.err"
ok $? "run's summary: what no site holds is the allocator's, none predates" ||
    diag "$(cat "$HT_TMP/plain.err")"
timeout $T "$HEAPTOOL" report --json "$HT_TMP/plain.heap" >"$HT_TMP/plain.json"
python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["session"]
sys.exit(0 if s["launched"] and not s["final"] else 1)' "$HT_TMP/plain.json"
ok $? "report --json: session.launched"

# Static programs.
timeout $T "$HEAPTOOL" run -o "$HT_TMP/s.heap" -- "$TARGETS/inject-static" \
    </dev/null >"$HT_TMP/static.out" 2>"$HT_TMP/static.err"
st=$?
[ $st -eq 1 ] && [ ! -s "$HT_TMP/static.out" ] &&
    [ "$(wc -l <"$HT_TMP/static.err")" -eq 1 ] &&
    grep -q "^heaptool: run .*inject-static: .*inject-static is statically linked: heaptool loads its agent with glibc's dynamic loader, which it does not have; link the program dynamically to profile it\$" \
	"$HT_TMP/static.err"
ok $? "run of a static program: refused before it runs, and why" ||
    diag "status $st: $(cat "$HT_TMP/static.out" "$HT_TMP/static.err")"
PATH=$TARGETS:$PATH timeout $T "$HEAPTOOL" run -o "$HT_TMP/s.heap" -- \
    inject-static </dev/null >"$HT_TMP/static2.out" 2>"$HT_TMP/static2.err"
[ $? -eq 1 ] && [ ! -s "$HT_TMP/static2.out" ] &&
    grep -q "is statically linked" "$HT_TMP/static2.err"
ok $? "found through PATH: refused too"
interp=$(python3 - "$TRUE" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
phoff, = struct.unpack_from("<Q", d, 32)
size, n = struct.unpack_from("<HH", d, 54)
for i in range(n):
    t, _, off, _, _, fsz = struct.unpack_from("<IIQQQQ", d, phoff + i * size)
    if t == 3:
        print(d[off:off + fsz].rstrip(b"\0").decode())
PY
)
if [ -x "$interp" ]; then
	timeout $T "$HEAPTOOL" run -o "$HT_TMP/ld.heap" -- "$interp" "$TRUE" \
	    >/dev/null 2>"$HT_TMP/ld.err"
	ok $? "the dynamic loader run as a program ($interp): not refused" ||
	    diag "$(cat "$HT_TMP/ld.err")"
	[ -s "$HT_TMP/ld.heap" ]
	ok $? "and the profile is written"
else
	skip "no dynamic loader found for $TRUE"
	skip "no dynamic loader found for $TRUE"
fi

# attach to a static program: no advice to use heaptool run.
if ! python3 -c 'import ctypes' 2>/dev/null ||
    [ "$(uname -m)" != x86_64 ]; then
	skip "attach needs x86-64 and python3"
	skip "attach needs x86-64 and python3"
else
	mkfifo "$HT_TMP/static.in"
	"$TARGETS/inject-static" <"$HT_TMP/static.in" >"$HT_TMP/sa.out" 2>&1 &
	spid=$!
	exec 8>"$HT_TMP/static.in"
	i=0
	while ! grep -q '^ready' "$HT_TMP/sa.out" && [ $i -lt $((T * 20)) ]; do
		i=$((i + 1))
		sleep 0.05
	done
	timeout $T "$HEAPTOOL" attach "$spid" >"$HT_TMP/sa.aout" \
	    2>"$HT_TMP/sa.err"
	st=$?
	exec 8>&-
	wait "$spid"
	if grep -q "ptrace" "$HT_TMP/sa.err"; then
		skip "ptrace not permitted: $(cat "$HT_TMP/sa.err")"
		skip "ptrace not permitted"
	else
		[ $st -eq 1 ] && grep -q "neither attach nor run can profile a program without it; link the program dynamically against glibc" \
		    "$HT_TMP/sa.err"
		ok $? "attach to a static program: why, and what to do" ||
		    diag "$(cat "$HT_TMP/sa.err")"
		! grep -q "heaptool run" "$HT_TMP/sa.err"
		ok $? "and no advice to use heaptool run"
	fi
fi
