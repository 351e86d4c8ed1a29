#!/bin/sh
# The inline backend under load: t/target/inline-hammer is attach-hammer's
# 8 threads of malloc, calloc, realloc and free over an allocator of the
# executable's own (t/target/inline-alloc.c), so its calls reach it only
# through inline hooks.  50 times: attach (which patches the functions
# while every thread is stopped), start, stop, detach (which puts them
# back).  The process never crashes nor hangs, every command succeeds, its
# checksum is that of a plain run with no bad round, and the functions'
# bytes end as they began.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/ptrace.sh"
. "$(dirname "$0")/lib/htrun.sh"
. "$(dirname "$0")/lib/htinline.sh"

EXE=$TARGETS/inline-hammer
inline_prereq "$EXE"
N=${HT_INLINE_ROUNDS:-50}
FNS="malloc free calloc realloc"

plan 7

timeout $T "$EXE" --rounds 2 >"$HT_TMP/plain.out" 2>&1 ||
    bail "$EXE --rounds 2 failed"

"$EXE" --until "$HT_TMP/stop" >"$HT_TMP/fx.out" 2>&1 &
pid=$!
i=0
while ! grep -qx ready "$HT_TMP/fx.out" 2>/dev/null; do
	i=$((i + 1))
	[ $i -gt $((T * 20)) ] && bail "$EXE never said ready"
	sleep 0.05
done
# shellcheck disable=SC2086
python3 "$HT_SRCDIR/t/lib/fnbytes.py" "$pid" "$EXE" $FNS >"$HT_TMP/before"

failed=0 hooked=0 what=
i=0
while [ $i -lt "$N" ]; do
	i=$((i + 1))
	for c in "attach $pid" "start -p $pid --rate 64K" "stop -p $pid" \
	    "detach -p $pid"; do
		# shellcheck disable=SC2086
		ht round $c
		if [ $st -ne 0 ]; then
			failed=$((failed + 1))
			what="round $i: heaptool $c: $(head -c 500 "$HT_TMP/round.err")"
		fi
		case $c in
		attach*)
			grep -q "^heaptool: inline: hooked .*\bmalloc\b" \
			    "$HT_TMP/round.out" && hooked=$((hooked + 1))
			;;
		esac
	done
	kill -0 "$pid" 2>/dev/null || break
done
is "$failed" 0 "$N rounds of attach, start, stop, detach: every command ok" ||
    diag "$what"
is "$hooked" "$N" "every attach hooked malloc inline"
kill -0 "$pid" 2>/dev/null
ok $? "the process is alive"
# shellcheck disable=SC2086
python3 "$HT_SRCDIR/t/lib/fnbytes.py" "$pid" "$EXE" $FNS >"$HT_TMP/after"
cmp -s "$HT_TMP/before" "$HT_TMP/after"
ok $? "its functions' bytes are as they began" ||
    diag "$(diff "$HT_TMP/before" "$HT_TMP/after")"
: >"$HT_TMP/stop"
timeout $T sh -c "while kill -0 $pid 2>/dev/null; do sleep 0.1; done"
wait "$pid"
ok $? "it ends by itself, status 0"
pid=
grep -q ', 0 bad$' "$HT_TMP/fx.out"
ok $? "no bad round" || diag "$(tail -3 "$HT_TMP/fx.out")"
sum() {
	grep -o 'checksum [0-9a-f]*' "$1"
}
is "$(sum "$HT_TMP/fx.out")" "$(sum "$HT_TMP/plain.out")" \
    "its checksum is that of a plain run"
