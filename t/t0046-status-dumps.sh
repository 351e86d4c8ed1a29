#!/bin/sh
# heaptool status lists the dumps the agent wrote and those it failed to
# write (heaptool(1), status), on t/target/dump-target with the agent
# preloaded in attach mode (no ptrace):
#   written            a failure dump lands: status counts it and names
#                      its file, in text and JSON; nothing failed;
#   directory gone     the prefix's directory removed, the next dump
#                      fails: status counts it, names the file it was to
#                      be, says why (ENOENT) and when; the written count
#                      and file stay;
#   a full disk        (root: a 512 KiB tmpfs) ENOSPC, the failed count
#                      goes to 2, the last failure is that one.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/htdumps.sh"

dump_test_setup
D=$HT_TMP/d
mkdir -p "$D/gone"
full_mounted=0
trap '[ $full_mounted -eq 0 ] || umount "$D/full"; rm -rf "$HT_TMP"' EXIT

fx_start st
ht start start -p "$pid" --rate 1 --dump-prefix "$D/gone/p"
ok $st "start with a dump prefix"
ht st0 status -p "$pid" --json
is "0 None 0 None" "$(json_get "$HT_TMP/st0.out" \
    '"%d %s %d %s" % (j["dumps"]["written"], j["dumps"]["last_written"], j["dumps"]["failed"], j["dumps"]["last_failure"])')" \
    "before any dump: none written, none failed"
ht st0t status -p "$pid"
! grep -q '^  dumps' "$HT_TMP/st0t.out"
ok $? "and the text says nothing of dumps"

# written
send "alloc 10 100"
echo "oom $D/gone" >&3
wait_line "$HT_TMP/st.out" "oom null ENOMEM 1" ||
    bail "the failure dump was not written"
f=$(ls "$D"/gone/p.$pid.*.heap)
ht st1 status -p "$pid" --json
is "1 $f 0 None" "$(json_get "$HT_TMP/st1.out" \
    '"%d %s %d %s" % (j["dumps"]["written"], j["dumps"]["last_written"]["path"], j["dumps"]["failed"], j["dumps"]["last_failure"])')" \
    "one written, named, none failed (JSON)"
ht st1t status -p "$pid"
grep -qx "  dumps written   1, the last $f at [0-9-]* [0-9:]*" \
    "$HT_TMP/st1t.out" && ! grep -q 'FAILED' "$HT_TMP/st1t.out"
ok $? "and in text: how many, the file, when" ||
    diag "$(cat "$HT_TMP/st1t.out")"

# directory gone: the agent keeps it open, but nothing can be made in a
# removed directory.
rm -rf "$D/gone"
sleep 1.1 # failure dumps: one a second at most
before=$(date +%s)
echo "oom" >&3
wait_line "$HT_TMP/st.out" "oom null ENOMEM -1" ||
    bail "no answer to the second oom"
after=$(date +%s)
ht st2 status -p "$pid" --json
ok $st "status after the failed dump"
is "1 $f 1 2 No such file or directory" "$(json_get "$HT_TMP/st2.out" \
    '"%d %s %d %d %s" % (j["dumps"]["written"], j["dumps"]["last_written"]["path"], j["dumps"]["failed"], j["dumps"]["last_failure"]["errno"], j["dumps"]["last_failure"]["error"])')" \
    "directory gone: one failed, ENOENT; the written one still there"
case $(json_get "$HT_TMP/st2.out" 'j["dumps"]["last_failure"]["path"]') in
"$D/gone/p.$pid."*.heap) ok 0 "the failure names the file it was to be" ;;
*) ok 1 "the failure names the file it was to be" ;;
esac
t=$(json_get "$HT_TMP/st2.out" 'j["dumps"]["last_failure"]["time_ns"] // 10**9')
[ "$t" -ge "$before" ] && [ "$t" -le "$after" ]
ok $? "and when it failed ($t, between $before and $after)"
ht st2t status -p "$pid"
grep -q "^  dumps FAILED    1, the last $D/gone/p\.$pid\.[0-9]*\.heap: No such file or directory, at " "$HT_TMP/st2t.out"
ok $? "text: the failed dumps next to the written ones" ||
    diag "$(cat "$HT_TMP/st2t.out")"
send "alloc 1 100"
ok 0 "the process goes on"

# a full disk
if [ "$(id -u)" -ne 0 ]; then
	skip "not root: no small file system to fill"
elif ! mkdir "$D/full" ||
    ! mount -t tmpfs -o size=512k,mode=0755 heaptool-test "$D/full" \
    2>"$HT_TMP/mount.err"; then
	skip "mount -t tmpfs: $(cat "$HT_TMP/mount.err")"
else
	full_mounted=1
	ht fstart start -p "$pid" --restart --rate 1 --dump-prefix "$D/full/f"
	ok $st "a new session, dumps to a 512 KiB file system"
	send "sites 14"
	sleep 1.1
	echo "oom $D/full" >&3
	wait_line "$HT_TMP/st.out" "oom null ENOMEM 0" ||
	    bail "no answer to the oom on the full disk"
	ht st3 status -p "$pid" --json
	is "1 2 28" "$(json_get "$HT_TMP/st3.out" \
	    '"%d %d %d" % (j["dumps"]["written"], j["dumps"]["failed"], j["dumps"]["last_failure"]["errno"])')" \
	    "full disk: two failed, the last ENOSPC"
	case $(json_get "$HT_TMP/st3.out" 'j["dumps"]["last_failure"]["path"]') in
	"$D/full/f.$pid."*.heap) ok 0 "named in the full directory" ;;
	*) ok 1 "named in the full directory" ;;
	esac
fi

fx_quit
is 0 "$fxst" "the fixture exits 0"
[ $full_mounted -eq 0 ] || { umount "$D/full" && full_mounted=0; }

done_testing
