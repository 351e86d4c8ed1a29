#!/bin/sh
# A site remembered from another session must not be taken for this one's
# (issue 13: the sampler compares a stack with the thread's previous site
# before interning it; sessions are epochs).  t/target/epoch-sites runs two
# rate-1 sessions (see its header): in the second, the main thread's
# previous site is an index of the first session's table which the second
# has given to another stack.  Every site of both dumps must have exactly
# the blocks made at it, under its own function.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/htcheck.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$TARGETS/epoch-sites" ] ||
    bail "$TARGETS/epoch-sites not built (make check builds it)"
unset HEAPTOOL_SEED LD_PRELOAD HEAPTOOL_PID
T=60
D=$HT_TMP/epoch
mkdir -p "$D"

timeout $T "$TARGETS/epoch-sites" "$D" >"$HT_TMP/ep.out" 2>"$HT_TMP/ep.err"
s=$?
is 0 "$s" "epoch-sites exits 0"
[ -s "$HT_TMP/ep.err" ] && diag "epoch-sites stderr: $(cat "$HT_TMP/ep.err")"

# sites FILE FUNC=BYTES/OBJECTS...: every site of FILE whose innermost
# frame is a fixture function (ep_*) has exactly the bytes and objects in
# use and allocated given for it, each given one is there, and the totals
# are their sums.  Prints what differs (nothing when all holds).
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
    fn, v = a.split("=")
    b, o = v.split("/")
    want[fn] = (int(b), int(o))
got = {}
bad = []
for s in j["sites"]:
    f = s["frames"][0].get("function") if s["frames"] else None
    if f is None or not f.startswith("ep_"):
        continue
    if f in got:
        bad.append("two sites at %s" % f)
    got[f] = (s["inuse_bytes"], s["inuse_objects"], s["alloc_bytes"],
              s["alloc_objects"])
    chain = [x.get("function") for x in s["frames"][:2]]
    if chain != [f, "main"] and not (f.startswith("ep_y") and
                                      chain[1] == "helper"):
        bad.append("%s: stack %r" % (f, chain))
for fn, (b, o) in want.items():
    if got.get(fn) != (b, o, b, o):
        bad.append("%s: %r, want %d bytes in %d objects" %
                   (fn, got.get(fn), b, o))
for fn in got:
    if fn not in want:
        bad.append("%s: a site, with %r" % (fn, got[fn]))
print("; ".join(bad))
PY
}

is "" "$(sites "$D/a.heap" ep_z=100/1 ep_x=400/2)" \
    "session A: ep_z and ep_x exactly"
is "" "$(sites "$D/b.heap" ep_y0=900/3 ep_y1=1600/4 ep_x=2500/5)" \
    "session B: ep_x's blocks at ep_x (its previous site is A's second, B's second is ep_y1's), ep_y0 and ep_y1 exactly"
done_testing
