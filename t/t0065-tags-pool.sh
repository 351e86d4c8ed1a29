#!/bin/sh
# OpenJDK NMT's chunk pool (seed 000) through heaptool's tags, at rate 1
# under heaptool run (t/target/tags-pool).  After every step the fixture
# dumps the profile and prints what it expects; heaptool report --json
# --detail of each dump must show exactly that:
# - the lines Chunk/malloc, Compiler/arena and Thread/arena: bytes, count
#   and peaks (NMT's four cases: create, assign to an arena, return to the
#   pool, destroy);
# - the total in use changed by create and destroy only (assign moves
#   bytes between lines, never in or out of the total);
# - every tag line the sum of its sites, in every column;
# - the chunk site under Chunk and under Compiler: two sites, one stack;
# then a new session: none of the old figures, the names kept; an old
# block assigned changes nothing.
. "$(dirname "$0")/tap/libtap.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$TARGETS/tags-pool" ] || bail "$TARGETS/tags-pool not built (make check)"
unset HEAPTOOL_SEED LD_PRELOAD HEAPTOOL_PID
T=120
D=$HT_TMP/pool
mkdir -p "$D"

timeout $T "$HEAPTOOL" run --rate 1 -o "$D/final.heap" -- \
    "$TARGETS/tags-pool" "$D" >"$HT_TMP/pool.out" 2>"$HT_TMP/pool.err"
is 0 $? "tags-pool runs under heaptool run and exits 0"
[ -s "$HT_TMP/pool.err" ] && diag "stderr: $(head -c 2000 "$HT_TMP/pool.err")"
grep '^not ok' "$HT_TMP/pool.out" | while IFS= read -r l; do diag "$l"; done
set -- $(awk '$1 == "tags" { print $2, $3, $4, $6 }' "$HT_TMP/pool.out")
ok "$([ "$1" = 1 ] && [ "$2" = 2 ] && [ "$3" = 3 ] && [ "$4" = 2 ]; echo $?)" \
    "heaptool_tag interns Chunk, Compiler, Thread as 1, 2, 3 (again: 2)"

for n in 0 1 2 3 4 5 6 7 8; do
	timeout $T "$HEAPTOOL" report --json --detail "$D/$n.heap" \
	    >"$D/$n.json" 2>"$D/$n.err" || diag "report $n: $(cat "$D/$n.err")"
done
for n in epoch epoch2; do
	timeout $T "$HEAPTOOL" report --json --detail "$D/$n.heap" \
	    >"$D/$n.json" 2>"$D/$n.err" || diag "report $n: $(cat "$D/$n.err")"
done

python3 - "$D" "$HT_TMP/pool.out" >"$HT_TMP/py.out" 2>&1 <<'EOF_PY'
import json, sys
d, out = sys.argv[1], sys.argv[2]
steps = []
for l in open(out):
    w = l.split()
    if w and w[0] == "step":
        n, name, rest = int(w[1]), w[2], w[3:]
        lines = {}
        for i in range(3):
            tag, kind = rest[6 * i], rest[6 * i + 1]
            lines[(tag, kind)] = [int(x) for x in rest[6 * i + 2:6 * i + 6]]
        steps.append((n, name, lines, int(rest[-2]), int(rest[-1])))

def res(ok, what):
    print(("ok" if ok else "not ok") + "\t" + what)

COLS = ["inuse_bytes", "inuse_objects", "alloc_bytes", "alloc_objects",
        "samples", "live_samples"]
def line(j, tag, kind):
    for t in j["tags"]:
        if t["tag"] == tag:
            return t[kind]
    return None

res(len(steps) == 9, "the fixture reported 9 steps (%d)" % len(steps))
base = None
prev = None
for n, name, want, cb, cc in steps:
    j = json.load(open("%s/%d.json" % (d, n)))
    what = "step %d (%s)" % (n, name)
    bad = []
    for (tag, kind), (b, c, pb, pc) in want.items():
        l = line(j, tag, kind)
        got = (0, 0, 0, 0) if l is None else (l["inuse_bytes"],
            l["inuse_objects"], l["peak_inuse_bytes"], l["peak_inuse_objects"])
        if got != (b, c, pb, pc):
            bad.append("%s/%s %r, want %r" % (tag, kind, got, (b, c, pb, pc)))
        other = "arena" if kind == "malloc" else "malloc"
        lo = line(j, tag, other)
        if lo is not None and (lo["inuse_bytes"], lo["inuse_objects"]) != (0, 0):
            bad.append("%s/%s holds %r" % (tag, other, lo))
    res(not bad, what + ": each line's bytes, count, peak, peak count: " +
        "; ".join(bad))
    t = j["totals"]
    if base is None:
        base = (t["inuse_bytes"] - cb, t["inuse_objects"] - cc)
    res((t["inuse_bytes"] - cb, t["inuse_objects"] - cc) == base,
        what + ": total in use = what predates step 0 + the live chunks "
        "(%d, %d; %d %d)" % (t["inuse_bytes"], t["inuse_objects"], cb, cc))
    # summary == detail, every column of every line
    sums = {}
    for s in j["sites"]:
        k = (s["tag"], s["kind"])
        a = sums.setdefault(k, [0] * len(COLS))
        for i, c in enumerate(COLS):
            a[i] += s[c]
    bad = []
    for tg in j["tags"]:
        for kind in ("malloc", "arena"):
            got = [tg[kind][c] for c in COLS]
            if got != sums.get((tg["tag"], kind), [0] * len(COLS)):
                bad.append("%s/%s %r vs sites %r" % (tg["tag"], kind, got,
                    sums.get((tg["tag"], kind))))
    tot = [sum(tg[k][c] for tg in j["tags"] for k in ("malloc", "arena"))
           for c in COLS]
    if tot != [t[c] for c in COLS]:
        bad.append("tags sum %r, totals %r" % (tot, [t[c] for c in COLS]))
    res(not bad, what + ": summary == detail in every column: " +
        "; ".join(bad))
    if n == 2:
        chunk = [s for s in j["sites"] if s["frames"] and
                 s["frames"][0].get("function") == "chunk_new"]
        keys = sorted((s["tag"], s["kind"], s["inuse_objects"]) for s in chunk)
        stacks = set(tuple((f["address"]) for f in s["frames"]) for s in chunk)
        res(keys == [("Chunk", "malloc", 2), ("Compiler", "arena", 2)] and
            len(stacks) == 1, what + ": chunk_new under Chunk and under "
            "Compiler: two sites of one stack (%r, %d stacks)" %
            (keys, len(stacks)))

j = json.load(open(d + "/epoch.json"))
res(j["tags"] == [] and j["totals"]["inuse_bytes"] == 0 and
    j["totals"]["samples"] == 0 and j["agent"]["tag_cache"]["tags"] == 3,
    "new session, an old chunk assigned: no figure of the old session, "
    "the 3 names kept (%r, %r, %r)" % (j["tags"], j["totals"]["samples"],
    j["agent"]["tag_cache"]))
j = json.load(open(d + "/epoch2.json"))
l = line(j, "Chunk", "malloc")
res(l is not None and (l["inuse_bytes"], l["inuse_objects"],
    l["peak_inuse_bytes"]) == (32768, 1, 32768) and
    line(j, "Thread", "arena") is None,
    "new session: one new chunk under Chunk, nothing under Thread (%r)" % l)
EOF_PY
py=$?
tap_relay "$HT_TMP/py.out"
is 0 "$py" "the checks ran to their end (python exit status)"

timeout $T "$HEAPTOOL" report --detail "$D/4.heap" >"$HT_TMP/text" 2>&1
grep -q '^by tag' "$HT_TMP/text"
ok $? "the text report has a by-tag section"
grep -q '    tag Compiler, arena' "$HT_TMP/text"
ok $? "a detail site says its tag and kind"
done_testing
