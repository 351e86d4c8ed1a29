#!/bin/sh
# heaptool attach, report --detail, dump and detach on processes that see
# another file system than heaptool does:
#   (a) a process chrooted in a minimal root built here (its program and
#       the libraries it maps, copied; no /proc inside), in our mount
#       namespace: once as root, and once as nobody, profiled by nobody,
#       who may not open /proc/PID/map_files and must find the files at
#       their paths inside the root;
#   (b) a process chrooted inside a mount namespace of its own: a tmpfs
#       made its root there, the library directories bind-mounted into it,
#       /proc mounted inside;
#   (c) a process in a mount namespace with a private /tmp (a tmpfs over
#       it, as systemd's PrivateTmp), and an agent file under our /tmp,
#       which it cannot see: attach stages a copy in its /tmp, and dumps
#       of --dump-prefix go to its /tmp.
# The paths /proc/PID/maps shows for (a) and (b) are those of our view
# (the root's directory in front), not the process's: each must be found
# inside its root, or through map_files.  Each time: rate 1 and exact
# counts, the site's frame symbolized with its file:line, the profile
# saved with dump, detach, and the process's output what it is without
# heaptool.  Needs root (chroot, unshare, mount); skipped otherwise.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/htcheck.sh"
. "$(dirname "$0")/lib/ptrace.sh"
. "$(dirname "$0")/lib/htrun.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$HT_BUILDDIR/libheaptool-agent.so" ] ||
    bail "$HT_BUILDDIR/libheaptool-agent.so not built"
[ -x "$TARGETS/attach-pipe" ] ||
    bail "$TARGETS/attach-pipe not built (make check builds it)"
[ "$(uname -m)" = x86_64 ] || skip_all "attach supports x86-64 only"
[ "$(id -u)" -eq 0 ] || skip_all "needs root (chroot, unshare -m, mount)"
for c in chroot unshare mount; do
	command -v $c >/dev/null 2>&1 || skip_all "$c not found"
done
# env -i clears PATH: chroot (often in /usr/sbin) is run by its path.
CHROOT=$(command -v chroot)
unshare -m --propagation private true 2>/dev/null ||
    skip_all "unshare -m is not permitted here"

require_ptrace

unset HEAPTOOL_SEED LD_PRELOAD HEAPTOOL_AGENT
# shellcheck disable=SC3045
ulimit -c 0 2>/dev/null
T=60
SRC=$HT_SRCDIR/t/target/attach-pipe.c

# ht NAME ARGS...: heaptool ARGS with a timeout, as $as when set (e.g.
# setpriv ...); stdout and stderr in $HT_TMP/NAME.out and .err.
as=
wait_line() {
	_i=0
	while ! grep -qx "$2" "$1" 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -gt $((T * 20)) ] && return 1
		sleep 0.05
	done
	return 0
}

pids=
cleanup() {
	for p in $pids; do
		kill -9 "$p" 2>/dev/null
	done
	[ -n "$agentdir" ] && rm -rf "$agentdir"
	rm -rf "$HT_TMP"
}
agentdir=
trap cleanup EXIT

# start NAME CMD...: start CMD with its standard input on the fifo
# $HT_TMP/NAME.in, held open on fd 6, and wait for its "ready".  Sets $pid
# (CMD must exec the fixture in the end: the pid is the fixture's).
start() {
	_n=$1
	shift
	mkfifo "$HT_TMP/$_n.in"
	"$@" <"$HT_TMP/$_n.in" >"$HT_TMP/$_n.log" 2>&1 &
	pid=$!
	pids="$pids $pid"
	exec 6>"$HT_TMP/$_n.in"
	wait_line "$HT_TMP/$_n.log" ready
}

# profile NAME DESC: attach to $pid (started by start NAME), start at rate
# 1 (with $dumpopt), keep 3 blocks, report, dump to $outdir, detach, let it
# go; every step checked.  $hook, if set, runs before the process quits.
outdir=$HT_TMP
dumpopt=
hook=
profile() {
	pn=$1
	label=$2
	ht_ok "$pn-a" "$label: attach" attach "$pid"
	# shellcheck disable=SC2086
	ht_ok "$pn-s" "$label: start --rate 1" start -p "$pid" --rate 1 \
	    $dumpopt
	echo "keep 3" >&6
	wait_line "$HT_TMP/$pn.log" "kept 3"
	ok $? "$label: the process keeps 3 blocks"
	ht_ok "$pn-r" "$label: report --detail" report -p "$pid" --json \
	    --detail
	want wellformed "$HT_TMP/$pn-r.out"
	want exact "$HT_TMP/$pn-r.out"
	want field "$HT_TMP/$pn-r.out" totals.inuse_bytes 3000
	want field "$HT_TMP/$pn-r.out" totals.inuse_objects 3
	want site "$HT_TMP/$pn-r.out" --src "$SRC" --func keep_blocks \
	    --module attach-pipe --chain keep_blocks,main \
	    inuse_bytes=3000 inuse_objects=3 alloc_objects=3
	ht_ok "$pn-d" "$label: dump -o" dump -p "$pid" -o "$outdir/$pn.heap"
	ht_ok "$pn-f" "$label: the dump reads" report --json "$outdir/$pn.heap"
	want exact "$HT_TMP/$pn-f.out"
	want field "$HT_TMP/$pn-f.out" totals.inuse_bytes 3000
	want field "$HT_TMP/$pn-f.out" totals.alloc_objects 3
	checks
	ht_ok "$pn-x" "$label: detach" detach -p "$pid"
	echo hello >&6
	wait_line "$HT_TMP/$pn.log" "got: hello"
	ok $? "$label: the process reads on after detach"
	[ -z "$hook" ] || $hook
	echo quit >&6
	exec 6>&-
	wait "$pid"
	ok $? "$label: the process exits normally"
	printf 'ready\nkept 3\ngot: hello\n' | cmp -s - "$HT_TMP/$pn.log"
	ok $? "$label: its output is what it is without heaptool" ||
	    diag "$(head -c 1000 "$HT_TMP/$pn.log")"
}

# The files attach-pipe maps (its program, the loader, the libc...) and
# the loader its program names (PT_INTERP), to build roots from.
start probe "$TARGETS/attach-pipe" || bail "attach-pipe did not start"
prog=$(readlink -f "$TARGETS/attach-pipe")
libs=$(awk '$6 ~ /^\// { print $6 }' "/proc/$pid/maps" | sort -u |
    grep -vx "$prog")
exec 6>&-
wait "$pid"
interp=$(python3 -c 'import struct, sys
d = open(sys.argv[1], "rb").read()
off, = struct.unpack_from("<Q", d, 32)
ent, num = struct.unpack_from("<HH", d, 54)
for i in range(num):
    t, _, o, _, _, sz = struct.unpack_from("<IIQQQQ", d, off + i * ent)
    if t == 3:
        print(d[o:o + sz].rstrip(b"\0").decode())' "$prog")
[ -n "$libs" ] && [ -n "$interp" ] ||
    bail "cannot tell what attach-pipe maps (libs: $libs, loader: $interp)"
libdirs=$(for l in $libs; do dirname "$l"; done | sort -u)
ldpath=$(echo $libdirs | tr ' ' :)

# (a) a minimal root in our mount namespace: copies, no /proc
R=$HT_TMP/jail
mkdir -p "$R/bin" "$R/tmp" "$R$(dirname "$interp")"
chmod 1777 "$R/tmp"
cp "$prog" "$R/bin/attach-pipe"
for l in $libs; do
	mkdir -p "$R$(dirname "$l")"
	cp -L "$l" "$R$l"
done
[ -e "$R$interp" ] || cp -L "$interp" "$R$interp"

start jail env -i LD_LIBRARY_PATH="$ldpath" "$CHROOT" "$R" /bin/attach-pipe ||
    bail "attach-pipe in a chroot did not start"
is "$R" "$(readlink "/proc/$pid/root")" "(a) a process chrooted in $R"
grep -q " $R/bin/attach-pipe\$" "/proc/$pid/maps"
ok $? "(a) its maps show the program with the root's path in front"
profile jail "(a) chroot"
staged=$(ls "$R"/tmp/heaptool-agent-0-*.so 2>/dev/null | head -n 1)
[ -n "$staged" ] && cmp -s "$staged" "$HT_BUILDDIR/libheaptool-agent.so"
ok $? "(a) the agent was staged in the root's /tmp"

# (a) again, the process and heaptool as nobody: no map_files for them.
nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
if ! command -v setpriv >/dev/null 2>&1; then
	skip "(a) as nobody: setpriv not found"
elif ! $nobody test -x "$HEAPTOOL"; then
	skip "(a) as nobody: nobody cannot run $HEAPTOOL"
else
	nstate=$(mktemp -d "${TMPDIR:-/tmp}/heaptool-nobody.XXXXXX")
	chown 65534:65534 "$nstate"
	start jailnobody env -i LD_LIBRARY_PATH="$ldpath" \
	    "$CHROOT" --userspec=65534:65534 "$R" /bin/attach-pipe ||
	    bail "attach-pipe as nobody in a chroot did not start"
	e=$(ls "/proc/$pid/map_files" | head -n 1)
	[ -n "$e" ] && ! $nobody head -c 1 "/proc/$pid/map_files/$e" \
	    >/dev/null 2>&1
	ok $? "(a) nobody may not open the process's map_files"
	as="env XDG_STATE_HOME=$nstate $nobody"
	outdir=$nstate
	profile jailnobody "(a) chroot, as nobody"
	as=
	outdir=$HT_TMP
	rm -rf "$nstate"
fi

# (b) chrooted inside a mount namespace of its own: the loader copied,
# the libraries' directories bind-mounted (after the copy: a copy into a
# bind mount would write into our own directory).
N=$HT_TMP/nsroot
mkdir -p "$N"
script='set -e
root=$1 prog=$2 interp=$3 ldpath=$4 chroot=$5
shift 5
mount -t tmpfs heaptool-test "$root"
mkdir -p "$root/bin" "$root/tmp" "$root/proc" "$root${interp%/*}"
chmod 1777 "$root/tmp"
cp "$prog" "$root/bin/attach-pipe"
cp -L "$interp" "$root$interp"
for d in "$@"; do
	mkdir -p "$root$d"
	mount --bind "$d" "$root$d"
done
mount -t proc proc "$root/proc"
exec env -i LD_LIBRARY_PATH="$ldpath" "$chroot" "$root" /bin/attach-pipe'
# shellcheck disable=SC2086
start nsjail unshare -m --propagation private sh -c "$script" sh \
    "$N" "$prog" "$interp" "$ldpath" "$CHROOT" $libdirs ||
    bail "attach-pipe chrooted in a mount namespace did not start"
[ "$(stat -L -c %i "/proc/$pid/ns/mnt")" != \
    "$(stat -L -c %i /proc/self/ns/mnt)" ] &&
    [ "$(readlink "/proc/$pid/root")" = "$N" ] &&
    [ ! -e "$N/bin/attach-pipe" ]
ok $? "(b) a process in its own mount namespace, chrooted in a tmpfs we \
do not see"
profile nsjail "(b) chroot in a mount namespace"

# (c) a private /tmp, and an agent under our /tmp
case $(readlink -f "$TARGETS")/ in
/tmp/*)
	skip "(c) private /tmp: the fixtures are built under /tmp, which the \
private /tmp would hide" ;;
*)
	agentdir=$(mktemp -d /tmp/heaptool-agent-test.XXXXXX)
	cp "$HT_BUILDDIR/libheaptool-agent.so" "$agentdir/"
	start privtmp unshare -m --propagation private sh -c \
	    'mount -t tmpfs heaptool-test /tmp && mkdir -m 0700 /tmp/dumps &&
	    exec "$1"' sh "$prog" ||
	    bail "attach-pipe with a private /tmp did not start"
	[ ! -e "/proc/$pid/root$agentdir" ] &&
	    [ -d "/proc/$pid/root/tmp/dumps" ]
	ok $? "(c) a process with a private /tmp, which lacks $agentdir"
	# One dump, when the allocated bytes cross 2500: after the third
	# block.  It is in the process's /tmp, gone with it: copied while
	# the process lives, with the agent's path from its maps.
	dumpopt="--dump-prefix /tmp/dumps/d --dump-every 2500"
	HEAPTOOL_AGENT=$agentdir/libheaptool-agent.so
	export HEAPTOOL_AGENT
	keep_dump() {
		_i=0
		_f=/proc/$pid/root/tmp/dumps/d.$pid.1.heap
		while [ ! -e "$_f" ] && [ $_i -lt $((T * 20)) ]; do
			_i=$((_i + 1))
			sleep 0.05
		done
		cp "$_f" "$HT_TMP/privtmp-dump.heap"
		grep -o '/tmp/heaptool-agent-0-[0-9a-f]*\.so' \
		    "/proc/$pid/maps" | head -n 1 >"$HT_TMP/privtmp.staged"
	}
	hook=keep_dump
	profile privtmp "(c) private /tmp"
	hook=
	dumpopt=
	unset HEAPTOOL_AGENT
	[ -s "$HT_TMP/privtmp.staged" ]
	ok $? "(c) the agent was loaded from a copy staged in its /tmp \
($(cat "$HT_TMP/privtmp.staged"))"
	ht cd report --json --detail "$HT_TMP/privtmp-dump.heap"
	ok $st "(c) the dump written in the private /tmp reads"
	label="(c) the --dump-prefix dump"
	want exact "$HT_TMP/cd.out"
	want site "$HT_TMP/cd.out" --src "$SRC" --func keep_blocks \
	    inuse_bytes=3000 inuse_objects=3
	checks
	rm -rf "$agentdir"
	agentdir= ;;
esac

done_testing
