#!/bin/sh
# Short-lived ("temporary") allocations per site (profile format 10), on
# t/target/short-lived, whose sites free their blocks in known ways (its
# header comment):
# - at rate 1, exact: the four short-lived sites have exactly N each, the
#   others none (an allocation came between, another thread freed it, or
#   it was kept); the totals are the sum;
# - heaptrack, run on the same program, counts the same at the lines where
#   its definition is heaptool's, and none at the one where a free comes
#   between (tmp_inner: heaptool(1) says why heaptool counts it);
# - report text (summary line, --sort temporary --detail), JSON; the
#   program's output is unchanged;
# - at 64 KiB: a site whose every block is short-lived has as many
#   short-lived samples as samples, and the sites that have none have none;
# - a profile older than format 10 has no count (JSON null) and
#   --sort temporary refuses it.
. "$(dirname "$0")/tap/libtap.sh"

FX=$TARGETS/short-lived
SRC=$HT_SRCDIR/t/target/short-lived.c
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$FX" ] || bail "$FX not built (make check builds it)"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
unset HEAPTOOL_SEED LD_PRELOAD
T=120
N=1000

plan 14

# line SITE: the source line of the allocation marked SITE.
line() {
	grep -n "/\* SITE $1 \*/" "$SRC" | cut -d: -f1
}
# The call of each site in main: the sites' functions are tail calls, so
# the frame is main's line that calls them.
call_line() {
	grep -n "= $1(" "$SRC" | head -n 1 | cut -d: -f1
}

# temps JSON: "LINE temporary_objects temporary_samples samples" per site
# whose innermost frame in main is at LINE.
temps() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
for s in j["sites"]:
    fr = [f for f in s.get("frames", []) if f.get("function") == "main"]
    if fr:
        print(fr[0].get("line"), s["temporary_objects"],
              s["temporary_samples"], s["samples"])' "$1" | sort -n
}

"$FX" $N >"$HT_TMP/plain.out"
timeout $T "$HEAPTOOL" run --rate 1 -o "$HT_TMP/a.heap" -- "$FX" $N \
    >"$HT_TMP/a.out" 2>"$HT_TMP/a.err" &&
    cmp -s "$HT_TMP/plain.out" "$HT_TMP/a.out"
ok $? "heaptool run --rate 1: exit 0, the same output as without it" ||
    diag "$(head -c 1000 "$HT_TMP/a.err")"
"$HEAPTOOL" report --json --detail "$HT_TMP/a.heap" >"$HT_TMP/a.json"
ok $? "report --json --detail"
temps "$HT_TMP/a.json" >"$HT_TMP/a.temps"

want=""
for f in tmp_alone tmp_inner tmp_grown_first tmp_grown; do
	want="$want $(call_line $f):$N"
done
for f in tmp_outer tmp_handed tmp_kept; do
	want="$want $(call_line $f):0"
done
got=""
for w in $want; do
	l=${w%%:*}
	got="$got $l:$(awk -v l="$l" '$1 == l { print $2 }' "$HT_TMP/a.temps")"
done
is "$got" "$want" \
    "rate 1: N short-lived at the four short-lived sites, none at the three others" ||
    diag "$(cat "$HT_TMP/a.temps")"

python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
t = j["totals"]
s = sum(x["temporary_objects"] for x in j["sites"])
n = sum(x["temporary_samples"] for x in j["sites"])
print(t["temporary_objects"] == s, t["temporary_samples"] == n,
      t["temporary_objects"])' "$HT_TMP/a.json" >"$HT_TMP/a.tot"
is "$(cat "$HT_TMP/a.tot")" "True True $((4 * N))" \
    "the totals are the sum of the sites: 4 x N in all"

"$HEAPTOOL" report "$HT_TMP/a.heap" >"$HT_TMP/a.txt"
grep -Eq "^  short-lived +$((4 * N)) allocations \([0-9.]+% of them; $((4 * N)) samples\), freed or reallocated before their thread allocated again$" \
    "$HT_TMP/a.txt"
ok $? "the summary's short-lived line" || diag "$(head -n 12 "$HT_TMP/a.txt")"

"$HEAPTOOL" report --detail --sort temporary --top 4 "$HT_TMP/a.heap" \
    >"$HT_TMP/a.sorted"
[ "$(grep -c "^#[1234] short-lived $N (25.0%) of $N allocations (100.0% of the site's)" \
    "$HT_TMP/a.sorted")" -eq 4 ]
ok $? "--sort temporary: the four short-lived sites first" ||
    diag "$(head -n 30 "$HT_TMP/a.sorted")"

python3 "$HT_SRCDIR/t/lib/htschema.py" "$HT_SRCDIR/t/data/report-schema.json" \
    "$HT_TMP/a.json" >"$HT_TMP/schema.out" 2>&1
ok $? "the JSON matches the schema" || diag "$(head -n 5 "$HT_TMP/schema.out")"

"$HEAPTOOL" report --format html -o "$HT_TMP/a.html" "$HT_TMP/a.heap" &&
    grep -q '<th>samples</th><th>short-lived</th><th>function</th>' \
	"$HT_TMP/a.html" &&
    [ "$(grep -o "<td class=\"n\">$N</td><td class=\"n\">$N</td><td><code>main" \
	"$HT_TMP/a.html" | wc -l)" -eq 4 ]
ok $? "the HTML page's top sites have the column: N of N at the four sites"

# heaptrack, the same program: its temporary allocations, in all and by
# the line in main of the list it prints of the most temporary.
if command -v heaptrack >/dev/null 2>&1 &&
    command -v heaptrack_print >/dev/null 2>&1; then
	timeout $T heaptrack -o "$HT_TMP/ht" "$FX" $N >"$HT_TMP/ht.err" 2>&1
	f=$(ls "$HT_TMP"/ht.* 2>/dev/null | grep -v 'ht.err' | head -n 1)
	timeout $T heaptrack_print -p 0 -a 0 -T 1 -n 20 "$f" \
	    >"$HT_TMP/ht.txt" 2>>"$HT_TMP/ht.err"
	ht_total=$(sed -n 's/^temporary memory allocations: \([0-9]*\).*/\1/p' \
	    "$HT_TMP/ht.txt")
	is "$ht_total" "$((3 * N))" "heaptrack counts 3 x N temporary allocations" ||
	    diag "$(head -c 1000 "$HT_TMP/ht.err")"
	awk '/temporary allocations of/ { n = $1; want = 1; next }
	    want && /^  at .*short-lived\.c:/ {
		sub(/.*:/, ""); print $0 " " n; want = 0 }' "$HT_TMP/ht.txt" |
	    sort -n >"$HT_TMP/ht.lines"
	awk -v skip="$(call_line tmp_inner)" '$2 > 0 && $1 != skip {
	    print $1 " " $2 }' "$HT_TMP/a.temps" >"$HT_TMP/a.lines"
	cmp -s "$HT_TMP/ht.lines" "$HT_TMP/a.lines" &&
	    ! grep -q "^$(call_line tmp_inner) " "$HT_TMP/ht.lines"
	ok $? "the same counts at the same lines, but tmp_inner's, which it does not count" ||
	    diag "heaptrack: $(cat "$HT_TMP/ht.lines") heaptool: $(cat "$HT_TMP/a.lines")"
else
	skip "heaptrack is not installed (apt-get install heaptrack)"
	skip "heaptrack is not installed (apt-get install heaptrack)"
fi

# Sampled: 64 KiB, more rounds.
timeout $T "$HEAPTOOL" run --rate 64K -o "$HT_TMP/b.heap" -- "$FX" 20000 \
    >/dev/null 2>"$HT_TMP/b.err" &&
    "$HEAPTOOL" report --json --detail "$HT_TMP/b.heap" >"$HT_TMP/b.json"
ok $? "heaptool run --rate 64K" || diag "$(head -c 1000 "$HT_TMP/b.err")"
temps "$HT_TMP/b.json" >"$HT_TMP/b.temps"
a=$(awk -v l="$(call_line tmp_grown)" '$1 == l { print ($3 == $4 && $3 > 0) }' \
    "$HT_TMP/b.temps")
z=$(for f in tmp_outer tmp_handed tmp_kept; do
	awk -v l="$(call_line $f)" '$1 == l { print $3 }' "$HT_TMP/b.temps"
done | tr '\n' ' ')
is "$a / $z" "1 / 0 0 0 " \
    "64 KiB: every sample of the realloc site short-lived; none at the sites that have none" ||
    diag "$(cat "$HT_TMP/b.temps")"

# A profile before format 10.
python3 "$HT_SRCDIR/t/lib/hthostile.py" sites "$HT_TMP/v3.heap" --sites 3 \
    --frames 1
"$HEAPTOOL" report --json "$HT_TMP/v3.heap" | python3 -c 'import json, sys
t = json.load(sys.stdin)["totals"]
print(t["temporary_objects"], t["temporary_samples"])' >"$HT_TMP/v3.out"
is "$(cat "$HT_TMP/v3.out")" "None None" "an older profile: null in JSON"
"$HEAPTOOL" report --sort temporary "$HT_TMP/v3.heap" >/dev/null \
    2>"$HT_TMP/v3.err"
rc=$?
is "$rc $(grep -c '^heaptool: report: --sort temporary: .* does not count short-lived allocations (profile format before 10); sort by inuse, alloc or objects$' "$HT_TMP/v3.err")" \
    "1 1" "and --sort temporary refuses it in one line" ||
    diag "$(cat "$HT_TMP/v3.err")"
