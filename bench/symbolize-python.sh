#!/bin/sh
# heaptool's frames of a real program built with link-time optimization
# against llvm-symbolizer's (issue 10): Debian's python3.11 (GCC LTO), its
# debug files from python3.11-dbg.  heaptool run --rate 1 of a workload
# that touches json, re, sqlite3, xml, decimal, zlib and hashlib, then
# report --json --detail, then t/lib/htllvm.py compares with
# llvm-symbolizer --inlining, frame by frame (function, file, line), the
# frames of 20 sites drawn at random (seed BENCH_SEED, default 1) and,
# for the record, those of every site.
#
# Not part of make check: python3.11-dbg and libpython3.11-dbg are 54 MB
# to download (140 MB installed), too much for every CI run; make bench
# runs it, or by hand:
#     apt-get install -y llvm python3.11-dbg && sh bench/symbolize-python.sh .
# Skips (exit 0, saying why) where /usr/bin/python3.11, its debug file or
# llvm-symbolizer is absent; exit 1 when a compared frame differs.
#
# usage: symbolize-python.sh BUILDDIR [SRCDIR]
set -u
top=${1:?usage: symbolize-python.sh BUILDDIR [SRCDIR]}
src=${2:-$(cd "$(dirname "$0")/.." && pwd)}
ht=$top/heaptool
py=/usr/bin/python3.11
seed=${BENCH_SEED:-1}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/heaptool-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
XDG_STATE_HOME=$tmp/state
export XDG_STATE_HOME
unset HEAPTOOL_SYSROOT HEAPTOOL_DEBUG_DIR

skip() {
	echo "symbolize-python: skipped, $*"
	exit 0
}
[ -x "$py" ] || skip "$py not found (apt-get install python3.11)"
command -v python3 >/dev/null 2>&1 || skip "python3 not found"
id=$(readelf -n "$py" 2>/dev/null | awk '/Build ID/ { print $3 }')
[ -n "$id" ] && [ -f "/usr/lib/debug/.build-id/${id%"${id#??}"}/${id#??}.debug" ] ||
    skip "no debug file for $py (apt-get install python3.11-dbg)"
llvm=
for p in llvm-symbolizer llvm-symbolizer-14 llvm-symbolizer-15 \
    llvm-symbolizer-16; do
	if command -v "$p" >/dev/null 2>&1; then
		llvm=$(command -v "$p")
		break
	fi
done
[ -n "$llvm" ] || skip "llvm-symbolizer not found (apt-get install llvm)"

cat >"$tmp/work.py" <<'EOF'
import collections, decimal, hashlib, json, re, sqlite3, xml.dom.minidom
import zlib
d = {"k%d" % i: [i, str(i) * 3, {"x": i, "y": [1.5, None]}]
     for i in range(5000)}
s = json.dumps(d)
e = json.loads(s)
words = collections.Counter(re.findall(r"\w+", s))
doc = xml.dom.minidom.parseString(
    "<a>" + "".join("<b i='%d'>t</b>" % i for i in range(500)) + "</a>")
c = sqlite3.connect(":memory:")
c.execute("create table t(a, b)")
c.executemany("insert into t values(?, ?)", [(i, str(i)) for i in range(2000)])
r = c.execute("select b from t order by a desc").fetchall()
dec = sum(decimal.Decimal(i) / 7 for i in range(2000))
z = hashlib.sha256(zlib.compress(s.encode())).hexdigest()
b = bytearray()
for i in range(5000):
    b += b"abc" * (i % 7)
keep = [e, words, doc, r, dec, z, b]
EOF
"$ht" run --rate 1 -o "$tmp/py.heap" -- "$py" "$tmp/work.py" \
    >"$tmp/run.out" 2>&1 || {
	echo "symbolize-python: heaptool run failed: $(head -c 500 "$tmp/run.out")" >&2
	exit 1
}
"$ht" report --json --detail "$tmp/py.heap" >"$tmp/py.json" 2>"$tmp/rep.err" || {
	echo "symbolize-python: heaptool report failed: $(head -c 500 "$tmp/rep.err")" >&2
	exit 1
}

# The modules' paths (the JSON names them by basename): the interpreter,
# its extension modules, and the libraries they all load.
{
	echo "$py"
	ls /usr/lib/python3.11/lib-dynload/*.so 2>/dev/null
	for f in "$py" /usr/lib/python3.11/lib-dynload/*.so; do
		ldd "$f" 2>/dev/null | awk '$3 ~ /^\// { print $3 }'
	done
	ls /lib64/ld-linux-x86-64.so.2 2>/dev/null
} | sort -u >"$tmp/paths"
set --
while read -r p; do
	set -- "$@" --module "$(basename "$p")=$p"
done <"$tmp/paths"

status=0
for what in sampled all; do
	if [ "$what" = sampled ]; then
		sel="--sites 20 --seed $seed"
	else
		sel=
	fi
	# shellcheck disable=SC2086
	python3 "$src/t/lib/htllvm.py" --symbolizer "$llvm" $sel "$@" \
	    "$tmp/py.json" >"$tmp/$what.cmp" 2>&1 || status=1
done
{
echo
echo "symbolize-python: $py (GCC LTO, python3.11-dbg) against $llvm"
echo "  20 sites drawn with seed $seed: $(head -1 "$tmp/sampled.cmp")"
echo "  every site: $(head -1 "$tmp/all.cmp")"
grep -A2 '^differs' "$tmp/all.cmp" | head -40
} | tee "$top/bench/symbolize-python-results.txt"
[ -f "$top/bench/results.md" ] &&
    cat "$top/bench/symbolize-python-results.txt" >>"$top/bench/results.md"
exit $status
