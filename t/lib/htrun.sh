# Running heaptool in the attach tests (t0020, t0021, t0025, t0026): each
# command bounded by T seconds (a command that takes longer is hung), its
# output kept in $HT_TMP/NAME.out and NAME.err.  $as, when the test sets
# it, is a prefix to run the command as another user (e.g. setpriv ...).

# ht NAME ARGS...: heaptool ARGS; its status in st.
ht() {
	_n=$1
	shift
	# shellcheck disable=SC2086
	timeout $T ${as-} "$HEAPTOOL" "$@" >"$HT_TMP/$_n.out" \
	    2>"$HT_TMP/$_n.err"
	st=$?
}

# ht_ok NAME DESCRIPTION ARGS...: heaptool ARGS must exit 0.
ht_ok() {
	_n=$1
	_d=$2
	shift 2
	ht "$_n" "$@"
	ok $st "$_d"
	[ $st -eq 0 ] || diag "heaptool $* (status $st):" \
	    "$(head -c 2000 "$HT_TMP/$_n.err")"
}
