#!/bin/sh
# The in-process API (include/heaptool.h, heaptool(3)): t/target/api-user is
# linked with the agent and profiles itself.  Its own checks of the API's
# answers become TAP lines here; then the files it wrote are read with
# heaptool report --json and their numbers must be exact (rate 1):
#   first.heap   10 x 1000 bytes in use at api_keep, 5 x 3000 allocated
#                and freed at api_temp;
#   second.heap  written after stop: the same, though more was allocated;
#   thr.N.heap   four dumps written at once from four threads, all equal;
#   auto.PID.SEQ.heap  heaptool_enable_dumps' every-bytes files (flags 0x8),
#                and one of heaptool_dump(NULL) (0x20).
# Also: the agent exports exactly the five functions (and the tags' table), heaptool.pc names the
# agent with an rpath, and heaptool(3) lints clean.
. "$(dirname "$0")/tap/libtap.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$TARGETS/api-user" ] || bail "$TARGETS/api-user not built (make check)"
unset HEAPTOOL_SEED LD_PRELOAD HEAPTOOL_PID
T=120
# A dump directory its group may write in is refused, whatever the umask.
umask 022
D=$HT_TMP/api
mkdir -p "$D"

timeout $T "$TARGETS/api-user" "$D" >"$HT_TMP/api.out" 2>"$HT_TMP/api.err"
s=$?
while IFS= read -r l; do
	case $l in
	"ok - "*) ok 0 "api-user: ${l#ok - }" ;;
	"not ok - "*) ok 1 "api-user: ${l#not ok - }" ;;
	esac
done <"$HT_TMP/api.out"
is 0 "$s" "api-user exits 0"
[ -s "$HT_TMP/api.err" ] && diag "api-user stderr: $(cat "$HT_TMP/api.err")"

# rep FILE: heaptool report --detail --json FILE into $HT_TMP/r.json.
rep() {
	timeout $T "$HEAPTOOL" report --detail --json "$1" >"$HT_TMP/r.json" \
	    2>"$HT_TMP/r.err"
}

# exact DESC: the totals and two sites of api-user's first session.
exact() {
	python3 - "$HT_TMP/r.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
t = j["totals"]
want = dict(inuse_bytes=10000, inuse_objects=10, alloc_bytes=25000,
            alloc_objects=15, samples=15, live_samples=10)
bad = ["%s %s, want %s" % (k, t.get(k), v) for k, v in want.items()
       if t.get(k) != v]
def site(fn):
    for s in j["sites"]:
        if s["frames"] and s["frames"][0].get("function") == fn:
            return s
keep, temp = site("api_keep"), site("api_temp")
if keep is None or (keep["inuse_bytes"], keep["inuse_objects"],
                    keep["alloc_bytes"]) != (10000, 10, 10000):
    bad.append("api_keep: %r" % (keep,))
if temp is None or (temp["inuse_bytes"], temp["alloc_bytes"],
                    temp["alloc_objects"]) != (0, 15000, 5):
    bad.append("api_temp: %r" % (temp,))
print("; ".join(bad))
EOF
}

rep "$D/first.heap"
ok $? "first.heap: heaptool report reads it"
is "" "$(exact)" "first.heap: exact totals, api_keep and api_temp"
is 600 "$(stat -c %a "$D/first.heap")" "first.heap: mode 0600"
rep "$D/second.heap"
ok $? "second.heap: heaptool report reads it"
is "" "$(exact)" "second.heap (after stop): the same, not what came after"
is stopped "$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["session"]["state"])' "$HT_TMP/r.json")" \
    "second.heap: the session is stopped"
for i in 0 1 2 3; do
	rep "$D/thr.$i.heap"
	is "" "$(exact)" "thr.$i.heap: written from a thread, the same figures"
done

# flags FILE: META's flags, from the file itself.
flags() {
	python3 -c 'import struct, sys
b = open(sys.argv[1], "rb").read()
print(struct.unpack_from("<I", b, 16 + 8 + 28)[0])' "$1"
}

set -- "$D"/auto.*.heap
n=$#
[ -f "$1" ] && [ "$n" -ge 2 ]
ok $? "enable_dumps: $n files auto.PID.SEQ.heap"
is 8 "$(flags "$1")" "the first one is an every-bytes dump (0x8)"
req=0
for f in "$D"/auto.*.heap; do
	[ "$(flags "$f")" = 32 ] && req=$((req + 1))
done
is 1 "$req" "one is heaptool_dump(NULL)'s (0x20)"
all=0
for f in "$D"/auto.*.heap; do
	rep "$f" || all=1
done
ok $all "every auto dump is readable"

if command -v nm >/dev/null 2>&1; then
	nm -D --defined-only "$HT_BUILDDIR/libheaptool-agent.so" |
	    awk '$2 != "A" { print $3 }' | sort >"$HT_TMP/exports"
	is "heaptool_agent_revive
heaptool_dump
heaptool_enable_dumps
heaptool_inline
heaptool_start
heaptool_stop
heaptool_strerror
heaptool_tags_v1" "$(cat "$HT_TMP/exports")" \
	    "the agent exports the API (and attach's entry point, the inline backend's block, the tags' table)"
else
	skip "nm not installed"
fi

pc=$HT_BUILDDIR/heaptool.pc
if [ -f "$pc" ] && command -v pkg-config >/dev/null 2>&1; then
	libs=$(PKG_CONFIG_PATH=$HT_BUILDDIR pkg-config --libs heaptool)
	case $libs in
	*-Wl,-rpath,*/heaptool*-l:libheaptool-agent.so*) ok 0 \
	    "heaptool.pc: the agent, with an rpath ($libs)" ;;
	*) ok 1 "heaptool.pc: the agent, with an rpath ($libs)" ;;
	esac
else
	skip "no heaptool.pc or no pkg-config"
fi

if command -v mandoc >/dev/null 2>&1; then
	mandoc -Tlint -Wwarning "$HT_SRCDIR/man/heaptool.3" >"$HT_TMP/lint" 2>&1
	s=$?
	ok $s "heaptool(3) lints clean"
	[ $s -eq 0 ] || diag "$(cat "$HT_TMP/lint")"
else
	skip "mandoc not installed"
fi

done_testing
