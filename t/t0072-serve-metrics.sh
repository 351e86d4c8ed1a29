#!/bin/sh
# heaptool serve's /metrics: promtool check metrics (Debian's prometheus
# package) accepts it, and its figures are the fixture's, exactly (at rate
# 1): t/target/attach-pipe with keep_blocks (20 x 1000 bytes) and
# dlfix_keep (9 x 77 bytes in libdlfix.so), labelled with their function
# and file:line (the lines of their SITE markers).  --top 1 keeps one site
# series and sums the other in "(other sites)", the series adding up to
# the total; --cache keeps a profile for its time and --cache 0 takes one
# per scrape.  A process that exits makes it a 503, and serve goes on.
. "$(dirname "$0")/tap/libtap.sh"
. "$HT_SRCDIR/t/lib/ptrace.sh"
. "$HT_SRCDIR/t/lib/htserve.sh"

serve_attach_prereq
command -v promtool >/dev/null 2>&1 ||
    skip_all "promtool not found (Debian's prometheus package)"

fixture_start
serve_start s -p $fx --cache 1h

# value FILE SERIES: the value of the series (its name and labels as
# written) in FILE, or "none".
value() {
	awk -v s="$2" '
	    substr($0, 1, length(s) + 1) == s " " { print substr($0, length(s) + 2); f = 1 }
	    END { if (!f) print "none" }' "$1"
}

get m1 /metrics
ok $([ "$code" = 200 ] && grep -qi \
    '^content-type: text/plain; version=0.0.4' "$HT_TMP/m1.head"; echo $?) \
    "/metrics: 200, text/plain; version=0.0.4"
promtool check metrics <"$HT_TMP/m1.body" >"$HT_TMP/lint" 2>&1
ok $? "promtool check metrics accepts it"
[ $? -eq 0 ] || diag "$(head -c 3000 "$HT_TMP/lint")"

m=$HT_TMP/m1.body
is 20693 "$(value "$m" heaptool_inuse_bytes)" "in use: 20693 bytes (20000 + 693)"
is 29 "$(value "$m" heaptool_inuse_objects)" "in use: 29 objects"
is 20693 "$(value "$m" heaptool_allocated_bytes_total)" "allocated: 20693 bytes"
is 29 "$(value "$m" heaptool_samples_total)" "samples: 29 (rate 1)"
is 0 "$(value "$m" heaptool_dropped_samples_total)" "no dropped samples"
is 1 "$(value "$m" heaptool_sampling_rate_bytes)" "rate 1"
ok $([ "$(value "$m" heaptool_agent_overhead_bytes)" -gt 0 ] &&
    [ "$(value "$m" heaptool_rss_bytes)" -gt 0 ]; echo $?) \
    "the agent's overhead and the RSS, both > 0"
ok $(grep -q "^heaptool_session_info{pid=\"$fx\",command=\"attach-pipe\",epoch=\"1\",state=\"running\",backend=\"got\",exact=\"true\"} 1\$" \
    "$m"; echo $?) "the session's info series"
kl=$(grep -n 'SITE keep_blocks' "$HT_SRCDIR/t/target/attach-pipe.c" | cut -d: -f1)
dl=$(grep -n 'SITE dlfix_keep' "$HT_SRCDIR/t/target/dlfix.c" | cut -d: -f1)
ok $(grep -Eq "^heaptool_site_inuse_bytes\{function=\"keep_blocks\",location=\"[^\"]*attach-pipe\.c:$kl\"\} 20000\$" "$m" &&
    grep -Eq "^heaptool_site_inuse_objects\{function=\"keep_blocks\",location=\"[^\"]*attach-pipe\.c:$kl\"\} 20\$" "$m"
    echo $?) "keep_blocks: 20000 bytes, 20 objects, at attach-pipe.c:$kl"
ok $(grep -Eq "^heaptool_site_inuse_bytes\{function=\"dlfix_keep\",location=\"[^\"]*dlfix\.c:$dl\"\} 693\$" "$m"
    echo $?) "dlfix_keep: 693 bytes at dlfix.c:$dl"
ok $(grep -q '^heaptool_module_inuse_bytes{module="attach-pipe"} 20000$' "$m" &&
    grep -q '^heaptool_module_inuse_bytes{module="libdlfix.so"} 693$' "$m"
    echo $?) "per module: attach-pipe 20000, libdlfix.so 693"
ok $(! grep -q '^heaptool_site_inuse_bytes{function="(other sites)"' "$m"; echo $?) \
    "two sites under --top 20: no (other sites) series"
n=$(grep -c '^# TYPE ' "$m")
ok $([ "$n" -gt 10 ] && [ "$n" -eq "$(grep -c '^# HELP ' "$m")" ]; echo $?) \
    "every metric has its HELP and TYPE ($n)"

# The cache: 5 more blocks do not show within its hour.
fixture_do 'keep 5' 'kept 5'
get m2 /metrics
is 20693 "$(value "$HT_TMP/m2.body" heaptool_inuse_bytes)" \
    "--cache 1h: the profile of the first scrape again"

serve_start t -p $fx --cache 0 --top 1
get m3 /metrics
m=$HT_TMP/m3.body
is 25693 "$(value "$m" heaptool_inuse_bytes)" \
    "--cache 0: the profile now, 5000 bytes more"
ok $([ "$(grep -c '^heaptool_site_inuse_bytes{' "$m")" -eq 2 ] &&
    grep -Eq '^heaptool_site_inuse_bytes\{function="keep_blocks",.*\} 25000$' "$m" &&
    grep -q '^heaptool_site_inuse_bytes{function="(other sites)",location=""} 693$' "$m"
    echo $?) "--top 1: keep_blocks, and dlfix_keep summed in (other sites)"
sum=$(awk '/^heaptool_site_inuse_bytes\{/ { s += $NF } END { print s }' "$m")
is 25693 "$sum" "the site series add up to the total"
promtool check metrics <"$m" >"$HT_TMP/lint" 2>&1
ok $? "promtool accepts the --top 1 page too"

echo quit >&7
stopped $fx
get m4 /metrics
ok $([ "$code" = 503 ] && [ "$(wc -l <"$HT_TMP/m4.body")" -eq 1 ] &&
    grep -q "^heaptool: target $fx: no such process" "$HT_TMP/m4.body"
    echo $?) "the process gone: 503, one line why"
get m5 /metrics
ok $([ "$code" = 503 ] && alive $t_pid; echo $?) "and again: serve goes on"
base=$(sed -n 's|^heaptool serve: process .* on \(http://[^/]*\)/.*|\1|p' \
    "$HT_TMP/s.out")
get m6 /metrics
ok $([ "$code" = 503 ] &&
    grep -q "^heaptool: target $fx: no such process" "$HT_TMP/m6.body"
    echo $?) "--cache 1h: a kept profile of a process gone is not served"

# Label values escaped: a process whose name (its comm, from the file it
# runs) holds a double quote and a backslash.
weird='q"b\s-x'
ln -s "$TARGETS/attach-pipe" "$HT_TMP/$weird"
fixture_start "$HT_TMP/$weird"
serve_start w -p $fx
get w1 /metrics
ok $(grep -q '^heaptool_session_info{pid="'"$fx"'",command="q\\"b\\\\s-x",' \
    "$HT_TMP/w1.body"; echo $?) \
    'the command label: " and \\ escaped'
[ $? -eq 0 ] || diag "$(grep '^heaptool_session_info' "$HT_TMP/w1.body")"
promtool check metrics <"$HT_TMP/w1.body" >"$HT_TMP/lint" 2>&1
ok $? "promtool accepts the escaped labels"
echo quit >&7
stopped $fx
done_testing
