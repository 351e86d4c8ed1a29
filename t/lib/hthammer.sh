# What the tests that attach to t/target/attach-hammer and detach again
# share (t0020, t0085): the picture of its GOT and page protections that a
# detach must restore (t/lib/htgotmap.py, compared by t/lib/htgotcmp.py),
# and its end, as it would have ended without heaptool.  Source after
# t/tap/libtap.sh; the test sets pid (the target's), stopfile (its
# --until file) and want_sum (the checksum line of a plain run), and the
# target's output goes to $HT_TMP/target.out.

# hammer_snapshot NAME: the GOT and protections of the target now, in
# $HT_TMP/NAME.json (one assertion).
hammer_snapshot() {
	python3 "$HT_SRCDIR/t/lib/htgotmap.py" "$pid" >"$HT_TMP/$1.json" \
	    2>"$HT_TMP/$1.snap.err"
	_s=$?
	ok $_s "picture of the target's GOT and page protections ($1)"
	[ $_s -eq 0 ] || diag "$(head -c 2000 "$HT_TMP/$1.snap.err")"
}

# hammer_compare BEFORE AFTER got|prot|all: nonzero unless the pictures
# agree; what was compared, and the differences, in $HT_TMP/cmp.out.
hammer_compare() {
	python3 "$HT_SRCDIR/t/lib/htgotcmp.py" "$HT_TMP/$1.json" \
	    "$HT_TMP/$2.json" "$3" >"$HT_TMP/cmp.out" 2>&1
}

# hammer_end: stop the target (its stopfile) and wait for it: it exits 0
# with the checksum of a plain run (two assertions).
hammer_end() {
	touch "$stopfile"
	_i=0
	while kill -0 "$pid" 2>/dev/null && [ $_i -lt $((T * 20)) ]; do
		_i=$((_i + 1))
		sleep 0.05
	done
	wait "$pid"
	_st=$?
	pid=
	is 0 "$_st" "the target exits 0 (no check of its blocks failed)"
	is "$want_sum" "$(grep '^attach-hammer: checksum' "$HT_TMP/target.out")" \
	    "the target's checksum is that of a run without heaptool"
}
