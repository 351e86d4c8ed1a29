#!/bin/sh
# TileDB's labelled allocations (seed 001) through heaptool's tags at rate
# 1 (t/target/tags-labels): 100,000 blocks under 1,000 labels made afresh
# each time.  Exactly 1,000 tags interned, each its own line with exactly
# its blocks (the test recomputes the fixture's sizes), every line the sum
# of its sites, and the agent's label cache reported with the bytes its
# names take.  Then the same under --dump-prefix --threshold 1M: the dump
# at exit folds every site (each label's below 1 MiB) into one record per
# tag and kind, and each line is still exactly what it is unfolded.
. "$(dirname "$0")/tap/libtap.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$TARGETS/tags-labels" ] ||
    bail "$TARGETS/tags-labels not built (make check)"
unset HEAPTOOL_SEED LD_PRELOAD HEAPTOOL_PID
T=300

timeout $T "$HEAPTOOL" run --rate 1 -o "$HT_TMP/l.heap" -- \
    "$TARGETS/tags-labels" >"$HT_TMP/l.out" 2>"$HT_TMP/l.err"
is 0 $? "tags-labels under heaptool run: exits 0"
is "labels 1000" "$(grep '^labels' "$HT_TMP/l.out")" \
    "the same label gives the same tag: 1,000 distinct"
timeout $T "$HEAPTOOL" report --json --detail "$HT_TMP/l.heap" \
    >"$HT_TMP/l.json" 2>"$HT_TMP/r.err"
ok $? "heaptool report --json reads the profile"
mkdir -p "$HT_TMP/fold"
timeout $T "$HEAPTOOL" run --rate 1 --dump-prefix "$HT_TMP/fold/d" \
    --threshold 1M -o "$HT_TMP/fold.heap" -- "$TARGETS/tags-labels" \
    >"$HT_TMP/fold.out" 2>"$HT_TMP/fold.err"
is 0 $? "again with --dump-prefix and --threshold 1M"
set -- "$HT_TMP"/fold/d.*.heap
is 1 $# "one dump at exit"
timeout $T "$HEAPTOOL" report --json --detail "$1" >"$HT_TMP/fold.json" \
    2>>"$HT_TMP/fold.err"
ok $? "report reads the dump" || diag "$(cat "$HT_TMP/fold.err")"
timeout $T "$HEAPTOOL" report "$HT_TMP/l.heap" >"$HT_TMP/l.txt" 2>&1
grep -q '(1000 tags interned, label cache [0-9.]* KiB)' "$HT_TMP/l.txt"
ok $? "the text summary says 1000 tags and the label cache's memory"

python3 - "$HT_TMP/l.json" "$HT_TMP/fold.json" >"$HT_TMP/py.out" 2>&1 <<'EOF_PY'
import json, sys
j = json.load(open(sys.argv[1]))
f = json.load(open(sys.argv[2]))
def res(ok, what):
    print(("ok" if ok else "not ok") + "\t" + what)
N, L = 100000, 1000
want = {}
for i in range(N):
    lab = "reader.cc::%d" % (1000 + i % L)
    w = want.setdefault(lab, [0, 0, 0, 0])
    size = 32 + (i % 7) * 16
    w[2] += size
    w[3] += 1
    if i % 4 != 3:
        w[0] += size
        w[1] += 1
tc = j["agent"]["tag_cache"]
names = sum(len(k) + 1 for k in want)
res(tc["tags"] == L and tc["refused"] == 0,
    "exactly 1,000 tags interned, none refused (%r)" % tc)
res(tc["name_bytes"] == names and tc["mapped_bytes"] >= names,
    "label cache: %d bytes of names (%d), %d mapped" %
    (tc["name_bytes"], names, tc["mapped_bytes"]))
got = {t["tag"]: [t["malloc"][c] for c in ("inuse_bytes", "inuse_objects",
       "alloc_bytes", "alloc_objects")] for t in j["tags"]
       if t["tag"].startswith("reader.cc::")}
bad = [k for k in want if got.get(k) != want[k]]
res(len(got) == L and not bad,
    "each label's line: exactly its blocks in use and allocated "
    "(%d lines; wrong: %r)" % (len(got), [(k, got.get(k), want[k])
                                         for k in bad[:3]]))
sums = {}
for s in j["sites"]:
    if s["tag"] and s["tag"].startswith("reader.cc::"):
        a = sums.setdefault(s["tag"], [0, 0, 0, 0])
        for i, c in enumerate(("inuse_bytes", "inuse_objects", "alloc_bytes",
                               "alloc_objects")):
            a[i] += s[c]
res(sums == got, "every label's line is the sum of its sites")
fl = {t["tag"]: t for t in f["tags"]}
nf = [s for s in f["sites"] if s["folded_sites"] > 0]
res(all(fl.get(t["tag"]) == t for t in j["tags"] if t["tag"] != "untagged")
    and len(fl) == len(j["tags"]) and len(f["sites"]) == 1 and
    nf and nf[0]["folded_sites"] >= 1000,
    "folded dump: every site folded (%d records), every label's line "
    "unchanged" % (nf[0]["folded_sites"] if nf else 0))
u = [t for t in j["tags"] if t["tag"] == "untagged"]
res(not u or all(s["frames"] == [] or s["frames"][0].get("function") !=
    "labelled_alloc" for s in j["sites"] if s["tag"] == "untagged"),
    "no labelled block left untagged")
EOF_PY
py=$?
tap_relay "$HT_TMP/py.out"
is 0 "$py" "the checks ran to their end (python exit status)"
done_testing
