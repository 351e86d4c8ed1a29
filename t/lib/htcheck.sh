# Checks of heaptool's JSON reports through t/lib/htcheck.py, for shell
# tests.  Source it after t/tap/libtap.sh.  Each check is queued with want and
# run, in one python3 process (it starts slowly), by checks, which turns its
# lines into TAP with each description prefixed with $label.

TAB=$(printf '\t')

# want COMMAND ARGS: queue a check of t/lib/htcheck.py; checks runs the
# queue through one python3 (it starts slowly) and turns its lines into TAP,
# each description prefixed with $label.
want() {
	for _a in "$@"; do
		case $_a in
		*[!A-Za-z0-9_./=,:+-]*)
			_q=$(printf '%s' "$_a" | sed "s/'/'\\\\''/g")
			printf "'%s' " "$_q" ;;
		*)
			printf '%s ' "$_a" ;;
		esac
	done >>"$HT_TMP/checks"
	echo >>"$HT_TMP/checks"
}

checks() {
	[ -s "$HT_TMP/checks" ] || return 0
	python3 "$HT_SRCDIR/t/lib/htcheck.py" - <"$HT_TMP/checks" \
	    >"$HT_TMP/py.out" 2>&1
	_pst=$?
	: >"$HT_TMP/checks"
	_pnot=0
	while IFS= read -r _pl; do
		case $_pl in
		"ok$TAB"*) ok 0 "$label: ${_pl#"ok$TAB"}" ;;
		"not ok$TAB"*) ok 1 "$label: ${_pl#"not ok$TAB"}"; _pnot=1 ;;
		*) diag "$_pl" ;;
		esac
	done <"$HT_TMP/py.out"
	if [ "$_pst" -ne 0 ] && [ "$_pnot" -eq 0 ]; then
		ok 1 "$label: htcheck.py failed (status $_pst)"
	fi
}
