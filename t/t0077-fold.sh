#!/bin/sh
# Allocator wrappers folded (cli/fold.c, ht_view_fold): a site is shown at
# the first frame of its stack outside xmalloc, g_malloc... in every
# format, JSON keeps every frame and says which were folded, --fold and
# the user's file ($XDG_CONFIG_HOME/heaptool/fold) add names, --no-fold
# turns it off.  Folding is presentation: the sites, their figures, the
# by-module sums and diff's matching are those of --no-fold.  On an exact
# profile of t/target/fold-target (its header comment gives the stacks).
. "$(dirname "$0")/tap/libtap.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
[ -x "$TARGETS/fold-target" ] || bail "$TARGETS/fold-target not built"
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
# No user's file but the test's own.
XDG_CONFIG_HOME=$HT_TMP/config
export XDG_CONFIG_HOME

prof=$HT_TMP/fold.heap
timeout 60 "$HEAPTOOL" run --rate 1 -o "$prof" -- "$TARGETS/fold-target" \
    >"$HT_TMP/run.out" 2>"$HT_TMP/run.err"
ok $([ $? -eq 0 ] && [ -s "$prof" ] && grep -q '^done 30$' "$HT_TMP/run.out"
    echo $?) "heaptool run --rate 1 fold-target writes a profile"
[ -s "$prof" ] || bail "no profile: $(head -c 1000 "$HT_TMP/run.err")"

rep() {
	_out=$1
	shift
	timeout 60 "$HEAPTOOL" report "$@" >"$_out" 2>"$HT_TMP/err"
}

rep "$HT_TMP/fold.json" --json --detail "$prof"
rep "$HT_TMP/nofold.json" --json --detail --no-fold "$prof"
rep "$HT_TMP/pool.json" --json --detail --fold 'my_pool_*' "$prof"

# site(JSON, blocks): "site_frame index, the function there, the functions
# folded" of the site of that many objects (the fixture's counts differ).
cat >"$HT_TMP/site.py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
for s in d["sites"]:
    if s["alloc_objects"] == n:
        fr = s["frames"]
        k = s["site_frame"]
        print(k, fr[k]["function"],
              ",".join(f["function"] for f in fr if f.get("folded")) or "-",
              len(fr))
PY
site() {
	python3 "$HT_TMP/site.py" "$@" 2>&1
}

# JSON: the site's frame and the folded ones; every frame kept.
is "1 site_x xmalloc 6" "$(site "$HT_TMP/fold.json" 10)" \
    "json: site_x's site_frame 1 (xmalloc folded), every frame kept"
is "2 site_g g_malloc,g_malloc0 7" "$(site "$HT_TMP/fold.json" 5)" \
    "json: site_g: g_malloc and g_malloc0 folded"
is "1 my_pool_alloc xmalloc 7" "$(site "$HT_TMP/fold.json" 3)" \
    "json: site_p shown at my_pool_alloc (not on the built-in list)"
is "2 site_p xmalloc,my_pool_alloc 7" "$(site "$HT_TMP/pool.json" 3)" \
    "json --fold 'my_pool_*': site_p shown at site_p"
is "1 site_i xzalloc 6" "$(site "$HT_TMP/fold.json" 4)" \
    "json: site_i: xzalloc, inlined into it, folded"
is "0 xmalloc - 6" "$(site "$HT_TMP/nofold.json" 10)" \
    "json --no-fold: site_frame 0, nothing marked folded"

# Folding changes no site: the same sites, figures and module sums; the
# two sites of site_two stay two.
python3 - "$HT_TMP/fold.json" "$HT_TMP/nofold.json" >"$HT_TMP/same.out" \
    2>&1 <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
def key(d):
    return sorted((s["inuse_bytes"], s["alloc_objects"],
                   tuple(f["address"] for f in s["frames"]))
                  for s in d["sites"])
print(key(a) == key(b), a["modules"] == b["modules"],
      a["totals"] == b["totals"],
      sum(1 for s in a["sites"]
          if s["frames"][s["site_frame"]]["function"] == "site_two"))
PY
is "True True True 2" "$(cat "$HT_TMP/same.out")" \
    "fold or not: same sites, frames, totals and by-module sums; site_two's two sites stay two"

# Text: the folded wrappers on one line, then the site's frame.
rep "$HT_TMP/fold.txt" --detail "$prof"
ok $(grep -A1 '^      \[folded: g_malloc, g_malloc0\]$' "$HT_TMP/fold.txt" |
    grep -q '^      site_g (.*fold-target.c:[0-9]*)$'; echo $?) \
    "text: [folded: g_malloc, g_malloc0], then site_g"
ok $(! grep -q '^      xmalloc\|^      g_malloc' "$HT_TMP/fold.txt"; echo $?) \
    "text: no folded frame printed as a frame"
rep "$HT_TMP/nofold.txt" --detail --no-fold "$prof"
ok $(grep -q '^      xmalloc (' "$HT_TMP/nofold.txt" &&
    ! grep -q 'folded:' "$HT_TMP/nofold.txt"; echo $?) \
    "text --no-fold: the wrappers' frames, no fold line"

# Collapsed stacks end at the site's frame.
rep "$HT_TMP/fold.col" --format collapsed "$prof"
ok $(grep -q ';site_x 1000$' "$HT_TMP/fold.col" &&
    grep -q ';site_g 1000$' "$HT_TMP/fold.col" &&
    grep -q ';site_i 1600$' "$HT_TMP/fold.col" &&
    grep -q ';site_p;my_pool_alloc 900$' "$HT_TMP/fold.col" &&
    grep -q ';site_z2;z_helper 1400$' "$HT_TMP/fold.col" &&
    ! grep -q 'xmalloc\|g_malloc\|xzalloc' "$HT_TMP/fold.col"
    echo $?) "collapsed: stacks end at site_x, site_g, site_i, my_pool_alloc"
rep "$HT_TMP/nofold.col" --format collapsed --no-fold "$prof"
ok $(grep -q ';site_x;xmalloc 1000$' "$HT_TMP/nofold.col"; echo $?) \
    "collapsed --no-fold: site_x;xmalloc"

# pprof: each sample's leaf line is the site's frame, an inlined wrapper's
# lines left out of its own location.
rep "$HT_TMP/fold.pb.gz" --format pprof -o "$HT_TMP/fold.pb.gz" "$prof"
rep "$HT_TMP/nofold.pb.gz" --format pprof --no-fold \
    -o "$HT_TMP/nofold.pb.gz" "$prof"
cat >"$HT_TMP/leaf.py" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import htformats
p = htformats.decode_pprof(sys.argv[2])
out = []
for s in p["samples"]:
    leaf = s["locations"][0]["lines"][0][0][0]
    # The fixture's, not stdio's buffer.
    if leaf.startswith("_IO"):
        continue
    out.append("%s=%d" % (leaf.split("(")[0], s["values"][3]))
print(" ".join(sorted(out)))
PY
is "my_pool_alloc=900 site_g=1000 site_i=1600 site_two=10000 site_two=120 site_x=1000 z_helper=1400 z_helper=1400" \
    "$(python3 "$HT_TMP/leaf.py" "$HT_SRCDIR/t/lib" "$HT_TMP/fold.pb.gz" 2>&1)" \
    "pprof: the samples' leaves are the sites' frames"
is "g_malloc=1000 xmalloc=1000 xmalloc=10000 xmalloc=120 xmalloc=900 xzalloc=1400 xzalloc=1400 xzalloc=1600" \
    "$(python3 "$HT_TMP/leaf.py" "$HT_SRCDIR/t/lib" "$HT_TMP/nofold.pb.gz" 2>&1)" \
    "pprof --no-fold: the wrappers' leaves"
# One location for z_helper's return address without xzalloc's line,
# shared by site_z1 and site_z2; --no-fold's has both lines.
cat >"$HT_TMP/zloc.py" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import htformats
p = htformats.decode_pprof(sys.argv[2])
ids = set()
for s in p["samples"]:
    loc = s["locations"][0]
    if loc["lines"][0][0][0] in ("z_helper", "xzalloc") and \
            any(l["lines"][0][0][0] in ("site_z1", "site_z2")
                for l in s["locations"][1:2]):
        # The same location id is the same object of decode_pprof.
        ids.add((id(loc), loc["address"],
                 tuple(f[0] for f, _ in loc["lines"])))
print(sorted(i[1:] for i in ids))
PY
za=$(python3 "$HT_TMP/zloc.py" "$HT_SRCDIR/t/lib" "$HT_TMP/fold.pb.gz" 2>&1)
zb=$(python3 "$HT_TMP/zloc.py" "$HT_SRCDIR/t/lib" "$HT_TMP/nofold.pb.gz" 2>&1)
ok $(echo "$za" | grep -Eq "^\[\([0-9]+, \('z_helper',\)\)\]$" &&
    echo "$zb" | grep -Eq "^\[\([0-9]+, \('xzalloc', 'z_helper'\)\)\]$" &&
    [ "${za%%,*}" = "${zb%%,*}" ]; echo $?) \
    "pprof: site_z1 and site_z2 share one location at z_helper's address, without xzalloc's line"
[ -n "$za" ] && diag "folded: $za; not folded: $zb"

if command -v go >/dev/null 2>&1; then
	HOME=$HT_TMP timeout 120 go tool pprof -top -sample_index=inuse_space \
	    "$HT_TMP/fold.pb.gz" >"$HT_TMP/gotop" 2>&1
	ok $(grep -q ' site_i$' "$HT_TMP/gotop" &&
	    ! grep -q 'xzalloc\|xmalloc' "$HT_TMP/gotop"; echo $?) \
	    "go tool pprof -top: site_i, no wrapper"
else
	skip "go not installed: go tool pprof not run"
fi

# The flame graph has no wrapper's frame.
rep "$HT_TMP/fold.svg" --format svg -o "$HT_TMP/fold.svg" "$prof"
rep "$HT_TMP/nofold.svg" --format svg --no-fold -o "$HT_TMP/nofold.svg" "$prof"
ok $(grep -q '<title>site_g' "$HT_TMP/fold.svg" &&
    ! grep -q '<title>g_malloc\|<title>xmalloc' "$HT_TMP/fold.svg" &&
    grep -q '<title>g_malloc0' "$HT_TMP/nofold.svg"; echo $?) \
    "svg: site_g's frame on top, no wrapper's (there --no-fold)"

# The user's file: a name a line, blanks and # comments.
mkdir -p "$XDG_CONFIG_HOME/heaptool"
printf '# our pool\n\n   my_pool_alloc  \n' >"$XDG_CONFIG_HOME/heaptool/fold"
rep "$HT_TMP/cfg.json" --json --detail "$prof"
is "2 site_p xmalloc,my_pool_alloc 7" "$(site "$HT_TMP/cfg.json" 3)" \
    "\$XDG_CONFIG_HOME/heaptool/fold adds my_pool_alloc"
mkdir -p "$HT_TMP/home/.config/heaptool"
cp "$XDG_CONFIG_HOME/heaptool/fold" "$HT_TMP/home/.config/heaptool/fold"
HOME=$HT_TMP/home XDG_CONFIG_HOME= timeout 60 "$HEAPTOOL" report --json \
    --detail "$prof" >"$HT_TMP/home.json" 2>&1
is "2 site_p xmalloc,my_pool_alloc 7" "$(site "$HT_TMP/home.json" 3)" \
    "without XDG_CONFIG_HOME: ~/.config/heaptool/fold"
rep "$HT_TMP/cfgoff.json" --json --detail --no-fold "$prof"
is "0 xmalloc - 7" "$(site "$HT_TMP/cfgoff.json" 3)" \
    "--no-fold: neither the file nor the built-in list"
rm "$XDG_CONFIG_HOME/heaptool/fold"
mkdir "$XDG_CONFIG_HOME/heaptool/fold"
rep "$HT_TMP/bad.out" "$prof"
st=$?
ok $([ $st -eq 1 ] && grep -q "^heaptool: fold file .*/heaptool/fold: Is a directory; fix it, or give --no-fold$" "$HT_TMP/err"
    echo $?) "an unreadable fold file: exit 1, one line saying what to do"
rep "$HT_TMP/bad.out" --no-fold "$prof"
ok $? "--no-fold does not read it"
rmdir "$XDG_CONFIG_HOME/heaptool/fold"

# diff: the sites matched by their whole stacks, shown folded.
timeout 60 "$HEAPTOOL" diff --json --detail "$prof" "$prof" \
    >"$HT_TMP/diff.json" 2>"$HT_TMP/err"
python3 - "$HT_TMP/diff.json" >"$HT_TMP/diff.out" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
st = sorted(set(s["status"] for s in d["sites"]))
names = sorted(s["frames"][s["site_frame"]]["function"] for s in d["sites"])
print(len(d["sites"]), st, names.count("site_two"), "xmalloc" in names)
PY
is "9 ['same'] 2 False" "$(cat "$HT_TMP/diff.out")" \
    "diff of a profile with itself: 9 sites (printf's buffer too), all same, site_two twice, shown folded"

timeout 10 "$HEAPTOOL" report --fold '' "$prof" >/dev/null 2>"$HT_TMP/err"
ok $([ $? -eq 2 ] && grep -q '^heaptool: --fold: an empty name' "$HT_TMP/err"
    echo $?) "--fold '': a usage error"
for c in report diff; do
	"$HEAPTOOL" $c --help >"$HT_TMP/help" 2>&1
	ok $(grep -q -- '--fold FUNC' "$HT_TMP/help" &&
	    grep -q -- '--no-fold' "$HT_TMP/help" &&
	    grep -q -- '--short-names' "$HT_TMP/help"; echo $?) \
	    "$c --help names --fold, --no-fold, --short-names"
done

# The HTML report's top sites are named by their site frame too.
rep "$HT_TMP/fold.html" --format html "$prof"
grep -q '<code>site_x</code>' "$HT_TMP/fold.html" &&
    ! grep -q '<code>xmalloc</code>' "$HT_TMP/fold.html"
ok $? "html: the top sites are named site_x..., never xmalloc"
rep "$HT_TMP/nofold.html" --format html --no-fold "$prof"
grep -q '<code>xmalloc</code>' "$HT_TMP/nofold.html"
ok $? "html --no-fold: xmalloc again"
done_testing
