#!/bin/sh
# Dumps the agent writes by itself (heaptool(1) "Dumps"), each trigger on
# t/target/dump-target, which allocates exactly what it is told on its
# stdin; the agent is preloaded in attach mode (no ptrace needed) and the
# sessions are started with heaptool start -p, or the fixture runs under
# heaptool run.  For every trigger: the file is PREFIX.PID.SEQ.heap, SEQ
# counts on per process, mode 0600, no temporary file is left, heaptool
# report reads it, and its header's flags name the trigger:
#   --dump-every      after each SIZE allocated (rate 1: exact);
#   --dump-interval   every DUR while the session runs, none after stop;
#   allocation failure: malloc(1 << 62) still returns NULL with ENOMEM,
#                     and the dump is already there when it does;
#   --threshold       the exit dump folds the small sites into one record
#                     that counts them; totals equal an unfolded snapshot;
#   exit              flags 0x1;
#   --dump-at-rss     when RSS reaches SIZE, then again 10% further;
#   C++               operator new (plain, [], aligned) still throws
#                     std::bad_alloc and the dump precedes the catch;
#                     nothrow new returns NULL; with a new_handler, the
#                     handler runs exactly once (and no failure dump);
#   heaptool run      the same options, a prefix ending in '/';
#   the CLI           relative prefixes made absolute, refused prefixes and
#                     options, with the session left as it was.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/htdumps.sh"

dump_test_setup
CXX=$TARGETS/dump-cxx
[ -x "$CXX" ] || bail "fixtures not built (make check)"
D=$HT_TMP/d
mkdir -p "$D"

# prof FILE: "flags=F sites=N folded=K framesless=Z" from the file itself.
prof() {
	python3 - "$1" <<'EOF'
import struct, sys
b = open(sys.argv[1], 'rb').read()
assert b[:8] == b'HEAPPROF'
off, flags, sites, folded, nofr = 16, None, 0, 0, 0
while off + 8 <= len(b):
    t, n = struct.unpack_from('<II', b, off)
    p = off + 8
    if t == 0:
        break
    if t == 1:
        flags = struct.unpack_from('<I', b, p + 28)[0]
    if t == 4:
        sites += 1
        nf = struct.unpack_from('<I', b, p + 80)[0]
        k = struct.unpack_from('<I', b, p + 84 + 8 * nf)[0]
        folded += k
        nofr += nf == 0
    off = p + n
print('flags=%d sites=%d folded=%d frameless=%d' % (flags, sites, folded, nofr))
EOF
}

# has_flag FILE BIT
has_flag() {
	_fl=$(prof "$1" | sed 's/^flags=\([0-9]*\).*/\1/')
	[ -n "$_fl" ] && [ $((_fl & $2)) -ne 0 ]
}

# every-bytes, interval, failure, threshold and exit: one process.

fx_start a
apid=$pid
ht start start -p "$pid" --rate 1 --dump-prefix "$D/every" --dump-every 1M
ok $st "start --dump-prefix --dump-every 1M"
grep -qF "$D/every.$pid.SEQ.heap" "$HT_TMP/start.out"
ok $? "start names the files"
is 0 "$(count "$D/every.*")" "no dump before the first MiB"
send "alloc 256 4096"
wait_files "$D/every.$pid.*.heap" 1
ok $? "every: a dump after 1 MiB allocated"
f=$D/every.$pid.1.heap
[ -f "$f" ]
ok $? "every: named PREFIX.PID.1.heap"
file_ok every "$f"
v=$(json_get "$HT_TMP/rep.out" 'j["totals"]["alloc_bytes"]')
[ -n "$v" ] && [ "$v" -ge 1048576 ]
ok $? "every: the dump holds the MiB ($v bytes allocated)"
has_flag "$f" 8
ok $? "every: flags say dump-every (0x8)"
send "alloc 256 4096"
wait_files "$D/every.$pid.*.heap" 2
ok $? "every: another dump after the next MiB"
[ -f "$D/every.$pid.2.heap" ]
ok $? "every: SEQ 2"
is 0 "$(count "$D/*.tmp.*")" "every: no temporary file left"

ht start2 start -p "$pid" --restart --dump-prefix "$D/int" \
    --dump-interval 200ms
ok $st "start --restart --dump-interval 200ms"
wait_files "$D/int.$pid.*.heap" 2
ok $? "interval: dumps come every 200 ms"
[ -f "$D/int.$pid.3.heap" ] && [ -f "$D/int.$pid.4.heap" ]
ok $? "interval: SEQ goes on across sessions (3, 4)"
has_flag "$D/int.$pid.3.heap" 4
ok $? "interval: flags say dump-interval (0x4)"
file_ok interval "$D/int.$pid.3.heap"
ht stop stop -p "$pid"
ok $st "stop"
n1=$(count "$D/int.*")
sleep 1
n2=$(count "$D/int.*")
is "$n1" "$n2" "interval: no dump after stop"

mkdir -p "$D/oom"
ht start3 start -p "$pid" --rate 1 --dump-prefix "$D/oom/o"
ok $st "start with a prefix only (failure and exit dumps)"
echo "oom $D/oom" >&3
wait_line "$HT_TMP/a.out" "oom null ENOMEM 1"
ok $? "oom: malloc(1 << 62) is NULL, errno ENOMEM, the dump already there"
f=$(ls "$D"/oom/o.$pid.*.heap 2>/dev/null | head -n 1)
[ -n "$f" ] && has_flag "$f" 2
ok $? "oom: flags say allocation failure (0x2)"
file_ok oom "$f"

mkdir -p "$D/thr"
ht start4 start -p "$pid" --restart --rate 1 --dump-prefix "$D/thr/t" \
    --threshold 64K
ok $st "start --threshold 64K"
send "other 10 100"
send "alloc 100 4096"
ht full dump -p "$pid" -o "$D/full.heap"
ok $st "an unfolded snapshot (heaptool dump)"
fx_quit
is 0 "$fxst" "the fixture exits 0"
f=$(ls "$D"/thr/t.$apid.*.heap 2>/dev/null | head -n 1)
[ -n "$f" ] && has_flag "$f" 1
ok $? "exit: a dump at exit, flags 0x1"
file_ok exit "$f"
cp "$HT_TMP/rep.out" "$HT_TMP/folded.json"
ht rep report --json "$D/full.heap"
cp "$HT_TMP/rep.out" "$HT_TMP/full.json"
pf=$(prof "$f")
pu=$(prof "$D/full.heap")
diag "folded: $pf; unfolded: $pu"
nu=$(echo "$pu" | sed 's/.*sites=\([0-9]*\).*/\1/')
case $pf in
*" sites=2 folded=$((nu - 1)) frameless=1") ok 0 "threshold: the small \
sites fold into one record that counts them" ;;
*) ok 1 "threshold: the small sites fold into one record that counts them"
   diag "unfolded $nu sites, folded file: $pf" ;;
esac
for k in inuse_bytes alloc_bytes alloc_objects samples; do
	is "$(json_get "$HT_TMP/full.json" "j['totals']['$k']")" \
	    "$(json_get "$HT_TMP/folded.json" "j['totals']['$k']")" \
	    "threshold: totals.$k unchanged by folding"
done

# at-rss: a process that grows.

fx_start r
rss0=$(awk '{ print $2 * 4096 }' "/proc/$pid/statm")
x=$((rss0 + 32 * 1048576))
ht start5 start -p "$pid" --dump-prefix "$D/rss" --dump-at-rss "$x"
ok $st "start --dump-at-rss RSS+32MiB"
sleep 0.5
is 0 "$(count "$D/rss.*")" "rss: no dump below the threshold"
send "rss 41943040"
wait_files "$D/rss.$pid.*.heap" 1
ok $? "rss: a dump once RSS passed the threshold"
f=$D/rss.$pid.1.heap
has_flag "$f" 16
ok $? "rss: flags say dump-at-rss (0x10)"
file_ok rss "$f"
rss1=$(awk '{ print $2 * 4096 }' "/proc/$pid/statm")
send "rss $((rss1 / 4 + 1048576))"
wait_files "$D/rss.$pid.*.heap" 2
ok $? "rss: another dump 10% further"

# the CLI's checks, on the same process.

ht st0 status -p "$pid" --json
e0=$(json_get "$HT_TMP/st0.out" 'j["session"]["epoch"]')
mkdir -p "$HT_TMP/rel/sub"
(cd "$HT_TMP/rel" && timeout $T "$HEAPTOOL" start -p "$pid" --restart \
    --dump-prefix sub/app >"$HT_TMP/rel.out" 2>"$HT_TMP/rel.err")
ok $? "a relative prefix"
grep -qF "$HT_TMP/rel/sub/app.$pid.SEQ.heap" "$HT_TMP/rel.out"
ok $? "is made absolute against heaptool's directory"
ht bad start -p "$pid" --restart --dump-prefix "$D/no/such/dir/app"
is 1 "$st" "a prefix the target cannot write to: exit 1"
grep -q "target" "$HT_TMP/bad.err"
ok $? "and the message speaks of the target's view"
ht st1 status -p "$pid" --json
is "$((e0 + 1))" "$(json_get "$HT_TMP/st1.out" 'j["session"]["epoch"]')" \
    "the refused start left the session as it was"
ht u1 start -p "$pid" --restart --dump-every 1M
is 2 "$st" "--dump-every without --dump-prefix: usage error"
ht u2 start -p "$pid" --restart --dump-prefix "$D/x" --dump-interval 0
is 2 "$st" "--dump-interval 0: usage error"
ht u3 start -p "$pid" --restart --dump-prefix ""
is 2 "$st" "an empty prefix: usage error"
fx_quit
is 0 "$fxst" "the fixture exits 0"

# heaptool run.

mkdir -p "$D/run"
mkfifo "$HT_TMP/run.in"
timeout 300 "$HEAPTOOL" run --rate 1 --dump-prefix "$D/run/" \
    --dump-every 1M -o "$D/run.heap" -- "$FX" <"$HT_TMP/run.in" \
    >"$HT_TMP/run.out" 2>"$HT_TMP/run.err" &
runpid=$!
exec 3>"$HT_TMP/run.in"
cur=run
_i=0
until grep -q '^ready ' "$HT_TMP/run.out" 2>/dev/null; do
	_i=$((_i + 1))
	[ $_i -gt $((T * 20)) ] && bail "dump-target did not start under run"
	sleep 0.05
done
send "alloc 300 4096"
wait_files "$D/run/heaptool.*.heap" 1
ok $? "run --dump-prefix DIR/ --dump-every: heaptool.PID.SEQ.heap"
echo quit >&3
exec 3>&-
wait $runpid
is 0 "$?" "run: exit 0"
n=$(count "$D/run/heaptool.*.heap")
[ "$n" -ge 2 ]
ok $? "run: the every-bytes dump and the exit dump ($n files)"
[ -f "$D/run.heap" ]
ok $? "run: the -o profile too"

# C++.

for w in new new-array new-align new-nothrow; do
	mkdir -p "$D/$w"
	timeout $T "$HEAPTOOL" run --rate 512K --dump-prefix "$D/$w/c" \
	    -o "$D/$w.heap" -- "$CXX" "$w" "$D/$w" >"$HT_TMP/cxx.out" \
	    2>"$HT_TMP/cxx.err"
	s=$?
	case $w in
	new-nothrow) want="null 1" ;;
	*) want="caught bad_alloc 1" ;;
	esac
	is "$want" "$(cat "$HT_TMP/cxx.out")" \
	    "$w: the failure reaches the program as before, after the dump"
	is 0 "$s" "$w: exit 0"
	f=$(ls "$D/$w"/c.*.1.heap 2>/dev/null | head -n 1)
	[ -n "$f" ] && has_flag "$f" 2
	ok $? "$w: the first dump is the failure's (0x2)"
done
mkdir -p "$D/nh"
timeout $T "$HEAPTOOL" run --dump-prefix "$D/nh/c" -o "$D/nh.heap" -- \
    "$CXX" new-handler "$D/nh" >"$HT_TMP/cxx.out" 2>"$HT_TMP/cxx.err"
is "caught bad_alloc 0
handler 1" "$(cat "$HT_TMP/cxx.out")" \
    "new with a new_handler: it runs once, bad_alloc as before, no dump"

done_testing
