#!/bin/sh
# The inline backend refuses a function whose callers may rely on the
# registers it leaves (cli/inline-ipa.c): t/target/inline-ipra's tc_malloc
# and tc_free are leaves, and its work(), in the same unit at -O2 (GCC's
# -fipa-ra), keeps values in call-clobbered registers across their calls
# (checked in its code with objdump: patched, work() spins or sums wrong).
#
# attach hooks neither and says why (its output, status, report
# --coverage in text and JSON); their bytes are as they were; with a
# session at rate 1 the checksum of the work is that of a plain run, and
# so is it under heaptool run.  The other inline fixtures' allocators,
# which call mmap or sched_yield through libc's PLT, stay hooked
# (t0055-t0058).
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/ptrace.sh"
. "$(dirname "$0")/lib/htrun.sh"
. "$(dirname "$0")/lib/htinline.sh"

EXE=$TARGETS/inline-ipra
inline_prereq "$EXE"
FNS="tc_malloc tc_free"
WHY="closed call graph"

# Both functions named as not hooked, for the closed call graph, in $1.
both_refused() {
	for f in $FNS; do
		grep "$f" "$1" | grep -q "$WHY" || return 1
	done
	return 0
}

plan 15

# The hazard is real in this build: right after a call to tc_malloc or
# tc_free, work() reads a call-clobbered register it did not set since
# the call (a value kept across it).
if command -v objdump >/dev/null 2>&1; then
	objdump -d --no-show-raw-insn "$EXE" >"$HT_TMP/dis" 2>/dev/null
	python3 - "$HT_TMP/dis" <<'PY'
import re, sys
lines, on = [], False
for l in open(sys.argv[1]):
    if re.match(r"^[0-9a-f]+ <work[.>]", l):
        on = True
    elif on and not l.strip():
        on = False
    elif on and "\t" in l:
        lines.append(l.split("\t", 1)[1].strip())
clob = ["rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11"]
alias = {"rcx": "rcx|ecx|cx|cl", "rdx": "rdx|edx|dx|dl",
         "rsi": "rsi|esi|si|sil", "rdi": "rdi|edi|di|dil"}
kept = set()
for i, ins in enumerate(lines):
    if not re.search(r"call\s+\S+ <tc_(malloc|free)>", ins):
        continue
    done = set()
    for nxt in lines[i + 1:]:
        if nxt.startswith(("call", "ret", "jmp")):
            break
        ops = nxt.split(None, 1)[1] if " " in nxt else ""
        parts = ops.rsplit(",", 1)
        src, dst = (parts[0], parts[1]) if len(parts) == 2 else ("", ops)
        for r in clob:
            if r in done:
                continue
            pat = r"%%(%s)\b" % alias.get(r, r + "[dwb]?")
            if re.search(pat, src):
                kept.add(r)
            if re.search(pat, dst):
                done.add(r)
print(" ".join(sorted(kept)))
sys.exit(0 if kept else 1)
PY
	ok $? "work() keeps values in call-clobbered registers across the calls"
else
	skip 1 "objdump not found"
fi

printf 'work 100000\nquit\n' | "$EXE" >"$HT_TMP/plain.fx"
plain=$(grep '^checksum ' "$HT_TMP/plain.fx")

mkfifo "$HT_TMP/ip.in"
"$EXE" <"$HT_TMP/ip.in" >"$HT_TMP/ip.fx" 2>&1 &
pid=$!
exec 8>"$HT_TMP/ip.in"
wait_line "$HT_TMP/ip.fx" '^ready$' || bail "$EXE never said ready"
# shellcheck disable=SC2086
python3 "$HT_SRCDIR/t/lib/fnbytes.py" "$pid" "$EXE" $FNS >"$HT_TMP/before"

ht_ok attach "attach" attach "$pid"
cat "$HT_TMP/attach.out" "$HT_TMP/attach.err" >"$HT_TMP/attach.all"
grep "^heaptool: inline: hooked " "$HT_TMP/attach.all" >"$HT_TMP/hooked"
! grep -q -E "\btc_(malloc|free)\b" "$HT_TMP/hooked" &&
    both_refused "$HT_TMP/attach.all"
ok $? "attach hooks neither inline: a closed call graph" ||
    diag "$(cat "$HT_TMP/attach.all")"
# tc_delete tail-jumps through a pointer it loads: an escape, so hooked
# (and it still calls what the pointer names).
grep -q -E "\btc_delete\b" "$HT_TMP/hooked"
ok $? "attach hooks tc_delete inline: its jump through a loaded pointer escapes" ||
    diag "$(cat "$HT_TMP/attach.all")"
echo "del 1000" >&8
wait_line "$HT_TMP/ip.fx" '^deleted ' || true
grep -q '^deleted 1000$' "$HT_TMP/ip.fx"
ok $? "hooked, tc_delete still reaches the function its pointer names" ||
    diag "$(cat "$HT_TMP/ip.fx")"

# shellcheck disable=SC2086
python3 "$HT_SRCDIR/t/lib/fnbytes.py" "$pid" "$EXE" $FNS >"$HT_TMP/after"
cmp -s "$HT_TMP/before" "$HT_TMP/after"
ok $? "their bytes are as they were (read from /proc/PID/mem)" ||
    diag "$(diff "$HT_TMP/before" "$HT_TMP/after")"

ht status status -p "$pid"
both_refused "$HT_TMP/status.out"
ok $? "status says why" || diag "$(cat "$HT_TMP/status.out")"

ht_ok start "start --rate 1" start -p "$pid" --rate 1
ht cov report -p "$pid" --coverage
grep -E "^ +tc_(malloc|free) +NOT " "$HT_TMP/cov.out" >"$HT_TMP/cov.not"
[ "$(grep -c "$WHY" "$HT_TMP/cov.not")" -eq 2 ]
ok $? "report --coverage: both not hooked, for the closed call graph" ||
    diag "$(cat "$HT_TMP/cov.out")"

ht covj report -p "$pid" --coverage --json
python3 - "$HT_TMP/covj.out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
found = {}
def walk(o):
    if isinstance(o, dict):
        if o.get("function") in ("tc_malloc", "tc_free"):
            found[o["function"]] = o
        for v in o.values():
            walk(v)
    elif isinstance(o, list):
        for v in o:
            walk(v)
walk(r)
ok = len(found) == 2 and all(not f["hooked"] and
                             "closed call graph" in f["reason"]
                             for f in found.values())
sys.exit(0 if ok else 1)
PY
ok $? "report --coverage --json: hooked false, the reason" ||
    diag "$(head -c 3000 "$HT_TMP/covj.out")"

echo 'work 100000' >&8
wait_line "$HT_TMP/ip.fx" '^checksum ' || bail "no checksum"
is "$(grep '^checksum ' "$HT_TMP/ip.fx")" "$plain" \
    "attached, in a session: its checksum is that of a plain run"
ht_ok detach "detach" detach -p "$pid"
echo quit >&8
wait "$pid"
ok $? "the fixture exits 0"
pid=

printf 'work 100000\nquit\n' |
    timeout $T "$HEAPTOOL" run --rate 1 -o "$HT_TMP/run.heap" -- "$EXE" \
	>"$HT_TMP/run.fx" 2>"$HT_TMP/run.err"
ok $? "heaptool run" || diag "$(cat "$HT_TMP/run.err")"
is "$(grep '^checksum ' "$HT_TMP/run.fx")" "$plain" \
    "under heaptool run, too, its checksum is that of a plain run"
