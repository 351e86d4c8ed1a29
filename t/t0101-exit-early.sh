#!/bin/sh
# A program that leaves by _exit or _Exit runs no destructor; the agent
# hooks both (launch mode) so that the launched process still writes its
# profile, or its trace, there (t/target/exit-early):
# - _exit and _Exit: heaptool run --rate 1 writes the profile, keep_exit's
#   7 blocks exactly, and passes the exit status on (3, 4);
# - a fork's child that leaves by _exit writes nothing over its parent's
#   profile (keep_child is not in it); a vfork's child that fails an exec
#   and leaves by _exit runs nothing of the agent's (it shares the
#   parent's memory): the parent's profile is exact;
# - heaptool record -- exit-early: the trace is complete.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/htcheck.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
FX=$TARGETS/exit-early
[ -x "$FX" ] || bail "$FX not built (make check builds it)"
unset HEAPTOOL_SEED LD_PRELOAD HEAPTOOL_PID
T=60
SRC=$HT_SRCDIR/t/target/exit-early.c

# profiled MODE STATUS: heaptool run --rate 1 -- exit-early MODE, which
# exits with STATUS; its report in $HT_TMP/MODE.json.
profiled() {
	timeout $T "$HEAPTOOL" run --rate 1 -o "$HT_TMP/$1.heap" -- "$FX" "$1" \
	    >"$HT_TMP/$1.out" 2>"$HT_TMP/$1.err"
	is "$2" $? "$1: heaptool run passes the exit status on"
	grep -q "^heaptool: profile written to $HT_TMP/$1.heap\$" \
	    "$HT_TMP/$1.err"
	ok $? "$1: the profile is written" || diag "$(cat "$HT_TMP/$1.err")"
	timeout $T "$HEAPTOOL" report --json --detail "$HT_TMP/$1.heap" \
	    >"$HT_TMP/$1.json" 2>"$HT_TMP/$1.rerr"
	ok $? "$1: the profile reads" || diag "$(cat "$HT_TMP/$1.rerr")"
	label="$1"
	want exact "$HT_TMP/$1.json"
	want site "$HT_TMP/$1.json" --src "$SRC" --func keep_exit \
	    inuse_bytes=2100 inuse_objects=7 alloc_objects=7
	checks
}

profiled _exit 3
profiled _Exit 4
profiled fork 3
profiled vfork 3
for m in fork vfork; do
	grep -q keep_child "$HT_TMP/$m.json"
	ok $((! $?)) "$m: no child's block in the parent's profile"
done
"$FX" vfork >"$HT_TMP/plain.out" 2>&1
cmp -s "$HT_TMP/plain.out" "$HT_TMP/vfork.out"
ok $? "vfork: the output is the program's, as without heaptool"

timeout $T "$HEAPTOOL" record -o "$HT_TMP/rec.trace" -- "$FX" _exit \
    >/dev/null 2>"$HT_TMP/rec.err"
is 3 $? "record -- exit-early _exit: the exit status passed on"
grep -q "^heaptool: $HT_TMP/rec.trace: [0-9]* events, 1 threads" \
    "$HT_TMP/rec.err"
ok $? "and the trace is complete" || diag "$(cat "$HT_TMP/rec.err")"
done_testing
