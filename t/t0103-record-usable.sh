#!/bin/sh
# heaptool record of t/target/nopie-malloc, a non-PIE executable that
# takes malloc's address (so that dlsym's "malloc" is its canonical PLT
# entry, as in Debian's node): every block's usable size is known, and the
# trace's requested and usable bytes of the fixture's blocks are what the
# fixture itself added up from glibc's malloc_usable_size.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/htrec.sh"

rec_setup nopie-malloc
command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
T=60

plan 3

timeout $T "$HEAPTOOL" record -o "$HT_TMP/np.trace" -- "$FX" \
    >"$HT_TMP/np.out" 2>"$HT_TMP/np.err"
is 0 $? "record exits 0" || diag "$(cat "$HT_TMP/np.err")"
timeout $T "$HEAPTOOL" trace-stats --format json "$HT_TMP/np.trace" \
    >"$HT_TMP/np.json" 2>"$HT_TMP/np.err2"
ok $? "trace-stats reads the trace" || diag "$(cat "$HT_TMP/np.err2")"
want=$(cat "$HT_TMP/np.out")
got=$(python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["memory"]
print("requested %d usable %d unknown %d" % (m["requested"], m["usable"],
      m["usable_unknown"]))' "$HT_TMP/np.json")
is "$got" "$want unknown 0" \
    "usable sizes known, and those of glibc's malloc_usable_size"
