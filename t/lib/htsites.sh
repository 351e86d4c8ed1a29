# sites FILE PREFIX [OPTIONS] KEY=BYTES/OBJECTS...: heaptool report
# --detail --json of the profile FILE, then t/lib/htsites.py on it (which
# says what the arguments mean); prints what differs, nothing when all
# holds.  Source it after t/tap/libtap.sh; uses $T (a timeout in seconds).
sites() {
	_f=$1
	shift
	timeout "${T:-60}" "$HEAPTOOL" report --detail --json "$_f" \
	    >"$HT_TMP/sites.json" 2>"$HT_TMP/sites.err" || {
		echo "heaptool report failed: $(head -c 500 "$HT_TMP/sites.err")"
		return
	}
	python3 "$HT_SRCDIR/t/lib/htsites.py" "$HT_TMP/sites.json" "$@"
}
