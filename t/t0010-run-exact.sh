#!/bin/sh
# heaptool run --rate 1 samples every allocation: the fixtures' sites (see the
# tables at the top of t/target/alloc-sites.c and t/target/cxx-new.cc) must
# come out with exact bytes and objects, named with function and file:line,
# with whole stacks, for the -O0 and the -O2 -fomit-frame-pointer builds; and
# the fixtures' own output and exit status must not change.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/htcheck.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
for f in alloc-sites-O0 alloc-sites-O2 cxx-new-O0 cxx-new-O2 libdlfix.so; do
	[ -x "$TARGETS/$f" ] ||
	    bail "$TARGETS/$f not built (make check builds it)"
done
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
unset HEAPTOOL_SEED

# run_both NAME BIN ARGS: run BIN plainly and under heaptool run --rate 1;
# compare stdout and exit status; leave the JSON report in $HT_TMP/NAME.json.
# Returns nonzero if there is no report to check.
run_both() {
	_name=$1
	shift
	timeout 60 "$@" >"$HT_TMP/$_name.plain" 2>"$HT_TMP/$_name.plain.err"
	_plain=$?
	timeout 60 "$HEAPTOOL" run --rate 1 -o "$HT_TMP/$_name.heap" -- "$@" \
	    >"$HT_TMP/$_name.out" 2>"$HT_TMP/$_name.err"
	_ht=$?
	is 0 "$_plain" "$_name: exits 0 by itself"
	is "$_plain" "$_ht" "$_name: exit status unchanged under heaptool run"
	[ "$_ht" -eq "$_plain" ] || diag "heaptool run said:" \
	    "$(head -c 2000 "$HT_TMP/$_name.err")"
	cmp -s "$HT_TMP/$_name.plain" "$HT_TMP/$_name.out"
	ok $? "$_name: output unchanged under heaptool run"
	timeout 60 "$HEAPTOOL" report --json --detail "$HT_TMP/$_name.heap" \
	    >"$HT_TMP/$_name.json" 2>"$HT_TMP/$_name.report.err"
	_st=$?
	ok $_st "$_name: heaptool report --json --detail reads the profile"
	if [ $_st -ne 0 ]; then
		diag "$(head -c 2000 "$HT_TMP/$_name.report.err")"
		return 1
	fi
	want wellformed "$HT_TMP/$_name.json"
	want field "$HT_TMP/$_name.json" session.rate 1
	want exact "$HT_TMP/$_name.json"
	want no-agent-frames "$HT_TMP/$_name.json"
	return 0
}

# site FUNC INUSE_BYTES INUSE_OBJECTS ALLOC_BYTES ALLOC_OBJECTS [OPTIONS]
site() {
	_f=$1 _ib=$2 _io=$3 _ab=$4 _ao=$5
	shift 5
	want site "$json" --src "$src" --func "$_f" inuse_bytes="$_ib" \
	    inuse_objects="$_io" alloc_bytes="$_ab" alloc_objects="$_ao" \
	    --chain "$_f,main" "$@"
}

for v in O0 O2; do
	name=alloc-sites-$v
	label=$name
	src=$HT_SRCDIR/t/target/alloc-sites.c
	json=$HT_TMP/$name.json
	if run_both "$name" "$TARGETS/$name"; then
		site keep_small 4800 100 4800 100 --module "$name"
		site keep_large 3145728 3 3145728 3
		site churn 0 0 64000 1000
		# realloc of a sampled block: a free plus a new allocation.
		site realloc_grow 1000 1 403300 12
		site calloc_keep 10000 10 10000 10
		site posix_memalign_keep 2048 8 2048 8
		site aligned_alloc_keep 1536 4 1536 4
		site memalign_keep 2000 2 2000 2
		site valloc_keep 2100 3 2100 3
		site reallocarray_keep 1650 5 1650 5
		want site "$json" --src "$src" --func thread_keep \
		    --chain thread_keep,thread_main inuse_bytes=6660 \
		    inuse_objects=20 alloc_bytes=6660 alloc_objects=20
		want site "$json" --src "$src" --func chain_c \
		    --chain chain_c,chain_b,chain_a,main inuse_bytes=8638 \
		    inuse_objects=7 alloc_bytes=8638 alloc_objects=7
		want site "$json" --src "$HT_SRCDIR/t/target/dlfix.c" \
		    --func dlfix_keep --module libdlfix.so \
		    --chain dlfix_keep,use_dlfix,main inuse_bytes=693 \
		    inuse_objects=9 alloc_bytes=693 alloc_objects=9
		want site "$json" --src "$src" --func inl_alloc --inlined \
		    --chain inl_alloc,keep_inlined,main inuse_bytes=1926 \
		    inuse_objects=6 alloc_bytes=1926 alloc_objects=6
		checks
	fi

	name=cxx-new-$v
	label=$name
	src=$HT_SRCDIR/t/target/cxx-new.cc
	json=$HT_TMP/$name.json
	if run_both "$name" "$TARGETS/$name"; then
		site keep_new 2000 50 2000 50 --module "$name"
		site keep_new_array 4000 10 4000 10
		site new_churn 0 0 4000 100
		site delete_some 2000 10 4000 20
		site keep_aligned_new 768 4 768 4
		site aligned_churn 0 0 1920 10
		site keep_nothrow 120 3 120 3
		# The vector's buffer is allocated inside libstdc++'s templates:
		# the site whose stack passes through grow_vector at the marker.
		want site "$json" --src "$src" --func grow_vector \
		    --any-frame --chain grow_vector,main inuse_bytes=4096 \
		    inuse_objects=1 alloc_bytes=8188 alloc_objects=11
		checks
	fi
done

done_testing
