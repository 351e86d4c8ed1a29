#!/bin/sh
# C++'s new and delete when the process's allocator is tcmalloc, jemalloc
# or mimalloc, preloaded: their operators new and delete are the
# allocator's own, which call no malloc through a GOT slot, so heaptool
# hooks them as entry points (HT_GOT_IN_ALLOCATOR in agent/got.h), and the
# allocator's calls nested inside them are not counted again
# (HT_GOT_NOT_SELF).  t/target/cxx-new-O2 (new, new[], the aligned and
# nothrow forms, sized delete, delete[], a vector growing) must come out
# with its table's exact figures at rate 1 under heaptool run, its output
# unchanged.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/htrun.sh"
. "$(dirname "$0")/lib/htcheck.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
FX=$TARGETS/cxx-new-O2
[ -x "$FX" ] || bail "$FX not built (make check builds it)"
unset HEAPTOOL_SEED LD_PRELOAD HEAPTOOL_AGENT
T=60
src=$HT_SRCDIR/t/target/cxx-new.cc

libs=
for l in libtcmalloc_minimal.so.4 libjemalloc.so.2 libmimalloc.so.2; do
	for d in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib; do
		if [ -f "$d/$l" ]; then
			libs="$libs $d/$l"
			break
		fi
	done
done
[ -n "$libs" ] || skip_all "none of tcmalloc, jemalloc, mimalloc installed" \
    "(apt-get install libgoogle-perftools-dev libjemalloc-dev libmimalloc-dev)"
set -- $libs
plan $((33 * $#))

# the figures of cxx-new.cc's table
sites() {
	for s in "keep_new 2000 50 2000 50" "keep_new_array 4000 10 4000 10" \
	    "new_churn 0 0 4000 100" "delete_some 2000 10 4000 20" \
	    "keep_aligned_new 768 4 768 4" "aligned_churn 0 0 1920 10" \
	    "keep_nothrow 120 3 120 3"; do
		set -- $s
		want site "$json" --src "$src" --func "$1" inuse_bytes="$2" \
		    inuse_objects="$3" alloc_bytes="$4" alloc_objects="$5" \
		    --chain "$1,main"
	done
	checks
}

for lib in $libs; do
	n=$(basename "$lib")
	timeout $T env LD_PRELOAD="$lib" "$FX" >"$HT_TMP/plain.out" 2>&1
	LD_PRELOAD=$lib timeout $T "$HEAPTOOL" run --rate 1 \
	    -o "$HT_TMP/$n.heap" -- "$FX" >"$HT_TMP/$n.out" 2>"$HT_TMP/$n.err"
	ok $? "$n: heaptool run --rate 1" ||
	    diag "$(head -c 2000 "$HT_TMP/$n.err")"
	cmp -s "$HT_TMP/plain.out" "$HT_TMP/$n.out"
	ok $? "$n: output unchanged"
	ht_ok "$n.rep" "$n: report --json --detail" report --json --detail \
	    "$HT_TMP/$n.heap"
	json=$HT_TMP/$n.rep.out
	label=$n
	sites
	python3 - "$json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["coverage"]
ops = {f["function"]: f for f in c["functions"]
       if f["family"] == "c++" and f["hooked"]}
sys.exit(0 if "_Znwm" in ops and "_ZdlPvm" in ops else 1)
PY
	ok $? "$n: coverage: the allocator's operator new and sized delete hooked"
	python3 - "$json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["totals"]
# The table's sites plus the vector (8188 in 11) and stdout's buffer.
sys.exit(0 if t["alloc_objects"] == 209 and t["alloc_bytes"] == 29092
         else 1)
PY
	ok $? "$n: every allocation counted once (209 blocks, 29092 bytes)"
done
