#!/bin/sh
# Tags under sampling (issue 12): t/target/tags-pool's random run (chunks
# of 1 to 65 KiB made under Chunk, moved at random between the pool and
# the Compiler and Thread arenas, some freed) at 64 KiB, 50 seeds.  For
# each line (Chunk/malloc, Compiler/arena, Thread/arena) the exact figure
# the fixture prints must lie within the 95% interval the report gives
# for it at least 45 times in 50 (a 95% interval misses about 2.5 times;
# 45 allows for the normal approximation's error with room to spare:
# P(fewer than 45 of 50 | p = 0.95) is about 3.8%, and the three lines
# are tested separately).  Also: the line estimates sum to the sites', and
# the total in use is unchanged by the moves (the sum of the lines and
# the untagged sites is the report's total).  The seeds are fixed.
. "$(dirname "$0")/tap/libtap.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$TARGETS/tags-pool" ] || bail "$TARGETS/tags-pool not built (make check)"
unset LD_PRELOAD HEAPTOOL_PID
T=120
D=$HT_TMP/sampled
mkdir -p "$D"

fails=0
for seed in $(seq 1 50); do
	mkdir -p "$D/$seed"
	HEAPTOOL_SEED=$((seed * 7919)) timeout $T "$HEAPTOOL" run --rate 64K \
	    -o "$D/$seed/final.heap" -- "$TARGETS/tags-pool" "$D/$seed" \
	    "$seed" >"$D/$seed/out" 2>"$D/$seed/err" || fails=$((fails + 1))
	timeout $T "$HEAPTOOL" report --json --detail "$D/$seed/sampled.heap" \
	    >"$D/$seed/json" 2>>"$D/$seed/err" || fails=$((fails + 1))
done
is 0 $fails "50 sampled runs and their reports succeed"

python3 - "$D" >"$HT_TMP/py.out" 2>&1 <<'EOF_PY'
import json, sys
d = sys.argv[1]
hits = {}
n = 0
bad_sum = []
samples = {}
for seed in range(1, 51):
    try:
        w = open("%s/%d/out" % (d, seed)).read().split("\n")
        ex = [l.split() for l in w if l.startswith("exact ")][0][1:]
        j = json.load(open("%s/%d/json" % (d, seed)))
    except Exception as e:
        print("seed %d: %s" % (seed, e))
        continue
    n += 1
    lines = {(t["tag"], k): t[k] for t in j["tags"] for k in ("malloc", "arena")}
    for i in range(3):
        tag, kind, b = ex[4 * i], ex[4 * i + 1], int(ex[4 * i + 2])
        l = lines.get((tag, kind))
        lo, hi = (l["inuse_bytes_low"], l["inuse_bytes_high"]) if l else (0, 0)
        hits.setdefault(tag, 0)
        samples.setdefault(tag, []).append(l["live_samples"] if l else 0)
        if lo <= b <= hi:
            hits[tag] += 1
        elif seed <= 5:
            print("seed %d: %s/%s %d outside %d..%d" % (seed, tag, kind, b, lo, hi))
    tot = sum(t[k]["inuse_bytes"] for t in j["tags"] for k in ("malloc", "arena"))
    if tot != j["totals"]["inuse_bytes"]:
        bad_sum.append(seed)
print("ok\t50 profiles read" if n == 50 else "not ok\t%d of 50 profiles read" % n)
for tag in ("Chunk", "Compiler", "Thread"):
    h = hits.get(tag, 0)
    s = samples.get(tag, [0])
    print("%s\t%s: the exact bytes within the 95%% interval %d times of 50 "
          "(at least 45; %d to %d live samples a run)" %
          ("ok" if h >= 45 else "not ok", tag, h, min(s), max(s)))
print("%s\tthe lines sum to the total in use in every run%s" %
      ("ok" if not bad_sum else "not ok", bad_sum and " (not: %r)" % bad_sum or ""))
EOF_PY
py=$?
tap_relay "$HT_TMP/py.out"
is 0 "$py" "the checks ran to their end (python exit status)"
done_testing
