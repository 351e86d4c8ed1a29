#!/bin/sh
# Detach returns the agent's tables to the system (heaptool(1), detach).
# t/target/dump-target, the agent preloaded in attach mode (no ptrace
# needed), keeps 3,000,000 blocks of 32 bytes in a session at rate 1; then
# heaptool detach:
#   - the target's RSS (VmRSS of /proc/PID/status) falls by at least 90%
#     of the agent's overhead before the detach (status --json);
#   - status says what the agent still holds (released, a small overhead),
#     and report says the profile went with the tables;
#   - heaptool attach hooks it again, and a new session maps new tables
#     and counts exactly;
#   - detaching while four threads allocate, reallocate and free at rate
#     1 (their hooks racing the release), five times over, harms nothing:
#     the threads run on, join, and the program exits 0.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/htdumps.sh"

dump_test_setup
T=120
N=3000000

# rss_kb PID: VmRSS in kB.
rss_kb() {
	awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status"
}

# samples_at_least N: until the session has taken N samples (up to $T s).
samples_at_least() {
	_i=0
	while :; do
		"$HEAPTOOL" status -p "$pid" --json >"$HT_TMP/wait.out" 2>&1
		[ "$(json_get "$HT_TMP/wait.out" 'j["samples"]')" -ge "$1" ] \
		    2>/dev/null && return 0
		_i=$((_i + 1))
		[ $_i -gt $((T * 10)) ] && return 1
		sleep 0.1
	done
}

fx_start mem
ht start start -p "$pid" --rate 1
ok $st "start --rate 1"
send "alloc $N 32"
ht before status -p "$pid" --json
over=$(json_get "$HT_TMP/before.out" 'j["overhead_bytes"]')
live=$(json_get "$HT_TMP/before.out" 'j["live_samples"]')
[ "$live" -ge $N ] 2>/dev/null
ok $? "the session holds the $N blocks ($live live samples)"
[ "$over" -gt $((N * 16)) ] 2>/dev/null
ok $? "and the agent's tables take $over bytes for them"
rss0=$(rss_kb "$pid")
ht detach detach -p "$pid"
ok $st "detach"
rss1=$(rss_kb "$pid")
fall=$(((rss0 - rss1) * 1024))
[ "$fall" -ge $((over / 10 * 9)) ] 2>/dev/null
ok $? "RSS fell by $fall bytes, at least 90% of the agent's $over" ||
    diag "VmRSS $rss0 kB before, $rss1 kB after"

ht after status -p "$pid" --json
held=$(json_get "$HT_TMP/after.out" 'j["overhead_bytes"]')
is "True False" "$(json_get "$HT_TMP/after.out" 'j["session"]["released"]') \
$(json_get "$HT_TMP/after.out" 'j["hooked"]')" \
    "status --json after detach: released, not hooked"
[ "$held" -lt $((over / 10)) ] 2>/dev/null
ok $? "status --json: the agent still holds $held bytes of its $over"
ht after-text status -p "$pid"
grep -q "^  heaptool agent  .* still held (its tables were returned at \
detach)" "$HT_TMP/after-text.out"
ok $? "status says what the agent still holds" ||
    diag "$(cat "$HT_TMP/after-text.out")"
ht gone report -p "$pid"
is 1 "$st" "report after detach: exit 1"
grep -q "detached" "$HT_TMP/gone.err"
ok $? "report after detach: says it is detached"

# Hooked again: a new session maps new tables.
ht attach attach "$pid"
ok $st "attach hooks the detached agent again"
ht nosession report -p "$pid"
is 1 "$st" "report before a new session: exit 1"
ht start2 start -p "$pid" --rate 1
ok $st "a new session starts"
send "other 1000 48"
ht rep report -p "$pid" --json --detail
python3 - "$HT_TMP/rep.out" >"$HT_TMP/other.out" 2>&1 <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
s = [s for s in j["sites"] if s["frames"] and
     s["frames"][0].get("function") == "dt_other"]
if len(s) != 1 or s[0]["inuse_objects"] != 1000 or \
        s[0]["inuse_bytes"] != 48000 or not j["session"]["exact"]:
    print("dt_other sites: %r" % [(x["inuse_objects"], x["inuse_bytes"])
                                  for x in s])
EOF
is "" "$(cat "$HT_TMP/other.out")" \
    "and counts exactly: dt_other 1000 objects, 48000 bytes"

# Detach while threads allocate and free at rate 1.
fail=
i=0
ht threads stop -p "$pid"
send "threads 4"
while [ $i -lt 5 ]; do
	i=$((i + 1))
	if [ $i -gt 1 ] && ! timeout $T "$HEAPTOOL" attach "$pid" \
	    >"$HT_TMP/cyc.out" 2>&1; then
		fail="cycle $i: attach: $(head -c 300 "$HT_TMP/cyc.out")"
		break
	fi
	if ! timeout $T "$HEAPTOOL" start -p "$pid" --rate 1 \
	    >"$HT_TMP/cyc.out" 2>&1; then
		fail="cycle $i: start: $(head -c 300 "$HT_TMP/cyc.out")"
		break
	fi
	if ! samples_at_least 20000; then
		fail="cycle $i: no samples"
		break
	fi
	if ! timeout $T "$HEAPTOOL" detach -p "$pid" >"$HT_TMP/cyc.out" 2>&1
	then
		fail="cycle $i: detach: $(head -c 300 "$HT_TMP/cyc.out")"
		break
	fi
done
is "" "$fail" "5 detaches while 4 threads allocate and free at rate 1"
kill -0 "$pid" 2>/dev/null
ok $? "the target is alive"
send join
ok 0 "its threads join"
fx_quit
is 0 "$fxst" "dump-target exits 0"

done_testing
