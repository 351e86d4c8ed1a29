#!/bin/sh
# heaptool attach on a process that hammers the allocator from 8 threads
# (t/target/attach-hammer), then start, report, stop, status, dump and
# detach; then 50 attach/start/report/stop/detach cycles.  Every command
# has a timeout (a hang fails), every report is a well-formed non-empty
# profile whose summary is the sum of its sites (reports that must have
# sites are asked for once status shows a sample: no assumption that the
# niced target ran between start and report), and the target computes
# what it computes without heaptool (its checksum).
#
# After detach the process is as it was: every GOT slot (.got and .got.plt
# of every module mapped before the attach, located from the ELF section
# headers and the module's load bias, read from /proc/PID/mem) holds its
# value from before the attach, and the page protections of every module
# mapping are the same.  The target runs with LD_BIND_NOW=1 (and is linked
# with -z now) so that lazy binding cannot change a slot meanwhile.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/htcheck.sh"
. "$(dirname "$0")/lib/ptrace.sh"
. "$(dirname "$0")/lib/htrun.sh"
. "$(dirname "$0")/lib/hthammer.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$HT_BUILDDIR/libheaptool-agent.so" ] ||
    bail "$HT_BUILDDIR/libheaptool-agent.so not built"
[ -x "$TARGETS/attach-hammer" ] ||
    bail "$TARGETS/attach-hammer not built (make check builds it)"
[ "$(uname -m)" = x86_64 ] || skip_all "attach supports x86-64 only"

require_ptrace

XDG_STATE_HOME=$HT_TMP/state
export XDG_STATE_HOME
unset HEAPTOOL_SEED LD_PRELOAD
# shellcheck disable=SC3045
ulimit -c 0 2>/dev/null
T=60	# seconds: any command that takes longer is hung

# json_get FILE EXPR: a value of a JSON file (python expression on j).
json_get() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
v = eval(sys.argv[2])
print(json.dumps(v) if isinstance(v, (bool, type(None))) else v)' "$1" "$2" \
	    2>/dev/null
}

# wait_line FILE LINE: wait (up to $T s) until FILE has the line LINE.
wait_line() {
	_i=0
	while ! grep -qx "$2" "$1" 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -gt $((T * 20)) ] && return 1
		sleep 0.05
	done
	return 0
}

# wait_samples NAME: wait (up to $T s) until the session has taken a
# sample (heaptool status -p $pid, output in $HT_TMP/NAME.out).  The target
# runs niced beside heaptool on a loaded machine: a report asked for right
# after start may legitimately find no sample yet, so the tests that want
# sites wait for one instead of assuming the target ran meanwhile.
wait_samples() {
	_i=0
	while :; do
		ht "$1" status -p "$pid" --json
		[ $st -eq 0 ] || return 1
		_k=$(json_get "$HT_TMP/$1.out" 'j["samples"]')
		[ "${_k:-0}" -gt 0 ] 2>/dev/null && return 0
		_i=$((_i + 1))
		[ $_i -gt $((T * 10)) ] && return 1
		sleep 0.1
	done
}


# compare BEFORE AFTER WHAT MESSAGE: the picture is the same (WHAT got or
# prot).
compare() {
	hammer_compare "$1" "$2" "$3"
	ok $? "$4"
	diag "$(cat "$HT_TMP/cmp.out")"
}

pid=
stopfile=$HT_TMP/stop
cleanup() {
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	rm -rf "$HT_TMP"
}
trap cleanup EXIT

# the same workload without heaptool, for its checksum
timeout $T "$TARGETS/attach-hammer" >"$HT_TMP/plain.out" 2>/dev/null
ok $? "attach-hammer runs by itself"
want_sum=$(grep '^attach-hammer: checksum' "$HT_TMP/plain.out")

# the target, at a lower priority so that its 8 busy threads do not
# starve heaptool on a small machine (nice execs it: $! is its pid)
LD_BIND_NOW=1 nice -n 10 "$TARGETS/attach-hammer" --until "$stopfile" \
    >"$HT_TMP/target.out" 2>"$HT_TMP/target.err" &
pid=$!
wait_line "$HT_TMP/target.out" ready || bail "attach-hammer did not start"
hammer_snapshot before

# attach, start, report, stop, status, detach
ht_ok attach "attach PID" attach "$pid"
grep -Eq "^heaptool: attached to $pid in [0-9]+ ms\$" "$HT_TMP/attach.out"
ok $? "attach says it attached and how long it took" ||
    diag "$(cat "$HT_TMP/attach.out")"
n=$(grep -c 'heaptool-agent' "/proc/$pid/maps")
[ "$n" -gt 0 ]
ok $? "the agent is mapped in the target"

ht_ok status "status" status --json
is "true none" "$(json_get "$HT_TMP/status.out" 'j["hooked"]') \
$(json_get "$HT_TMP/status.out" 'j["session"]["state"]')" \
    "status: hooked, no session yet"
[ "$(json_get "$HT_TMP/status.out" 'j["slots_patched"]')" -gt 0 ] 2>/dev/null
ok $? "status: slots are patched"

ht_ok start "start --rate 64K (the current target)" start --rate 64K
grep -Eq "^heaptool: $pid: session [0-9]+ started, rate 64.0 KiB\$" \
    "$HT_TMP/start.out"
ok $? "start says which session and rate"

ht start2 start
is "1" "$st" "start while running: exit 1"
is "heaptool: target $pid: a session is running; use heaptool start \
--restart or heaptool stop" "$(cat "$HT_TMP/start2.err")" \
    "start while running: says what to do"

ht_ok restart "start --restart" start --restart --rate 64K
ht_ok status "status after restart" status --json
is "running 2 65536" "$(json_get "$HT_TMP/status.out" \
    'j["session"]["state"]') $(json_get "$HT_TMP/status.out" \
    'j["session"]["epoch"]') $(json_get "$HT_TMP/status.out" \
    'j["session"]["rate"]')" "status: session 2 running at 64 KiB"

wait_samples wait
ok $? "the restarted session samples the target" ||
    diag "$(cat "$HT_TMP/wait.out" "$HT_TMP/wait.err")"
ht_ok report "report --json --detail" report --json --detail
label="live report"
want wellformed "$HT_TMP/report.out"
want field "$HT_TMP/report.out" pid "$pid"
want field "$HT_TMP/report.out" command attach-hammer
want field "$HT_TMP/report.out" session.rate 65536
want no-agent-frames "$HT_TMP/report.out"
checks
is true "$(json_get "$HT_TMP/report.out" 'any(f.get("function") == \
"round_work" for s in j["sites"] for f in s["frames"])')" \
    "live report: sites are symbolized (a stack passes through round_work)"

ht_ok text "report (text)" report
head -n 1 "$HT_TMP/text.out" |
    grep -q "^pid $pid (attach-hammer): session 2 running"
ok $? "the text report's first line names the process and session"

ht_ok dump "dump -o FILE" dump -o "$HT_TMP/live.heap"
mode=$(stat -c %a "$HT_TMP/live.heap" 2>/dev/null)
is 600 "$mode" "the dump is mode 0600"
ht_ok rdump "report FILE of the dump" report --json "$HT_TMP/live.heap"
is "$pid" "$(json_get "$HT_TMP/rdump.out" 'j["pid"]')" \
    "the dump is the target's profile"

ht_ok stop "stop" stop
ht_ok status "status after stop" status
grep -q "session         2 stopped" "$HT_TMP/status.out"
ok $? "status (text): session 2 stopped"
ht_ok report2 "report after stop" report --json
is stopped "$(json_get "$HT_TMP/report2.out" 'j["session"]["state"]')" \
    "the stopped session's profile is still readable"

ht_ok detach "detach" detach
ht status3 status
is 2 "$st" "after detach there is no current target"
ht_ok status4 "status -p after detach" status -p "$pid" --json
is false "$(json_get "$HT_TMP/status4.out" 'j["hooked"]')" \
    "status: hooks removed"
hammer_snapshot detached
compare before detached got \
    "after detach every GOT slot holds its value from before the attach"
compare before detached prot \
    "after detach the page protections are those from before the attach"

# 50 cycles; each report is taken once the session has a sample
i=0
fail=
while [ $i -lt 50 ]; do
	i=$((i + 1))
	for step in "attach $pid" "start --rate 64K" "report --json" "stop" \
	    "detach"; do
		# shellcheck disable=SC2086
		ht "cycle" $step
		if [ $st -ne 0 ]; then
			fail="cycle $i: heaptool $step: status $st: \
$(head -c 500 "$HT_TMP/cycle.err")"
			break 2
		fi
		case $step in
		start*)
			if ! wait_samples cycle-wait; then
				fail="cycle $i: no sample in $T s: \
$(head -c 500 "$HT_TMP/cycle-wait.out" "$HT_TMP/cycle-wait.err")"
				break 2
			fi ;;
		report*) cp "$HT_TMP/cycle.out" "$HT_TMP/cycle.$i.json" ;;
		esac
	done
done
is "" "$fail" "50 attach/start/report/stop/detach cycles, none failed or hung"
python3 - "$HT_TMP" <<'EOF' >"$HT_TMP/cycles.out" 2>&1
import json, sys
bad = []
for i in range(1, 51):
    try:
        j = json.load(open("%s/cycle.%d.json" % (sys.argv[1], i)))
        t = j["totals"]
        if t["samples"] <= 0 or t["alloc_bytes"] <= 0:
            bad.append("cycle %d: empty report: %s" % (i, t))
    except (OSError, ValueError, KeyError) as e:
        bad.append("cycle %d: %s" % (i, e))
for b in bad[:10]:
    print(b)
sys.exit(1 if bad else 0)
EOF
ok $? "every cycle's report parses and has samples"
[ -s "$HT_TMP/cycles.out" ] && diag "$(cat "$HT_TMP/cycles.out")"
n=$(grep -c 'heaptool-agent' "/proc/$pid/maps")
m=$(grep 'heaptool-agent' "/proc/$pid/maps" | awk '{print $6}' | sort -u |
    wc -l)
is 1 "$m" "the agent was loaded once, whatever the attaches ($n mappings)"

hammer_snapshot final
compare before final got \
    "after 50 cycles every GOT slot holds its value from before the attach"
compare before final prot \
    "after 50 cycles the page protections are those from before"

# the target ends as it would have without heaptool
hammer_end

done_testing
