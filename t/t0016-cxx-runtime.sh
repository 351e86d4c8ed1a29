#!/bin/sh
# What the C++ runtime allocates in its own code, counted once, at rate 1,
# under the user's functions (t/target/cxx-lib: std::string buffers built by
# libstdc++'s extern templates, a std::map, an ostringstream, a thrown
# exception, an over-aligned type by the aligned operator new, char arrays
# by the nothrow new[]):
#   - heaptool run: work_strings and work_map allocate exactly what the
#     fixture says the C++ rules make them allocate (it prints the figures),
#     and what is still in use at exit, and so does work_forms (20 blocks
#     of 2920 bytes, 5 of 960 kept); work_stream and work_exception
#     allocate and free; no site's innermost frame is an operator new (the
#     site is its caller);
#   - heaptrack, where it is installed, counts the same blocks under each of
#     the five functions and the same bytes still in use;
#   - heaptool attach, start --rate 1, the work, report: the same figures,
#     and no allocation outside the five functions;
#   - the same fixture built with clang++ -stdlib=libc++, where libc++ is
#     installed;
#   - a program that replaces operator new (t/target/cxx-replace): with one
#     that calls malloc, each of its calls (the fixture counts them, from
#     libstdc++ and from its own code, through new[] and the nothrow form)
#     is one block, counted once; with a pool that calls no allocator,
#     there is nothing of it to count (the pool is the program's own
#     allocator, which heaptool does not see), and nothing is counted.
# Every program's output and exit status are the same under heaptool.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/ptrace.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
for f in cxx-lib cxx-replace; do
	[ -x "$TARGETS/$f" ] ||
	    bail "$TARGETS/$f not built (make check builds it)"
done
unset HEAPTOOL_SEED LD_PRELOAD
T=120 # seconds: any command that takes longer is hung
FUNCS="work_strings work_map work_stream work_exception work_forms"
FN=$HT_SRCDIR/t/lib/htfuncs.py

have_heaptrack=0
if command -v heaptrack >/dev/null 2>&1 &&
    command -v heaptrack_print >/dev/null 2>&1; then
	have_heaptrack=1
fi
NO_HEAPTRACK="heaptrack is not installed (apt-get install heaptrack)"

# field FILE WORD N: the Nth field of the line of FILE starting with WORD.
field() {
	awk -v w="$2" -v n="$3" '$1 == w { print $n; exit }' "$1"
}

# run_both NAME BIN ARGS...: BIN ARGS plainly and under heaptool run
# --rate 1; the same output and exit status 0; the per-function totals of
# the profile in $HT_TMP/NAME.funcs, the output in $HT_TMP/NAME.out.
run_both() {
	_n=$1
	shift
	timeout $T "$@" >"$HT_TMP/$_n.plain" 2>&1
	_p=$?
	timeout $T "$HEAPTOOL" run --rate 1 -o "$HT_TMP/$_n.heap" -- "$@" \
	    >"$HT_TMP/$_n.out" 2>"$HT_TMP/$_n.err"
	_h=$?
	[ $_p -eq 0 ] && [ $_h -eq 0 ] &&
	    cmp -s "$HT_TMP/$_n.plain" "$HT_TMP/$_n.out"
	ok $? "$_n: exit 0 and the same output under heaptool run" ||
	    diag "status $_p plain, $_h under heaptool run:" \
		"$(head -c 2000 "$HT_TMP/$_n.err")"
	timeout $T "$HEAPTOOL" report --json --detail "$HT_TMP/$_n.heap" \
	    >"$HT_TMP/$_n.json" 2>"$HT_TMP/$_n.rerr" &&
	    python3 "$FN" heaptool "$HT_TMP/$_n.json" $FUNCS work_replace \
		>"$HT_TMP/$_n.funcs"
	ok $? "$_n: heaptool report --json --detail reads the profile" ||
	    diag "$(head -c 2000 "$HT_TMP/$_n.rerr")"
}

# heaptrack_of NAME BIN ARGS...: the per-function totals of heaptrack's
# profile of BIN ARGS in $HT_TMP/NAME.ht.
heaptrack_of() {
	_n=$1
	shift
	timeout $T heaptrack -o "$HT_TMP/$_n.htd" "$@" >"$HT_TMP/$_n.hterr" 2>&1
	_f=$(ls "$HT_TMP/$_n.htd".* 2>/dev/null | head -n 1)
	[ -n "$_f" ] &&
	    timeout $T heaptrack_print -f "$_f" \
		--flamegraph-cost-type allocations -F "$HT_TMP/$_n.hta" \
		>/dev/null 2>>"$HT_TMP/$_n.hterr" &&
	    timeout $T heaptrack_print -f "$_f" --flamegraph-cost-type leaked \
		-F "$HT_TMP/$_n.htl" >/dev/null 2>>"$HT_TMP/$_n.hterr" &&
	    python3 "$FN" heaptrack "$HT_TMP/$_n.hta" "$HT_TMP/$_n.htl" \
		$FUNCS work_replace >"$HT_TMP/$_n.ht"
	ok $? "$_n: heaptrack profiles it" ||
	    diag "$(head -c 2000 "$HT_TMP/$_n.hterr")"
}

# same_as_heaptrack LABEL FUNCS_FILE HT_FILE FUNC...: the blocks each FUNC
# allocated and the bytes it still holds, as heaptrack counts them.
same_as_heaptrack() {
	_l=$1 _a=$2 _b=$3
	shift 3
	for _fn in "$@"; do
		is "$(field "$_b" "$_fn" 2) $(field "$_b" "$_fn" 5)" \
		    "$(field "$_a" "$_fn" 2) $(field "$_a" "$_fn" 5)" \
		    "$_l: $_fn: blocks and bytes in use as heaptrack counts them"
	done
}

# check_lib LABEL FUNCS_FILE OUTPUT: cxx-lib's figures.  Its report line:
# "cxx-lib: strings OBJ BYTES map OBJ BYTES checksum X".
check_lib() {
	_l=$1 _f=$2
	set -- $(grep '^cxx-lib: strings ' "$3")
	is "$3 $4 $3 $4" "$(field "$_f" work_strings 2) \
$(field "$_f" work_strings 3) $(field "$_f" work_strings 4) \
$(field "$_f" work_strings 5)" \
	    "$_l: work_strings: the 1000 strings and the vector, all in use"
	is "$6 $7 0 0" "$(field "$_f" work_map 2) $(field "$_f" work_map 3) \
$(field "$_f" work_map 4) $(field "$_f" work_map 5)" \
	    "$_l: work_map: 10,000 nodes and strings, all freed"
	_s=$(field "$_f" work_stream 2)
	[ "${_s:-0}" -ge 1 ] && [ "$(field "$_f" work_stream 5)" = 0 ]
	ok $? "$_l: work_stream: the stream's buffers ($_s), all freed"
	_s=$(field "$_f" work_exception 2)
	[ "${_s:-0}" -ge 2 ]
	ok $? "$_l: work_exception: the exception and its message ($_s)"
	is "20 2920 5 960" "$(field "$_f" work_forms 2) \
$(field "$_f" work_forms 3) $(field "$_f" work_forms 4) \
$(field "$_f" work_forms 5)" \
	    "$_l: work_forms: aligned new and nothrow new[], once each"
	is 0 "$(field "$_f" operator-new-sites 2)" \
	    "$_l: no site's innermost frame is an operator new"
}

# libstdc++, run.
run_both run "$TARGETS/cxx-lib" run
check_lib run "$HT_TMP/run.funcs" "$HT_TMP/run.out"
if [ $have_heaptrack -eq 1 ]; then
	heaptrack_of ht "$TARGETS/cxx-lib" run
	same_as_heaptrack run "$HT_TMP/run.funcs" "$HT_TMP/ht.ht" $FUNCS
else
	for _i in 1 2 3 4 5 6; do skip "$NO_HEAPTRACK"; done
fi

# libstdc++, attach.
if ptrace_permitted; then
	mkfifo "$HT_TMP/in"
	timeout $T "$TARGETS/cxx-lib" wait <"$HT_TMP/in" >"$HT_TMP/wait.out" \
	    2>&1 &
	bg=$!
	exec 3>"$HT_TMP/in"
	_i=0
	until grep -q '^ready ' "$HT_TMP/wait.out" 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -gt $((T * 20)) ] && bail "cxx-lib wait did not start"
		sleep 0.05
	done
	pid=$(field "$HT_TMP/wait.out" ready 2)
	timeout $T "$HEAPTOOL" attach "$pid" >"$HT_TMP/att.err" 2>&1 &&
	    timeout $T "$HEAPTOOL" start -p "$pid" --rate 1 \
		>>"$HT_TMP/att.err" 2>&1
	ok $? "attach: heaptool attach and start --rate 1" ||
	    diag "$(head -c 2000 "$HT_TMP/att.err")"
	echo work >&3
	_i=0
	until grep -q '^done$' "$HT_TMP/wait.out" 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -gt $((T * 20)) ] && bail "cxx-lib did not do its work"
		sleep 0.05
	done
	timeout $T "$HEAPTOOL" report -p "$pid" --json --detail \
	    >"$HT_TMP/att.json" 2>>"$HT_TMP/att.err" &&
	    python3 "$FN" heaptool "$HT_TMP/att.json" $FUNCS \
		>"$HT_TMP/att.funcs"
	ok $? "attach: heaptool report --json --detail -p" ||
	    diag "$(head -c 2000 "$HT_TMP/att.err")"
	check_lib attach "$HT_TMP/att.funcs" "$HT_TMP/wait.out"
	# Nothing else ran in the session: every block is under one of the
	# five functions.
	all=$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["totals"]["alloc_objects"])' \
	    "$HT_TMP/att.json")
	is "$all" "$(awk '$1 ~ /^work_/ { n += $2 } END { print n + 0 }' \
	    "$HT_TMP/att.funcs")" \
	    "attach: every block of the session is under its function"
	for fn in $FUNCS; do
		is "$(field "$HT_TMP/run.funcs" "$fn" 2)" \
		    "$(field "$HT_TMP/att.funcs" "$fn" 2)" \
		    "attach: $fn: the blocks of heaptool run"
	done
	timeout $T "$HEAPTOOL" detach -p "$pid" >>"$HT_TMP/att.err" 2>&1
	ok $? "attach: detach"
	exec 3>&-
	wait $bg
	is 0 $? "attach: cxx-lib exits 0"
else
	for _i in $(seq 1 16); do skip "$ptrace_why"; done
fi

# libc++, run, where clang++ can build against it.
lcx=$HT_TMP/cxx-lib-libcxx
if command -v clang++ >/dev/null 2>&1 &&
    clang++ -std=c++17 -stdlib=libc++ -g -O2 -fomit-frame-pointer -DFX_WANT_O2 \
	-I"$HT_SRCDIR/t/target" -o "$lcx" "$HT_SRCDIR/t/target/cxx-lib.cc" \
	>"$HT_TMP/clang.err" 2>&1 &&
    readelf -d "$lcx" | grep -q 'NEEDED.*libc++'; then
	run_both libcxx "$lcx" run
	check_lib libc++ "$HT_TMP/libcxx.funcs" "$HT_TMP/libcxx.out"
	if [ $have_heaptrack -eq 1 ]; then
		heaptrack_of htlcx "$lcx" run
		same_as_heaptrack libc++ "$HT_TMP/libcxx.funcs" \
		    "$HT_TMP/htlcx.ht" $FUNCS
	else
		for _i in 1 2 3 4 5 6; do skip "$NO_HEAPTRACK"; done
	fi
else
	diag "$(head -c 1000 "$HT_TMP/clang.err" 2>/dev/null)"
	for _i in $(seq 1 14); do
		skip "clang++ -stdlib=libc++ cannot build here" \
		    "(apt-get install clang libc++-dev libc++abi-dev)"
	done
fi

# A replaced operator new.
for mode in malloc pool; do
	run_both "$mode" "$TARGETS/cxx-replace" "$mode"
	n=$(awk '/^cxx-replace / { print $4 }' "$HT_TMP/$mode.out")
	[ "${n:-0}" -gt 0 ]
	ok $? "$mode: the replacement ran (${n:-0} calls)"
	[ "$mode" = malloc ] || n=0
	is "$n 0" "$(field "$HT_TMP/$mode.funcs" work_replace 2) \
$(field "$HT_TMP/$mode.funcs" work_replace 5)" \
	    "$mode: work_replace: $n blocks, once each, all freed"
	is 0 "$(field "$HT_TMP/$mode.funcs" operator-new-sites 2)" \
	    "$mode: no site's innermost frame is an operator new"
	if [ $have_heaptrack -eq 1 ]; then
		heaptrack_of "ht$mode" "$TARGETS/cxx-replace" "$mode"
		same_as_heaptrack "$mode" "$HT_TMP/$mode.funcs" \
		    "$HT_TMP/ht$mode.ht" work_replace
	else
		for _i in 1 2; do skip "$NO_HEAPTRACK"; done
	fi
done

done_testing
