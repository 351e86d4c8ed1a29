#!/bin/sh
# heaptool top without a terminal (stdout a file): a block of plain text
# per refresh, in a stable format, no escape codes, ending after --count
# blocks with status 0.  On t/target/top-grow at rate 1 every figure is
# exact, so the blocks must show: big's 8 MiB in 128 samples not growing,
# fast and slow growing by whole allocations of 4000 and 1000 bytes with
# as many samples as objects, fast first by growth and big first by bytes
# in use and by bytes allocated, each at its SITE line of the fixture;
# --top keeps the first sites only, and the totals are the sum of the
# sites.  A new session (start --restart) under top is a new baseline:
# growth counts from its first profile, and big (allocated before it) is
# no site of it.
. "$(dirname "$0")/tap/libtap.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
T=60
. "$HT_SRCDIR/t/lib/httop.sh"

plan 14

start_grow g

# plain NAME ARGS: heaptool top ARGS with stdout and stderr in files.
plain() {
	_n=$1
	shift
	timeout $T "$HEAPTOOL" top -p "$grow_pid" "$@" \
	    >"$HT_TMP/$_n.out" 2>"$HT_TMP/$_n.err"
	st=$?
}

plain growth --sort growth --interval 300ms --count 4 --bytes
ok $([ $st -eq 0 ] && [ ! -s "$HT_TMP/growth.err" ]; echo $?) \
    "top --count 4 without a terminal: status 0, nothing on stderr" ||
    diag "status $st: $(cat "$HT_TMP/growth.err")"
is "$(grep -c '^heaptool top: [0-9]*$' "$HT_TMP/growth.out")" 4 \
    "four blocks, numbered"
is "$(grep -n '^heaptool top: ' "$HT_TMP/growth.out" | cut -d: -f3 |
    tr -d ' ' | tr '\n' ' ')" "1 2 3 4 " "numbered 1 to 4 in order"
! LC_ALL=C grep -q "$(printf '\033')" "$HT_TMP/growth.out"
ok $? "no escape codes"

# check.py FILE SORT: the blocks of FILE, checked against what the
# fixture does; one line per failure.
cat >"$HT_TMP/check.py" <<PY
import re, sys
text = open(sys.argv[1]).read()
sort = sys.argv[2]
lines = {"big": $(site_line big), "slow": $(site_line slow),
         "fast": $(site_line fast)}
blocks = [b for b in text.split("\n\n") if b.strip()]
site_re = re.compile(r"^ *(\d+) B +(0 B|[+-]\d+ B) +(-|0 B/s|[+-]\d+ B/s)"
                     r" +(\d+)  (\S+)(?:  (\S+))?$")
bad = []
for n, b in enumerate(blocks, 1):
    ls = b.split("\n")
    if not re.match(r"^pid \d+ \(top-grow\), session 1 running, "
                    r"rate 1 \(exact\), \d+\.\d\d s$", ls[1]):
        bad.append("block %d: session line %r" % (n, ls[1]))
    m = re.match(r"^in use (\d+) B in (\d+) objects \(exact\), "
                 r"allocated (\d+) B$", ls[2])
    if not m:
        bad.append("block %d: totals line %r" % (n, ls[2]))
        continue
    total = int(m.group(1))
    g = re.match(r"^RSS \d+ B; growth (0 B|[+-]\d+ B) in \d+\.\d s "
                 r"\((-|0 B/s|[+-]\d+ B/s)\) since the view started$", ls[3])
    if not g:
        bad.append("block %d: growth line %r" % (n, ls[3]))
    if not re.match(r"^\d+ sites by %s$" % sort, ls[4]):
        bad.append("block %d: %r" % (n, ls[4]))
    sites = []
    for l in ls[6:]:
        s = site_re.match(l)
        if not s:
            bad.append("block %d: site line %r" % (n, l))
            continue
        sites.append((int(s.group(1)), int(s.group(2).replace(" B", "")),
                      int(s.group(4)), s.group(5), s.group(6)))
    if sum(s[0] for s in sites) != total:
        bad.append("block %d: sites sum to %d, totals say %d" %
                   (n, sum(s[0] for s in sites), total))
    by = {s[3]: s for s in sites}
    for f, size in (("big", 65536), ("slow", 1000), ("fast", 4000)):
        if f not in by:
            # The first block may come before the first tick.
            if n > 1 or f == "big":
                bad.append("block %d: no site %s" % (n, f))
            continue
        inuse, growth, samples, _, where = by[f]
        if where != "top-grow.c:%d" % lines[f]:
            bad.append("block %d: %s at %s, not line %d" %
                       (n, f, where, lines[f]))
        if inuse != size * samples or growth % size != 0 or growth < 0:
            bad.append("block %d: %s: %d B in %d samples, growth %d" %
                       (n, f, inuse, samples, growth))
    if "big" in by and (by["big"][0] != 128 * 65536 or by["big"][1] != 0):
        bad.append("block %d: big %r" % (n, by["big"]))
    if n == 1 and any(s[1] != 0 for s in sites):
        bad.append("block 1 grew: %r" % sites)
    # Ticks come every 100 ms; by the last block (900 ms in) both grew.
    if n == len(blocks) and n > 1 and "fast" in by and "slow" in by:
        if not by["fast"][1] > by["slow"][1] > 0:
            bad.append("block %d: fast %d, slow %d" %
                       (n, by["fast"][1], by["slow"][1]))
    if n > 1 and sites:
        want = {"growth": "fast", "inuse": "big", "alloc": "big"}[sort]
        if sites[0][3] != want:
            bad.append("block %d: first %s, not %s" % (n, sites[0][3], want))
    if sort == "growth":
        gs = [s[1] for s in sites]
        if gs != sorted(gs, reverse=True):
            bad.append("block %d: not by growth: %r" % (n, gs))
if bad:
    print("\n".join(bad))
PY
python3 "$HT_TMP/check.py" "$HT_TMP/growth.out" growth >"$HT_TMP/bad" 2>&1
ok $([ ! -s "$HT_TMP/bad" ]; echo $?) \
    "--sort growth: exact figures, fast first, slow next, big not growing" ||
    diag "$(head -20 "$HT_TMP/bad")"

plain inuse --interval 300ms --count 4 --bytes
ok $st "the default sort (inuse)"
python3 "$HT_TMP/check.py" "$HT_TMP/inuse.out" inuse >"$HT_TMP/bad" 2>&1
ok $([ ! -s "$HT_TMP/bad" ]; echo $?) "--sort inuse: big first" ||
    diag "$(head -20 "$HT_TMP/bad")"

plain alloc --sort alloc --interval 300ms --count 4 --bytes
python3 "$HT_TMP/check.py" "$HT_TMP/alloc.out" alloc >"$HT_TMP/bad" 2>&1
ok $([ $st -eq 0 ] && [ ! -s "$HT_TMP/bad" ]; echo $?) \
    "--sort alloc: big first" || diag "$(head -20 "$HT_TMP/bad")"

plain top2 --sort growth --interval 300ms --count 2 --top 2
ok $st "--top 2"
is "$(sed -n '/^heaptool top: 2$/,$p' "$HT_TMP/top2.out" |
    sed -n '/function  file:line/,/^$/p' | sed '1d;$d' | cut -c45- |
    sed 's/  .*//' | tr '\n' ' ')" "fast slow " \
    "--top 2 lists the two fastest-growing sites"
grep -q "^[0-9]* sites by growth, the first shown$" "$HT_TMP/top2.out"
ok $? "and says the others are not shown"

# Sizes for people without --bytes.
grep -q '^ *8\.00 MiB  *0 B  *\(-\|0 B/s\) *128  big  top-grow\.c:' \
    "$HT_TMP/top2.out" "$HT_TMP/inuse.out"
ok $? "sizes in KiB/MiB without --bytes"

# A new session under top.
timeout $T "$HEAPTOOL" top -p "$grow_pid" --interval 300ms --count 100 \
    --bytes >"$HT_TMP/sess.out" 2>"$HT_TMP/sess.err" &
top_pid=$!
wait_for grep -qs '^heaptool top: 2$' "$HT_TMP/sess.out" ||
    bail "top printed no second block"
timeout $T "$HEAPTOOL" start -p "$grow_pid" --rate 1 --restart \
    >/dev/null 2>&1 || bail "start --restart failed"
# two_in_2: two blocks of session 2 printed, and a third begun.
two_in_2() {
	[ "$(grep -c '^pid .* session 2 running' "$HT_TMP/sess.out")" -ge 3 ]
}
wait_for two_in_2 || bail "top showed no session 2"
kill "$top_pid"
wait "$top_pid" 2>/dev/null
# The first two blocks of session 2.
awk '/^heaptool top: / { b = $0 } /session 2 running/ { n++ }
    n >= 1 && n <= 2 { print }' "$HT_TMP/sess.out" >"$HT_TMP/s2"
grep '^RSS ' "$HT_TMP/s2" | sed 's/^RSS [0-9]* B; //' |
    sed 's/ in [0-9.]* s (.*)//' >"$HT_TMP/s2.growth"
is "$(head -1 "$HT_TMP/s2.growth")" "growth 0 B since session 2 was seen" \
    "a new session is a new baseline: no growth in its first block"
! grep -q '  big  ' "$HT_TMP/s2" &&
    grep -q '^ *[0-9]* B  *+[0-9]* B .*  fast  ' "$HT_TMP/s2"
ok $? "the new session's sites, growing from it; big is none of them" ||
    diag "$(cat "$HT_TMP/s2")"
