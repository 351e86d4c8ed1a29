#!/bin/sh
# The inline backend on Debian's static jemalloc: t/target/inline-je links
# libjemalloc.a, so its malloc, calloc, realloc and free are the
# executable's own, called directly, and so are jemalloc's own mallocx,
# rallocx, sdallocx and dallocx.  attach hooks them inline; at rate 1
# the report counts the fixture's own allocating calls exactly, at its own
# sites, those of jemalloc's API too; detach puts every byte back (read from /proc/PID/mem); its
# checksum is that of a plain run.  Skips without libjemalloc-dev.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/ptrace.sh"
. "$(dirname "$0")/lib/htrun.sh"
. "$(dirname "$0")/lib/htinline.sh"

EXE=$TARGETS/inline-je
inline_prereq "$EXE" "no static jemalloc (apt-get install libjemalloc-dev)"
FNS="malloc free calloc realloc mallocx rallocx sdallocx dallocx"

plan 11

printf 'run 10\nxrun 10\nxrelease\nrelease\nrun 5\nquit\n' | "$EXE" >"$HT_TMP/plain.fx"
mkfifo "$HT_TMP/je.in"
"$EXE" <"$HT_TMP/je.in" >"$HT_TMP/je.fx" 2>&1 &
pid=$!
exec 8>"$HT_TMP/je.in"
wait_line "$HT_TMP/je.fx" '^ready$' || bail "$EXE never said ready"
# shellcheck disable=SC2086
python3 "$HT_SRCDIR/t/lib/fnbytes.py" "$pid" "$EXE" $FNS >"$HT_TMP/before"

ht_ok attach "attach" attach "$pid"
grep -q "^heaptool: inline: hooked .*\bmalloc\b.*\bfree\b\|^heaptool: inline: hooked .*\bfree\b.*\bmalloc\b" \
    "$HT_TMP/attach.out"
ok $? "attach hooks jemalloc's malloc and free inline" ||
    diag "$(cat "$HT_TMP/attach.out")"
ht_ok start "start --rate 1" start -p "$pid" --rate 1
echo "run 10" >&8
wait_line "$HT_TMP/je.fx" '^ran 10 ' || bail "no ran 10"
ht_ok report "report --json" report -p "$pid" --json --detail
python3 - "$HT_TMP/report.out" "$(grep '^ran 10 ' "$HT_TMP/je.fx")" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
calls = int(sys.argv[2].split()[2])
t = r["totals"]
first = {}
for s in r["sites"]:
    if s["frames"]:
        f = s["frames"][0].get("function", "")
        first[f] = first.get(f, 0) + s["alloc_objects"]
want_bytes = sum(100 + i for i in range(10)) + 10 * (100 + 300)
ok = (t["alloc_objects"] == calls == 30 and t["alloc_bytes"] == want_bytes
      and t["inuse_objects"] == 10 and first.get("je_site") == 10
      and first.get("je_mix") == 20)
if not ok:
    print(t, first, calls)
sys.exit(0 if ok else 1)
PY
ok $? "at rate 1: the fixture's 30 calls, exactly, at its own sites"
# jemalloc's own API, called directly: mallocx, rallocx, sdallocx and
# dallocx are hooked inline too, each call counted once.
grep -q "^heaptool: inline: hooked .*\bmallocx\b" "$HT_TMP/attach.out" &&
    grep -q "^heaptool: inline: hooked .*\bsdallocx\b" "$HT_TMP/attach.out"
ok $? "attach hooks mallocx and sdallocx inline" ||
    diag "$(cat "$HT_TMP/attach.out")"
echo "xrun 10" >&8
wait_line "$HT_TMP/je.fx" '^xran 10 ' || bail "no xran 10"
echo "xrelease" >&8
wait_line "$HT_TMP/je.fx" '^xreleased$' || bail "no xreleased"
ht report2 report -p "$pid" --json --detail
python3 - "$HT_TMP/report.out" "$HT_TMP/report2.out" \
    "$(grep '^ran 10 ' "$HT_TMP/je.fx")" \
    "$(grep '^xran 10 ' "$HT_TMP/je.fx")" <<'PY'
import json, sys
r0 = json.load(open(sys.argv[1]))["totals"]
r = json.load(open(sys.argv[2]))
calls = int(sys.argv[4].split()[2]) - int(sys.argv[3].split()[2])
t = r["totals"]
first = {}
for s in r["sites"]:
    if s["frames"]:
        f = s["frames"][0].get("function", "")
        first[f] = first.get(f, 0) + s["alloc_objects"]
want_bytes = sum(200 + i for i in range(10)) + 10 * (64 + 512)
got = (t["alloc_objects"] - r0["alloc_objects"],
       t["alloc_bytes"] - r0["alloc_bytes"],
       t["inuse_objects"], t["inuse_bytes"] - r0["inuse_bytes"])
ok = (got == (calls, want_bytes, r0["inuse_objects"], 0) and calls == 30
      and first.get("je_xsite") == 10 and first.get("je_xmix") == 20)
if not ok:
    print(got, calls, want_bytes, first)
sys.exit(0 if ok else 1)
PY
ok $? "at rate 1: mallocx/rallocx/sdallocx/dallocx exactly, at their sites"
ht_ok detach "detach" detach -p "$pid"
# shellcheck disable=SC2086
python3 "$HT_SRCDIR/t/lib/fnbytes.py" "$pid" "$EXE" $FNS >"$HT_TMP/after"
cmp -s "$HT_TMP/before" "$HT_TMP/after"
ok $? "every patched byte is as it was (read from /proc/PID/mem)" ||
    diag "$(diff "$HT_TMP/before" "$HT_TMP/after")"
printf 'release\nrun 5\nquit\n' >&8
wait "$pid"
ok $? "the fixture exits 0"
pid=
is "$(grep '^checksum ' "$HT_TMP/je.fx")" \
    "$(grep '^checksum ' "$HT_TMP/plain.fx")" \
    "its checksum is that of a plain run"
