#!/bin/sh
# Programs that are hard on a profiler run correctly under heaptool run, at
# the default rate and at --rate 1: one that forks (and execs), one whose
# signal handler allocates, one with 8 threads freeing each other's blocks.
# Their output and exit status are those of a plain run and a readable
# profile is written.  Also: the exit status of CMD is heaptool's; a CMD
# killed by a signal makes heaptool exit 128 + the signal and say there is no
# profile; children of CMD are not profiled.  A CMD that switches from
# root to another user who may not write the -o directory: heaptool says
# that, not that exit handlers did not run (root only).
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/htcheck.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
for f in forker sigalloc threads8; do
	for v in O0 O2; do
		[ -x "$TARGETS/$f-$v" ] ||
		    bail "$TARGETS/$f-$v not built (make check builds it)"
	done
done
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
# sigalloc relies on glibc's default tcache (see t/target/sigalloc.c); no
# core files for the programs killed on purpose.
unset GLIBC_TUNABLES HEAPTOOL_SEED
# shellcheck disable=SC3045
ulimit -c 0 2>/dev/null

# plain LABEL CMD...: run CMD by itself; its stdout in $HT_TMP/LABEL.plain,
# its status in $plain_status.
plain() {
	_l=$1
	shift
	timeout 60 "$@" >"$HT_TMP/$_l.plain" 2>"$HT_TMP/$_l.plain.err"
	plain_status=$?
}

# under LABEL [RUN OPTIONS] -- CMD...: run CMD under heaptool run -o
# $HT_TMP/LABEL.heap; compare stdout and status with the last plain run.
under() {
	label=$1
	shift
	timeout 60 "$HEAPTOOL" run -o "$HT_TMP/$label.heap" "$@" \
	    >"$HT_TMP/$label.out" 2>"$HT_TMP/$label.err"
	ht_status=$?
	is "$plain_status" "$ht_status" "$label: exit status unchanged"
	[ "$ht_status" -eq "$plain_status" ] || diag "heaptool run said:" \
	    "$(head -c 2000 "$HT_TMP/$label.err")"
	cmp -s "$HT_TMP/$plain_label.plain" "$HT_TMP/$label.out"
	_c=$?
	ok $_c "$label: output unchanged"
	[ $_c -eq 0 ] ||
	    diag "plain: $(head -c 500 "$HT_TMP/$plain_label.plain")" \
	    "under heaptool: $(head -c 500 "$HT_TMP/$label.out")"
}

# readable LABEL [--may-be-empty]: the profile of the last run reads as a
# JSON report (with no site at all allowed, for runs at a sampling rate).
readable() {
	timeout 60 "$HEAPTOOL" report --json --detail "$HT_TMP/$1.heap" \
	    >"$HT_TMP/$1.json" 2>"$HT_TMP/$1.report.err"
	_st=$?
	ok $_st "$1: heaptool report --json --detail reads the profile"
	if [ $_st -ne 0 ]; then
		diag "$(head -c 2000 "$HT_TMP/$1.report.err")"
		return 1
	fi
	want wellformed "$HT_TMP/$1.json" $2
}

for f in forker sigalloc threads8; do
	for v in O0 O2; do
		bin=$TARGETS/$f-$v
		plain_label=$f-$v
		plain "$plain_label" "$bin"
		is 0 "$plain_status" "$f-$v: exits 0 by itself"
		under "$f-$v-default" -- "$bin"
		readable "$label" --may-be-empty && checks
		under "$f-$v-rate1" --rate 1 -- "$bin"
		readable "$label" || continue
		want exact "$HT_TMP/$label.json"
		case $f in
		sigalloc)
			# The handler's own site, one per interrupted stack
			# below the signal frame.
			want site "$HT_TMP/$label.json" \
			    --src "$HT_SRCDIR/t/target/sigalloc.c" \
			    --func on_alarm --sum alloc_objects\>=20 \
			    inuse_objects=0
			;;
		threads8)
			# Blocks freed by other threads: nothing is left in
			# use at the sites that made them.
			for s in make_calloc make_realloc make_malloc; do
				want site "$HT_TMP/$label.json" \
				    --src "$HT_SRCDIR/t/target/threads8.c" \
				    --func make_block --marker "$s" \
				    --chain make_block,worker inuse_bytes=0 \
				    inuse_objects=0 alloc_objects\>=1000
			done
			;;
		esac
		checks
	done
done

# The exit status of CMD is heaptool's, and the profile is still written.
plain_label=forker-exit3
plain "$plain_label" "$TARGETS/forker-O2" exit 3
is 3 "$plain_status" "forker exit 3: exits 3 by itself"
under forker-exit3-ht --rate 1 -- "$TARGETS/forker-O2" exit 3
readable forker-exit3-ht && checks

# Killed by a signal: 128 + the signal, and no profile.
for sig in 9 11; do
	plain_label=forker-kill$sig
	plain "$plain_label" "$TARGETS/forker-O2" kill $sig
	is $((128 + sig)) "$plain_status" \
	    "forker kill $sig: dies of signal $sig"
	under "forker-kill$sig-ht" -- "$TARGETS/forker-O2" kill $sig
	grep -qi 'no profile' "$HT_TMP/$label.err"
	_c=$?
	ok $_c "forker kill $sig: heaptool says there is no profile"
	[ $_c -eq 0 ] || diag "heaptool run said:" \
	    "$(head -c 2000 "$HT_TMP/$label.err")"
	[ ! -e "$HT_TMP/$label.heap" ]
	ok $? "forker kill $sig: no profile file written"
done

# Children are not profiled: run without -o in an empty directory; the only
# profile there must be CMD's own, heaptool.PID.heap, none for its children
# (4 forked that exit(), 1 that execs /bin/true).  At 4 KiB: the parent's
# 1.8 MB of allocations leave sites for sure (at 512 KiB, about 3.5
# samples are expected and none in 3% of the runs).
mkdir "$HT_TMP/children"
plain_label=forker-children
plain "$plain_label" "$TARGETS/forker-O0" -p "$HT_TMP/pids.plain"
label=forker-children-ht
(
	cd "$HT_TMP/children" &&
	    timeout 60 "$HEAPTOOL" run --rate 4K -- "$TARGETS/forker-O0" \
	    -p "$HT_TMP/pids" >"$HT_TMP/$label.out" 2>"$HT_TMP/$label.err"
)
ht_status=$?
is "$plain_status" "$ht_status" "$label: exit status unchanged"
cmp -s "$HT_TMP/$plain_label.plain" "$HT_TMP/$label.out"
ok $? "$label: output unchanged"
parent=$(sed -n 's/^parent //p' "$HT_TMP/pids" 2>/dev/null)
nchild=$(grep -c '^child ' "$HT_TMP/pids" 2>/dev/null)
is 5 "${nchild:-0}" "$label: forker reported its 5 children"
ls "$HT_TMP/children" >"$HT_TMP/children.ls"
is "heaptool.$parent.heap" "$(cat "$HT_TMP/children.ls")" \
    "$label: one profile, heaptool.PID.heap of CMD, none of its children"
stray=
for c in $(sed -n 's/^child //p' "$HT_TMP/pids" 2>/dev/null); do
	[ -e "$HT_TMP/children/heaptool.$c.heap" ] && stray="$stray $c"
done
is "" "$stray" "$label: no profile file for a child's pid"
if [ -e "$HT_TMP/children/heaptool.$parent.heap" ]; then
	mv "$HT_TMP/children/heaptool.$parent.heap" "$HT_TMP/$label.heap"
	# A child writing CMD's profile would have put its own pid there.
	readable "$label" && want field "$HT_TMP/$label.json" pid "$parent" &&
	    checks
fi

# A command that gives up root before it exits: its agent writes the
# profile as the new user, and heaptool run says why it could not.
if [ "$(id -u)" -ne 0 ]; then
	skip "a command that gives up root: needs root"
elif [ ! -x "$TARGETS/run-setuid" ]; then
	bail "$TARGETS/run-setuid not built (make check builds it)"
else
	d=$(mktemp -d "${TMPDIR:-/tmp}/heaptool-setuid.XXXXXX")
	chmod 0755 "$d"
	mkdir -m 0755 "$d/root" "$d/nobody"
	chown 65534:65534 "$d/nobody"
	plain_label=setuid
	plain "$plain_label" "$TARGETS/run-setuid"
	is 0 "$plain_status" "run-setuid: gives up root and exits 0"
	label=setuid-ht
	timeout 60 "$HEAPTOOL" run --rate 1 -o "$d/root/x.heap" -- \
	    "$TARGETS/run-setuid" >"$HT_TMP/$label.out" 2>"$HT_TMP/$label.err"
	is "$plain_status" "$?" "$label: exit status unchanged"
	cmp -s "$HT_TMP/$plain_label.plain" "$HT_TMP/$label.out"
	ok $? "$label: output unchanged"
	want="heaptool: no profile written to $d/root/x.heap: the agent could \
not write it as uid 65534 (the command switched to it from uid 0) in \
$d/root: Permission denied; give -o a directory that uid 65534 may write to"
	is "$want" "$(cat "$HT_TMP/$label.err")" \
	    "$label: the true cause, and what to do"
	[ ! -e "$d/root/x.heap" ]
	ok $? "$label: no profile file"
	# The same where that user may write: the profile is there, its.
	label=setuid-ht2
	timeout 60 "$HEAPTOOL" run --rate 1 -o "$d/nobody/x.heap" -- \
	    "$TARGETS/run-setuid" >"$HT_TMP/$label.out" 2>"$HT_TMP/$label.err"
	ok $? "$label: a directory that uid 65534 may write to"
	is 65534 "$(stat -c %u "$d/nobody/x.heap" 2>/dev/null)" \
	    "$label: the profile is written, by uid 65534"
	cp "$d/nobody/x.heap" "$HT_TMP/$label.heap" 2>/dev/null
	readable "$label" &&
	    want site "$HT_TMP/$label.json" --src \
		"$HT_SRCDIR/t/target/run-setuid.c" --func keep_blocks \
		inuse_bytes=10000 inuse_objects=5 &&
	    checks
	rm -rf "$d"
fi

done_testing
