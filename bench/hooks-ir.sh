#!/bin/sh
# Instructions the agent's hooks cost per call, counted by callgrind (the
# counts are the same from run to run, unlike times on a shared machine):
# bench/newdel makes PAIRS malloc/free, PAIRS new/delete pairs and PAIRS of
# each of calloc, realloc, memalign, posix_memalign and aligned_alloc under
# the agent at a rate that never samples (1T), so every call takes its
# hook's fast path.  Prints, for each agent given (default: the build's),
# the instructions per call of every hook of the agent, of the out-of-line
# paths a hook called (*_slow, *_call) and of the C++ runtime's operators
# that the workload entered, and the instructions per round (a pair of each
# kind), from the difference between runs of PAIRS and 2*PAIRS (which
# cancels start-up and exit).
#
# usage: hooks-ir.sh [BUILDDIR [AGENT...]]
# environment: BENCH_PAIRS (default 100000)

set -u
export LC_ALL=C

builddir=$(cd "${1:-.}" && pwd) || exit 1
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- "$builddir/libheaptool-agent.so"
prog=$builddir/bench/newdel
pairs=${BENCH_PAIRS:-100000}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hooks-ir.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

die() {
	echo "hooks-ir: $*" >&2
	exit 1
}

command -v valgrind >/dev/null 2>&1 || die "valgrind is not installed"
command -v callgrind_annotate >/dev/null 2>&1 ||
    die "callgrind_annotate is not installed"
[ -x "$prog" ] || die "$prog not built (make bench/newdel)"

# cg AGENT N OUT: callgrind of newdel N under AGENT ("" for none); the
# total on stdout, the profile of the workload in OUT.  The agent is
# preloaded through its environment protocol, as bench/run.sh does.
cg() {
	if [ -z "$1" ]; then
		_sh='exec "$0" "$@"'
	else
		_sh="HEAPTOOL_PID=\$\$ LD_PRELOAD='$1' HEAPTOOL_RATE=1099511627776"
		_sh="$_sh HEAPTOOL_OUTPUT='$tmp/cg.heap' exec \"\$0\" \"\$@\""
	fi
	rm -f "$tmp"/cg.out.*
	valgrind --tool=callgrind --trace-children=yes \
	    --callgrind-out-file="$tmp/cg.out.%p" \
	    /bin/sh -c "$_sh" "$prog" "$2" >/dev/null 2>"$tmp/cg.err" ||
	    die "valgrind failed: $(tail -n 5 "$tmp/cg.err")"
	cp "$(ls -S "$tmp"/cg.out.* | head -n 1)" "$3"
	sed -n 's/^==[0-9]*== Collected : //p' "$tmp/cg.err" | tail -n 1
}

# per_call PROFILE: the instructions per call of the agent's hooks and of
# the C++ operators, from callgrind's own counts: a function's cost lines
# (not those of the calls it makes) over the calls made to it.
per_call() {
	python3 - "$1" <<'PY'
import re, sys
names, self_ir, calls = {}, {}, {}
fn = cfn = None
after_call = False
def name(kind, rest):
    m = re.match(r"\((\d+)\)(?: (.*))?", rest)
    if not m:
        return rest
    if m.group(2) is not None:
        names[m.group(1)] = m.group(2)
    return names.get(m.group(1), rest)
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("fn="):
        fn = name("fn", line[3:])
    elif line.startswith("cfn="):
        cfn = name("fn", line[4:])
    elif line.startswith("calls="):
        calls[cfn] = calls.get(cfn, 0) + int(line[6:].split()[0])
        after_call = True
    elif line[:1].isdigit() or line[:1] in "+-*":
        parts = line.split()
        if after_call:
            after_call = False
        elif len(parts) > 1 and fn is not None:
            self_ir[fn] = self_ir.get(fn, 0) + int(parts[1])
want = re.compile(r"^(ht_hook_\w+|\w+_(slow|call)|operator (new|delete)\b.*)$")
for f in sorted(self_ir):
    if want.match(f) and calls.get(f):
        print("  %-44s %8d calls %6.1f instructions each" % (
            f, calls[f], self_ir[f] / calls[f]))
PY
}

base_a=$(cg "" "$pairs" "$tmp/p1") && base_b=$(cg "" $((2 * pairs)) "$tmp/p2")
echo "plain: $(( (base_b - base_a) / pairs )) instructions per round"
for agent in "$@"; do
	[ -f "$agent" ] || die "$agent: no such agent"
	a=$(cg "$agent" "$pairs" "$tmp/a1") &&
	    b=$(cg "$agent" $((2 * pairs)) "$tmp/a2") || exit 1
	echo
	echo "$agent: $(( (b - a) / pairs )) instructions per round" \
	    "(a pair of each kind)"
	echo "instructions per call, of $pairs malloc/free and $pairs" \
	    "new/delete pairs:"
	per_call "$tmp/a1"
done
