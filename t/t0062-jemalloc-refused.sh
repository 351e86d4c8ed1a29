#!/bin/sh
# Where jemalloc cannot sample for heaptool the jemalloc backend is refused
# with one line that says why and what to do, and the GOT backend runs:
# - Debian's libjemalloc.so.2 preloaded without MALLOC_CONF (opt.prof
#   off): attach keeps the GOT backend, status says jemalloc is there and
#   why it cannot sample, start --backend jemalloc is refused, start
#   --backend got works and counts exactly at rate 1;
# - jemalloc with opt.prof on, forced to the GOT backend: the hooks count
#   every block once (jemalloc's samples are not read);
# - glibc's malloc: start --backend jemalloc is refused (no jemalloc);
# - an unknown backend is a usage error.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/ptrace.sh"
. "$(dirname "$0")/lib/htrun.sh"
. "$(dirname "$0")/lib/htnative.sh"

[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$TARGETS/jem-target" ] ||
    bail "$TARGETS/jem-target not built (make check builds it)"
[ "$(uname -m)" = x86_64 ] || skip_all "attach supports x86-64 only"
JEM=$(native_lib libjemalloc.so.2)
[ -n "$JEM" ] || skip_all "libjemalloc.so.2 not found (apt-get install libjemalloc2)"
require_ptrace

plan 22

# jemalloc without opt.prof.
start_fx off "$JEM"
ht_ok a1 "attach (jemalloc, opt.prof off)" attach "$pid"
! grep -q "backend jemalloc" "$HT_TMP/a1.out"
ok $? "attach does not choose jemalloc"
ht_ok s1 "status --json" status -p "$pid" --json
is "$(json_get "$HT_TMP/s1.out" \
    '[j["backend"]["name"], "jemalloc" in j["backend"]["present"], "jemalloc" in j["backend"]["available"]]')" \
    "['got', True, False]" "status: got; jemalloc there, not available"
ht_ok s1t "status" status -p "$pid"
grep -q "jemalloc is there but cannot sample.*MALLOC_CONF=prof:true" \
    "$HT_TMP/s1t.out"
ok $? "status says why jemalloc cannot sample, and how to start it"
ht_fails f1 1 "cannot run in the target: its jemalloc runs with opt.prof off \(start it with MALLOC_CONF=prof:true,prof_active:false\); start without --backend" \
    "start --backend jemalloc refused: opt.prof is off" \
    start -p "$pid" --backend jemalloc
ht_ok g1 "start --backend got --rate 1" start -p "$pid" --backend got --rate 1
fx alloc a 1000 4096
ht_ok r1 "report" report -p "$pid" --json --detail
is "$(json_get "$HT_TMP/r1.out" 'j["session"]["backend"]')" got \
    "the session's backend is got"
is "$(site_json "$HT_TMP/r1.out" jem_site_a 's["inuse_objects"]')" 1000 \
    "the hooks count site a's 1000 blocks"
fx free a
ht_ok d1 "detach" detach -p "$pid"
fx_stop

# jemalloc with opt.prof on, forced to the GOT backend.
fx_lines=1
start_fx on "$JEM" MALLOC_CONF=prof:true,prof_active:false
ht_ok a2 "attach (jemalloc, opt.prof on)" attach "$pid"
ht_ok g2 "start --backend got --rate 1" start -p "$pid" --backend got --rate 1
fx alloc a 1000 4096
ht_ok r2 "report" report -p "$pid" --json --detail
is "$(json_get "$HT_TMP/r2.out" \
    '[j["session"]["backend"], [s["inuse_objects"] for s in j["sites"] if s["frames"] and s["frames"][0].get("function") == "jem_site_a"]]')" \
    "['got', [1000]]" "forced to got: site a counted once, by the hooks"
is "$(json_get "$HT_TMP/r2.out" \
    '[j["coverage"]["backend"], sorted(set(f["backend"] for f in j["coverage"]["functions"] if f["module"].endswith("libjemalloc.so.2") and f["function"] == "malloc"))]')" \
    "['got', ['got']]" "forced to got: the coverage is the hooks'"
ht_ok d2 "detach" detach -p "$pid"
fx_stop

# glibc's malloc.
fx_lines=1
start_fx glibc ""
ht_ok a3 "attach (glibc)" attach "$pid"
ht_fails f3 1 "cannot run in the target: the process has no jemalloc" \
    "start --backend jemalloc refused: no jemalloc" \
    start -p "$pid" --backend jemalloc
ht_fails f4 2 "--backend nosuch: no such backend" \
    "an unknown backend is a usage error" \
    start -p "$pid" --backend nosuch
ht_ok d3 "detach" detach -p "$pid"
fx_stop
