#!/bin/sh
# heaptool replay --compare against an allocator twice as slow (issue 13):
# t/target/libslow.so, preloaded, makes every malloc, free and the rest
# take twice their time (it spins as long again as the call took).  On a
# trace of blocks of 256 KiB to 1 MiB, each malloc an mmap and each free a
# munmap (MALLOC_MMAP_THRESHOLD_ fixed at 128 KiB, so that glibc does not
# raise it), the calls are most of the replay's time, and the replay of
# plain against allocator:libslow.so is "slower", with a B/A interval that
# covers 2; A and B swapped, "faster", with an interval covering 1/2.  The
# ratio is a physical one (the spin's clock reads, the replay's own work
# between calls): the test asks the interval to cover it, not the estimate
# to equal it.
. "$(dirname "$0")/tap/libtap.sh"

GEN=$TARGETS/tracegen
SLOW=$TARGETS/libslow.so
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$GEN" ] || bail "$GEN not built (make check builds it)"
[ -x "$SLOW" ] || bail "$SLOW not built (make check builds it)"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
T=120
MALLOC_MMAP_THRESHOLD_=131072
export MALLOC_MMAP_THRESHOLD_

plan 5

"$GEN" -o "$HT_TMP/big.trace" -s 31 -t 1 -n 400 -m malloc -a 262144 \
    -b 1048576
ok $? "tracegen: 400 mallocs and frees of 256 KiB to 1 MiB"

# verdict A B: "VERDICT LO HI" of --compare A B.
verdict() {
	timeout $T "$HEAPTOOL" replay --compare "$1" "$2" --rounds 12 \
	    --seed 5 --format json "$HT_TMP/big.trace" >"$HT_TMP/v.json" \
	    2>"$HT_TMP/v.err" || diag "$(cat "$HT_TMP/v.err")"
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(d["verdict"], "%.3f %.3f %.3f" % (d["ratio"], d["ratio_lo"],
      d["ratio_hi"]))' "$HT_TMP/v.json"
}
v=$(verdict plain "allocator:$SLOW")
case $v in slower\ *) r=0 ;; *) r=1 ;; esac
ok $r "plain against libslow.so: slower ($v)"
set -- $v
ok $(python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= 2 <= float(sys.argv[2]) else 1)' \
    "$3" "$4"; echo $?) "its B/A interval $3 .. $4 covers 2"
v=$(verdict "allocator:$SLOW" plain)
case $v in faster\ *) r=0 ;; *) r=1 ;; esac
ok $r "libslow.so against plain: faster ($v)"
set -- $v
ok $(python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= 0.5 <= float(sys.argv[2]) else 1)' \
    "$3" "$4"; echo $?) "its B/A interval $3 .. $4 covers 1/2"
done_testing
