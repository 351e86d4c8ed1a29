#!/bin/sh
# The inline backend on t/target/inline-own, an executable whose malloc
# family is its own (t/target/inline-alloc.c) and called directly: no GOT
# slot is on the way of its calls.  heaptool attach hooks them inline
# (status says which), and at rate 1 the report's counts are the
# allocator's own counts (every call once, whether it came from the
# executable or from libc through the GOT slots bound to it), its sites
# the fixture's functions; detach puts back every patched byte (read from
# /proc/PID/mem before attach, while attached, and after detach); the
# checksum of the fixture's work is that of a plain run.  With start
# --backend got the functions are put back too, and their calls unseen.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/ptrace.sh"
. "$(dirname "$0")/lib/htrun.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
command -v nm >/dev/null 2>&1 || skip_all "nm not found"
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
EXE=$TARGETS/inline-own
[ -x "$EXE" ] || bail "$EXE not built (make check builds it)"
[ "$(uname -m)" = x86_64 ] || skip_all "attach supports x86-64 only"
require_ptrace

unset HEAPTOOL_SEED LD_PRELOAD HEAPTOOL_AGENT
XDG_STATE_HOME=$HT_TMP/state
export XDG_STATE_HOME
T=60
FNS="malloc free calloc realloc memalign aligned_alloc posix_memalign valloc pvalloc"

pids=
cleanup() {
	for p in $pids; do
		kill -9 "$p" 2>/dev/null
	done
	rm -rf "$HT_TMP"
}
trap cleanup EXIT

wait_line() {
	_i=0
	while ! grep -qx "$2" "$1" 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -gt $((T * 20)) ] && return 1
		sleep 0.05
	done
	return 0
}

# cmd LINE REPLY: send LINE to the fixture, wait for REPLY.
cmd() {
	echo "$1" >&8
	wait_line "$HT_TMP/own.fx" "$2" || bail "no '$2' after '$1'"
}

# The fixture's counts line, the last one.
counts() {
	: >"$HT_TMP/own.fx.mark"
	echo counts >&8
	_i=0
	while [ "$(grep -c '^counts ' "$HT_TMP/own.fx")" -lt "$1" ]; do
		_i=$((_i + 1))
		[ $_i -gt $((T * 20)) ] && bail "no counts"
		sleep 0.05
	done
	grep '^counts ' "$HT_TMP/own.fx" | tail -1
}

plan 22

# A plain run of the same work, for its checksum.
printf 'alloc 10\nmix 5\nrelease\nmix 3\nquit\n' | "$EXE" >"$HT_TMP/plain.fx"
plain=$(grep '^checksum ' "$HT_TMP/plain.fx")

mkfifo "$HT_TMP/own.in"
"$EXE" <"$HT_TMP/own.in" >"$HT_TMP/own.fx" 2>&1 &
pid=$!
pids=$pid
exec 8>"$HT_TMP/own.in"
wait_line "$HT_TMP/own.fx" ready || bail "$EXE never said ready"

# shellcheck disable=SC2086
python3 "$HT_SRCDIR/t/lib/fnbytes.py" "$pid" "$EXE" $FNS >"$HT_TMP/before"
[ -s "$HT_TMP/before" ] || bail "cannot read the functions' bytes"

ht_ok attach "attach" attach "$pid"
grep -q "^heaptool: inline: hooked .*\bmalloc\b.* in $EXE\$" \
    "$HT_TMP/attach.out" &&
    grep -q "^heaptool: inline: hooked .*\bfree\b" "$HT_TMP/attach.out"
ok $? "attach hooks its malloc and free inline" ||
    diag "$(cat "$HT_TMP/attach.out")"
# shellcheck disable=SC2086
python3 "$HT_SRCDIR/t/lib/fnbytes.py" "$pid" "$EXE" $FNS >"$HT_TMP/during"
m0=$(grep '^malloc ' "$HT_TMP/before")
m1=$(grep '^malloc ' "$HT_TMP/during")
[ -n "$m1" ] && [ "$m0" != "$m1" ]
ok $? "malloc's first bytes are patched" || diag "$m0 / $m1"

! grep -q "warning: $EXE defines its own" "$HT_TMP/attach.out"
ok $? "attach warns of no unseen allocator in it: it is hooked inline" ||
    diag "$(cat "$HT_TMP/attach.out")"

ht_ok status "status" status -p "$pid"
grep -q "^  backend: GOT + inline\$" "$HT_TMP/status.out" &&
    grep -q "^  inline: hooked .*\bmalloc\b" "$HT_TMP/status.out"
ok $? "status says which backend hooks what" ||
    diag "$(cat "$HT_TMP/status.out")"

ht_ok start "start --rate 1" start -p "$pid" --rate 1
c0=$(counts 1)
cmd "alloc 10" "allocated 10"
cmd "mix 5" "mixed 5"
c1=$(counts 2)
ht_ok report "report --json" report -p "$pid" --json --detail
python3 - "$HT_TMP/report.out" "$c0" "$c1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
a0, b0, _ = map(int, sys.argv[2].split()[1:])
a1, b1, _ = map(int, sys.argv[3].split()[1:])
t = r["totals"]
want = (a1 - a0, b1 - b0)
got = (t["alloc_objects"], t["alloc_bytes"])
if got != want:
    print("heaptool", got, "the allocator", want)
    sys.exit(1)
PY
ok $? "at rate 1, every allocation is counted once: the allocator's counts"
python3 - "$HT_TMP/report.out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
first = {}
for s in r["sites"]:
    if s["frames"]:
        f = s["frames"][0].get("function", "")
        first[f] = first.get(f, 0) + s["alloc_objects"]
t = r["totals"]
ok = first.get("alloc_site") == 10 and first.get("mix_site") == 20 and \
    t["inuse_objects"] == 10 and t["inuse_bytes"] == sum(range(1000, 1010))
if not ok:
    print(first, t)
sys.exit(0 if ok else 1)
PY
ok $? "the sites are the fixture's functions, the frees seen"
# The account of coverage: the backend is inline, each of the functions
# is hooked inline (its first instructions), no warning says they are
# unseen; report --coverage lists them so.
python3 - "$HT_TMP/report.out" "$EXE" $FNS <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
exe, fns = sys.argv[2], set(sys.argv[3:])
c = r["coverage"]
mine = {f["function"]: f for f in c["functions"] if f["module"] == exe}
bad = [n for n in fns if n not in mine or mine[n]["backend"] != "inline"
       or mine[n]["reason"] != "its first instructions jump to the agent"]
unseen = [u for u in r["unseen_allocators"] if u["module"] == exe]
if c["backend"] != "inline" or bad or unseen:
    print(c["backend"], bad, unseen, mine)
    sys.exit(1)
PY
ok $? "coverage: the inline backend hooks every one of them, none unseen"
ht_ok cov "report --coverage" report -p "$pid" --coverage
grep -q "^coverage of $EXE\$" "$HT_TMP/cov.out" &&
    grep -Eq "^    malloc +inline +alloc +its first instructions jump to" \
        "$HT_TMP/cov.out" &&
    grep -q "^  coverage  *inline backend: " "$HT_TMP/cov.out"
ok $? "report --coverage and its header say inline" ||
    diag "$(cat "$HT_TMP/cov.out")"

ht_ok detach "detach" detach -p "$pid"
grep -q "^heaptool: [0-9]* functions hooked inline put back" \
    "$HT_TMP/detach.out"
ok $? "detach says it put them back" || diag "$(cat "$HT_TMP/detach.out")"
# shellcheck disable=SC2086
python3 "$HT_SRCDIR/t/lib/fnbytes.py" "$pid" "$EXE" $FNS >"$HT_TMP/after"
cmp -s "$HT_TMP/before" "$HT_TMP/after"
ok $? "every patched byte is as it was (read from /proc/PID/mem)" ||
    diag "$(diff "$HT_TMP/before" "$HT_TMP/after")"

# Attached again, then --backend got: put back, and unseen.
ht_ok reattach "attach again" attach "$pid"
ht_ok got "start --backend got" start -p "$pid" --rate 1 --backend got
cmd release released
cmd "mix 3" "mixed 3"
ht report2 report -p "$pid" --json
python3 -c 'import json, sys
sys.exit(0 if json.load(open(sys.argv[1]))["totals"]["alloc_objects"] == 0
         else 1)' "$HT_TMP/report2.out"
ok $? "with --backend got the executable's own calls are not seen"
python3 - "$HT_TMP/report2.out" "$EXE" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = r["coverage"]
m = [f for f in c["functions"] if f["module"] == sys.argv[2] and
     f["function"] == "malloc"]
u = [x for x in r["unseen_allocators"] if x["module"] == sys.argv[2]]
if c["backend"] != "got" or len(m) != 1 or m[0]["backend"] == "inline" \
        or not u:
    print(c["backend"], m, u)
    sys.exit(1)
PY
ok $? "and the account says the GOT backend, malloc not hooked, unseen"
echo quit >&8
wait "$pid"
ok $? "the fixture exits 0"
is "$(grep '^checksum ' "$HT_TMP/own.fx")" "$plain" \
    "its checksum is that of a plain run"
