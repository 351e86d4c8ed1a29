#!/bin/sh
# The session's allocations by size (profile format version 9, SIZES),
# on t/target/diff-grow, whose sites allocate known sizes (its header
# comment): at rate 1
# - the buckets add up to the allocated totals, in count and bytes, exactly;
# - two runs that differ only in N x malloc(1000) differ in the 512..1023
#   bucket by exactly that, and in no other bucket;
# - report --sizes prints them as text, --json --sizes as JSON, and the
#   HTML page has their table;
# and at 64 KiB the buckets still add up to the (estimated) totals; a
# profile older than version 9 has none, and says so.
. "$(dirname "$0")/tap/libtap.sh"

FX=$TARGETS/diff-grow
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$FX" ] || bail "$FX not built (make check builds it)"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
T=60

plan 9

run() {
	timeout $T "$HEAPTOOL" run --rate "$1" -o "$HT_TMP/$2.heap" -- "$FX" \
	    "$3" new >/dev/null 2>"$HT_TMP/$2.err" &&
	    "$HEAPTOOL" report --json --sizes "$HT_TMP/$2.heap" \
		>"$HT_TMP/$2.json"
}
run 1 a 40
ok $? "heaptool run --rate 1 diff-grow 40, report --json --sizes"
run 1 b 140
ok $? "and diff-grow 140"

# bucket JSON FROM: "allocations bytes" of the bucket that starts at FROM.
bucket() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
b = [x for x in j["sizes"] if x["from"] == int(sys.argv[2])]
print("%d %d" % (b[0]["allocations"], b[0]["bytes"]) if b else "none")' "$@"
}
sums() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
s = j["sizes"]
t = j["totals"]
print(sum(x["allocations"] for x in s) == t["alloc_objects"],
      sum(x["bytes"] for x in s) == t["alloc_bytes"],
      all(x["from"] <= x["bytes"] // max(x["allocations"], 1) <= x["to"]
          for x in s if x["allocations"]))' "$1"
}
is "$(sums "$HT_TMP/a.json")" "True True True" \
    "rate 1: the buckets add up to the allocated totals; each mean size is in its bucket"
a=$(bucket "$HT_TMP/a.json" 512)
b=$(bucket "$HT_TMP/b.json" 512)
is "$(( ${b% *} - ${a% *} )) $(( ${b#* } - ${a#* } ))" "100 100000" \
    "100 more malloc(1000): the 512 B bucket has 100 more, 100,000 bytes more"
python3 -c 'import json, sys
a, b = (json.load(open(p))["sizes"] for p in sys.argv[1:])
d = {x["from"]: (x["allocations"], x["bytes"]) for x in a}
e = {x["from"]: (x["allocations"], x["bytes"]) for x in b}
sys.exit(0 if all(d.get(k) == e.get(k) for k in set(d) | set(e) if k != 512) else 1)' \
    "$HT_TMP/a.json" "$HT_TMP/b.json"
ok $? "and every other bucket is the same"

"$HEAPTOOL" report --sizes "$HT_TMP/b.heap" >"$HT_TMP/b.txt"
grep -Eq '^ +512 B\.\.<1\.00 KiB +[0-9]+ +[0-9.]+ [KM]iB +[0-9.]+%$' \
    "$HT_TMP/b.txt"
ok $? "report --sizes: the table, with the 512 B bucket" ||
    diag "$(tail -n 12 "$HT_TMP/b.txt")"
"$HEAPTOOL" report --format html -o "$HT_TMP/b.html" "$HT_TMP/b.heap" &&
    grep -q '<table id="sizes">' "$HT_TMP/b.html" &&
    grep -q '<tr class="size"><td class="n">512 B..&lt;1.00 KiB</td>' \
	"$HT_TMP/b.html"
ok $? "the HTML page has the table"

run 65536 c 2000
is "$(sums "$HT_TMP/c.json" | cut -d' ' -f1,2)" "True True" \
    "at 64 KiB the buckets add up to the estimated totals"

python3 "$HT_SRCDIR/t/lib/hthostile.py" sites "$HT_TMP/v3.heap" --sites 3 \
    --frames 1
"$HEAPTOOL" report --sizes "$HT_TMP/v3.heap" | grep -q \
    "^allocation sizes: none recorded (a profile older than format version 9"
ok $? "a version 3 profile: none recorded, and it says why"
