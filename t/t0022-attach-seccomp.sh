#!/bin/sh
# heaptool attach and a process under a seccomp filter: refused by default,
# with a message that names the filter and the way out, the process left
# running and without the agent; with --ignore-seccomp (the fixture's filter
# allows everything) it attaches, and detaches, normally.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/ptrace.sh"

[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$TARGETS/attach-seccomp" ] ||
    bail "$TARGETS/attach-seccomp not built (make check builds it)"
[ "$(uname -m)" = x86_64 ] || skip_all "attach supports x86-64 only"
require_ptrace
unset HEAPTOOL_SEED LD_PRELOAD HEAPTOOL_AGENT
plan 8

mkfifo "$HT_TMP/in"
"$TARGETS/attach-seccomp" <"$HT_TMP/in" >"$HT_TMP/out" 2>&1 &
pid=$!
exec 3>"$HT_TMP/in"
n=0
until grep -q '^ready' "$HT_TMP/out" 2>/dev/null; do
	n=$((n + 1))
	[ $n -lt 500 ] || bail "attach-seccomp did not start"
	sleep 0.01
done
is 2 "$(sed -n 's/^Seccomp:[[:space:]]*//p' /proc/$pid/status)" \
    "the fixture runs under a seccomp filter"

timeout 30 "$HEAPTOOL" attach "$pid" >"$HT_TMP/a1" 2>&1
is 1 $? "attach is refused (exit 1)"
grep -q 'seccomp filter.*--ignore-seccomp' "$HT_TMP/a1"
ok $? "the message names the filter and --ignore-seccomp"
[ "$(wc -l <"$HT_TMP/a1")" -eq 1 ] && grep -q '^heaptool: ' "$HT_TMP/a1"
ok $? "one line, in the house style"
grep -q libheaptool-agent "/proc/$pid/maps"
is 1 $? "no agent loaded, the process untouched"

timeout 30 "$HEAPTOOL" attach --ignore-seccomp "$pid" >"$HT_TMP/a2" 2>&1
is 0 $? "--ignore-seccomp attaches (this filter allows everything)"
[ $? -eq 0 ] || diag "$(cat "$HT_TMP/a2")"
timeout 30 "$HEAPTOOL" detach -p "$pid" >/dev/null 2>&1
is 0 $? "and detaches"
echo more >&3
exec 3>&-
wait $pid
grep -q 'attach-seccomp: done' "$HT_TMP/out"
ok $? "the fixture ran to its end"
done_testing
