#!/bin/sh
# The inline backend on a C++ executable that is an allocator of its own
# (t/target/inline-cxx: the malloc family of t/target/inline-alloc.c, and
# operators new and delete over a bump arena that never call malloc), and
# heaptool run with the inline backend.
#
# attach hooks its malloc family and its operators inline (the operators
# are an allocator's entry points: the executable defines malloc too); at
# rate 1 the report's counts are the fixture's own (its malloc family's
# and its operators' calls and bytes), its sites the fixture's functions;
# detach puts back every patched byte (read from /proc/PID/mem); the
# checksum is that of a plain run.
#
# heaptool run hooks inline before main: at rate 1 the profile counts
# every allocation from main's first (one new and one malloc at site
# first_site) to the end, exactly the fixture's counts (t/target/inline-cxx
# and t/target/inline-own, the C one); with --backend got, none of those.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/ptrace.sh"
. "$(dirname "$0")/lib/htrun.sh"
. "$(dirname "$0")/lib/htinline.sh"

EXE=$TARGETS/inline-cxx
OWN=$TARGETS/inline-own
inline_prereq "$EXE"
FNS="malloc free calloc realloc _Znwm _Znam _ZdlPv _ZdaPv _ZdlPvm _ZdaPvm"

plan 18

WORK='new 10\nmix 5\nrelease\nmix 3\n'
# shellcheck disable=SC2059
printf "${WORK}quit\n" | "$EXE" >"$HT_TMP/plain.fx"
plain=$(grep '^checksum ' "$HT_TMP/plain.fx")

mkfifo "$HT_TMP/cx.in"
"$EXE" <"$HT_TMP/cx.in" >"$HT_TMP/cx.fx" 2>&1 &
pid=$!
exec 8>"$HT_TMP/cx.in"
wait_line "$HT_TMP/cx.fx" '^ready$' || bail "$EXE never said ready"
# shellcheck disable=SC2086
python3 "$HT_SRCDIR/t/lib/fnbytes.py" "$pid" "$EXE" $FNS >"$HT_TMP/before"

ht_ok attach "attach" attach "$pid"
h=$(grep "^heaptool: inline: hooked " "$HT_TMP/attach.out")
miss=
for f in $FNS; do
	echo "$h" | grep -Eq "[ ,]$f(,| in )" || miss="$miss $f"
done
[ -z "$miss" ]
ok $? "attach hooks its malloc family and its operators new and delete" ||
    diag "missing:$miss; $(cat "$HT_TMP/attach.out")"

ht_ok start "start --rate 1" start -p "$pid" --rate 1
echo counts >&8
wait_line "$HT_TMP/cx.fx" '^counts ' 1 || bail "no counts"
echo "new 10" >&8
echo "mix 5" >&8
echo counts >&8
wait_line "$HT_TMP/cx.fx" '^counts ' 2 || bail "no counts"
ht_ok report "report --json" report -p "$pid" --json --detail
python3 - "$HT_TMP/report.out" "$HT_TMP/cx.fx" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = [list(map(int, l.split()[1:])) for l in open(sys.argv[2])
     if l.startswith("counts ")]
t = r["totals"]
want = (c[1][0] - c[0][0], c[1][1] - c[0][1])
got = (t["alloc_objects"], t["alloc_bytes"])
if got != want:
    print("heaptool", got, "the fixture", want)
    sys.exit(1)
PY
ok $? "at rate 1, every new and malloc is counted once: the fixture's counts"
python3 - "$HT_TMP/report.out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
by = {}
for s in r["sites"]:
    fns = [f.get("function", "") for f in s["frames"]]
    k = next((f.split("(")[0] for f in fns
              if f.split("(")[0] in ("new_site", "newa_site", "mix_site")),
             "?")
    by[k] = by.get(k, [0, 0])
    by[k][0] += s["alloc_objects"]
    by[k][1] += s["alloc_bytes"]
want = {"new_site": [10, 480], "newa_site": [10, sum(range(100, 110))],
        "mix_site": [15, 5 * (256 + 300 + 48)]}
if by != want:
    print(by, want)
sys.exit(0 if by == want else 1)
PY
ok $? "the sites are the fixture's functions (new, new[], vector, malloc)"
echo release >&8
wait_line "$HT_TMP/cx.fx" '^released$' || bail "no released"
ht report2 report -p "$pid" --json
python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["totals"]
sys.exit(0 if t["inuse_objects"] == 0 and t["inuse_bytes"] == 0 else 1)' \
    "$HT_TMP/report2.out"
ok $? "delete and delete[] are seen: nothing of the session in use"

# Two heaptools never patch at once: while the lock (a flock of
# /proc/PID/mem) is held, attach waits; let go, it finishes.
python3 - "$pid" "$HT_TMP/locked" "$HT_TMP/unlock" <<'PY' &
import fcntl, os, sys, time
fd = os.open("/proc/%s/mem" % sys.argv[1], os.O_RDONLY)
fcntl.flock(fd, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
while not os.path.exists(sys.argv[3]):
    time.sleep(0.05)
PY
locker=$!
while [ ! -e "$HT_TMP/locked" ]; do sleep 0.05; done
timeout $T "$HEAPTOOL" attach "$pid" >"$HT_TMP/attach2.out" 2>&1 &
a2=$!
sleep 1
kill -0 $a2 2>/dev/null && ! grep -q "inline: hooked" "$HT_TMP/attach2.out"
ok $? "a second heaptool waits while another holds the target's lock" ||
    diag "$(cat "$HT_TMP/attach2.out")"
: >"$HT_TMP/unlock"
wait $locker
wait $a2 && grep -q "inline: hooked .*\b_Znwm\b" "$HT_TMP/attach2.out"
ok $? "and hooks once it is let go (what it finds hooked stays hooked)" ||
    diag "$(cat "$HT_TMP/attach2.out")"

ht_ok detach "detach" detach -p "$pid"
# shellcheck disable=SC2086
python3 "$HT_SRCDIR/t/lib/fnbytes.py" "$pid" "$EXE" $FNS >"$HT_TMP/after"
cmp -s "$HT_TMP/before" "$HT_TMP/after"
ok $? "every patched byte is as it was (read from /proc/PID/mem)" ||
    diag "$(diff "$HT_TMP/before" "$HT_TMP/after")"
printf 'mix 3\nquit\n' >&8
wait "$pid"
ok $? "the fixture exits 0"
pid=
is "$(grep '^checksum ' "$HT_TMP/cx.fx")" "$plain" \
    "its checksum is that of a plain run"

# heaptool run: inline from main's first allocation on.  The profile's
# allocations are exactly those the fixture made from main's start.
run_exact() {
	_name=$1
	shift
	# shellcheck disable=SC2059
	printf "${WORK}counts\nmain\nquit\n" |
	    timeout $T "$HEAPTOOL" run --rate 1 -o "$HT_TMP/$_name.heap" "$@" \
		>"$HT_TMP/$_name.fx" 2>"$HT_TMP/$_name.err" || return 1
	"$HEAPTOOL" report "$HT_TMP/$_name.heap" --json --detail \
	    >"$HT_TMP/$_name.json" || return 1
	python3 - "$HT_TMP/$_name.json" "$HT_TMP/$_name.fx" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
f = {l.split()[0]: list(map(int, l.split()[1:])) for l in open(sys.argv[2])
     if l.startswith(("counts ", "main "))}
t = r["totals"]
want = (f["counts"][0] - f["main"][0], f["counts"][1] - f["main"][1])
got = (t["alloc_objects"], t["alloc_bytes"])
if got != want or r["coverage"]["backend"] != "inline":
    print("heaptool", got, "the fixture", want, r["coverage"]["backend"])
    sys.exit(1)
PY
}
run_exact run -- "$EXE"
ok $? "run --rate 1: every allocation from main's first, exactly" ||
    diag "$(cat "$HT_TMP/run.err")"
python3 - "$HT_TMP/run.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n = sum(s["alloc_objects"] for s in r["sites"]
        if s["frames"] and s["frames"][0].get("function", "").startswith(
            "first_site"))
sys.exit(0 if n == 2 else 1)
PY
ok $? "main's first new and malloc are counted, at their site"
is "$(grep '^checksum ' "$HT_TMP/run.fx")" "$plain" \
    "its checksum under run is that of a plain run"
WORK='alloc 10\nmix 5\nrelease\nmix 3\n'
run_exact own -- "$OWN" && grep -q "^heaptool: inline: hooked .*\bmalloc\b" \
    "$HT_TMP/own.err"
ok $? "run --rate 1 on the C allocator of its own: exact too" ||
    diag "$(cat "$HT_TMP/own.err")"
# shellcheck disable=SC2059
printf "${WORK}quit\n" | timeout $T "$HEAPTOOL" run --rate 1 --backend got \
    -o "$HT_TMP/got.heap" -- "$OWN" >/dev/null 2>"$HT_TMP/got.err"
"$HEAPTOOL" report "$HT_TMP/got.heap" --json --detail >"$HT_TMP/got.json"
python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
n = sum(s["alloc_objects"] for s in r["sites"] if any(
    f.get("function") in ("alloc_site", "mix_site") for f in s["frames"]))
sys.exit(0 if n == 0 and r["coverage"]["backend"] == "got" else 1)' \
    "$HT_TMP/got.json"
ok $? "run --backend got: none of the executable's own calls"
