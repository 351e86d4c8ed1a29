# The record tests' helpers (t0084-t0087, t0100).  Source it after
# t/tap/libtap.sh.

# rec_setup FIXTURE: FX is t/target's FIXTURE and DUMP t/trace-dump, each
# built (else bail), as heaptool is; no preload or test buffer size left
# from the caller's environment.
rec_setup() {
	FX=$TARGETS/$1
	DUMP=$HT_BUILDDIR/t/trace-dump
	[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
	[ -x "$FX" ] || bail "$FX not built (make check builds it)"
	[ -x "$DUMP" ] || bail "$DUMP not built (make check builds it)"
	unset HEAPTOOL_RECORD_BUFFER LD_PRELOAD
}

# get FILE KEY: the value of "KEY value" in FILE.
get() {
	sed -n "s/^$2 //p" "$1"
}

# exact NAME: t/target/rec-threads' own account ($HT_TMP/NAME.out) equals
# the trace's, as t/trace-dump read it ($HT_TMP/NAME.dump): per op and at
# the peak.  Says what differs.
exact() {
	_bad=
	for k in "op malloc" "op calloc" "op realloc" "op realloc-inplace" \
	    "op aligned" "op free" peak; do
		_a=$(get "$HT_TMP/$1.out" "$k")
		_b=$(get "$HT_TMP/$1.dump" "$k")
		[ -n "$_a" ] && [ "$_a" = "$_b" ] ||
		    _bad="$_bad $k: fixture $_a, trace $_b;"
	done
	[ -z "$_bad" ] || diag "$_bad"
	[ -z "$_bad" ]
}
