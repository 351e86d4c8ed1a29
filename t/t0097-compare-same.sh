#!/bin/sh
# heaptool replay --compare of a setup against itself (issue 13): over 20
# seeds (each its own order of the runs and its own bootstrap), small N
# (8 rounds of a tiny trace), the verdict is "no difference detectable" in
# at least 19.  The runs of A and B are then exchangeable, and the
# verdict's test, Mann-Whitney at alpha, says "different" of a seed with
# probability alpha at most (its normal approximation with the continuity
# correction is conservative at this N): at the default 0.05, two or more
# of 20 seeds would do it 26% of the time, so the test asks --alpha 0.005,
# with which that chance is below 0.5% (1 - 0.995^20 - 20 * 0.005 *
# 0.995^19).  Each verdict has a smallest detectable difference that is
# a finite ratio above 1.  Also: the JSON follows
# t/data/compare-schema.json, and the text names its seed and verdict.
. "$(dirname "$0")/tap/libtap.sh"

GEN=$TARGETS/tracegen
LIB=$HT_SRCDIR/t/lib
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$GEN" ] || bail "$GEN not built (make check builds it)"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
T=120

plan 6

"$GEN" -o "$HT_TMP/t.trace" -s 21 -t 2 -n 600 -x 30
ok $? "tracegen: a trace of 600 events"

same=0
cover=0
for seed in $(seq 1 20); do
	timeout $T "$HEAPTOOL" replay --compare plain plain --rounds 8 \
	    --alpha 0.005 --seed $seed --format json "$HT_TMP/t.trace" \
	    >"$HT_TMP/c$seed.json" 2>"$HT_TMP/c$seed.err" ||
	    diag "seed $seed: $(cat "$HT_TMP/c$seed.err")"
	v=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(d["verdict"].replace(" ", "_"),
      1 < d["min_detectable_ratio"] < float("inf"),
      "p %.4f" % d["mann_whitney"]["p"])' \
	    "$HT_TMP/c$seed.json" 2>/dev/null)
	case $v in
	no_difference_detectable*) same=$((same + 1)) ;;
	*) diag "seed $seed: $v" ;;
	esac
	case $v in
	no_difference_detectable\ True*) cover=$((cover + 1)) ;;
	esac
done
ok $([ $same -ge 19 ]; echo $?) \
    "plain against plain: no difference detectable in $same of 20 seeds"
ok $([ $cover -eq $same ]; echo $?) \
    "each with a finite smallest detectable ratio ($cover)"
check "the JSON follows t/data/compare-schema.json" \
    python3 "$LIB/htschema.py" "$HT_SRCDIR/t/data/compare-schema.json" \
    "$HT_TMP"/c*.json
timeout $T "$HEAPTOOL" replay --compare plain plain --rounds 2 --seed 77 \
    "$HT_TMP/t.trace" >"$HT_TMP/text" 2>&1
ok $? "--rounds 2, as text"
grep -q "order drawn from seed 77" "$HT_TMP/text" &&
    grep -q "^verdict: " "$HT_TMP/text"
ok $? "the text names its seed and gives its verdict"
done_testing
