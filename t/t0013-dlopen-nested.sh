#!/bin/sh
# Two threads dlopen and dlclose libraries while the agent hooks dlopen, and
# one library's constructor calls dlopen itself, so the agent's hook runs
# inside the loader's lock while another thread rescans and patches.  A lock
# taken in the wrong order hangs the program: every run here is bounded, and
# a hang is a failure.  Output and exit status must be those of a plain run.
. "$(dirname "$0")/tap/libtap.sh"

bin=$TARGETS/dlnest
for f in dlnest libdlnest-outer.so libdlnest-inner.so libdlfix.so; do
	[ -x "$TARGETS/$f" ] || bail "$TARGETS/$f not built (make check builds it)"
done
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
plan 9

timeout 60 "$bin" "$TARGETS" 200 >"$HT_TMP/plain" 2>&1
is 0 $? "dlnest runs by itself"

for rate in 1 512K; do
	timeout 120 "$HEAPTOOL" run --rate $rate -o "$HT_TMP/r$rate.heap" -- \
	    "$bin" "$TARGETS" 200 >"$HT_TMP/r$rate.out" 2>"$HT_TMP/r$rate.err"
	st=$?
	[ $st -eq 124 ] && diag "rate $rate: still running after 120 s: a hang"
	is 0 $st "rate $rate: exits 0, no hang"
	cmp -s "$HT_TMP/plain" "$HT_TMP/r$rate.out"
	ok $? "rate $rate: output unchanged"
	"$HEAPTOOL" report "$HT_TMP/r$rate.heap" >/dev/null 2>&1
	ok $? "rate $rate: profile readable"
done

# The constructors' allocations are made under the agent's dlopen hook; the
# agent's frames must not be in their stacks (a site is the program's code).
"$HEAPTOOL" report --detail --json "$HT_TMP/r1.heap" >"$HT_TMP/r1.json" \
    2>/dev/null
ok $? "rate 1: report --detail --json"
n=$(grep -c 'libheaptool-agent' "$HT_TMP/r1.json")
is 0 "$n" "rate 1: no frame of the agent in any stack (dlopen's hook)"
done_testing
