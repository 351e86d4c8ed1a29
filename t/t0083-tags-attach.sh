#!/bin/sh
# The tag stubs of include/heaptool.h take effect after heaptool attach
# (t/target/tags-attach): before the attach heaptool_tag gives 0, after it
# a real tag (the stubs look for the agent again), and what the process then
# allocates under HEAPTOOL_TAG_SCOPE("late") is under that tag in the live
# report, exactly at rate 1.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/ptrace.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$TARGETS/tags-attach" ] ||
    bail "$TARGETS/tags-attach not built (make check)"
[ "$(uname -m)" = x86_64 ] || skip_all "attach supports x86-64 only"
require_ptrace
XDG_STATE_HOME=$HT_TMP/state
export XDG_STATE_HOME
unset HEAPTOOL_SEED LD_PRELOAD HEAPTOOL_AGENT HEAPTOOL_PID
T=60

wait_line() {
	_i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -gt $((T * 20)) ] && return 1
		sleep 0.05
	done
	return 0
}

mkfifo "$HT_TMP/in"
"$TARGETS/tags-attach" <"$HT_TMP/in" >"$HT_TMP/out" 2>&1 &
pid=$!
cleanup() {
	kill -9 "$pid" 2>/dev/null
	rm -rf "$HT_TMP"
}
trap cleanup EXIT
exec 7>"$HT_TMP/in"
wait_line "$HT_TMP/out" '^ready' || bail "tags-attach did not start"
is "ready tag 0" "$(head -n 1 "$HT_TMP/out")" \
    "before the attach: heaptool_tag gives 0"

timeout $T "$HEAPTOOL" attach "$pid" >"$HT_TMP/a.out" 2>&1
is 0 $? "heaptool attach" || diag "$(cat "$HT_TMP/a.out")"
timeout $T "$HEAPTOOL" start -p "$pid" --rate 1 >"$HT_TMP/s.out" 2>&1
is 0 $? "heaptool start --rate 1" || diag "$(cat "$HT_TMP/s.out")"
echo tag >&7
wait_line "$HT_TMP/out" '^tag ' || diag "no answer to tag"
is "tag 1" "$(grep '^tag ' "$HT_TMP/out")" \
    "after the attach: heaptool_tag interns (tag 1)"
echo "keep 5" >&7
wait_line "$HT_TMP/out" '^kept 5' || diag "no answer to keep"
timeout $T "$HEAPTOOL" report -p "$pid" --json --detail >"$HT_TMP/r.json" \
    2>"$HT_TMP/r.err"
is 0 $? "live report" || diag "$(cat "$HT_TMP/r.err")"
is "late malloc 5 5000" "$(python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
for s in j["sites"]:
    if s["frames"] and s["frames"][0].get("function") == "keep_late":
        print(s["tag"], s["kind"], s["inuse_objects"], s["inuse_bytes"])
' "$HT_TMP/r.json")" "keep_late's blocks under the tag late, exactly"
timeout $T "$HEAPTOOL" detach -p "$pid" >/dev/null 2>&1
is 0 $? "heaptool detach"
echo quit >&7
wait "$pid"
is 0 $? "the target exits 0"
done_testing
