#!/bin/sh
# report --format html: one page, opened in Debian's chromium, headless.
# - its DOM (--dump-dom) holds the chart of memory over time (in use with
#   its band, and RSS), the summary, the top sites with the fixture's
#   function first, and two flame graphs in frames of their own, each the
#   flame graph's SVG as a data: URL, drawn root on top;
# - loading it makes no network request: its policy forbids every fetch
#   and chromium, without a network, logs no attempt (and does log one
#   for a copy of the page with an image from the web);
# - the page of a 20,000-site profile stays under 5 MB, also where the
#   graph would draw 70,000 frames, and then says which it left out;
# - a profile without a timeline says it has none.
# A screenshot at 1400x900 is written next to the page, for people: no
# assertion reads it.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/htrun.sh"

FX=$TARGETS/timeline-grow
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$FX" ] || bail "$FX not built (make check builds it)"
CHROMIUM=$(command -v chromium || command -v chromium-browser)
[ -n "$CHROMIUM" ] ||
    skip_all "chromium not found (apt-get install chromium)"

plan 11
T=120

# chrome ARGS... URL: headless chromium with a profile of its own.
chrome() {
	HOME=$HT_TMP timeout $T "$CHROMIUM" --headless --no-sandbox \
	    --disable-gpu --no-first-run --user-data-dir="$HT_TMP/chrome" \
	    "$@" 2>>"$HT_TMP/chrome.err"
}

printf 'grow 8 1024 40\nexit\n' >"$HT_TMP/in"
timeout $T "$HEAPTOOL" run --rate 1 -o "$HT_TMP/r.heap" -- "$FX" \
    <"$HT_TMP/in" >/dev/null 2>&1 || bail "heaptool run failed"
"$HEAPTOOL" report --format html -o "$HT_TMP/page.html" "$HT_TMP/r.heap"
ok $? "report --format html -o page.html"

chrome --dump-dom "file://$HT_TMP/page.html" >"$HT_TMP/dom.html"
ok $? "chromium loads it (--dump-dom)"
chrome --window-size=1400,900 --screenshot="$HT_TMP/page.png" \
    "file://$HT_TMP/page.html" >/dev/null

# What the DOM holds, one verdict a line: NAME VALUE.
python3 - "$HT_TMP/dom.html" >"$HT_TMP/v" <<'PY'
import html.parser, sys, urllib.parse

class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids = {}
        self.sites = 0
        self.summary_rows = 0
        self.stack = []
        self.first_site = None
        self.cell = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids[a["id"]] = (tag, a)
        if tag == "tr" and a.get("class") == "site":
            self.sites += 1
            if self.sites == 1:
                self.cell = ""
        if tag == "tr" and self.stack and self.stack[-1] == "summary":
            self.summary_rows += 1
        if tag == "table":
            self.stack.append(a.get("id", ""))
    def handle_endtag(self, tag):
        if tag == "table" and self.stack:
            self.stack.pop()
        if tag == "tr" and self.cell is not None and self.first_site is None:
            self.first_site = self.cell
            self.cell = None
    def handle_data(self, d):
        if self.cell is not None:
            self.cell += d

p = P()
p.feed(open(sys.argv[1]).read())
def pts(i):
    a = p.ids.get(i, (None, {}))[1]
    return len(a.get("points", "").split())
print("chart", all(i in p.ids for i in ("timeline", "inuse", "rss", "band")))
print("lines", pts("inuse") >= 3 and pts("rss") >= 3 and
      pts("band") >= 2 * pts("inuse"))
print("summary", p.summary_rows >= 5)
print("sites", p.sites >= 1 and "tl_grow" in (p.first_site or ""))
for f in ("flame-inuse", "flame-alloc"):
    tag, a = p.ids.get(f, (None, {}))
    src = a.get("src", "")
    svg = urllib.parse.unquote(src.split(",", 1)[1]) if "," in src else ""
    ok = tag == "iframe" and src.startswith("data:image/svg+xml") and \
        'class="f"' in svg and "tl_grow" in svg
    print(f, ok)
PY
v() { awk -v k="$1" '$1 == k { print $2 }' "$HT_TMP/v"; }
is "$(v chart) $(v lines)" "True True" \
    "the chart: in use, its band and RSS, each with its points"
is "$(v summary) $(v sites)" "True True" \
    "the summary table, and the top sites with tl_grow first"
is "$(v flame-inuse) $(v flame-alloc)" "True True" \
    "two flame graphs, by in use and by allocated, each an SVG of frames"

# Root on top: in the page's graph the root's row is the highest; in the
# flame graph file, the lowest.
python3 - "$HT_TMP/page.html" >"$HT_TMP/icicle" <<'PY'
import re, sys, urllib.parse
s = open(sys.argv[1]).read()
src = re.search(r'id="flame-inuse"[^>]*src="data:image/svg\+xml;charset=utf-8,([^"]*)"', s)
svg = urllib.parse.unquote(src.group(1))
ys = {}
for m in re.finditer(r'<g class="f" data-d="(\d+)".*?<rect x="[^"]*" y="([^"]*)"', svg, re.S):
    ys.setdefault(int(m.group(1)), float(m.group(2)))
print(min(ys, key=lambda d: ys[d]) == 0 and len(ys) > 3)
PY
is "$(cat "$HT_TMP/icicle")" True "the page's flame graph has its root on top"

# No request leaves the page.  It forbids itself every fetch
# (Content-Security-Policy default-src 'none'), and chromium logs each
# attempt its policy blocks; loaded without a network (a network namespace
# of its own, where the machine allows one), the page must log none and
# still show everything.  A copy with one image from the web shows the
# log would say so.
offline=
unshare -n true 2>/dev/null && offline="unshare -n"
console() {
	: >"$HT_TMP/console.err"
	HOME=$HT_TMP timeout $T $offline "$CHROMIUM" --headless --no-sandbox \
	    --disable-gpu --no-first-run --user-data-dir="$HT_TMP/chrome2" \
	    --enable-logging=stderr --v=0 --dump-dom "file://$1" \
	    >"$2" 2>"$HT_TMP/console.err"
	grep -E 'CONSOLE.*(Content Security Policy|net::ERR)' \
	    "$HT_TMP/console.err"
}
sed 's|<title>|<img src="http://192.0.2.1/x.png"><title>|' \
    "$HT_TMP/page.html" >"$HT_TMP/bad.html"
n_bad=$(console "$HT_TMP/bad.html" "$HT_TMP/bad.dom" | wc -l)
n=$(console "$HT_TMP/page.html" "$HT_TMP/dom2.html" | wc -l)
grep -q 'id="flame-alloc"' "$HT_TMP/dom2.html" &&
    grep -q 'id="band"' "$HT_TMP/dom2.html"
is "$n $? $n_bad" "0 0 1" \
    "offline${offline:+ (unshare -n)}: the page tries no fetch (a page with one would: $n_bad), and shows all"
! grep -Eo '(src|href)="[a-z]+:' "$HT_TMP/page.html" | grep -v '"data:' |
    grep -q .
ok $? "and the page names no resource but data: URLs"

# Big profiles.
python3 "$HT_SRCDIR/t/lib/hthostile.py" sites "$HT_TMP/s20k.heap" \
    --sites 20000 --frames 64 --module "$HEAPTOOL"
"$HEAPTOOL" report --format html -o "$HT_TMP/s20k.html" "$HT_TMP/s20k.heap" \
    2>/dev/null
sz=$(wc -c <"$HT_TMP/s20k.html")
ok "$([ "$sz" -lt 5000000 ] && echo 0 || echo 1)" \
    "20,000 sites of 64 frames, symbolized: a page of $sz bytes, under 5 MB"
python3 "$HT_SRCDIR/t/lib/htwide.py" "$HT_TMP/wide.heap"
"$HEAPTOOL" report --format html -o "$HT_TMP/wide.html" "$HT_TMP/wide.heap" \
    2>/dev/null
sz=$(wc -c <"$HT_TMP/wide.html")
ok "$([ "$sz" -lt 5000000 ] && grep -q 'frames under [0-9.]* pixel' "$HT_TMP/wide.html" && echo 0 || echo 1)" \
    "the widest graph: a page of $sz bytes, under 5 MB, saying what it left out"
grep -q "No point: the profile is older than format version 8" \
    "$HT_TMP/wide.html"
ok $? "a profile without a timeline: the page says it has none"
