#!/bin/sh
# A site remembered from another session must not be taken for this one's
# (issue 13: the sampler compares a stack with the thread's previous site
# before interning it; sessions are epochs).  t/target/epoch-sites runs two
# rate-1 sessions (see its header): in the second, the main thread's
# previous site is an index of the first session's table which the second
# has given to another stack.  Every site of both dumps must have exactly
# the blocks made at it, under its own function.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/htsites.sh"

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

is "" "$(sites "$D/a.heap" ep_ --second main --second-of ep_y=helper \
    ep_z=100/1 ep_x=400/2)" \
    "session A: ep_z and ep_x exactly"
is "" "$(sites "$D/b.heap" ep_ --second main --second-of ep_y=helper \
    ep_y0=900/3 ep_y1=1600/4 ep_x=2500/5)" \
    "session B: ep_x's blocks at ep_x (its previous site is A's second, B's second is ep_y1's), ep_y0 and ep_y1 exactly"
done_testing
