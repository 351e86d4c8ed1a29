#!/bin/sh
# Dump files nobody else can pre-empt or redirect (heaptool(1), "Dumps"),
# on t/target/dump-target with the agent preloaded in attach mode:
#   pre-created names  files and symbolic links at the documented names
#                      PREFIX.PID.SEQ.heap: the dumps land under the next
#                      SEQ, what was there is untouched, nothing is planted
#                      where a link points, no temporary file is left;
#   refused prefixes   a symbolic link to the directory, or on the way to
#                      it; a directory others (or its group) may write in
#                      that is not sticky; as root, another user's: start
#                      and run refuse them with the reason (exit 1), start
#                      leaves the session as it was, nothing is written;
#                      a sticky directory anyone may write in is taken;
#   SIGKILL            the target killed while it writes a large dump (2^16
#                      sites, tens of MiB) leaves nothing in the directory;
#   a full disk        (root: a 512 KiB tmpfs) the dump fails, nothing is
#                      left, the process goes on, and once there is room
#                      the next dump lands.
# The agent's own refusals, without the CLI's, are t/sessions-t's and
# t/t0042-api.sh's; both paths of the files, t/file-t's.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/htdumps.sh"

dump_test_setup
D=$HT_TMP/d
mkdir -p "$D"
root=0
[ "$(id -u)" -eq 0 ] && root=1
full_mounted=0
trap '[ $full_mounted -eq 0 ] || umount "$D/full"; rm -rf "$HT_TMP"' EXIT

# ls_a DIR: the names in DIR, one line.
ls_a() {
	ls -A "$1" 2>/dev/null | tr '\n' ' ' | sed 's/ $//'
}

# pre-created names

mkdir "$D/pre"
echo victim >"$D/victim"
fx_start pre
p=$D/pre/p.$pid
echo theirs >"$p.1.heap"
[ $root -eq 1 ] && chown 65534 "$p.1.heap"
owner1=$(stat -c %u "$p.1.heap")
ln -s "$D/victim" "$p.2.heap"
ln -s "$D/planted" "$p.3.heap"
ht pstart start -p "$pid" --rate 1 --dump-prefix "$D/pre/p"
ok $st "start with names 1 to 3 taken"
send "alloc 10 100"
echo "oom $D/pre" >&3
wait_line "$HT_TMP/pre.out" "oom null ENOMEM 4"
ok $? "a failure dump, written before malloc returns"
[ -f "$p.4.heap" ] && [ ! -L "$p.4.heap" ]
ok $? "it lands under the next free SEQ (4)" ||
    diag "in $D/pre: $(ls_a "$D/pre")"
file_ok "SEQ 4" "$p.4.heap"
is theirs "$(cat "$p.1.heap")" "the file at SEQ 1 keeps its content"
is "$owner1" "$(stat -c %u "$p.1.heap")" "and its owner"
is "$D/victim" "$(readlink "$p.2.heap")" "the link at SEQ 2 is still one"
is victim "$(cat "$D/victim")" "and what it points to is untouched"
[ -L "$p.3.heap" ] && [ ! -e "$D/planted" ]
ok $? "the dangling link at SEQ 3 is still one, and nothing was planted"
fx_quit
is 0 "$fxst" "the fixture exits 0"
is "p.$pid.1.heap p.$pid.2.heap p.$pid.3.heap p.$pid.4.heap p.$pid.5.heap" \
    "$(ls_a "$D/pre")" "the exit dump takes SEQ 5; no temporary file is left"

# refused prefixes

fx_start ref
ht r0 start -p "$pid" --rate 4096
ht st0 status -p "$pid" --json
e0=$(json_get "$HT_TMP/st0.out" 'j["session"]["epoch"]')
mkdir "$D/real" "$D/ww" "$D/gw" "$D/sticky"
chmod 0777 "$D/ww"
chmod 0775 "$D/gw"
chmod 1777 "$D/sticky"
ln -s "$D/real" "$D/link"
ln -s "$D" "$D/up"

# refuse NAME PREFIX WHY GREP: start with PREFIX is refused, exit 1,
# with a message that matches GREP.
refuse() {
	ht "$1" start -p "$pid" --restart --dump-prefix "$2"
	is 1 "$st" "$3: start refused, exit 1"
	grep -q -- "$4" "$HT_TMP/$1.err"
	ok $? "$3: the message says why" ||
	    diag "stderr: $(cat "$HT_TMP/$1.err")"
}
refuse rlink "$D/link/app" "a symbolic link to the directory" \
    "$D/link is a symbolic link"
refuse rup "$D/up/real/app" "a symbolic link on the way" \
    "$D/up is a symbolic link"
refuse rww "$D/ww/app" "a directory anyone may write in, not sticky" \
    "writable by other users and not sticky (mode 777)"
refuse rgw "$D/gw/app" "a directory its group may write in, not sticky" \
    "writable by other users and not sticky (mode 775)"
if [ $root -eq 1 ]; then
	mkdir "$D/theirs"
	chown 65534 "$D/theirs"
	refuse rown "$D/theirs/app" "another user's directory" \
	    "belongs to uid 65534, neither the target's (uid 0) nor root"
else
	skip "not root: no directory of another user to make"
	skip "not root: no directory of another user to make"
fi
[ "$(wc -l <"$HT_TMP/rww.err")" -eq 1 ] &&
    grep -q '^heaptool: target [0-9]*: --dump-prefix .*: .*; ' "$HT_TMP/rww.err"
ok $? "one line: heaptool: target PID: --dump-prefix P: why; what to do" ||
    diag "stderr: $(cat "$HT_TMP/rww.err")"
ht st1 status -p "$pid" --json
is "$e0" "$(json_get "$HT_TMP/st1.out" 'j["session"]["epoch"]')" \
    "the refused starts left the session as it was"
is "" "$(ls_a "$D/real")$(ls_a "$D/ww")$(ls_a "$D/gw")" \
    "nothing was written in the refused directories"
ht rsticky start -p "$pid" --restart --rate 1 --dump-prefix "$D/sticky/s"
ok $st "a sticky directory anyone may write in (mode 1777) is taken"
echo "oom $D/sticky" >&3
wait_line "$HT_TMP/ref.out" "oom null ENOMEM 1"
ok $? "and the dump lands there"
file_ok sticky "$D/sticky/s.$pid.1.heap"
fx_quit
is 0 "$fxst" "the fixture exits 0"

timeout $T "$HEAPTOOL" run --dump-prefix "$D/link/run" -o "$D/run.heap" \
    -- touch "$D/ran" >"$HT_TMP/run.out" 2>"$HT_TMP/run.err"
is 1 $? "run --dump-prefix through a symbolic link: exit 1"
grep -q "$D/link is a symbolic link" "$HT_TMP/run.err"
ok $? "with the reason" || diag "stderr: $(cat "$HT_TMP/run.err")"
[ ! -e "$D/ran" ] && [ ! -e "$D/run.heap" ]
ok $? "and the command did not run"
timeout $T "$HEAPTOOL" run --dump-prefix "$D/ww/run" -o "$D/run.heap" \
    -- touch "$D/ran" >"$HT_TMP/run.out" 2>"$HT_TMP/run.err"
is 1 $? "run --dump-prefix in a directory anyone may write in: exit 1"

# SIGKILL while the dump is written: the fixture is stopped while the
# dump's file is open in the directory (so surely mid-dump), then killed.

mkdir "$D/kill"
fx_start kill
ht kstart start -p "$pid" --rate 1 --dump-prefix "$D/kill/k"
ok $st "start --rate 1"
send "sites 16"
# The watcher says "watching" once it polls (python3 may take a while to
# start), and only then is the dump asked for.
cat >"$HT_TMP/killer.py" <<'EOF'
import os, signal, sys, time
pid, d, limit = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])

def writing():
    try:
        fds = os.listdir('/proc/%d/fd' % pid)
    except OSError:
        return None
    for n in fds:
        try:
            l = os.readlink('/proc/%d/fd/%s' % (pid, n))
        except OSError:
            continue
        # The directory itself is held open too: only what is in it.
        if l.startswith(d + '/'):
            return l
    return None

print('watching', flush=True)
end = time.time() + limit
while time.time() < end:
    if writing() is not None:
        os.kill(pid, signal.SIGSTOP)
        l = writing()
        if l is None:
            os.kill(pid, signal.SIGCONT)
            continue
        os.kill(pid, signal.SIGKILL)
        print('killed while it wrote %s' % l)
        sys.exit(0)
print('the dump was never seen open')
sys.exit(1)
EOF
python3 "$HT_TMP/killer.py" "$pid" "$D/kill" "$T" >"$HT_TMP/killer.out" 2>&1 &
killer=$!
wait_line "$HT_TMP/killer.out" watching || bail "the watcher did not start"
echo "oom" >&3
wait $killer
ok $? "the target was killed while it wrote the dump"
diag "$(sed 1d "$HT_TMP/killer.out")"
exec 3>&-
wait $fxpid
is 137 $? "killed by SIGKILL"
is "" "$(ls_a "$D/kill")" "nothing is left in the directory"

# a full disk

if [ $root -eq 0 ]; then
	skip "not root: no small file system to fill"
elif ! mkdir "$D/full" ||
    ! mount -t tmpfs -o size=512k,mode=0755 heaptool-test "$D/full" \
    2>"$HT_TMP/mount.err"; then
	skip "mount -t tmpfs: $(cat "$HT_TMP/mount.err")"
else
	full_mounted=1
	fx_start full
	ht fstart start -p "$pid" --rate 1 --dump-prefix "$D/full/f"
	ok $st "start on a 512 KiB file system"
	send "sites 14"
	echo "oom $D/full" >&3
	wait_line "$HT_TMP/full.out" "oom null ENOMEM 0"
	ok $? "the dump (some MiB) fails: malloc still returns NULL, no file"
	is "" "$(ls_a "$D/full")" "nothing half-written is left"
	is 0 "$(df -k --output=used "$D/full" | tail -n 1 | tr -d ' ')" \
	    "and the space is free again"
	send "alloc 1 100"
	ok 0 "the process goes on"
	ht fst status -p "$pid" --json
	is running "$(json_get "$HT_TMP/fst.out" 'j["session"]["state"]')" \
	    "its session runs"
	mount -o remount,size=64m "$D/full"
	sleep 1.1 # failure dumps: one a second at most
	echo "oom $D/full" >&3
	wait_line "$HT_TMP/full.out" "oom null ENOMEM 1"
	ok $? "with room again, the next dump lands"
	f=$(ls "$D"/full/f.$pid.*.heap 2>/dev/null | head -n 1)
	file_ok "after the full disk" "$f"
	fx_quit
	is 0 "$fxst" "the fixture exits 0"
	umount "$D/full" && full_mounted=0
fi

done_testing
