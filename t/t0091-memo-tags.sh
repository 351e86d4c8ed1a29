#!/bin/sh
# The sampler's shortcut for a stack that is its memo's walk again
# (sampler.c, last_walk: the previous sample's site, taken without comparing
# frames) must not cross a tag or a session.  t/target/memo-tags (see its
# header) samples one stack at rate 1 under two tags in turn, then, in a
# second session, after a helper thread has given the first session's
# indices to other stacks.  Every site must have exactly the blocks made at
# it, under its own tag.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/htsites.sh"

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

is "" "$(sites "$D/a.heap" mt_ --by-tag mt_alloc/memo_a=3000/30 \
    mt_alloc/memo_b=3000/30)" \
    "one stack under two tags in turn: each tag's site exactly"
is "" "$(sites "$D/b.heap" mt_ --by-tag mt_h0/untagged=900/3 \
    mt_h1/untagged=1600/4 \
    mt_alloc/memo_b=500/5)" \
    "the same stack in the next session, its previous site's index another stack's: exact"
done_testing
