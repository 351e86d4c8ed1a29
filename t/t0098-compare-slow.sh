#!/bin/sh
# heaptool replay --compare against an allocator twice as slow (issue 13):
# t/target/libslow.so, preloaded, makes every allocation allocate and free
# a block of its size first, so that a malloc and its free cost the
# allocator under it twice the work.  On a trace of blocks of 256 KiB to
# 1 MiB, each malloc an mmap and each free a munmap (MALLOC_MMAP_THRESHOLD_
# fixed at 128 KiB, so that glibc does not raise it), the calls are most
# of the replay's CPU time, and plain against allocator:libslow.so is
# "slower", with a B/A interval that reaches 2 within 5%; A and B swapped,
# "faster", near 1/2 the same way.  Within 5%, not exactly: the replay's
# own work between the calls (a few percent of its time, the same on both
# sides) is not doubled, and the kernel's second mmap of a range just
# unmapped is a little cheaper than the first, so the true ratio of the
# replay's CPU time is 1.95 to 2.0; the interval is of that ratio, and at
# 30 rounds it is narrow enough to miss 2 itself.
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

"$GEN" -o "$HT_TMP/big.trace" -s 31 -t 1 -n 2000 -m malloc -a 262144 \
    -b 1048576
ok $? "tracegen: 2000 mallocs and frees of 256 KiB to 1 MiB"

# verdict A B: "VERDICT LO HI" of --compare A B.
verdict() {
	timeout $T "$HEAPTOOL" replay --compare "$1" "$2" --rounds 30 \
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
ok $(python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= 2.1 and float(sys.argv[2]) >= 1.9 else 1)' \
    "$3" "$4"; echo $?) "its B/A interval $3 .. $4 reaches 2 within 5%"
v=$(verdict "allocator:$SLOW" plain)
case $v in faster\ *) r=0 ;; *) r=1 ;; esac
ok $r "libslow.so against plain: faster ($v)"
set -- $v
ok $(python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= 0.5 / 0.95 and float(sys.argv[2]) >= 0.5 / 1.05 else 1)' \
    "$3" "$4"; echo $?) "its B/A interval $3 .. $4 reaches 1/2 within 5%"
done_testing
