#!/bin/sh
# mimalloc's profiler API backend: no mimalloc release has the API (agent/
# miprof.h), so what is tested is its detection and its refusal:
# - Debian's libmimalloc.so.2 (2.0.9) preloaded: status says mimalloc is
#   there without the profiler API, start --backend mimalloc is refused
#   with one line that says why, and the default start runs the GOT
#   backend, which counts every block at rate 1;
# - glibc's malloc: start --backend mimalloc is refused (no mimalloc).
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/ptrace.sh"
. "$(dirname "$0")/lib/htrun.sh"
. "$(dirname "$0")/lib/htnative.sh"

[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$TARGETS/jem-target" ] ||
    bail "$TARGETS/jem-target not built (make check builds it)"
[ "$(uname -m)" = x86_64 ] || skip_all "attach supports x86-64 only"
MI=$(native_lib libmimalloc.so.2)
[ -n "$MI" ] || skip_all "libmimalloc.so.2 not found (apt-get install libmimalloc2.0)"
require_ptrace

plan 12

start_fx mi "$MI"
ht_ok a1 "attach (mimalloc)" attach "$pid"
ht_ok s1 "status --json" status -p "$pid" --json
is "$(json_get "$HT_TMP/s1.out" \
    '[j["backend"]["name"], "mimalloc" in j["backend"]["present"], "mimalloc" in j["backend"]["available"]]')" \
    "['got', True, False]" "status: got; mimalloc there, not available"
ht_ok s1t "status" status -p "$pid"
grep -q "mimalloc is there but cannot sample for heaptool (no profiler API)" \
    "$HT_TMP/s1t.out"
ok $? "status says mimalloc has no profiler API"
ht_fails f1 1 "cannot run in the target: its mimalloc has no profiler API" \
    "start --backend mimalloc refused: no profiler API" \
    start -p "$pid" --backend mimalloc
ht_ok g1 "start --rate 1" start -p "$pid" --rate 1
fx alloc a 1000 4096
ht_ok r1 "report" report -p "$pid" --json --detail
is "$(json_get "$HT_TMP/r1.out" \
    '[j["session"]["backend"], [s["inuse_objects"] for s in j["sites"] if s["frames"] and s["frames"][0].get("function") == "jem_site_a"]]')" \
    "['got', [1000]]" "the GOT backend counts site a's 1000 blocks"
ht_ok d1 "detach" detach -p "$pid"
fx_stop

fx_lines=1
start_fx glibc ""
ht_ok a2 "attach (glibc)" attach "$pid"
ht_fails f2 1 "cannot run in the target: the process has no mimalloc" \
    "start --backend mimalloc refused: no mimalloc" \
    start -p "$pid" --backend mimalloc
fx_stop
