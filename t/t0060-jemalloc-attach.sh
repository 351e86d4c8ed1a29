#!/bin/sh
# The jemalloc backend on a program started with Debian's libjemalloc.so.2
# preloaded and MALLOC_CONF=prof:true,prof_active:false (t/target/jem-
# target, which keeps its own counts):
# - heaptool attach chooses the jemalloc backend, and status says so;
# - a start at rate 1 that asks for no backend takes the hooks, which
#   reach jemalloc through its GOT slots and count exactly, where
#   jemalloc's own sampling would miss each thread's first bytes;
# - a session forced onto jemalloc at rate 1 counts every block of a site
#   made after the thread's countdown ran out (jemalloc samples every
#   allocation at lg_sample 0), once (the GOT hooks do not sample too),
#   with the stack from the caller of malloc (jemalloc's frames and the
#   agent's stripped), and says its figures are floors, not exact (no
#   high end: JSON null); the peak and what was allocated are unknown
#   (null), never 0; report --at-peak is refused;
# - stop keeps the profile as it was, even as the blocks are freed;
# - the epochs of the GOT backend's tests: a later session (at another
#   rate, rounded to a power of 2 and said so) holds nothing of an earlier
#   one, neither its blocks nor the frees of them;
# - a library loaded during a session (dlopen, through the agent's hook)
#   has its blocks and frames in the report;
# - detach leaves the program computing what it computes without heaptool;
# - with opt.prof_accum, what was allocated is known, exactly at rate 1.
# jemalloc's countdowns are not drawn again at prof.reset (jemprof.c): the
# fixture allocates a few MiB elsewhere after each start and stop, so that
# no thread is left with a countdown from another rate when the counts
# are taken.
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

plan 51

start_fx plain "$JEM" MALLOC_CONF=prof:true,prof_active:false

# The fixture's commands of the test, run once without heaptool for the
# checksum.
fx alloc a 10 4096
fx free a
fx churn 16384 4096
fx churn 64 4096
fx alloc a 1000 4096
fx dlopen
fx latecall 100
fx churn 16384 4096
fx churn 64 4096
fx alloc b 20000 96
fx free a
fx churn 16384 4096
fx churn 64 4096
fx free b
fx alloc a 500 4096
fx_stop
plain_sum=$(tail -n 1 "$fx_out")

fx_lines=1
start_fx jem "$JEM" MALLOC_CONF=prof:true,prof_active:false
ht_ok attach "heaptool attach" attach "$pid"
grep -q "backend jemalloc" "$HT_TMP/attach.out"
ok $? "attach chooses the jemalloc backend"
ht_ok st0 "status --json" status -p "$pid" --json
is "$(json_get "$HT_TMP/st0.out" 'j["backend"]["name"]')" jemalloc \
    "status: backend jemalloc"
is "$(json_get "$HT_TMP/st0.out" '"jemalloc" in j["backend"]["available"]')" \
    true "status: jemalloc available"

# Session 1 at rate 1, no backend asked for: the hooks, exact.
ht_ok start0 "start --rate 1" start -p "$pid" --rate 1
fx alloc a 10 4096
ht_ok r0 "report" report -p "$pid" --json --detail
is "$(json_get "$HT_TMP/r0.out" '[j["session"]["backend"], j["session"]["exact"]]')" \
    "['got', True]" \
    "rate 1 by default: the hooks, which reach jemalloc's slots: exact"
is "$(site_json "$HT_TMP/r0.out" jem_site_a 's["inuse_objects"]')" 10 \
    "the hooks count site a's 10 blocks"
fx free a
ht_ok stop0 "stop" stop -p "$pid"

# Session 2, forced onto jemalloc at rate 1: floors.
fx churn 16384 4096
ht_ok start1 "start --rate 1 --backend jemalloc" start -p "$pid" --rate 1 \
    --backend jemalloc
grep -q "backend jemalloc" "$HT_TMP/start1.out"
ok $? "start says it runs on jemalloc"
fx churn 64 4096
fx alloc a 1000 4096
a1=$fx_line
fx dlopen
fx latecall 100
ht_ok r1 "report of session 2" report -p "$pid" --json --detail
is "$(site_json "$HT_TMP/r1.out" jem_site_a 's["inuse_objects"]')" 1000 \
    "rate 1: site a's 1000 blocks, each counted once"
is "$(site_json "$HT_TMP/r1.out" jem_site_a 's["inuse_bytes"]')" 4096000 \
    "rate 1: its bytes, exactly ($a1)"
is "$(site_json "$HT_TMP/r1.out" ctl_late_alloc \
    '[s["inuse_objects"], s["frames"][0]["module"].endswith("libctl-late.so")]')" \
    "[100, True]" \
    "a library loaded in the session (the dlopen hook): its 100 blocks, its frames"
is "$(json_get "$HT_TMP/r1.out" 'j["session"]["backend"]')" jemalloc \
    "the report says jemalloc"
is "$(json_get "$HT_TMP/r1.out" \
    '[j["session"]["exact"], j["totals"]["inuse_bytes_high"], j["totals"]["inuse_bytes_low"] == j["totals"]["inuse_bytes"]]')" \
    "[False, None, True]" \
    "not exact: the figures are floors, with no high end"
ht_ok r1t "report (text)" report -p "$pid"
grep -q "rate 1 (NOT EXACT: jemalloc's own sampling misses each thread's first bytes after a start; figures are floors" \
    "$HT_TMP/r1t.out"
ok $? "the text says so in its header" || diag "$(head -n 1 "$HT_TMP/r1t.out")"
is "$(json_get "$HT_TMP/r1.out" \
    '[j["coverage"]["backend"], sorted(set((f["backend"], f["hooked"], f["reason"]) for f in j["coverage"]["functions"] if f["module"].endswith("libjemalloc.so.2") and f["function"] in ("malloc", "free", "mallocx")))]')" \
    "['jemalloc', [('jemalloc', True, \"the allocator's own sampling\")]]" \
    "coverage: jemalloc's malloc, free and mallocx are its own sampling's"
is "$(json_get "$HT_TMP/r1.out" \
    '[j["totals"]["peak_inuse_bytes"], j["totals"]["alloc_bytes"]]')" \
    "[None, None]" "peak and allocated unknown (null), not 0"
is "$(json_get "$HT_TMP/r1.out" \
    'j["totals"]["inuse_bytes"] == sum(s["inuse_bytes"] for s in j["sites"])')" \
    true "the summary is the sum of the sites"
ht_fails peak 1 "no peak" "report --at-peak refused: jemalloc keeps no peak" \
    report -p "$pid" --at-peak
ht_ok stop1 "stop" stop -p "$pid"
fx churn 16384 4096

# Session 3 at 100000 bytes: 128 KiB.  Session 2's blocks are freed in it.
ht_ok start2 "start --rate 100000" start -p "$pid" --rate 100000
grep -Eq "rate 128 KiB \(rounded from 97.7 KiB" "$HT_TMP/start2.out"
ok $? "the rate is rounded to a power of 2, and start says so"
fx churn 64 4096
fx alloc b 20000 96
fx free a
ht_ok r2 "report of session 3" report -p "$pid" --json --detail
is "$(json_get "$HT_TMP/r2.out" '[j["session"]["epoch"], j["session"]["rate"]]')" \
    "[3, 131072]" "session 3 is epoch 3 at 128 KiB"
is "$(site_json "$HT_TMP/r2.out" jem_site_a 's')" none \
    "nothing of session 2 in session 3, its freed blocks included"
ok "$([ "$(site_json "$HT_TMP/r2.out" jem_site_b 's["samples"] > 0')" = True ] &&
    echo 0 || echo 1)" "session 3 sampled site b"
ht_ok st2 "status" status -p "$pid"
grep -Eq "rate 128 KiB rounded from 97.7 KiB" "$HT_TMP/st2.out"
ok $? "status says the rate was rounded"
ht_ok stop2 "stop" stop -p "$pid"
fx churn 16384 4096

# Session 4 at rate 1: session 3's blocks freed in it change nothing.
ht_ok start3 "start --rate 1 --backend jemalloc again" start -p "$pid" \
    --rate 1 --backend jemalloc
fx churn 64 4096
fx free b
fx alloc a 500 4096
ht_ok r3 "report of session 4" report -p "$pid" --json --detail
is "$(site_json "$HT_TMP/r3.out" jem_site_a 's["inuse_objects"]')" 500 \
    "session 4: site a's 500 new blocks exactly, none of session 2's"
is "$(site_json "$HT_TMP/r3.out" jem_site_b 's')" none \
    "session 4: nothing of session 3"

# A session of the hooks after jemalloc's: the coverage is the hooks' again.
ht_ok start4 "start --backend got --restart" start -p "$pid" --backend got \
    --restart
ht_ok r4 "report of session 5" report -p "$pid" --json
is "$(json_get "$HT_TMP/r4.out" \
    '[j["session"]["backend"], j["coverage"]["backend"], sorted(set(f["backend"] for f in j["coverage"]["functions"] if f["module"].endswith("libjemalloc.so.2") and f["function"] == "malloc"))]')" \
    "['got', 'got', ['got']]" \
    "after jemalloc's sessions, one of the hooks: backend and coverage got"
ht_ok detach "detach" detach -p "$pid"
ht_ok st5 "status after detach" status -p "$pid" --json
is "$(json_get "$HT_TMP/st5.out" 'j["coverage"]["backend"]')" none \
    "after detach no backend is in use"
fx_stop
is "$(tail -n 1 "$fx_out")" "$plain_sum" \
    "the checksum is that of a run without heaptool"

# With opt.prof_accum jemalloc counts what was allocated too: at rate 1,
# exactly, freed blocks included; the peak stays unknown.
fx_lines=1
start_fx accum "$JEM" MALLOC_CONF=prof:true,prof_active:false,prof_accum:true
ht_ok a6 "attach (prof_accum)" attach "$pid"
fx churn 16384 4096
ht_ok start6 "start --rate 1 --backend jemalloc" start -p "$pid" \
    --rate 1 --backend jemalloc
fx churn 64 4096
fx alloc a 1000 4096
fx free a
fx alloc a 500 4096
ht_ok r6 "report" report -p "$pid" --json --detail
is "$(site_json "$HT_TMP/r6.out" jem_site_a \
    '[s["inuse_objects"], s["alloc_objects"], s["alloc_bytes"]]')" \
    "[500, 1500, 6144000]" \
    "prof_accum: site a's 500 blocks in use of 1500 allocated, exactly"
is "$(json_get "$HT_TMP/r6.out" \
    '[j["totals"]["freed_bytes"] >= 4096000, j["totals"]["peak_inuse_bytes"]]')" \
    "[True, None]" "prof_accum: freed known, the peak still unknown"
ht_ok d6 "detach" detach -p "$pid"
fx_stop
