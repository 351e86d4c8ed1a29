#!/bin/sh
# The reports' tag options on t/target/tags-pool's dumps (rate 1, exact):
# - report --tag Compiler: only Compiler's sites, the totals its line's;
#   an unknown tag is an error (exit 1, one line);
# - pprof: every sample labelled tag and kind, as its JSON site;
# - collapsed and svg with --group-by tag: each stack rooted at "tag NAME
#   (KIND)", the roots' values the lines' bytes; --group-by with text is a
#   usage error (exit 2);
# - --at-peak on step 8's dump: each line as it was when the total peaked
#   (step 4, as the 100 KiB chunk was made: still Chunk's, before its move
#   to Compiler): Chunk 132 KiB in 2, Compiler 64 KiB in 2, Thread 32 KiB;
# - diff step1 -> step4 (text and JSON): by tag, each line's old, new and
#   delta, the deltas summing to the total's; sites matched by stack and
#   tag (chunk_new under Chunk and under Compiler stay two).
. "$(dirname "$0")/tap/libtap.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$TARGETS/tags-pool" ] || bail "$TARGETS/tags-pool not built (make check)"
unset HEAPTOOL_SEED LD_PRELOAD HEAPTOOL_PID
T=120
D=$HT_TMP/rep
mkdir -p "$D"

timeout $T "$HEAPTOOL" run --rate 1 -o "$D/final.heap" -- \
    "$TARGETS/tags-pool" "$D" >"$D/out" 2>"$D/err"
is 0 $? "tags-pool under heaptool run"
P=$D/4.heap
h() {
	timeout $T "$HEAPTOOL" "$@"
}
h report --json --detail "$P" >"$D/all.json"
h report --json --detail --tag Compiler "$P" >"$D/comp.json"
is 0 $? "report --tag Compiler"
h report --tag NoSuchTag "$P" >/dev/null 2>"$D/notag.err"
is 1 $? "report --tag of an unknown tag: exit 1"
is 1 "$(wc -l <"$D/notag.err")" "... with one line"
h report --group-by tag "$P" >/dev/null 2>&1
is 2 $? "--group-by tag with the text format: a usage error"
h report --format pprof -o "$D/p.pb.gz" "$P"
is 0 $? "report --format pprof"
h report --format collapsed --group-by tag "$P" >"$D/c.txt"
is 0 $? "report --format collapsed --group-by tag"
h report --format svg --group-by tag -o "$D/f.svg" "$P"
is 0 $? "report --format svg --group-by tag"
h report --json --detail --at-peak "$D/8.heap" >"$D/peak.json"
is 0 $? "report --at-peak of step 8"
h report --tag Compiler "$P" >"$D/comp.txt"
grep -q "^  peak .*(the session's, every tag" "$D/comp.txt"
ok $? "--tag: the text says its peak line is the session's"
h diff "$D/1.heap" "$P" >"$D/diff.txt"
is 0 $? "diff step 1 -> step 4"
h diff --json --detail "$D/1.heap" "$P" >"$D/diff.json"
is 0 $? "diff --json --detail"

python3 - "$D" "$HT_SRCDIR/t/lib" >"$HT_TMP/py.out" 2>&1 <<'EOF_PY'
import json, sys
d = sys.argv[1]
sys.path.insert(0, sys.argv[2])
import htformats
def res(ok, what):
    print(("ok" if ok else "not ok") + "\t" + what)
a = json.load(open(d + "/all.json"))
c = json.load(open(d + "/comp.json"))
line = [t for t in a["tags"] if t["tag"] == "Compiler"][0]["arena"]
res({s["tag"] for s in c["sites"]} == {"Compiler"} and
    (c["totals"]["inuse_bytes"], c["totals"]["inuse_objects"]) ==
    (line["inuse_bytes"], line["inuse_objects"]) == (167936, 3),
    "--tag Compiler: its sites only, totals = its line (%r)" %
    ((c["totals"]["inuse_bytes"], c["totals"]["inuse_objects"]),))
p = htformats.decode_pprof(d + "/p.pb.gz")
got = [(s["labels"].get("tag"), s["labels"].get("kind")) for s in p["samples"]]
want = [(s["tag"], s["kind"]) for s in a["sites"]]
res(got == want and ("Compiler", "arena") in got,
    "pprof: each sample's labels tag and kind are its site's")
roots = {}
for l in open(d + "/c.txt"):
    stack, v = l.rsplit(" ", 1)
    r = stack.split(";")[0]
    roots[r] = roots.get(r, 0) + int(v)
want = {}
for t in a["tags"]:
    for k in ("malloc", "arena"):
        if t[k]["inuse_bytes"]:
            want["tag_%s_(%s)" % (t["tag"], k)] = t[k]["inuse_bytes"]
res(roots == want, "collapsed --group-by tag: the roots are the lines "
    "(%r, want %r)" % (roots, want))
svg = open(d + "/f.svg").read()
res("tag Compiler (arena)" in svg and "tag Chunk (malloc)" in svg,
    "svg --group-by tag: a frame for each tag")
j = json.load(open(d + "/diff.json"))
lines = {(t["tag"], t["kind"]): t["inuse_bytes"] for t in j["tags"]}
res(lines.get(("Chunk", "malloc")) == {"old": 131072, "new": 32768,
                                       "delta": -98304} and
    lines.get(("Compiler", "arena")) == {"old": 0, "new": 167936,
                                         "delta": 167936} and
    lines.get(("Thread", "arena")) == {"old": 0, "new": 32768,
                                       "delta": 32768},
    "diff JSON: by tag, old, new and delta of each line (%r)" % lines)
tot = sum(v["delta"] for v in lines.values())
res(tot == j["totals"]["inuse_bytes"]["delta"],
    "diff JSON: the lines' deltas sum to the total's (%d)" % tot)
chunk = [s for s in j["sites"] if s["frames"] and
         s["frames"][0].get("function") == "chunk_new" and
         s["tag"] in ("Chunk", "Compiler")]
st = sorted((s["tag"], s["status"]) for s in chunk)
res(("Chunk", "changed") in st and ("Compiler", "new") in st,
    "diff: chunk_new under Chunk (changed) and under Compiler (new) are "
    "separate sites (%r)" % st)
pk = json.load(open(d + "/peak.json"))
got = {(t["tag"], k): (t[k]["inuse_bytes"], t[k]["inuse_objects"])
       for t in pk["tags"] for k in ("malloc", "arena")
       if t[k]["inuse_objects"]}
res(got == {("Chunk", "malloc"): (135168, 2), ("Compiler", "arena"):
            (65536, 2), ("Thread", "arena"): (32768, 1)} and
    pk["totals"]["inuse_bytes"] == 233472,
    "--at-peak: each line as it was at the total's peak (%r)" % got)
txt = open(d + "/diff.txt").read()
res("\nby tag" in txt and "Compiler (arena)" in txt,
    "diff text: a by-tag section")
EOF_PY
py=$?
tap_relay "$HT_TMP/py.out"
is 0 "$py" "the checks ran to their end (python exit status)"
done_testing
