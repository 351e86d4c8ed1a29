#!/bin/sh
# Exact means exact (heaptool(1), "Dropped samples").  t/target/dump-target
# keeps 5,000,000 blocks of 32 bytes at its site dt_keep:
#   - under heaptool run --rate 1 the tables grow to hold them all: the
#     site has exactly 5000000 objects and 160000000 bytes, the report
#     says exact and nothing was dropped;
#   - with --max-samples 1000000 they cannot: no figure is called exact
#     anywhere (text, JSON, pprof comments, the flame graph's title,
#     collapsed stacks, diff), the drop count is shown, and what the
#     dropped samples stood for, added to what was kept, is the whole of
#     the exact run; every report warns on stderr and still exits 0;
#   - a live session past its bound: status says NOT EXACT, with the drop
#     count and the bound, in text and JSON.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/htdumps.sh"
. "$(dirname "$0")/lib/htcheck.sh"

dump_test_setup
T=300
N=5000000
BOUND=1000000
src=$HT_SRCDIR/t/target/dump-target.c

# run_fx NAME ARGS: dump-target under heaptool run ARGS, keeping N blocks.
run_fx() {
	_n=$1
	shift
	printf 'alloc %d 32\nquit\n' $N |
	    timeout $T "$HEAPTOOL" run --rate 1 "$@" -o "$HT_TMP/$_n.heap" \
		-- "$FX" >"$HT_TMP/$_n.run.out" 2>"$HT_TMP/$_n.run.err"
	is 0 $? "$_n: dump-target exits 0 under heaptool run"
	grep -qx "done alloc $N 32" "$HT_TMP/$_n.run.out"
	ok $? "$_n: it kept its $N blocks"
}

# no_exact FILE WHAT: nothing in FILE calls a figure exact: every "exact"
# is part of "NOT EXACT" (the source and build paths, which frames and
# file names print, are left out: a checkout may be called exact).
no_exact() {
	_bad=$(sed -e "s|$HT_SRCDIR||g" -e "s|$HT_BUILDDIR||g" \
	    -e "s|$HT_TMP||g" "$1" | grep -i 'exact' | grep -v 'NOT EXACT')
	is "" "$_bad" "$2: no figure is called exact"
}

# 1. The default bound holds them all.
run_fx all
ht all report --json --detail "$HT_TMP/all.heap"
ok $st "all: heaptool report --json reads the profile"
label=all
want site "$HT_TMP/all.out" --src "$src" --func dt_keep \
    inuse_objects=$N inuse_bytes=$((N * 32)) alloc_objects=$N \
    alloc_bytes=$((N * 32))
want exact "$HT_TMP/all.out"
checks
is "True 0" "$(json_get "$HT_TMP/all.out" 'j["session"]["exact"]') \
$(json_get "$HT_TMP/all.out" 'j["agent"]["dropped_samples"]')" \
    "all: called exact, no sample dropped"
ht all-text report "$HT_TMP/all.heap"
head -n 1 "$HT_TMP/all-text.out" | grep -q 'rate 1 (every allocation, exact)'
ok $? "all: the text report says exact"
is "" "$(cat "$HT_TMP/all-text.err")" "all: and warns of nothing"

# 2. A bound below what the program keeps.
run_fx bound --max-samples $BOUND
grep -q "^heaptool: warning: .*NOT EXACT: [0-9]* samples dropped" \
    "$HT_TMP/bound.run.err"
ok $? "bound: heaptool run warns that samples were dropped" ||
    diag "$(tail -n 5 "$HT_TMP/bound.run.err")"
ht bound report --json --detail "$HT_TMP/bound.heap"
ok $st "bound: heaptool report --json reads the profile, exit status 0"
j=$HT_TMP/bound.out
drop=$(json_get "$j" 'j["agent"]["dropped_samples"]')
[ "$drop" -gt 0 ] 2>/dev/null
ok $? "bound: samples were dropped ($drop)"
python3 - "$HT_TMP/all.out" "$j" $BOUND >"$HT_TMP/sums.out" 2>&1 <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
bound = int(sys.argv[3])
ta, tb, g = a["totals"], b["totals"], b["agent"]
bad = []
def want(cond, what):
    if not cond:
        bad.append(what)
want(b["session"]["exact"] is False, "session.exact is %r" %
     b["session"]["exact"])
want(g["max_samples"] == bound, "max_samples %r" % g["max_samples"])
want(g["drop_reasons"] == ["live_samples_bound"],
     "drop_reasons %r" % g["drop_reasons"])
want(g["dropped_objects"] == g["dropped_samples"],
     "at rate 1 a sample is an object: %r dropped objects, %r samples" %
     (g["dropped_objects"], g["dropped_samples"]))
want(tb["alloc_objects"] + g["dropped_objects"] == ta["alloc_objects"],
     "kept %d + dropped %d objects = the exact run's %d" %
     (tb["alloc_objects"], g["dropped_objects"], ta["alloc_objects"]))
want(tb["alloc_bytes"] + g["dropped_bytes"] == ta["alloc_bytes"],
     "kept %d + dropped %d bytes = the exact run's %d" %
     (tb["alloc_bytes"], g["dropped_bytes"], ta["alloc_bytes"]))
want(tb["live_samples"] <= bound, "%d live samples, bound %d" %
     (tb["live_samples"], bound))
want(tb["inuse_bytes_low"] <= ta["inuse_bytes"] <= tb["inuse_bytes_high"],
     "in use [%d, %d] holds the exact run's %d" %
     (tb["inuse_bytes_low"], tb["inuse_bytes_high"], ta["inuse_bytes"]))
for s in b["sites"]:
    want(s["inuse_bytes_high"] >= s["inuse_bytes"] + g["dropped_bytes"],
         "a site's high end %d leaves out the dropped bytes" %
         s["inuse_bytes_high"])
print("\n".join(bad))
EOF
is "" "$(cat "$HT_TMP/sums.out")" \
    "bound: the figures kept plus the dropped ones are the exact run's"
grep -qi '"exact": *true' "$j"
ok $((!$?)) "bound: JSON: no \"exact\": true"
grep -q "^heaptool: warning: $HT_TMP/bound.heap: NOT EXACT: $drop samples \
dropped (the live-sample table held its bound of $BOUND" "$HT_TMP/bound.err"
ok $? "bound: report --json warns on stderr, with the count and the bound" ||
    diag "$(cat "$HT_TMP/bound.err")"

ht text report "$HT_TMP/bound.heap"
ok $st "bound: text report, exit status 0"
no_exact "$HT_TMP/text.out" "bound: text"
grep -q "^  NOT EXACT: $drop samples dropped (the live-sample table held \
its bound of $BOUND" "$HT_TMP/text.out"
ok $? "bound: text: NOT EXACT, the count and the bound, first thing" ||
    diag "$(head -n 5 "$HT_TMP/text.out")"
sed -n 3p "$HT_TMP/text.out" | grep -q "in use is at least .* and at most"
ok $? "bound: text: what that means for the figures below" ||
    diag "$(head -n 5 "$HT_TMP/text.out")"
grep -q "^  in use .*(at least, at most " "$HT_TMP/text.out"
ok $? "bound: text: in use is a lower bound, and its upper bound"
grep -q "warning: .*NOT EXACT: $drop samples dropped" "$HT_TMP/text.err"
ok $? "bound: text: warns on stderr"
ht detail report --detail "$HT_TMP/bound.heap"
no_exact "$HT_TMP/detail.out" "bound: text --detail"

ht pb report --format pprof -o "$HT_TMP/bound.pb.gz" "$HT_TMP/bound.heap"
ok $st "bound: pprof export, exit status 0"
grep -q "warning: .*NOT EXACT: $drop samples dropped" "$HT_TMP/pb.err"
ok $? "bound: pprof: warns on stderr"
python3 -c 'import sys
sys.path.insert(0, sys.argv[1])
import htformats
print("\n".join(htformats.decode_pprof(sys.argv[2])["comments"]))' \
    "$HT_SRCDIR/t/lib" "$HT_TMP/bound.pb.gz" >"$HT_TMP/comments.out"
ok $? "bound: pprof: the profile.proto decodes"
no_exact "$HT_TMP/comments.out" "bound: pprof comments"
grep -q "^NOT EXACT: $drop samples dropped" "$HT_TMP/comments.out"
ok $? "bound: pprof: a comment gives the count" ||
    diag "$(cat "$HT_TMP/comments.out")"
if command -v go >/dev/null 2>&1; then
	HOME=$HT_TMP GOCACHE=$HT_TMP/go GOPATH=$HT_TMP/gopath \
	    timeout 120 go tool pprof -raw "$HT_TMP/bound.pb.gz" \
	    >"$HT_TMP/raw.out" 2>&1
	grep '^Comment:' "$HT_TMP/raw.out" >"$HT_TMP/raw-comments.out"
	grep -q "^Comment: NOT EXACT: $drop samples dropped" \
	    "$HT_TMP/raw-comments.out"
	ok $? "bound: go tool pprof -raw shows the drop count" ||
	    diag "$(head -n 20 "$HT_TMP/raw.out")"
	no_exact "$HT_TMP/raw-comments.out" "bound: go tool pprof -raw"
else
	skip "go is not installed: go tool pprof not tried"
	skip "go is not installed: go tool pprof not tried"
fi

ht svg report --format svg -o "$HT_TMP/bound.svg" "$HT_TMP/bound.heap"
ok $st "bound: svg export, exit status 0"
no_exact "$HT_TMP/bound.svg" "bound: svg"
grep -q "NOT EXACT: $drop samples dropped" "$HT_TMP/bound.svg"
ok $? "bound: svg: the title gives the count"
grep -q "warning: .*NOT EXACT" "$HT_TMP/svg.err"
ok $? "bound: svg: warns on stderr"
ht col report --format collapsed "$HT_TMP/bound.heap"
ok $st "bound: collapsed export, exit status 0"
no_exact "$HT_TMP/col.out" "bound: collapsed"
grep -q "warning: .*NOT EXACT: $drop samples dropped" "$HT_TMP/col.err"
ok $? "bound: collapsed: warns on stderr (the format has no room)"

ht diff diff "$HT_TMP/all.heap" "$HT_TMP/bound.heap"
grep -v '^old: ' "$HT_TMP/diff.out" >"$HT_TMP/diff-new.out"
no_exact "$HT_TMP/diff-new.out" "bound: diff (but the old profile's line)"
grep -q "deltas are NOT EXACT" "$HT_TMP/diff.out"
ok $? "bound: diff: its deltas are not exact"
is "heaptool: warning: the new profile: NOT EXACT: $drop samples dropped \
(the live-sample table held its bound of $BOUND, which --max-samples \
raises); every figure leaves them out" "$(cat "$HT_TMP/diff.err")" \
    "bound: diff warns on stderr of the new profile, not of the old"
ht diffj diff --json "$HT_TMP/all.heap" "$HT_TMP/bound.heap"
is "True False False" "$(json_get "$HT_TMP/diffj.out" 'j["old"]["exact"]') \
$(json_get "$HT_TMP/diffj.out" 'j["new"]["exact"]') \
$(json_get "$HT_TMP/diffj.out" 'j["exact"]')" \
    "bound: diff --json: old exact, new and the deltas not"

# 3. status of a live session past its bound (the agent preloaded in
# attach mode: no ptrace needed).
fx_start live
ht start start -p "$pid" --rate 1 --max-samples 100000
ok $st "live: start --max-samples 100000"
send "alloc 150000 32"
ht status status -p "$pid"
no_exact "$HT_TMP/status.out" "live: status"
grep -q "NOT EXACT" "$HT_TMP/status.out"
ok $? "live: status says NOT EXACT" || diag "$(cat "$HT_TMP/status.out")"
ht statusj status -p "$pid" --json
python3 - "$HT_TMP/statusj.out" >"$HT_TMP/st.out" 2>&1 <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
s = j["session"]
bad = []
if s["exact"] is not False:
    bad.append("session.exact %r" % s["exact"])
if s["max_samples"] != 100000:
    bad.append("session.max_samples %r" % s["max_samples"])
if j["live_samples"] != 100000:
    bad.append("live_samples %r" % j["live_samples"])
if j["dropped_samples"] < 50000:
    bad.append("dropped_samples %r" % j["dropped_samples"])
print("\n".join(bad))
EOF
is "" "$(cat "$HT_TMP/st.out")" \
    "live: status --json: not exact, the bound, its live samples, the drops"
drop=$(json_get "$HT_TMP/statusj.out" 'j["dropped_samples"]')
grep -q "$drop dropped" "$HT_TMP/status.out"
ok $? "live: status gives the drop count ($drop)"
ht lrep report -p "$pid"
ok $st "live: report, exit status 0"
no_exact "$HT_TMP/lrep.out" "live: report"
grep -q "warning: target $pid: NOT EXACT: [0-9]* samples dropped" \
    "$HT_TMP/lrep.err"
ok $? "live: report warns on stderr" || diag "$(cat "$HT_TMP/lrep.err")"
ht restart start -p "$pid" --restart --rate 1
send "alloc 1000 32"
ht statusj status -p "$pid" --json
is "True 0" "$(json_get "$HT_TMP/statusj.out" 'j["session"]["exact"]') \
$(json_get "$HT_TMP/statusj.out" 'j["dropped_samples"]')" \
    "live: a new session starts exact again"
fx_quit
is 0 "$fxst" "live: dump-target exits 0"

done_testing
