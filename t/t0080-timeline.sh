#!/bin/sh
# The session's memory over time (profile format version 8, TIMELINE
# records), on t/target/timeline-grow, which keeps 1 MiB blocks at a known
# pace:
# - heaptool run at rate 1: the profile holds points of the session, at
#   most one each 100 ms, in time order, each exact (interval of width 0),
#   in use rising as the fixture grows and falling when it frees, the last
#   the profile's own totals at its end; report --timeline prints them as
#   text and report --json --timeline as JSON;
# - attached: the agent's thread takes the points while the process does
#   nothing; a new session's timeline holds nothing of the last one's;
# - a profile older than version 8 has none, and says so;
# - --timeline only goes with text and JSON.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/ptrace.sh"
. "$(dirname "$0")/lib/htrun.sh"
. "$(dirname "$0")/lib/htnative.sh"

FX=$TARGETS/timeline-grow
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$FX" ] || bail "$FX not built (make check builds it)"

plan 22

# heaptool run: 12 blocks of 1 MiB, 60 ms apart, then all freed.
printf 'grow 12 1024 60\nfree\nquit\n' >"$HT_TMP/in"
"$FX" <"$HT_TMP/in" >"$HT_TMP/plain.out"
timeout $T "$HEAPTOOL" run --rate 1 -o "$HT_TMP/r.heap" -- "$FX" \
    <"$HT_TMP/in" >"$HT_TMP/r.out" 2>"$HT_TMP/r.err"
ok $? "heaptool run --rate 1"
is "$(tail -n 1 "$HT_TMP/r.out")" "$(tail -n 1 "$HT_TMP/plain.out")" \
    "the fixture's checksum is a plain run's"
[ "$(od -An -tu4 -j8 -N4 "$HT_TMP/r.heap" | tr -d ' ')" -ge 8 ]
ok $? "the profile is format version 8 or later"
"$HEAPTOOL" report --json --timeline "$HT_TMP/r.heap" >"$HT_TMP/r.json"
ok $? "report --json --timeline"
# The verdicts on the points, one per line: NAME VALUE.
python3 - "$HT_TMP/r.json" >"$HT_TMP/v" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
p = j["timeline"]
t = [x["t_s"] for x in p]
mib = 1 << 20
inuse = [x["inuse_bytes"] for x in p]
top = max(range(len(p)), key=lambda i: inuse[i])
print("points", len(p))
print("ordered", all(a <= b for a, b in zip(t, t[1:])))
# At most one each 100 ms: consecutive points at least 0.09 s apart but
# the last, which is the end's.
print("spaced", all(b - a >= 0.09 for a, b in zip(t[:-2], t[1:-1])))
print("exact", all(x["inuse_bytes_low"] == x["inuse_bytes"] ==
                   x["inuse_bytes_high"] for x in p))
print("rising", all(a <= b for a, b in zip(inuse[:top], inuse[1:top + 1])))
print("peak", 10 * mib <= inuse[top] <= 13 * mib)
print("fell", inuse[-1] < 2 * mib)
print("alloc", all(a["alloc_bytes"] <= b["alloc_bytes"]
                   for a, b in zip(p, p[1:])) and
      p[-1]["alloc_bytes"] >= 12 * mib)
print("rss", max(x["rss_bytes"] for x in p) >= 10 * mib)
print("end", [p[-1]["inuse_bytes"], p[-1]["alloc_bytes"], p[-1]["samples"]]
      == [j["totals"]["inuse_bytes"], j["totals"]["alloc_bytes"],
          j["totals"]["samples"]] and
      abs(p[-1]["t_s"] - j["session"]["duration_s"]) < 0.01)
PY
v() { awk -v k="$1" '$1 == k { print $2 }' "$HT_TMP/v"; }
n=$(v points)
ok "$([ "${n:-0}" -ge 6 ] && echo 0 || echo 1)" \
    "the run's timeline has points ($n for 0.7 s or more)"
is "$(v ordered) $(v spaced)" "True True" \
    "in time order, at most one each 100 ms"
is "$(v exact)" True "at rate 1 every point is exact"
is "$(v rising) $(v peak) $(v fell)" "True True True" \
    "in use rises with the fixture to its 12 MiB, then falls as it frees"
is "$(v alloc) $(v rss)" "True True" \
    "allocated never falls and reaches 12 MiB; RSS follows the touched blocks"
is "$(v end)" True "the last point is the profile's totals, at its end"
"$HEAPTOOL" report --timeline "$HT_TMP/r.heap" >"$HT_TMP/r.txt"
k=$(sed -n 's/^memory over time: \([0-9]*\) points.*/\1/p' "$HT_TMP/r.txt")
rows=$(grep -cE '^ +[0-9]+\.[0-9]{2} s ' "$HT_TMP/r.txt")
is "$k $rows" "$n $n" "report --timeline prints the same points as text"

# Attached: the agent's thread takes the points.
require_ptrace
FX_PROG=timeline-grow
start_fx a ""
ht_ok attach "heaptool attach" attach "$pid"
ht_ok start1 "start" start -p "$pid" --rate 1
fx grow 4 1024 10
# Until the thread has taken five points (it takes one each 100 ms).
i=0
while :; do
	ht r1 report -p "$pid" --json --timeline
	c=$(json_get "$HT_TMP/r1.out" 'len(j["timeline"])')
	[ "${c:-0}" -ge 6 ] && break
	i=$((i + 1))
	[ $i -ge 300 ] && break
	sleep 0.1
done
ok "$([ "${c:-0}" -ge 6 ] && echo 0 || echo 1)" \
    "attached: the agent's thread takes points while the process sleeps ($c)"
is "$(json_get "$HT_TMP/r1.out" 'max(x["inuse_bytes"] for x in j["timeline"]) >= 4 << 20')" \
    true "and they hold the 4 MiB the fixture keeps"
ht_ok stop1 "stop" stop -p "$pid"
fx free
ht_ok start2 "start again" start -p "$pid" --rate 1
ht r2 report -p "$pid" --json --timeline
is "$(json_get "$HT_TMP/r2.out" '[j["session"]["epoch"], all(x["inuse_bytes"] < 1 << 20 for x in j["timeline"]), j["timeline"][0]["t_s"] < 1.0]')" \
    "[2, True, True]" \
    "a new session's timeline: its own time, nothing of the last session's"
ht_ok detach "detach" detach -p "$pid"
fx_stop

# Older profiles have none; --timeline goes with text and JSON only.
python3 "$HT_SRCDIR/t/lib/hthostile.py" sites "$HT_TMP/v3.heap" --sites 10 \
    --frames 2
"$HEAPTOOL" report --timeline "$HT_TMP/v3.heap" >"$HT_TMP/v3.txt" &&
    grep -q "^memory over time: no point (a profile older than format version 8" \
	"$HT_TMP/v3.txt"
ok $? "a version 3 profile: report --timeline says it has no point"
"$HEAPTOOL" report --json --timeline "$HT_TMP/v3.heap" >"$HT_TMP/v3.json"
is "$(json_get "$HT_TMP/v3.json" 'j["timeline"]')" "[]" \
    "and the JSON's timeline is empty"
"$HEAPTOOL" report --format svg --timeline -o "$HT_TMP/x.svg" \
    "$HT_TMP/r.heap" 2>"$HT_TMP/svg.err"
is "$? $(wc -l <"$HT_TMP/svg.err")" "2 1" \
    "--timeline with --format svg: a usage error, one line"
