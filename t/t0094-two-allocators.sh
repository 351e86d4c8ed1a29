#!/bin/sh
# Two allocators in one process: deepbind-main allocates with glibc's, and
# deepbind-lib.so, dlopened with RTLD_DEEPBIND, with mini-alloc.so's, whose
# free refuses (and counts) a block it did not make.  The hooks then have
# two originals per name (the slow path's per-module lookup): every call
# of the library must reach mini-alloc, every call of the program glibc,
# under heaptool run at rate 1 and at the default rate, with the program's
# output unchanged; at rate 1 the library's sites are exact.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/htcheck.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
for f in deepbind-main deepbind-lib.so mini-alloc.so; do
	[ -f "$TARGETS/$f" ] || bail "$TARGETS/$f not built (make check builds it)"
done
unset HEAPTOOL_SEED

EXE=$TARGETS/deepbind-main
ROUNDS=200
# 200 rounds of 10: each a malloc grown by realloc (mini's realloc frees the
# old block) and freed, and a calloc freed.
WANT="mini frees 6000 foreign 0"

timeout 60 "$EXE" "$TARGETS" $ROUNDS >"$HT_TMP/plain.out" 2>&1
is "$WANT" "$(cat "$HT_TMP/plain.out")" "plain: mini-alloc made every free"

for rate in 1 512K; do
	timeout 120 "$HEAPTOOL" run --rate $rate -o "$HT_TMP/$rate.heap" -- \
	    "$EXE" "$TARGETS" $ROUNDS >"$HT_TMP/$rate.out" 2>"$HT_TMP/$rate.err"
	is 0 $? "rate $rate: exits 0 under heaptool run" ||
	    diag "$(head -c 2000 "$HT_TMP/$rate.err")"
	is "$WANT" "$(cat "$HT_TMP/$rate.out")" \
	    "rate $rate: each call reached its own allocator"
done

timeout 60 "$HEAPTOOL" report --json --detail "$HT_TMP/1.heap" \
    >"$HT_TMP/1.json" 2>"$HT_TMP/report.err"
ok $? "the rate-1 profile reads" || diag "$(cat "$HT_TMP/report.err")"
json=$HT_TMP/1.json
label="rate 1"
want exact "$json"
lib=$HT_SRCDIR/t/target/deepbind-lib.c
want site "$json" --src "$lib" --func lib_churn --marker lib_malloc \
    --module deepbind-lib.so inuse_objects=0 alloc_objects=2000 \
    alloc_bytes=200000
want site "$json" --src "$lib" --func lib_churn --marker lib_realloc \
    inuse_objects=0 alloc_objects=2000 alloc_bytes=600000
want site "$json" --src "$lib" --func lib_churn --marker lib_calloc \
    inuse_objects=0 alloc_objects=2000 alloc_bytes=200000
want site "$json" --src "$HT_SRCDIR/t/target/deepbind-main.c" --func main \
    inuse_objects=0 alloc_objects=$ROUNDS
checks

done_testing
