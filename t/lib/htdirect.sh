# The tests of the fixtures that call an allocator's own API (t0051 to
# t0053; t/target/direct.h says what they print): at rate 1, heaptool's
# figures equal the fixture's own counts, under heaptool run and after
# heaptool attach, every site's innermost frame is one of the fixture's
# functions, the account of coverage says the functions it calls are
# hooked, detach restores every GOT slot (t/lib/htgotmap.py), and the
# fixture's output and checksum are those of a plain run.
#
# direct_test FIXTURE LIBRARY PACKAGE FUNC... : FUNC the fixture's site
# functions; the plan is 17 checks, the test's own come after.  Source it
# after t/tap/libtap.sh, t/lib/ptrace.sh and t/lib/htrun.sh.

T=60
HT_FN_NAMES=

# totals_are JSON "A_OBJ A_BYTES I_OBJ I_BYTES": the report's totals.
totals_are() {
	python3 - "$1" "$2" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["totals"]
got = "%d %d %d %d" % (t["alloc_objects"], t["alloc_bytes"],
                       t["inuse_objects"], t["inuse_bytes"])
if got != sys.argv[2]:
    print("report %s, fixture %s" % (got, sys.argv[2]))
    sys.exit(1)
PY
}

# sites_in JSON FUNC...: every site's innermost frame is one of FUNC
# (C++ names with their "()"), and every FUNC has a site.
sites_in() {
	python3 - "$@" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
want = set(sys.argv[2:])
seen, bad = set(), []
for s in j["sites"]:
    f = s["frames"][0].get("function", "?") if s["frames"] else "?"
    f = f.split("(")[0]
    if f in want:
        seen.add(f)
    else:
        bad.append(f)
if bad or seen != want:
    print("sites outside the fixture's functions: %s; missing: %s" %
          (sorted(set(bad)), sorted(want - seen)))
    sys.exit(1)
PY
}

# hooked JSON MODULE_RE FUNC...: the account of coverage says each FUNC of
# the module matching MODULE_RE is hooked by the got backend.
hooked() {
	python3 - "$@" <<'PY'
import json, re, sys
c = json.load(open(sys.argv[1]))["coverage"]
mod = re.compile(sys.argv[2])
have = {f["function"]: f for f in c["functions"] if mod.search(f["module"])}
bad = [n for n in sys.argv[3:]
       if n not in have or not have[n]["hooked"] or
       have[n]["backend"] != "got"]
if c["backend"] != "got" or bad or c["hooked"] < len(sys.argv) - 3:
    print("backend %s, not hooked: %s" % (c["backend"], bad))
    sys.exit(1)
PY
}

# wait_for FILE PATTERN: a line of FILE matching PATTERN (grep -E), within
# T seconds; the line in $line.
wait_for() {
	_i=0
	while ! line=$(grep -E "$2" "$1" 2>/dev/null | tail -n 1) ||
	    [ -z "$line" ]; do
		_i=$((_i + 1))
		[ $_i -gt $((T * 20)) ] && return 1
		sleep 0.05
	done
	return 0
}

# counts LINE: "A_OBJ A_BYTES I_OBJ I_BYTES" of a "worked" or "freed" line.
counts() {
	echo "$1" | awk '{ print $2, $3, $4, $5 }'
}

direct_test() {
	_fx=$1 _lib=$2 _pkg=$3
	shift 3
	_bin=$TARGETS/$_fx
	[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
	[ -x "$_bin" ] || skip_all "$_fx not built: $_pkg was not installed" \
	    "when configure ran (apt-get install $_pkg, then ./configure)"
	require_ptrace
	unset HEAPTOOL_SEED LD_PRELOAD HEAPTOOL_AGENT
	XDG_STATE_HOME=$HT_TMP/state
	export XDG_STATE_HOME
	plan $((17 + ${direct_extra:-0}))

	printf 'work\nfree\nquit\n' | timeout $T "$_bin" >"$HT_TMP/plain.out" \
	    2>&1
	ok $? "$_fx runs by itself"
	worked=$(grep '^worked ' "$HT_TMP/plain.out")
	freed=$(grep '^freed ' "$HT_TMP/plain.out")

	# heaptool run: the profile at exit holds what the fixture holds.
	printf 'work\nquit\n' | timeout $T "$HEAPTOOL" run --rate 1 \
	    -o "$HT_TMP/run.heap" -- "$_bin" >"$HT_TMP/run.out" \
	    2>"$HT_TMP/run.err"
	ok $? "heaptool run --rate 1 of $_fx" ||
	    diag "$(head -c 2000 "$HT_TMP/run.err")"
	is "$(grep '^worked ' "$HT_TMP/run.out")" "$worked" \
	    "run: the fixture's counts and checksum unchanged"
	ht_ok runrep "run: report --json --detail" report --json --detail \
	    "$HT_TMP/run.heap"
	totals_are "$HT_TMP/runrep.out" "$(counts "$worked")"
	ok $? "run: the report's totals are the fixture's counts"
	sites_in "$HT_TMP/runrep.out" "$@"
	ok $? "run: every site is one of the fixture's functions"

	# heaptool attach, start at rate 1, the work, the frees, detach.
	# LD_BIND_NOW: lazy binding must not change a slot meanwhile.
	mkfifo "$HT_TMP/in"
	LD_BIND_NOW=1 "$_bin" <"$HT_TMP/in" >"$HT_TMP/fx.out" 2>&1 &
	pid=$!
	exec 8>"$HT_TMP/in"
	wait_for "$HT_TMP/fx.out" '^ready$' || bail "$_fx never said ready"
	python3 "$HT_SRCDIR/t/lib/htgotmap.py" "$pid" >"$HT_TMP/before.json" ||
	    bail "cannot read the GOT of $pid"
	ht_ok attach "attach" attach "$pid"
	ht_ok start "start --rate 1" start -p "$pid" --rate 1
	echo work >&8
	wait_for "$HT_TMP/fx.out" '^worked ' || bail "$_fx did not work"
	ht_ok rep "attach: report --json --detail" report -p "$pid" --json \
	    --detail
	totals_are "$HT_TMP/rep.out" "$(counts "$line")"
	ok $? "attach: the report's totals are the fixture's counts"
	sites_in "$HT_TMP/rep.out" "$@"
	ok $? "attach: every site is one of the fixture's functions"
	hooked "$HT_TMP/rep.out" "$_lib" $HT_FN_NAMES
	ok $? "coverage: the got backend hooks what it calls"
	echo free >&8
	wait_for "$HT_TMP/fx.out" '^freed ' || bail "$_fx did not free"
	ht rep2 report -p "$pid" --json
	totals_are "$HT_TMP/rep2.out" "$(counts "$line")"
	ok $? "attach: after its frees, nothing in use, the same allocated"
	ht_ok detach "detach" detach -p "$pid"
	python3 "$HT_SRCDIR/t/lib/htgotmap.py" "$pid" >"$HT_TMP/after.json"
	python3 - "$HT_TMP/before.json" "$HT_TMP/after.json" <<'PY'
import json, sys
a, b = (json.load(open(f))["got"] for f in sys.argv[1:])
bad = [k for k in a if b.get(k, [0, ""])[1] != a[k][1]]
if bad or not a:
    print("changed: %s" % bad)
    sys.exit(1)
PY
	ok $? "detach restores every GOT slot"
	echo quit >&8
	exec 8>&-
	wait "$pid"
	ok $? "$_fx ran to its end"
	is "$(grep '^freed ' "$HT_TMP/fx.out" | awk '{ print $7 }')" \
	    "$(echo "$freed" | awk '{ print $7 }')" \
	    "attach: the checksum is that of a plain run"
}
