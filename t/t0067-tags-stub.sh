#!/bin/sh
# The tag calls of include/heaptool.h in programs with no link to the agent
# (t/target/tags-stub, t/target/tags-cxx):
# - without the agent, every call does nothing and the program runs, its
#   checksum that of the run under the agent;
# - under heaptool run at rate 1 the calls take effect: the fixture's own
#   checks of interning, enter/leave and assign's refusals become TAP
#   lines, and the profile has stub_scoped's 3 blocks under the tag
#   "scoped", stub_plain's 2 untagged; C++'s heaptool::tag_scope likewise
#   ("cxx": 4 blocks; after the scope, untagged);
# - 8 threads making their first tag calls at once all get their tags
#   (t/target/tags-race).
. "$(dirname "$0")/tap/libtap.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$TARGETS/tags-stub" ] || bail "$TARGETS/tags-stub not built (make check)"
unset HEAPTOOL_SEED LD_PRELOAD HEAPTOOL_PID
T=120

# lines FILE: the fixture's ok/not ok lines as TAP.
lines() {
	while IFS= read -r l; do
		case $l in
		"ok - "*) ok 0 "$1: ${l#ok - }" ;;
		"not ok - "*) ok 1 "$1: ${l#not ok - }" ;;
		esac
	done <"$2"
}

timeout $T "$TARGETS/tags-stub" none >"$HT_TMP/none.out" 2>&1
is 0 $? "without the agent: the program runs and exits 0"
lines "no agent" "$HT_TMP/none.out"
ldd "$TARGETS/tags-stub" >"$HT_TMP/ldd" 2>&1
grep -q heaptool "$HT_TMP/ldd"
ok $((! $?)) "tags-stub needs no heaptool library"

timeout $T "$HEAPTOOL" run --rate 1 -o "$HT_TMP/stub.heap" -- \
    "$TARGETS/tags-stub" agent >"$HT_TMP/agent.out" 2>"$HT_TMP/agent.err"
is 0 $? "under heaptool run: exits 0"
lines "agent" "$HT_TMP/agent.out"
is "$(grep '^sum' "$HT_TMP/none.out")" "$(grep '^sum' "$HT_TMP/agent.out")" \
    "the same checksum with and without the agent"

timeout $T "$HEAPTOOL" run --rate 1 -o "$HT_TMP/cxx.heap" -- \
    "$TARGETS/tags-cxx" >"$HT_TMP/cxx.out" 2>"$HT_TMP/cxx.err"
is 0 $? "tags-cxx under heaptool run: exits 0"

for f in stub cxx; do
	timeout $T "$HEAPTOOL" report --json --detail "$HT_TMP/$f.heap" \
	    >"$HT_TMP/$f.json" 2>"$HT_TMP/$f.rerr" ||
	    diag "report $f: $(cat "$HT_TMP/$f.rerr")"
done
python3 - "$HT_TMP/stub.json" "$HT_TMP/cxx.json" >"$HT_TMP/py.out" 2>&1 <<'EOF_PY'
import json, sys
def site(j, fn):
    for s in j["sites"]:
        if s["frames"] and (s["frames"][0].get("function") or
                            "").split("(")[0] == fn:
            return (s["tag"], s["kind"], s["inuse_objects"], s["inuse_bytes"])
    return None
def res(ok, what):
    print(("ok" if ok else "not ok") + "\t" + what)
j = json.load(open(sys.argv[1]))
g = site(j, "stub_scoped")
res(g == ("scoped", "malloc", 3, 3000), "stub_scoped: tag scoped, 3 x 1000 (%r)" % (g,))
g = site(j, "stub_plain")
res(g == ("untagged", "malloc", 2, 1000), "stub_plain: untagged after the scope (%r)" % (g,))
j = json.load(open(sys.argv[2]))
g = site(j, "cxx_tagged")
res(g == ("cxx", "malloc", 4, 1024), "C++ tag_scope: cxx_tagged under cxx (%r)" % (g,))
g = site(j, "cxx_untagged")
res(g == ("untagged", "malloc", 1, 128), "C++: cxx_untagged after the scope (%r)" % (g,))
EOF_PY
py=$?
tap_relay "$HT_TMP/py.out"
is 0 "$py" "the checks ran to their end (python exit status)"

# 8 threads' first tag calls at once: each gets its tag (the header used
# to start its wait before the next look before its first look finished,
# so the others got none while it looked).
timeout $T "$HEAPTOOL" run --rate 1 -o "$HT_TMP/race.heap" -- \
    "$TARGETS/tags-race" >"$HT_TMP/race.out" 2>"$HT_TMP/race.err"
is 0 $? "tags-race under heaptool run: exits 0" ||
    diag "$(cat "$HT_TMP/race.err")"
grep -q "^ok - \|^not ok - " "$HT_TMP/race.out"
ok $? "tags-race says how its threads fared" || diag "$(cat "$HT_TMP/race.out")"
lines "race" "$HT_TMP/race.out"
done_testing
