#!/bin/sh
# A real Prometheus server (Debian's prometheus package) scrapes heaptool
# serve: started by the test on loopback (a free port, its own data
# directory, scrape_interval 1s, one static target: the server's
# address), it has the heaptool series of t/target/attach-pipe (attached
# at rate 1: keep_blocks 20000 bytes, dlfix_keep 693) once it has scraped,
# with their values, as its HTTP API (/api/v1/query) answers.  The wait
# for the first scrape is a bounded loop (up to 60 s), not a timed
# assertion.  Prometheus is killed at the end.
. "$(dirname "$0")/tap/libtap.sh"
. "$HT_SRCDIR/t/lib/ptrace.sh"
. "$HT_SRCDIR/t/lib/htserve.sh"

serve_attach_prereq
command -v prometheus >/dev/null 2>&1 ||
    skip_all "prometheus not found (Debian's prometheus package)"

fixture_start
serve_start s -p $fx

# A free loopback port for Prometheus's own HTTP server: bound and let go
# (another process could take it in between; then Prometheus says so).
pport=$(python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$HT_TMP/prometheus.yml" <<EOC
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: heaptool
    static_configs:
      - targets: ['${base#http://}']
EOC
promtool check config "$HT_TMP/prometheus.yml" >"$HT_TMP/pcheck" 2>&1
ok $? "promtool accepts the scrape config"
[ $? -eq 0 ] || diag "$(cat "$HT_TMP/pcheck")"
prometheus --config.file="$HT_TMP/prometheus.yml" \
    --storage.tsdb.path="$HT_TMP/prom-data" \
    --web.listen-address="127.0.0.1:$pport" --log.level=warn \
    >"$HT_TMP/prom.log" 2>&1 &
prom=$!
others="$others $prom"

# query PROMQL: the values of the instant query's result, one a line,
# "labels value" (labels as JSON), into $HT_TMP/q.out; fails when the
# API does not answer.
query() {
	python3 - "http://127.0.0.1:$pport" "$1" >"$HT_TMP/q.out" 2>"$HT_TMP/q.err" <<'PY'
import json, sys, urllib.parse, urllib.request
url = sys.argv[1] + "/api/v1/query?" + urllib.parse.urlencode({"query": sys.argv[2]})
with urllib.request.urlopen(url, timeout=10) as r:
    d = json.load(r)
if d.get("status") != "success":
    sys.exit(1)
for e in d["data"]["result"]:
    m = {k: v for k, v in e["metric"].items() if k not in ("instance", "job")}
    print(json.dumps(m, sort_keys=True), e["value"][1])
PY
}

# Up to 60 s for the first scrape to be in the database.
i=0
until query 'heaptool_inuse_bytes' && [ -s "$HT_TMP/q.out" ]; do
	i=$((i + 1))
	if [ $i -gt 600 ] || ! alive $prom; then
		break
	fi
	sleep 0.1
done
ok $([ -s "$HT_TMP/q.out" ]; echo $?) \
    "Prometheus has scraped heaptool serve (heaptool_inuse_bytes is there)"
[ -s "$HT_TMP/q.out" ] || diag "$(tail -n 20 "$HT_TMP/prom.log")" "$(cat "$HT_TMP/q.err")"
is '{"__name__": "heaptool_inuse_bytes"} 20693' "$(cat "$HT_TMP/q.out")" \
    "heaptool_inuse_bytes: 20693"
query 'up{job="heaptool"}'
is '{"__name__": "up"} 1' "$(cat "$HT_TMP/q.out")" "the target is up"
query 'heaptool_site_inuse_bytes{function="keep_blocks"}'
ok $(grep -Eq '^\{"__name__": "heaptool_site_inuse_bytes", "function": "keep_blocks", "location": "[^"]*attach-pipe\.c:[0-9]+"\} 20000$' \
    "$HT_TMP/q.out"; echo $?) "keep_blocks: 20000, with its location"
[ $? -eq 0 ] || diag "$(cat "$HT_TMP/q.out")"
query 'sum(heaptool_site_inuse_bytes)'
is '{} 20693' "$(cat "$HT_TMP/q.out")" "the site series sum to the total"
query 'heaptool_module_inuse_bytes{module="libdlfix.so"}'
ok $(grep -q ' 693$' "$HT_TMP/q.out"; echo $?) "libdlfix.so: 693"
query 'heaptool_session_info'
ok $(grep -q "\"pid\": \"$fx\"" "$HT_TMP/q.out"; echo $?) \
    "the info series names the process"
ok $(grep -c '^heaptool: serve: GET /metrics: 200' "$HT_TMP/s.err" |
    awk '{ exit !($1 >= 1) }'; echo $?) "serve logged the scrapes, 200"
kill $prom
stopped $prom
done_testing
