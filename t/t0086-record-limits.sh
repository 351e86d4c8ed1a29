#!/bin/sh
# heaptool record's ends and its file (issue 13):
# - --max-size: the agent stops before the trace passes the size; the
#   trace is complete (END, its CRC), within the size, whole (every ref a
#   live block of the trace, no seq twice), and the line says it stopped
#   at the size; the command runs on to its end, its status is its own;
# - --duration: the recording ends then, complete, while the command
#   runs on; SIGINT to heaptool record ends it the same way;
# - a write that fails (RLIMIT_FSIZE standing for a full disk) stops the
#   recording, the trace still complete, its END counting the loss and
#   its errno, and record says so, exit 1;
# - a --max-size below 1MiB or a bad duration are usage errors;
# - -o onto a symbolic link (dangling or not) or a FIFO is refused before
#   anything runs, and the link's target is not created or touched; an
#   existing regular file is emptied and rewritten.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/htrec.sh"

rec_setup rec-threads
command -v bash >/dev/null 2>&1 || skip_all "bash not found"
T=120

plan 28

# --max-size: 50000 rounds make a trace of about 20 MiB.
timeout $T "$HEAPTOOL" record -o "$HT_TMP/max.trace" --max-size 2M -- \
    "$FX" 50000 >"$HT_TMP/max.out" 2>"$HT_TMP/max.err"
is 0 $? "record --max-size 2M -- rec-threads 50000: the command's status" ||
    diag "$(cat "$HT_TMP/max.err")"
grep -q "^op free 200000\$" "$HT_TMP/max.out"
ok $? "the command ran to its end"
size=$(wc -c <"$HT_TMP/max.trace")
[ "$size" -le 2097152 ] && [ "$size" -gt 1048576 ] 2>/dev/null
ok $? "the trace stays within the size, and near it ($size bytes)"
"$DUMP" "$HT_TMP/max.trace" >"$HT_TMP/max.dump" 2>&1
d=$HT_TMP/max.dump
is "1 0 0 0" "$(get $d complete) $(get $d lost) $(get $d bad_refs) \
$(get $d dup_seqs)" "the trace is complete and whole" || diag "$(cat $d)"
[ "$(get $d events)" -gt 10000 ] && [ "$(get $d events)" -lt 400000 ] \
    2>/dev/null
ok $? "it holds part of the run: $(get $d events) events"
grep -Eq "^heaptool: $HT_TMP/max.trace: $(get $d events) events, [0-9]+ \
threads, $size bytes, 0 lost, [0-9]+ waits \(stopped at --max-size \
2.00 MiB\)\$" "$HT_TMP/max.err"
ok $? "the line says it stopped at the size" || diag "$(cat "$HT_TMP/max.err")"

# --duration: the command sleeps in a loop of its own (bash, which leaves
# by exit(3)) for longer than the recording.
timeout $T "$HEAPTOOL" record -o "$HT_TMP/dur.trace" --duration 300ms -- \
    bash -c 'i=0; while [ $i -lt 30 ]; do i=$((i+1)); read -t 0.1 x \
</dev/zero 2>/dev/null; : $(echo $i); done; exit 0' \
    >"$HT_TMP/dur.out" 2>"$HT_TMP/dur.err"
is 0 $? "record --duration 300ms -- a 3 s command: its status" ||
    diag "$(cat "$HT_TMP/dur.err")"
"$DUMP" "$HT_TMP/dur.trace" >"$HT_TMP/dur.dump" 2>&1
d=$HT_TMP/dur.dump
is "1 0 0" "$(get $d complete) $(get $d lost) $(get $d bad_refs)" \
    "the trace is complete and whole"
is 1 "$(grep -c "^heaptool: $HT_TMP/dur.trace: $(get $d events) events" \
    "$HT_TMP/dur.err")" "one line says what it holds" ||
    diag "$(cat "$HT_TMP/dur.err")"
grep -q "max-size" "$HT_TMP/dur.err"
is 1 $? "and not that a size stopped it"

# SIGINT to heaptool record (not to the command): the recording ends.
"$HEAPTOOL" record -o "$HT_TMP/int.trace" -- bash -c 'i=0; while [ $i \
-lt 40 ]; do i=$((i+1)); read -t 0.1 x </dev/zero 2>/dev/null; \
: $(echo $i); done; exit 0' >"$HT_TMP/int.out" 2>"$HT_TMP/int.err" &
bg=$!
i=0
while [ "$( (wc -c <"$HT_TMP/int.trace") 2>/dev/null || echo 0)" -le 16 ] &&
    [ $i -lt $((T * 20)) ]; do
	i=$((i + 1))
	sleep 0.05
done
kill -INT $bg
wait $bg
is 0 $? "SIGINT to record -- CMD: the command still ends well"
"$DUMP" "$HT_TMP/int.trace" >"$HT_TMP/int.dump" 2>&1
is "1 0" "$(get "$HT_TMP/int.dump" complete) \
$(get "$HT_TMP/int.dump" lost)" "the trace is complete" ||
    diag "$(cat "$HT_TMP/int.err" "$HT_TMP/int.dump")"

# A write that fails (the file size limit, as a full disk would): the
# recording stops there, the file is cut back to its last whole chunk and
# ends with END, which counts the events lost and says why (EFBIG, 27);
# record says so and exits 1.  SIGXFSZ ignored, so that the write fails
# rather than the signal killing the command.
bash -c 'trap "" XFSZ; ulimit -f 1024; exec "$@"' sh timeout $T "$HEAPTOOL" \
    record -o "$HT_TMP/fsz.trace" -- "$FX" 20000 >/dev/null \
    2>"$HT_TMP/fsz.err"
is 1 $? "record under a 1 MiB file size limit: exit 1"
"$DUMP" "$HT_TMP/fsz.trace" >"$HT_TMP/fsz.dump" 2>&1
d=$HT_TMP/fsz.dump
# (Its frees may name blocks whose allocation was lost: each thread's
# buffer is written in chunks of its own, so what a cut loses is not only
# the last events in sequence; heaptool-format(5) says so.)
[ "$(get $d complete)" = 1 ] && [ "$(get $d lost)" -gt 0 ] 2>/dev/null &&
    [ "$(get $d lost_why)" = 27 ] && [ "$(get $d dup_seqs)" = 0 ] &&
    [ "$(get $d unordered)" = 0 ]
ok $? "the trace is complete (END), with $(get $d lost) events lost for \
EFBIG, its events in order" || diag "$(cat $d)"
grep -q "events lost, the recording stopped: File too large" \
    "$HT_TMP/fsz.err"
ok $? "record says how many were lost and why" ||
    diag "$(cat "$HT_TMP/fsz.err")"

# A command killed mid-recording: no END; record says the trace is cut
# short, and the status is the command's (128 + 9).
timeout $T "$HEAPTOOL" record -o "$HT_TMP/kill.trace" -- bash -c \
    ': $(echo a); kill -9 $$' >/dev/null 2>"$HT_TMP/kill.err"
is 137 $? "a command killed by SIGKILL: its status"
# (0 events of 0 threads where the kill came before the first drain.)
grep -Eq "kill.trace is incomplete \(no END chunk\): [0-9]+ events of [01] threads" \
    "$HT_TMP/kill.err"
ok $? "record says the trace is cut short" || diag "$(cat "$HT_TMP/kill.err")"

# Usage.
"$HEAPTOOL" record -o "$HT_TMP/x.trace" --max-size 100K -- true \
    >/dev/null 2>"$HT_TMP/small.err"
is 2 $? "--max-size below 1MiB: usage error"
"$HEAPTOOL" record -o "$HT_TMP/x.trace" --duration soon -- true \
    >/dev/null 2>"$HT_TMP/dur2.err"
is 2 $? "--duration soon: usage error"
"$HEAPTOOL" record -- true >/dev/null 2>"$HT_TMP/noout.err"
is 2 $? "no -o: usage error"

# The file.
ln -s "$HT_TMP/victim" "$HT_TMP/link"
timeout $T "$HEAPTOOL" record -o "$HT_TMP/link" -- true >/dev/null \
    2>"$HT_TMP/link.err"
is 1 $? "-o onto a dangling symbolic link: refused"
[ ! -e "$HT_TMP/victim" ]
ok $? "its target was not created"
grep -q "link.*a symbolic link; give a regular file's path" \
    "$HT_TMP/link.err"
ok $? "and says why" || diag "$(cat "$HT_TMP/link.err")"
echo precious >"$HT_TMP/victim"
timeout $T "$HEAPTOOL" record -o "$HT_TMP/link" -- true >/dev/null \
    2>"$HT_TMP/link2.err"
is "1 precious" "$? $(cat "$HT_TMP/victim")" \
    "-o onto a link to a file: refused, the file untouched"
mkfifo "$HT_TMP/fifo"
timeout 20 "$HEAPTOOL" record -o "$HT_TMP/fifo" -- true >/dev/null \
    2>"$HT_TMP/fifo.err"
is 1 $? "-o onto a FIFO: refused (and no hang)"
grep -q "a FIFO" "$HT_TMP/fifo.err"
ok $? "and says why" || diag "$(cat "$HT_TMP/fifo.err")"
head -c 100000 /dev/zero >"$HT_TMP/old.trace"
timeout $T "$HEAPTOOL" record -o "$HT_TMP/old.trace" -- "$FX" 10 \
    >/dev/null 2>"$HT_TMP/old.err"
ok $? "-o onto an existing file"
"$DUMP" "$HT_TMP/old.trace" >"$HT_TMP/old.dump" 2>&1
is 1 "$(get "$HT_TMP/old.dump" complete)" \
    "it was emptied and holds the new trace alone"

done_testing
