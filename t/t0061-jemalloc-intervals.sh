#!/bin/sh
# The jemalloc backend's estimates against the fixture's own counts: 40
# sessions of t/target/jem-target (Debian's libjemalloc.so.2, opt.prof on),
# at 16 KiB and 64 KiB by turns, each with two sites, 2000 blocks of 4096
# bytes and 20000 of 96 (jemalloc size classes: the usable sizes the
# fixture counts are the requested ones).  Each site's printed 95% interval
# must hold the truth; jemalloc's sampling cannot be seeded, so the test
# asks it of at least 66 of the 80 intervals (were they exactly 95%
# intervals, fewer would happen once in 100000 runs; at the 92% measured
# over 240 intervals, once in 600).  The estimates' mean ratio to the
# truth, and the intervals that missed, are printed for the record.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/ptrace.sh"
. "$(dirname "$0")/lib/htrun.sh"
. "$(dirname "$0")/lib/htnative.sh"

[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$TARGETS/jem-target" ] ||
    bail "$TARGETS/jem-target not built (make check builds it)"
[ "$(uname -m)" = x86_64 ] || skip_all "attach supports x86-64 only"
JEM=$(native_lib libjemalloc.so.2)
[ -n "$JEM" ] || skip_all "libjemalloc.so.2 not found (apt-get install libjemalloc2)"
require_ptrace

ROUNDS=40
plan 8

start_fx jem "$JEM" MALLOC_CONF=prof:true,prof_active:false
ht_ok attach "heaptool attach" attach "$pid"
: >"$HT_TMP/figures"
round=0
fails=0
jem=0
while [ $round -lt $ROUNDS ]; do
	round=$((round + 1))
	rate=$((round % 2 == 0 ? 65536 : 16384))
	# Every thread's countdown at jemalloc's idle rate, then at the
	# session's (see t0060).
	fx churn 16384 4096
	ht "start$round" start -p "$pid" --rate $rate
	[ $st -eq 0 ] || fails=$((fails + 1))
	fx churn 64 4096
	fx alloc a 2000 4096
	truth_a=${fx_line##* }
	fx alloc b 20000 96
	truth_b=${fx_line##* }
	ht "r$round" report -p "$pid" --json --detail
	[ $st -eq 0 ] || fails=$((fails + 1))
	[ "$(json_get "$HT_TMP/r$round.out" 'j["session"]["backend"]')" = \
	    jemalloc ] && jem=$((jem + 1))
	for s in a b; do
		eval "t=\$truth_$s"
		site_json "$HT_TMP/r$round.out" "jem_site_$s" \
		    '"%d %d %d %d" % (s["inuse_bytes"], s["inuse_bytes_low"], s["inuse_bytes_high"], s["samples"])' |
		    while read -r est lo hi n; do
			echo "$rate $s $t $est $lo $hi $n"
		done >>"$HT_TMP/figures"
	done
	fx free a
	fx free b
	ht "stop$round" stop -p "$pid"
	[ $st -eq 0 ] || fails=$((fails + 1))
done
is $fails 0 "every start, report and stop of $ROUNDS rounds succeeded"
is $jem $ROUNDS "every session's samples are jemalloc's"

# rate site truth estimate low high samples
python3 - "$HT_TMP/figures" "$ROUNDS" >"$HT_TMP/verdict" <<'EOF'
import sys
rows = [l.split() for l in open(sys.argv[1])]
rounds = int(sys.argv[2])
inside = 0
ratio = {}
miss = []
for rate, site, t, est, lo, hi, n in rows:
    t, est, lo, hi = int(t), int(est), int(lo), int(hi)
    if lo <= t <= hi:
        inside += 1
    else:
        miss.append("outside: rate %s site %s truth %d estimate %d "
                    "[%d, %d], %s samples" % (rate, site, t, est, lo, hi, n))
    ratio.setdefault((site, rate), []).append(est / t)
print(len(rows), inside)
for k in sorted(ratio):
    v = ratio[k]
    print("site %s at rate %s: mean estimate/truth %.3f over %d sessions"
          % (k[0], k[1], sum(v) / len(v), len(v)))
for m in miss:
    print(m)
EOF
read -r nrows inside <"$HT_TMP/verdict"
is "$nrows" $((ROUNDS * 2)) "each session has both sites"
sed 1d "$HT_TMP/verdict" | while read -r l; do diag "$l"; done
ok "$([ "$inside" -ge 66 ] && echo 0 || echo 1)" \
    "the 95% intervals hold the truth in $inside of $nrows (at least 66)"
ht_ok detach "detach" detach -p "$pid"
ht_ok st "status after detach" status -p "$pid" --json
is "$(json_get "$HT_TMP/st.out" 'j["coverage"]["backend"]')" none \
    "detached after jemalloc's sessions: no backend is in use"
fx_stop
