#!/bin/sh
# heaptool serve, the HTTP side, without an agent: its refusals (no
# address, an address that is not loopback without --allow-remote, one
# that does not parse, a process that does not exist), and a server for a
# process that has no agent (a sleep): every profile page is a 503 with the
# reason in one line and the server goes on; the index lists the pages;
# unknown paths are 404, methods other than GET and HEAD 405 (with Allow),
# bad ?seconds= and ?debug= 400; a client that connects and sends nothing
# does not hold up the others and is cut after --timeout; SIGTERM and
# SIGINT end it with status 0.  No ptrace needed.
. "$(dirname "$0")/tap/libtap.sh"
. "$HT_SRCDIR/t/lib/htserve.sh"

serve_prereq
sleep 600 &
nopid=$!
others=$nopid

# refused NAME STATUS PATTERN DESCRIPTION ARGS: heaptool serve ARGS exits
# STATUS, nothing on stdout, one line on stderr matching PATTERN.
refused() {
	_n=$1 _w=$2 _p=$3 _d=$4
	shift 4
	timeout $T "$HEAPTOOL" serve "$@" >"$HT_TMP/$_n.out" 2>"$HT_TMP/$_n.err"
	_s=$?
	ok $([ $_s -eq "$_w" ] && [ ! -s "$HT_TMP/$_n.out" ] &&
	    [ "$(wc -l <"$HT_TMP/$_n.err")" -eq 1 ] &&
	    grep -q "^heaptool: $_p" "$HT_TMP/$_n.err"; echo $?) "$_d"
	[ $? -eq 0 ] || diag "status $_s" "$(cat "$HT_TMP/$_n.out" "$HT_TMP/$_n.err")"
}

refused r1 2 'serve: no address; give --listen' \
    "no --listen: usage error" -p $nopid
refused r2 2 'serve: --listen 0.0.0.0:0: not a loopback address.*--allow-remote' \
    "0.0.0.0 without --allow-remote: refused, exit 2" -p $nopid \
    --listen 0.0.0.0:0
refused r3 2 'serve: --listen \[::\]:0: not a loopback address' \
    "[::] without --allow-remote: refused" -p $nopid --listen '[::]:0'
refused r4 2 'serve: --listen 10.1.2.3:80: not a loopback address' \
    "a LAN address without --allow-remote: refused" -p $nopid \
    --listen 10.1.2.3:80
refused r5 2 'serve: --listen 127.0.0.1:http: not ADDR:PORT' \
    "a port that is not a number: usage error" -p $nopid \
    --listen 127.0.0.1:http
refused r6 2 'serve: --listen ::1:80: not ADDR:PORT' \
    "IPv6 without brackets: usage error" -p $nopid --listen ::1:80
refused r7 2 'serve: --top 0: not a count' "--top 0: usage error" \
    -p $nopid --listen 127.0.0.1:0 --top 0
refused r8 2 'serve: extra: unexpected argument' "an argument: usage error" \
    -p $nopid --listen 127.0.0.1:0 extra
# A pid that no process has, near the top of pid_max.
gone=$(($(cat /proc/sys/kernel/pid_max) - 1))
while [ -d /proc/$gone ]; do gone=$((gone - 1)); done
refused r9 1 "target $gone: no such process" \
    "a process that does not exist: runtime error" \
    -p $gone --listen 127.0.0.1:0

# --allow-remote: listening on every address is then allowed.
serve_start any -p $nopid --listen 0.0.0.0:0 --allow-remote
ok $(grep -q "^heaptool serve: process $nopid on http://0\.0\.0\.0:[0-9]*/debug/pprof/\$" \
    "$HT_TMP/any.out"; echo $?) "--allow-remote: 0.0.0.0 served, its port printed"
port=${base##*:}
base=http://127.0.0.1:$port
get any0 /debug/pprof/
is 200 "$code" "--allow-remote: reached through loopback too"
kill -INT $any_pid
stopped $any_pid
is 0 "$st" "SIGINT: serve ends with status 0"

serve_start s -p $nopid --timeout 1s
port=${base##*:}
get idx /debug/pprof/
ok $([ "$code" = 200 ] &&
    grep -qi '^content-type: text/html' "$HT_TMP/idx.head" &&
    grep -q 'href="/debug/pprof/heap"' "$HT_TMP/idx.body" &&
    grep -q 'href="/metrics"' "$HT_TMP/idx.body"; echo $?) \
    "/debug/pprof/: an HTML index linking heap and metrics"
get idx2 /debug/pprof
is 200 "$code" "/debug/pprof (no slash): the index too"

for page in /metrics /debug/pprof/heap '/debug/pprof/heap?seconds=1'; do
	get p "$page"
	ok $([ "$code" = 503 ] && [ "$(wc -l <"$HT_TMP/p.body")" -eq 1 ] &&
	    grep -q "^heaptool: target $nopid: .*; " "$HT_TMP/p.body"
	    echo $?) "$page of a process without an agent: 503, one line why"
	[ $? -eq 0 ] || diag "status $code" "$(cat "$HT_TMP/p.body")"
done
ok $(alive $s_pid; echo $?) "serve goes on after the 503s"

get nf /nope
ok $([ "$code" = 404 ] && grep -q '^heaptool: serve: /nope: no such page' \
    "$HT_TMP/nf.body"; echo $?) "an unknown path: 404, and why"
get nf2 /debug/pprof/goroutine
is 404 "$code" "a profile heaptool has not (goroutine): 404"
get post /debug/pprof/heap -X POST -d x=1
ok $([ "$code" = 405 ] &&
    grep -qi '^allow: GET, HEAD' "$HT_TMP/post.head"; echo $?) \
    "POST: 405 with Allow: GET, HEAD"
get put /metrics -X PUT -d x
is 405 "$code" "PUT: 405"
get del /debug/pprof/ -X DELETE
is 405 "$code" "DELETE: 405"
# (curl -I writes the headers where the body would go.)
get head /debug/pprof/ -I
ok $([ "$code" = 200 ] && grep -qi '^content-length: [1-9]' \
    "$HT_TMP/head.head" && ! grep -q '<html' "$HT_TMP/head.body"
    echo $?) "HEAD: 200, the length of the page and no body"
for q in seconds=0 seconds=-1 seconds=301 seconds=1x debug=1; do
	get q "/debug/pprof/heap?$q"
	ok $([ "$code" = 400 ] && [ "$(wc -l <"$HT_TMP/q.body")" -eq 1 ]
	    echo $?) "?$q: 400, one line why"
done

# A client that connects and sends nothing: the others are served while it
# waits, and it is cut after --timeout (1 s here; waited for up to T s).
python3 - "$port" >"$HT_TMP/idle.out" 2>&1 <<'PY' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
print("connected", flush=True)
s.settimeout(60)
try:
    d = s.recv(1)
    print("closed" if d == b"" else "data", flush=True)
except Exception as e:
    print("error", e, flush=True)
PY
idle=$!
others="$others $idle"
wait_line "$HT_TMP/idle.out" '^connected$' || bail "the idle client did not connect"
get busy /debug/pprof/
ok $([ "$code" = 200 ] && grep -q '^connected$' "$HT_TMP/idle.out" &&
    ! grep -q closed "$HT_TMP/idle.out"; echo $?) \
    "a client that sends nothing holds up no other"
wait_line "$HT_TMP/idle.out" '^closed$'
ok $? "the silent client is disconnected after --timeout"
[ $? -eq 0 ] || diag "$(cat "$HT_TMP/idle.out")"

kill -TERM $s_pid
stopped $s_pid
is 0 "$st" "SIGTERM: serve ends with status 0"

# --connections 1: while a client holds the one, the next is closed
# without a reply; once it is cut (--timeout), the next is served.
serve_start c -p $nopid --connections 1 --timeout 2s
port=${base##*:}
python3 - "$port" >"$HT_TMP/idle2.out" 2>&1 <<'PY' &
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
print("connected", flush=True)
s.settimeout(60)
try:
    print("closed" if s.recv(1) == b"" else "data", flush=True)
except Exception as e:
    print("error", e, flush=True)
PY
others="$others $!"
wait_line "$HT_TMP/idle2.out" '^connected$' || bail "the idle client did not connect"
get lim /debug/pprof/
ok $([ "$code" = 000 ] && grep -Eq 'Empty reply|reset' "$HT_TMP/lim.curl" &&
    ! grep -q closed "$HT_TMP/idle2.out"; echo $?) \
    "--connections 1: a second client is closed without a reply"
wait_line "$HT_TMP/idle2.out" '^closed$' || bail "the idle client was not cut"
get lim2 /debug/pprof/
is 200 "$code" "--connections 1: served once the first is cut"
kill -TERM $c_pid
stopped $c_pid
ok $(grep -v '^heaptool: serve: [A-Z]* /' "$HT_TMP/s.err" | grep -q .
    [ $? -ne 0 ]; echo $?) "--verbose: nothing on stderr but the request lines"
ok $(grep -q '^heaptool: serve: POST /debug/pprof/heap: 405, ' "$HT_TMP/s.err"
    echo $?) "--verbose: a line per request, with its status"
done_testing
