#!/bin/sh
# heaptool run chooses the jemalloc backend as attach does, where the
# command's jemalloc samples by itself (Debian's libjemalloc.so.2 preloaded
# with MALLOC_CONF=prof:true,prof_active:false), and --backend forces one:
# - by default at rate 1: the hooks (they reach jemalloc, a shared
#   library, through its GOT slots), exact, the summary naming no jemalloc;
# - --backend got on the same: the same figures;
# - --backend jemalloc at rate 1: backend jemalloc in the summary and the
#   profile, and every block of the fixture's counted, main's first small
#   allocations too (the main thread's countdown, drawn at jemalloc's own
#   rate before the agent came, is settled before main), the header saying
#   the figures are floors (another thread's would not be settled);
# - by default at a sampling rate, jemalloc's sampling; a rate that is not
#   a power of 2 is rounded, and run says so;
# - a child that --follow-forks follows samples with the hooks (backend
#   got in its profiles), its parent with jemalloc;
# - --backend jemalloc where jemalloc cannot sample (opt.prof off) or is
#   absent is refused, exit 1, with one line that says why.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/htrun.sh"
. "$(dirname "$0")/lib/htnative.sh"

[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$TARGETS/jem-target" ] ||
    bail "$TARGETS/jem-target not built (make check builds it)"
JEM=$(native_lib libjemalloc.so.2)
[ -n "$JEM" ] || skip_all "libjemalloc.so.2 not found (apt-get install libjemalloc2)"

plan 26

printf 'alloc a 1000 4096\nalloc b 300 16384\nexit\n' >"$HT_TMP/in"
# The fixture's own counts, and its checksum, without the agent.
env MALLOC_CONF=prof:true,prof_active:false LD_PRELOAD="$JEM" \
    "$TARGETS/jem-target" early <"$HT_TMP/in" >"$HT_TMP/plain.out"
early=$(awk '$1 == "early" { print $2, $3 }' "$HT_TMP/plain.out")
cnt_a=$(awk '$1 == "done" && $3 == "a" { print $4, $5 }' "$HT_TMP/plain.out")
cnt_b=$(awk '$1 == "done" && $3 == "b" { print $4, $5 }' "$HT_TMP/plain.out")
sum=$(grep '^sum ' "$HT_TMP/plain.out")

# run_fx NAME ENV... -- RUN-ARGS...: heaptool run RUN-ARGS -o NAME.heap --
# jem-target early, with ENV and JEM preloaded; the fixture's stdout in
# NAME.out, heaptool's stderr in NAME.err, the status in st.
run_fx() {
	_n=$1
	shift
	_e=
	while [ "$1" != -- ]; do
		_e="$_e $1"
		shift
	done
	shift
	# shellcheck disable=SC2086
	timeout $T env $_e LD_PRELOAD="$JEM" "$HEAPTOOL" run "$@" \
	    -o "$HT_TMP/$_n.heap" -- "$TARGETS/jem-target" early \
	    <"$HT_TMP/in" >"$HT_TMP/$_n.out" 2>"$HT_TMP/$_n.err"
	st=$?
}

# counts NAME: the report of NAME.heap, as "BACKEND | early | a | b", each
# site as "OBJECTS BYTES".
counts() {
	"$HEAPTOOL" report --json --detail "$HT_TMP/$1.heap" >"$HT_TMP/$1.json" ||
	    return
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
def site(f):
    for s in j["sites"]:
        if s["frames"] and s["frames"][0].get("function") == f:
            return "%d %d" % (round(s["inuse_objects"]), round(s["inuse_bytes"]))
    return "none"
print(" | ".join([j["session"]["backend"], site("jem_site_early"),
    site("jem_site_a"), site("jem_site_b")]))' "$HT_TMP/$1.json"
}

# By default at rate 1: the hooks, exact.
run_fx r1 MALLOC_CONF=prof:true,prof_active:false -- --rate 1
ok $st "run (opt.prof on, rate 1)"
is "$(grep '^sum ' "$HT_TMP/r1.out")" "$sum" \
    "the command's results are its own"
grep -q "rate 1 (every allocation, exact)" "$HT_TMP/r1.err" &&
    ! grep -q "backend jemalloc" "$HT_TMP/r1.err"
ok $? "the summary's header says exact, and names no jemalloc backend"
is "$(counts r1)" "got | $early | $cnt_a | $cnt_b" \
    "backend got; main's first blocks and sites a and b, exactly"
is "$(json_get "$HT_TMP/r1.json" '[j["coverage"]["backend"], j["session"]["rate"], j["session"]["exact"]]')" \
    "['got', 1, True]" "the coverage is the hooks', at rate 1, exact"
! grep -q "rounded" "$HT_TMP/r1.err"
ok $? "rate 1: nothing said of rounding"

# Forced to the hooks.
run_fx r2 MALLOC_CONF=prof:true,prof_active:false -- --rate 1 --backend got
ok $st "run --backend got (opt.prof on, rate 1)"
is "$(grep '^sum ' "$HT_TMP/r2.out")" "$sum" "the results are the command's"
! grep -q "backend jemalloc" "$HT_TMP/r2.err"
ok $? "the summary names no jemalloc backend"
is "$(counts r2)" "got | $early | $cnt_a | $cnt_b" \
    "backend got: the hooks count the same blocks, exactly"

# Forced to jemalloc, where it runs.
run_fx r3 MALLOC_CONF=prof:true,prof_active:false -- --rate 1 \
    --backend jemalloc
ok $st "run --backend jemalloc (opt.prof on)"
is "$(counts r3)" "jemalloc | $early | $cnt_a | $cnt_b" \
    "forced: every block counted by jemalloc too, main's first ones included"
grep -q "rate 1 (NOT EXACT: jemalloc's own sampling misses each thread's first bytes after a start; figures are floors" \
    "$HT_TMP/r3.err" && ! grep -q "exact)" "$HT_TMP/r3.err"
ok $? "forced: the header says the figures are floors, not exact" ||
    diag "$(head -n 1 "$HT_TMP/r3.err")"
# A diff of the hooks' profile and jemalloc's: what jemalloc did not count
# is unknown, never 0, and a change of floors has no interval.
"$HEAPTOOL" diff --json --detail "$HT_TMP/r2.heap" "$HT_TMP/r3.heap" \
    >"$HT_TMP/d23.json"
is "$(json_get "$HT_TMP/d23.json" '[j["totals"]["alloc_bytes"], j["totals"]["peak_inuse_bytes"]["delta"], j["totals"]["inuse_bytes"]["delta_low"], j["exact"], sorted(set((s["new"]["alloc_bytes"], s["delta"]["freed_bytes"]) for s in j["sites"] if s["status"] != "gone"))]')" \
    "[{'old': $(json_get "$HT_TMP/r2.json" 'j["totals"]["alloc_bytes"]'), 'new': None, 'delta': None}, None, None, False, [(None, None)]]" \
    "diff with jemalloc's profile: allocated, freed and peak unknown (null), no interval"
"$HEAPTOOL" diff "$HT_TMP/r2.heap" "$HT_TMP/r3.heap" >"$HT_TMP/d23.txt"
grep -Eq '^  allocated +[0-9.]+ [KM]iB +unknown +unknown$' "$HT_TMP/d23.txt" &&
    grep -q "a change of floors: no interval" "$HT_TMP/d23.txt"
ok $? "the text diff says unknown, and no interval" ||
    diag "$(cat "$HT_TMP/d23.txt")"

# A rate jemalloc cannot take as it is.
run_fx r4 MALLOC_CONF=prof:true,prof_active:false -- --rate 100000
ok $st "run --rate 100000 (opt.prof on)"
grep -q "backend jemalloc: the rate 97.7 KiB was rounded to 128 KiB" \
    "$HT_TMP/r4.err"
ok $? "run says the rate was rounded to a power of 2" ||
    diag "$(cat "$HT_TMP/r4.err")"
"$HEAPTOOL" report --json "$HT_TMP/r4.heap" >"$HT_TMP/r4.json"
is "$(json_get "$HT_TMP/r4.json" 'j["session"]["rate"]')" 131072 \
    "the profile's rate is jemalloc's, 2^17"

# Refused: opt.prof off, and no jemalloc at all.
run_fx r5 -- --backend jemalloc
is "$st" 1 "run --backend jemalloc (opt.prof off): exit 1"
is "$(wc -l <"$HT_TMP/r5.err")" 1 "one line on stderr"
grep -Eq "^heaptool: run .*jem-target: the backend asked for cannot run in the command: its jemalloc runs with opt.prof off \(start it with MALLOC_CONF=prof:true,prof_active:false\); run without --backend, or with --backend got$" \
    "$HT_TMP/r5.err"
ok $? "it says why, and what to do" || diag "$(cat "$HT_TMP/r5.err")"
[ ! -e "$HT_TMP/r5.heap" ]
ok $? "and writes no profile"
timeout $T "$HEAPTOOL" run --backend jemalloc -o "$HT_TMP/r6.heap" -- \
    "$TARGETS/jem-target" <"$HT_TMP/in" >"$HT_TMP/r6.out" 2>"$HT_TMP/r6.err"
st=$?
[ $st -eq 1 ] && [ "$(wc -l <"$HT_TMP/r6.err")" -eq 1 ] &&
    grep -q "cannot run in the command: the process has no jemalloc" \
	"$HT_TMP/r6.err"
ok $? "without jemalloc: refused, exit 1, one line" ||
    diag "status $st: $(cat "$HT_TMP/r6.err")"

# A followed fork's child samples with the hooks, and says so.
printf 'alloc a 1000 4096\nfork 700 4096\nexit\n' >"$HT_TMP/in"
run_fx r7 MALLOC_CONF=prof:true,prof_active:false -- --rate 1 \
    --backend jemalloc --follow-forks --dump-prefix "$HT_TMP/d"
ok $st "run --follow-forks (opt.prof on, rate 1)"
child=$(awk '$1 == "done" && $2 == "fork" { print $3 }' "$HT_TMP/r7.out")
is "$(counts r7)" "jemalloc | $early | $cnt_a | none" \
    "the parent's profile: jemalloc's, site a exactly"
set -- "$HT_TMP"/d."$child".*.heap
cp "$1" "$HT_TMP/r7c.heap" 2>/dev/null
is "$(counts r7c)" "got | none | none | 700 $((700 * 4096))" \
    "the child's exit dump: the hooks', its 700 blocks at site b"
