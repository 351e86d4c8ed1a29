#!/bin/sh
# The sampler's shortcut for a stack that is its memo's walk again
# (sampler.c, last_walk: the previous sample's site, taken without comparing
# frames) must not cross a tag or a session.  t/target/memo-tags (see its
# header) samples one stack at rate 1 under two tags in turn, then, in a
# second session, after a helper thread has given the first session's
# indices to other stacks.  Every site must have exactly the blocks made at
# it, under its own tag.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/htcheck.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$TARGETS/memo-tags" ] ||
    bail "$TARGETS/memo-tags not built (make check builds it)"
unset HEAPTOOL_SEED LD_PRELOAD HEAPTOOL_PID
T=60
D=$HT_TMP/memo
mkdir -p "$D"

timeout $T "$TARGETS/memo-tags" "$D" >"$HT_TMP/mt.out" 2>"$HT_TMP/mt.err"
s=$?
is 0 "$s" "memo-tags exits 0"
[ -s "$HT_TMP/mt.err" ] && diag "memo-tags stderr: $(cat "$HT_TMP/mt.err")"

# sites FILE FUNC/TAG=BYTES/OBJECTS...: every site of FILE whose innermost
# frame is a fixture function (mt_*) has exactly the bytes and objects in
# use and allocated given for its function and tag, and each given one is
# there.  Prints what differs (nothing when all holds).
sites() {
	_f=$1
	shift
	timeout $T "$HEAPTOOL" report --detail --json "$_f" \
	    >"$HT_TMP/r.json" 2>"$HT_TMP/r.err" || {
		echo "heaptool report failed: $(head -c 500 "$HT_TMP/r.err")"
		return
	}
	python3 - "$HT_TMP/r.json" "$@" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
want = {}
for a in sys.argv[2:]:
    k, v = a.split("=")
    b, o = v.split("/")
    want[k] = (int(b), int(o))
got = {}
bad = []
for s in j["sites"]:
    f = s["frames"][0].get("function") if s["frames"] else None
    if f is None or not f.startswith("mt_"):
        continue
    k = "%s/%s" % (f, s["tag"])
    if k in got:
        bad.append("two sites at %s" % k)
    got[k] = (s["inuse_bytes"], s["inuse_objects"], s["alloc_bytes"],
              s["alloc_objects"])
for k, (b, o) in want.items():
    if got.get(k) != (b, o, b, o):
        bad.append("%s: %r, want %d bytes in %d objects" %
                   (k, got.get(k), b, o))
for k in got:
    if k not in want:
        bad.append("%s: a site, with %r" % (k, got[k]))
print("; ".join(bad))
PY
}

is "" "$(sites "$D/a.heap" mt_alloc/memo_a=3000/30 mt_alloc/memo_b=3000/30)" \
    "one stack under two tags in turn: each tag's site exactly"
is "" "$(sites "$D/b.heap" mt_h0/untagged=900/3 mt_h1/untagged=1600/4 \
    mt_alloc/memo_b=500/5)" \
    "the same stack in the next session, its previous site's index another stack's: exact"
done_testing
