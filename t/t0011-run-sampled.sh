#!/bin/sh
# heaptool run --rate 64K: sampled estimates of sites with known truth
# ("alloc-sites big": tens of MiB at a few sites) fall within bounds derived
# from the statistics.  A kept site's estimate must be within 4 standard
# deviations of the truth, the deviation taken from the reported 95% interval;
# a freed site's allocated estimate within 4 deviations from the math
# (Horvitz-Thompson variance); sample counts within 4 sqrt(n) of what the rate
# predicts.  Seeds are fixed (HEAPTOOL_SEED), so a run is reproducible: the
# same seed twice gives the same samples.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/htcheck.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
for f in alloc-sites-O0 alloc-sites-O2; do
	[ -x "$TARGETS/$f" ] ||
	    bail "$TARGETS/$f not built (make check builds it)"
done
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"

RATE=65536
SRC=$HT_SRCDIR/t/target/alloc-sites.c
# name:size:count:kept|churn, as alloc-sites.c makes them in "big" mode.
SPECS="big_tiny:64:262144:kept big_page:4096:4096:kept
big_odd:100000:160:kept big_huge:1048576:16:kept big_churn:1000:32768:churn"

# sampled_run LABEL SEED BIN: run "BIN big" under heaptool run --rate 64K
# with HEAPTOOL_SEED=SEED; check exit status and output against the plain
# run; leave the report in $HT_TMP/LABEL.json.  Nonzero if there is none.
sampled_run() {
	label=$1
	HEAPTOOL_SEED=$2 timeout 60 "$HEAPTOOL" run --rate 64K \
	    -o "$HT_TMP/$1.heap" -- "$3" big >"$HT_TMP/$1.out" \
	    2>"$HT_TMP/$1.err"
	_st=$?
	is "$plain_status" "$_st" "$1: exit status unchanged under heaptool run"
	[ "$_st" -eq "$plain_status" ] || diag "heaptool run said:" \
	    "$(head -c 2000 "$HT_TMP/$1.err")"
	cmp -s "$HT_TMP/plain.out" "$HT_TMP/$1.out"
	ok $? "$1: output unchanged under heaptool run"
	timeout 60 "$HEAPTOOL" report --json --detail "$HT_TMP/$1.heap" \
	    >"$HT_TMP/$1.json" 2>"$HT_TMP/$1.report.err"
	_st=$?
	ok $_st "$1: heaptool report --json --detail reads the profile"
	if [ $_st -ne 0 ]; then
		diag "$(head -c 2000 "$HT_TMP/$1.report.err")"
		return 1
	fi
	return 0
}

for v in O2 O0; do
	bin=$TARGETS/alloc-sites-$v
	base=alloc-sites-$v
	label=$base
	timeout 60 "$bin" big >"$HT_TMP/plain.out" 2>&1
	plain_status=$?
	is 0 "$plain_status" "$base big: exits 0 by itself"

	if sampled_run "$base-seed1" 1 "$bin"; then
		want wellformed "$HT_TMP/$label.json"
		want field "$HT_TMP/$label.json" session.rate $RATE
		want no-agent-frames "$HT_TMP/$label.json"
		# shellcheck disable=SC2086
		want sampled "$HT_TMP/$label.json" --rate $RATE \
		    --src "$SRC" $SPECS
		checks
	fi
	if sampled_run "$base-seed1-again" 1 "$bin"; then
		want same-sites "$HT_TMP/$base-seed1.json" \
		    "$HT_TMP/$label.json" big_tiny big_page big_odd big_huge \
		    big_churn
		checks
	fi
	if sampled_run "$base-seed2" 20240601 "$bin"; then
		# shellcheck disable=SC2086
		want sampled "$HT_TMP/$label.json" --rate $RATE \
		    --src "$SRC" $SPECS
		checks
	fi
done

done_testing
