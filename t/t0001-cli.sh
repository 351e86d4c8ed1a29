#!/bin/sh
# The heaptool command line without the agent: help and version, usage
# errors (exit 2, one line on stderr), runtime errors (exit 1, one line),
# the environment `run` hands to the agent, and `report` on a profile built
# here byte by byte (format version 1, see src/profile.h), whose summary
# must be the exact sum of its sites in text and JSON.
. "$(dirname "$0")/tap/libtap.sh"

[ -x "$HEAPTOOL" ] || skip_all "no heaptool at $HEAPTOOL (build it first)"

# run_cmd CMD...: run, keep stdout, stderr and the status.
run_cmd() {
	"$@" >"$HT_TMP/out" 2>"$HT_TMP/err"
	status=$?
}

# one_error WANT_STATUS DESCRIPTION CMD...: CMD fails with WANT_STATUS,
# prints nothing on stdout and exactly one line "heaptool: ..." on stderr.
one_error() {
	_want=$1
	_desc=$2
	shift 2
	run_cmd "$@"
	_lines=$(wc -l <"$HT_TMP/err")
	if [ "$status" -eq "$_want" ] && [ ! -s "$HT_TMP/out" ] &&
	    [ "$_lines" -eq 1 ] && grep -q '^heaptool: ' "$HT_TMP/err"; then
		ok 0 "$_desc"
	else
		ok 1 "$_desc"
		diag "command: $*" "status $status (want $_want)" \
		    "stdout: $(head -c 500 "$HT_TMP/out")" \
		    "stderr: $(head -c 1000 "$HT_TMP/err")"
	fi
}

# help and version
version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' \
    "$HT_BUILDDIR/config.h" 2>/dev/null)
run_cmd "$HEAPTOOL" --version
is "0 heaptool ${version:-0.1.0}" "$status $(cat "$HT_TMP/out")" \
    "--version prints the package version"

run_cmd "$HEAPTOOL" --help
help_status=$status
cp "$HT_TMP/out" "$HT_TMP/help"
ok $([ $help_status -eq 0 ] && [ ! -s "$HT_TMP/err" ] &&
    head -n 1 "$HT_TMP/help" | grep -q '^usage: heaptool ' &&
    grep -q '^  run ' "$HT_TMP/help" && grep -q '^  report ' "$HT_TMP/help"
    echo $?) "--help lists the commands, exit 0"
ok $(tail -n 1 "$HT_TMP/help" | grep -q 'man heaptool'; echo $?) \
    "--help ends by pointing at the man page"
# Every option of the commands' synopses that the summary leaves out is one
# a user does not find: report's, start's and run's.
missing=
for o in --format --json --sort --threshold --at-peak --top --bytes --diff \
    --detail --no-final-dump --restart --live --rate; do
	grep -q -- "\[$o[] ]" "$HT_TMP/help" || missing="$missing $o"
done
ok $([ -z "$missing" ]; echo $?) \
    "--help shows the options of report, start and run" ||
    diag "missing:$missing"
run_cmd "$HEAPTOOL" -h
ok $([ $status -eq 0 ] && cmp -s "$HT_TMP/out" "$HT_TMP/help"; echo $?) \
    "-h is --help"
run_cmd "$HEAPTOOL" help
ok $([ $status -eq 0 ] && cmp -s "$HT_TMP/out" "$HT_TMP/help"; echo $?) \
    "heaptool help is --help"

for c in run report; do
	run_cmd "$HEAPTOOL" $c --help
	ok $([ $status -eq 0 ] && [ ! -s "$HT_TMP/err" ] &&
	    head -n 1 "$HT_TMP/out" | grep -q "^usage: heaptool $c " &&
	    tail -n 1 "$HT_TMP/out" | grep -q 'man heaptool'
	    echo $?) "$c --help: its usage, exit 0"
	cp "$HT_TMP/out" "$HT_TMP/help-$c"
	run_cmd "$HEAPTOOL" help $c
	ok $([ $status -eq 0 ] && cmp -s "$HT_TMP/out" "$HT_TMP/help-$c"
	    echo $?) "help $c is $c --help"
done

# usage errors: exit 2, one line
one_error 2 "no command" "$HEAPTOOL"
one_error 2 "unknown command" "$HEAPTOOL" frobnicate
one_error 2 "unknown global option" "$HEAPTOOL" --frobnicate
one_error 2 "help for an unknown command" "$HEAPTOOL" help frobnicate
one_error 2 "run without a command" "$HEAPTOOL" run
one_error 2 "run with only --" "$HEAPTOOL" run --
one_error 2 "run with options but no command" "$HEAPTOOL" run --rate 4K
one_error 2 "run --rate without a value" "$HEAPTOOL" run --rate
one_error 2 "run with an unknown option" "$HEAPTOOL" run --frob -- true
one_error 2 "run --rate 0" "$HEAPTOOL" run --rate 0 -- true
one_error 2 "run --rate with junk" "$HEAPTOOL" run --rate 12Q -- true
is "heaptool: --rate 12Q: not a size; use e.g. 4096, 64K, 512KiB, 1M" \
    "$(cat "$HT_TMP/err")" "the bad size message says what to type"
one_error 2 "report without a file" "$HEAPTOOL" report
one_error 2 "report with two files" "$HEAPTOOL" report a.heap b.heap
one_error 2 "report --format not produced" \
    "$HEAPTOOL" report --format xml a.heap
one_error 2 "report --top 0" "$HEAPTOOL" report --top 0 a.heap
one_error 2 "report --top junk" "$HEAPTOOL" report --top 3x a.heap
one_error 2 "report with an unknown option" "$HEAPTOOL" report --frob a.heap

# runtime errors: exit 1, one line
one_error 1 "report of a missing file" "$HEAPTOOL" report "$HT_TMP/none.heap"
printf 'this is not a profile\n' >"$HT_TMP/garbage.heap"
one_error 1 "report of a garbage file" "$HEAPTOOL" report "$HT_TMP/garbage.heap"
: >"$HT_TMP/empty.heap"
one_error 1 "report of an empty file" "$HEAPTOOL" report "$HT_TMP/empty.heap"
printf 'HEAPPROF\001\000\000\000\000\000\000\000' >"$HT_TMP/header.heap"
one_error 1 "report of a header without records" \
    "$HEAPTOOL" report --json "$HT_TMP/header.heap"
one_error 1 "run with HEAPTOOL_AGENT pointing nowhere" \
    env HEAPTOOL_AGENT="$HT_TMP/none.so" "$HEAPTOOL" run -- true

# An empty file stands for the agent: ld.so ignores it (with a warning on
# stderr), so the command runs unprofiled and no profile appears.
tmp=$(cd "$HT_TMP" && pwd -P)
: >"$tmp/agent.so"
export HEAPTOOL_AGENT="$tmp/agent.so"
one_error 1 "run -o into a missing directory" \
    "$HEAPTOOL" run -o "$HT_TMP/no/dir/x.heap" -- true

# run without the agent: the environment it hands over, the status.

show='echo "$LD_PRELOAD|$HEAPTOOL_PID|$$|$HEAPTOOL_RATE|$HEAPTOOL_OUTPUT"'
show="$show"'"|$HEAPTOOL_SEED"'
run_cmd env LD_PRELOAD=/prev.so HEAPTOOL_SEED=7 "$HEAPTOOL" run --rate 64K \
    -o "$tmp/x.heap" -- sh -c "$show"
IFS='|' read -r pre hpid shpid rate output seed <"$HT_TMP/out"
is "$tmp/agent.so:/prev.so" "$pre" \
    "LD_PRELOAD: the agent's absolute path, then the existing entries"
is "$shpid" "$hpid" "HEAPTOOL_PID is the command's own pid"
is "65536|$tmp/x.heap|7" "$rate|$output|$seed" \
    "HEAPTOOL_RATE in bytes, HEAPTOOL_OUTPUT absolute, HEAPTOOL_SEED kept"
ok $(grep -q '^heaptool: no profile written to ' "$HT_TMP/err"; echo $?) \
    "run says when no profile was written"

show='echo "$HEAPTOOL_OUTPUT $HEAPTOOL_RATE $$"'
run_cmd sh -c "cd '$tmp' && exec '$HEAPTOOL' run -- sh -c '$show'"
read -r output rate shpid <"$HT_TMP/out"
is "$tmp/heaptool.$shpid.heap 524288" "$output $rate" \
    "default output heaptool.PID.heap in the current directory, rate 512KiB"
run_cmd "$HEAPTOOL" run -o "$tmp/x.heap" -- sh -c 'exit 3'
is 3 "$status" "run exits with the command's status"
run_cmd "$HEAPTOOL" run -o "$tmp/x.heap" -- sh -c 'kill -9 $$'
is 137 "$status" "run exits 128+N when signal N killed the command"
ok $(grep -q 'killed by signal 9' "$HT_TMP/err"; echo $?) \
    "run names the signal that left no profile"
run_cmd "$HEAPTOOL" run -o "$tmp/x.heap" -- "$tmp/no-such-command"
ok $([ $status -eq 127 ] &&
    grep -q "^heaptool: $tmp/no-such-command: " "$HT_TMP/err"; echo $?) \
    "a command that does not exist: exit 127 and why"
unset HEAPTOOL_AGENT

# report on a handmade profile
# le NBYTES VALUE: VALUE as NBYTES little-endian bytes.
le() {
	_n=$1
	_v=$2
	while [ "$_n" -gt 0 ]; do
		_b=$((_v & 255))
		printf "\\$((_b / 64))$((_b / 8 % 8))$((_b % 8))"
		_v=$((_v >> 8))
		_n=$((_n - 1))
	done
}
# rec TYPE LENGTH: a record header.
rec() {
	le 4 "$1"
	le 4 "$2"
}
# site INUSE IOBJ ALLOC AOBJ SAMPLES LIVE VAR_BITS FRAMES...
site() {
	_nf=$(($# - 7))
	rec 4 $((84 + 8 * _nf))
	for _x in "$1" "$2" "$3" "$4" "$5" "$6" "$7"; do
		le 8 "$_x"
	done
	le 8 0		# alloc_var
	le 8 0		# peak_inuse_bytes
	le 8 0		# peak_inuse_objects
	le 4 "$_nf"
	shift 7
	for _x in "$@"; do
		le 8 "$_x"
	done
}
make_profile() {
	printf 'HEAPPROF'
	le 4 1
	le 4 0
	# META: a command with a quote, a backslash, a tab, a control
	# character and a byte that is not UTF-8.
	rec 1 $((128 + 2 + 8))
	for _x in 4242 2 1024; do le 8 $_x; done	# pid epoch rate
	le 4 1						# running
	le 4 0						# flags
	le 8 1000000000					# start_ns
	le 8 3500000000					# end_ns
	le 8 100000					# peak
	le 8 0						# peak_ns
	le 8 65536					# overhead
	le 8 3						# dropped
	le 8 99						# samples
	le 8 98						# live samples
	le 8 200000					# heap in use
	le 8 10						# heap free
	le 8 0						# heap mmap
	le 8 4096000					# RSS
	le 2 8
	printf 'a"b\\c\t\001\377'
	# MODULE: a library that is not on this machine.
	rec 2 $((24 + 2 + 4 + 2 + 22))
	le 8 $((0x400000))
	le 8 $((0x400000))
	le 8 $((0x402800))
	le 2 4
	printf '\001\002\003\004'
	le 2 22
	printf '/nonexistent/libx.so.1'
	# THREAD
	rec 3 $((44 + 2 + 4))
	le 4 4242
	for _x in 34096 7 38292 12 9; do le 8 $_x; done
	le 2 4
	printf 'main'
	# SITEs: variance 1048576.0 is 0x4130000000000000.
	site 4096 4 8192 8 5 3 $((0x4130000000000000)) \
	    $((0x401000)) $((0x402000))
	site 30000 3 30000 3 3 3 0 $((0x403000))
	site 0 0 100 1 1 0 0
	rec 0 0
}
make_profile >"$HT_TMP/p.heap"

run_cmd "$HEAPTOOL" report "$HT_TMP/p.heap"
ok $([ $status -eq 0 ] && head -n 1 "$HT_TMP/out" |
    grep -q '^pid 4242 (a"b\\c??.*): session 2 running'
    echo $?) "report: the session line, control characters made harmless"
# The profile says 3 samples were dropped (a version 1 profile: no more).
is "heaptool: warning: $HT_TMP/p.heap: 3 samples dropped (the agent's \
tables were full); every figure leaves them out; a larger --max-samples \
keeps more" "$(cat "$HT_TMP/err")" \
    "report: the dropped samples, on stderr"
ok $(sed -n 2,3p "$HT_TMP/out" | tr '\n' ' ' | grep -q "^  WARNING: 3 \
samples dropped (the agent's tables were full)\.   They are left out of every \
figure below" && echo 0 || echo 1) \
    "report: the dropped samples, and what they mean, below the first line"
ok $(grep -q 'estimates' "$HT_TMP/out" && ! grep -q exact "$HT_TMP/out"
    echo $?) "a sampled profile is called an estimate, never exact"
run_cmd "$HEAPTOOL" report --bytes "$HT_TMP/p.heap"
ok $(grep -q '^  in use  *34096 B in 7 objects (95% ' "$HT_TMP/out" &&
    grep -q '^  allocated  *38292 B in 12 objects (9 samples)' "$HT_TMP/out" &&
    grep -q '^  freed  *4196 B$' "$HT_TMP/out" &&
    grep -q '^  libx.so.1  *4096 B  *8192 B$' "$HT_TMP/out" &&
    grep -q '^  \[unknown\]  *30000 B  *30100 B$' "$HT_TMP/out"
    echo $?) "--bytes: totals, freed and modules are the sums of the sites"
run_cmd "$HEAPTOOL" report --detail --top 1 "$HT_TMP/p.heap"
ok $([ $status -eq 0 ] && grep -q '^#1 in use 29.3 KiB' "$HT_TMP/out" &&
    grep -q '^(2 smaller sites) in use 4.00 KiB' "$HT_TMP/out" &&
    grep -q '^      0x403000$' "$HT_TMP/out" && ! grep -q '^note' "$HT_TMP/out"
    echo $?) "--detail --top 1: one site, the rest folded, unknown frames"
run_cmd "$HEAPTOOL" report --detail "$HT_TMP/p.heap"
ok $([ $status -eq 0 ] && grep -q '^      libx.so.1+0x1000$' "$HT_TMP/out" &&
    grep -q '^      libx.so.1+0x2000$' "$HT_TMP/out" &&
    grep -q '^note: /nonexistent/libx.so.1: cannot open: ' "$HT_TMP/out"
    echo $?) "--detail: a missing module's frames as module+offset, and why"

run_cmd "$HEAPTOOL" report --detail --json -o "$HT_TMP/p.json" "$HT_TMP/p.heap"
ok $([ $status -eq 0 ] && [ ! -s "$HT_TMP/out" ] && [ -s "$HT_TMP/p.json" ]
    echo $?) "-o writes the report to a file, nothing on stdout"
"$HEAPTOOL" report --detail --top 1 --format json - <"$HT_TMP/p.heap" \
    >"$HT_TMP/top.json" 2>"$HT_TMP/err"
ok $? "--format json reads the profile from stdin"

if command -v python3 >/dev/null 2>&1; then
	cat >"$HT_TMP/check.py" <<'EOF'
import json, sys
full = json.load(open(sys.argv[1]))
top = json.load(open(sys.argv[2]))
fails = []
def want(cond, what):
    if not cond:
        fails.append(what)
want(full["pid"] == 4242, "pid")
want(full["command"] == 'a"b\\c\t\x01\xff',
     "command escaped: %r" % full["command"])
want(full["session"] == dict(full["session"], epoch=2, state="running",
     rate=1024, duration_s=2.5), "session %r" % full["session"])
t = full["totals"]
for doc in (full, top):
    for k in ("inuse_bytes", "inuse_objects", "alloc_bytes", "alloc_objects",
              "samples", "live_samples"):
        want(doc["totals"][k] == sum(s[k] for s in doc["sites"]),
             "totals.%s is the sum of the sites" % k)
    for k in ("inuse_bytes", "alloc_bytes"):
        want(doc["totals"][k] == sum(m[k] for m in doc["modules"]),
             "totals.%s is the sum of the modules" % k)
want((t["inuse_bytes"], t["alloc_bytes"], t["freed_bytes"]) ==
     (34096, 38292, 4196), "totals %r" % t)
want(t["peak_inuse_bytes"] == 100000, "peak")
want(t["inuse_bytes_low"] < t["inuse_bytes"] < t["inuse_bytes_high"],
     "a sampled total has an interval")
want(full["agent"] == {"overhead_bytes": 65536, "dropped_samples": 3,
                      "dropped_bytes": 0, "dropped_objects": 0,
                      "max_samples": None, "drop_reasons": [],
                      "tag_cache": {"tags": 0, "refused": 0,
                                    "mapped_bytes": 0, "name_bytes": 0}},
     "agent %r" % full["agent"])
want(full["allocator"]["predates_session_bytes"] == 200000 - 34096,
     "predates the session")
want(full["threads"][0]["tid"] == 4242 and full["threads"][0]["name"] == "main",
     "threads")
want([s["inuse_bytes"] for s in full["sites"]] == [30000, 4096, 0],
     "sites sorted by bytes in use")
s0 = full["sites"][0]
want(s0["inuse_bytes_low"] == s0["inuse_bytes_high"] == 30000,
     "variance 0: a point interval")
f = full["sites"][1]["frames"]
want([(x["address"], x["module"], x["offset"], x["function"], x["file"],
       x["line"], x["inlined"]) for x in f] ==
     [("0x401000", "libx.so.1", "0x1000", None, None, None, False),
      ("0x402000", "libx.so.1", "0x2000", None, None, None, False)],
     "frames of a missing module: module+offset %r" % f)
want(full["sites"][0]["frames"][0]["module"] is None, "no module: null")
want(len(top["sites"]) == 2 and top["sites"][1]["frames"] == [] and
     top["sites"][1]["folded_sites"] == 2 and
     top["sites"][1]["alloc_bytes"] == 8292, "--top folds the rest")
want(sorted(full) == sorted(["pid", "command", "session", "totals", "agent",
     "allocator", "unseen_allocators", "coverage", "modules", "tags",
     "threads", "sites"]),
     "top-level keys")
want(full["unseen_allocators"] == [], "no unseen allocator")
for w in fails:
    print(w)
sys.exit(1 if fails else 0)
EOF
	python3 "$HT_TMP/check.py" "$HT_TMP/p.json" "$HT_TMP/top.json" \
	    >"$HT_TMP/py.out" 2>&1
	ok $? "JSON: valid, escaped, and the summary is the sum of the detail"
	[ -s "$HT_TMP/py.out" ] && diag "$(cat "$HT_TMP/py.out")"
	run_cmd "$HEAPTOOL" report --json "$HT_TMP/p.heap"
	ok $(python3 -c 'import json, sys
sys.exit("sites" in json.load(sys.stdin))' <"$HT_TMP/out"; echo $?) \
	    "JSON without --detail has no sites"
else
	skip "python3 is not installed: cannot parse the JSON"
	skip "python3 is not installed: cannot parse the JSON"
fi

# -o never puts a profile where something that is not a file was: the
# agent renames the profile over its path, which as root would replace
# /dev/null itself.  Refused before anything runs.
mkfifo "$HT_TMP/fifo"
ln -s "$HT_TMP/target.heap" "$HT_TMP/link.heap"
one_error 2 "run -o /dev/null: refused" \
    "$HEAPTOOL" run -o /dev/null -- true
[ -c /dev/null ]
ok $? "and /dev/null is still a character device"
grep -q "^heaptool: run: -o /dev/null: a character device, which the profile would replace; give a file's path" \
    "$HT_TMP/err"
ok $? "the message says what it is and what to do"
one_error 2 "run -o FIFO: refused" "$HEAPTOOL" run -o "$HT_TMP/fifo" -- true
one_error 2 "run -o a symbolic link: refused" \
    "$HEAPTOOL" run -o "$HT_TMP/link.heap" -- true
[ ! -e "$HT_TMP/target.heap" ] && [ -p "$HT_TMP/fifo" ]
ok $? "nothing was written, the FIFO is still one"
one_error 2 "dump -o /dev/null: refused" "$HEAPTOOL" dump -o /dev/null
done_testing
