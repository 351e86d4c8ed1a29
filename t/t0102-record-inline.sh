#!/bin/sh
# heaptool record -- CMD on an executable whose malloc family is its own
# (t/target/inline-own): its internal calls are hooked inline before main,
# as heaptool run hooks them, and recorded exactly once each (the trace's
# events at the fixture's own sites, per op and at the peak, are the
# fixture's), its work unchanged (checksum); where nothing can be hooked
# inline (t/target/own-malloc, whose free is too short to patch), record
# warns that the internal calls go unrecorded.
# The doorbell on which run and record hook inline is a descriptor the
# agent closes once served: a program that execs in place after taking
# that number for a file of its own keeps the file untouched (nothing
# written into it) and open, under run as under record.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/ptrace.sh"
. "$(dirname "$0")/lib/htrec.sh"

rec_setup inline-own
[ "$(uname -m)" = x86_64 ] || skip_all "inline hooks support x86-64 only"
require_ptrace
unset HEAPTOOL_SEED
XDG_STATE_HOME=$HT_TMP/state
export XDG_STATE_HOME
T=120
EXE=$(readlink -f "$FX")
CMDS='alloc 100
mix 10
release
quit'

printf '%s\n' "$CMDS" | timeout $T "$FX" >"$HT_TMP/plain.out" 2>&1
plain=$(get "$HT_TMP/plain.out" checksum)
[ -n "$plain" ] || bail "the fixture gave no checksum: $(cat "$HT_TMP/plain.out")"

printf '%s\n' "$CMDS" | timeout $T "$HEAPTOOL" record -o "$HT_TMP/own.trace" \
    -- "$FX" >"$HT_TMP/own.out" 2>"$HT_TMP/own.err"
is 0 $? "record exits 0" || diag "$(cat "$HT_TMP/own.err")"
grep -q "^heaptool: inline: hooked .*malloc.* in $EXE\$" "$HT_TMP/own.err"
ok $? "record says what it hooked inline" || diag "$(cat "$HT_TMP/own.err")"
grep -q "warning" "$HT_TMP/own.err"
ok $((! $?)) "no warning" || diag "$(cat "$HT_TMP/own.err")"
is "$(get "$HT_TMP/own.out" checksum)" "$plain" \
    "the fixture's work is as without heaptool"
"$DUMP" "$HT_TMP/own.trace" "$EXE" >"$HT_TMP/own.dump" 2>&1
is "$(get "$HT_TMP/own.dump" complete)" 1 "the trace is complete"
# alloc 100: malloc of 1000+i bytes, kept; mix 10: calloc(1, 200) grown
# to 400 by realloc, aligned_alloc(64, 128), posix_memalign(32, 96), all
# three freed; release: the 100 freed.  Peak: the 100 blocks and one
# round of the mix (400 + 128 + 96).
bad=
for k in "op malloc 100" "op calloc 10" "op realloc 10" "op aligned 20" \
    "op free 130" "peak $((100 * 1000 + 4950 + 400 + 128 + 96))" \
    "bad_refs 0" "dup_seqs 0"; do
	grep -qx "$k" "$HT_TMP/own.dump" || bad="$bad [$k]"
done
is "$bad" "" "the events at the fixture's sites are its calls, once each" ||
    diag "$(cat "$HT_TMP/own.dump")"

printf 'keep 10\nquit\n' | timeout $T "$HEAPTOOL" record \
    -o "$HT_TMP/short.trace" -- "$TARGETS/own-malloc" >/dev/null \
    2>"$HT_TMP/short.err"
is 0 $? "own-malloc: record exits 0" || diag "$(cat "$HT_TMP/short.err")"
grep -q "^heaptool: warning: $TARGETS/own-malloc defines allocator functions of its own, not hooked inline: its internal calls to them are not recorded (the calls of other modules are)\$" \
    "$HT_TMP/short.err"
ok $? "own-malloc (a free too short to patch): record warns" ||
    diag "$(cat "$HT_TMP/short.err")"

# exec_bell NAME HEAPTOOL-COMMAND...: the fixture, under the command, takes
# the lowest free descriptors for a file and execs itself.
exec_bell() {
	_n=$1
	shift
	printf 'alloc 5\nexec %s\nalloc 5\nquit\n' "$HT_TMP/$_n.file" |
	    timeout $T "$HEAPTOOL" "$@" -- "$FX" >"$HT_TMP/$_n.out" \
	    2>"$HT_TMP/$_n.err"
	is 0 $? "$_n: exits 0" || diag "$(cat "$HT_TMP/$_n.err")"
	grep -qx "open 16" "$HT_TMP/$_n.out"
	ok $? "$_n: after the exec, the program's 16 descriptors are open" ||
	    diag "$(cat "$HT_TMP/$_n.out")"
	is "$(wc -c <"$HT_TMP/$_n.file" | tr -d ' ')" 0 \
	    "$_n: nothing was written into the program's file"
}
exec_bell run-exec run -o "$HT_TMP/run.heap"
exec_bell rec-exec record -o "$HT_TMP/exec.trace"
"$DUMP" "$HT_TMP/exec.trace" >"$HT_TMP/exec.dump" 2>&1
is "$(get "$HT_TMP/exec.dump" complete)" 1 \
    "rec-exec: the trace, the image's after the exec, is complete"

done_testing
