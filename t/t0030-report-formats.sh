#!/bin/sh
# heaptool report's formats (text, json, pprof, collapsed, svg) and options
# (--sort, --top, --threshold, --at-peak, -o) on one exact profile of
# t/target/alloc-sites-O2 (heaptool run --rate 1).  No golden files: the
# JSON report (--detail) of the same options is the reference every other
# format is read back and compared with (t/lib/htformats.py decodes pprof
# with its own protobuf reader), and the fixture's table of sizes gives the
# figures the JSON must have.  A handmade sampled profile adds a module that
# is not on this machine, sites folded by the agent and a peak whose
# interval can be computed by hand.  go tool pprof reads the export where Go is
# installed; node runs the flame graph's script where it is installed.
. "$(dirname "$0")/tap/libtap.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
for f in alloc-sites-O2 cxx-new-O2 libdlfix.so; do
	[ -x "$TARGETS/$f" ] ||
	    bail "$TARGETS/$f not built (make check builds it)"
done
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
unset HEAPTOOL_SEED

src=$HT_SRCDIR/t/target/alloc-sites.c
prof=$HT_TMP/as.heap
timeout 60 "$HEAPTOOL" run --rate 1 -o "$prof" -- \
    "$TARGETS/alloc-sites-O2" >"$HT_TMP/run.out" 2>"$HT_TMP/run.err"
st=$?
ok $([ $st -eq 0 ] && [ -s "$prof" ]; echo $?) \
    "heaptool run --rate 1 alloc-sites-O2 writes a profile"
[ -s "$prof" ] || bail "no profile: $(head -c 1000 "$HT_TMP/run.err")"

# rep OUT ARGS...: heaptool report ARGS PROFILE >OUT; a test that it exits 0
# and says nothing on stderr but notes on modules it could not read.
rep() {
	_out=$1
	shift
	timeout 60 "$HEAPTOOL" report "$@" "$prof" >"$_out" 2>"$HT_TMP/err"
	_st=$?
	ok $([ $_st -eq 0 ] && ! grep -qv '^heaptool: note: ' "$HT_TMP/err"
	    echo $?) "report $*"
	[ $_st -eq 0 ] || diag "status $_st: $(head -c 1000 "$HT_TMP/err")"
}

# want ARGS: queue a check of t/lib/htformats.py; checks, at the end, runs
# them all in one python3 (it starts slowly on a busy machine) and turns
# their lines into TAP.
TAB=$(printf '\t')
: >"$HT_TMP/checks"
want() {
	for _a in "$@"; do
		printf "'%s' " "$(printf '%s' "$_a" | sed "s/'/'\\\\''/g")"
	done >>"$HT_TMP/checks"
	echo >>"$HT_TMP/checks"
}
checks() {
	python3 "$HT_SRCDIR/t/lib/htformats.py" - <"$HT_TMP/checks" \
	    >"$HT_TMP/py.out" 2>&1
	_pst=$?
	: >"$HT_TMP/checks"
	_pnot=0
	while IFS= read -r _pl; do
		case $_pl in
		"ok$TAB"*) ok 0 "${_pl#"ok$TAB"}" ;;
		"not ok$TAB"*) ok 1 "${_pl#"not ok$TAB"}"; _pnot=1 ;;
		*) diag "$_pl" ;;
		esac
	done <"$HT_TMP/py.out"
	[ "$_pst" -eq 0 ] || [ "$_pnot" -ne 0 ] ||
	    ok 1 "htformats.py failed (status $_pst)"
}

# usage errors: exit 2, one line, nothing written
usage_error() {
	_desc=$1
	shift
	"$HEAPTOOL" report "$@" "$prof" >"$HT_TMP/out" 2>"$HT_TMP/err"
	_st=$?
	ok $([ $_st -eq 2 ] && [ ! -s "$HT_TMP/out" ] &&
	    [ "$(wc -l <"$HT_TMP/err")" -eq 1 ] &&
	    grep -q '^heaptool: ' "$HT_TMP/err"; echo $?) "$_desc"
}
usage_error "--format that heaptool does not write" --format xml
usage_error "--sort of no column" --sort size
usage_error "--threshold that is not a size" --threshold 5Q
usage_error "--sort without a value" --sort
if command -v script >/dev/null 2>&1; then
	for f in pprof svg; do
		script -qec "'$HEAPTOOL' report --format $f '$prof'" /dev/null \
		    >"$HT_TMP/tty.out" 2>&1
		st=$?
		ok $([ $st -eq 2 ] &&
		    grep -q "^heaptool: report: --format $f writes a file" \
		    "$HT_TMP/tty.out"; echo $?) \
		    "--format $f to a terminal: a usage error"
		script -qec "'$HEAPTOOL' report --format $f \
		    -o '$HT_TMP/tty.$f' '$prof'" /dev/null \
		    >"$HT_TMP/tty.out" 2>&1
		ok $([ $? -eq 0 ] && [ -s "$HT_TMP/tty.$f" ]; echo $?) \
		    "--format $f -o FILE from a terminal writes FILE"
	done
else
	for i in 1 2 3 4; do
		skip "script(1) not installed: no terminal to test with"
	done
fi

# JSON: every option, and the summary always the sum of the detail
# (each report costs a symbolization: the folds in every combination for
# the default column only).
rep "$HT_TMP/now.json" --json --detail
ifs=$IFS
for sort in inuse alloc objects; do
	for peak in "" --at-peak; do
		base=$HT_TMP/j-$sort$peak
		rep "$base.json" --json --detail --sort $sort $peak
		want consistent "$base.json" --sort $sort
		want same-totals "$HT_TMP/j-inuse$peak.json" "$base.json"
		folds="--top 2 --threshold 1KiB"
		[ $sort = inuse ] && folds="--top 3,--threshold 5K,$folds"
		IFS=,
		for fold in $folds; do
			IFS=$ifs
			name=$base-$(echo $fold | tr 'A-Z' 'a-z' |
			    tr -dc 'a-z0-9')
			rep "$name.json" --json --detail --sort $sort \
			    $peak $fold
			want consistent "$name.json" --sort $sort $fold
			want same-totals "$base.json" "$name.json"
		done
		IFS=$ifs
	done
done
want peak "$HT_TMP/j-inuse--at-peak.json" "$HT_TMP/now.json"
# The fixture's table: the peak is reached when realloc_grow's chain holds
# its 300000-byte block, after keep_small and keep_large and before every
# other site; churn's blocks are all freed by then.
want site "$HT_TMP/j-inuse--at-peak.json" realloc_grow inuse_bytes=300000 \
    inuse_objects=1 alloc_bytes=403300 alloc_objects=12
want site "$HT_TMP/j-inuse--at-peak.json" keep_large inuse_bytes=3145728 \
    inuse_objects=3
want site "$HT_TMP/j-inuse--at-peak.json" keep_small inuse_bytes=4800 \
    inuse_objects=100
for f in churn calloc_keep chain_c thread_keep dlfix_keep; do
	want site "$HT_TMP/j-inuse--at-peak.json" $f inuse_bytes=0 \
	    inuse_objects=0
done
want site "$HT_TMP/now.json" realloc_grow inuse_bytes=1000 inuse_objects=1

# text: the same sums, read off the --bytes output
rep "$HT_TMP/t.txt" --detail --bytes
want text "$HT_TMP/t.txt" "$HT_TMP/now.json"
rep "$HT_TMP/t-peak.txt" --detail --bytes --at-peak --threshold 5K
want text "$HT_TMP/t-peak.txt" "$HT_TMP/j-inuse--at-peak-threshold5k.json"
rep "$HT_TMP/t-alloc.txt" --detail --bytes --sort alloc --top 2 \
    --threshold 1KiB
want text "$HT_TMP/t-alloc.txt" "$HT_TMP/j-alloc-top2threshold1kib.json"
rep "$HT_TMP/t-objects.txt" --detail --bytes --sort objects
want text "$HT_TMP/t-objects.txt" "$HT_TMP/j-objects.json"
rep "$HT_TMP/peak.txt" --at-peak
ok $(head -n 1 "$HT_TMP/peak.txt" | grep -q '; at peak, ' &&
    ! grep -q '^by thread' "$HT_TMP/peak.txt"; echo $?) \
    "--at-peak: the header says so; no threads (not recorded at the peak)"

# pprof
funcs="--func chain_c --func keep_small --func keep_large"
rep "$HT_TMP/all.pb.gz" --format pprof
want pprof "$HT_TMP/all.pb.gz" "$HT_TMP/now.json" --src "$src" $funcs
rep "$HT_TMP/peak.pb.gz" --format pprof --at-peak --sort alloc --top 2 \
    --threshold 1KiB
want pprof "$HT_TMP/peak.pb.gz" \
    "$HT_TMP/j-alloc--at-peak-top2threshold1kib.json"
"$HEAPTOOL" report --format pprof -o "$HT_TMP/o.pb.gz" "$prof" \
    >"$HT_TMP/out" 2>&1
ok $([ $? -eq 0 ] && [ ! -s "$HT_TMP/out" ] &&
    cmp -s "$HT_TMP/o.pb.gz" "$HT_TMP/all.pb.gz"; echo $?) \
    "-o FILE: the same bytes in FILE, nothing on stdout"
if command -v go >/dev/null 2>&1; then
	# Every node: by default pprof hides those below half a percent of
	# the total (-nodefraction=0.005), and chain_c's 8.6 KB is 0.3% of
	# alloc-sites' 3 MB in use.
	timeout 120 go tool pprof -top -nodefraction=0 -nodecount=1000000 \
	    -sample_index=inuse_space "$HT_TMP/all.pb.gz" >"$HT_TMP/gotop" 2>&1
	ok $([ $? -eq 0 ] && grep -q ' keep_large$' "$HT_TMP/gotop" &&
	    grep -q ' chain_c$' "$HT_TMP/gotop" &&
	    grep -q ' keep_small$' "$HT_TMP/gotop"; echo $?) \
	    "go tool pprof -top reads the export, small sites too"
	[ $? -eq 0 ] || diag "$(head -c 2000 "$HT_TMP/gotop")"
else
	skip "go is not installed: go tool pprof not tried"
fi

# collapsed stacks: for each sort column, whole and folded
for sort in inuse alloc objects; do
	case $sort in
	inuse) key=inuse_bytes ;;
	alloc) key=alloc_bytes ;;
	objects) key=inuse_objects ;;
	esac
	rep "$HT_TMP/c-$sort.txt" --format collapsed --sort $sort
	want collapsed "$HT_TMP/c-$sort.txt" "$HT_TMP/j-$sort.json" --key $key
	rep "$HT_TMP/c-$sort-fold.txt" --format collapsed --sort $sort \
	    --at-peak --top 2 --threshold 1KiB
	want collapsed "$HT_TMP/c-$sort-fold.txt" \
	    "$HT_TMP/j-$sort--at-peak-top2threshold1kib.json" --key $key
done
ok $(grep -q ';main;chain_a;chain_b;chain_c 8638$' "$HT_TMP/c-inuse.txt"
    echo $?) "collapsed: the chain main;chain_a;chain_b;chain_c, 8638 bytes"
ok $(grep -q ';main;realloc_grow 403300$' "$HT_TMP/c-alloc.txt"
    echo $?) "collapsed --sort alloc: realloc_grow allocated 403300 bytes"

# the flame graph
rep "$HT_TMP/f.svg" --format svg
want svg "$HT_TMP/f.svg" "$HT_TMP/c-inuse.txt" \
    --total "$HT_TMP/now.json:inuse_bytes" --src "$src" \
    --func chain_c --func keep_large --func keep_small
rep "$HT_TMP/f-alloc.svg" --format svg --sort alloc --at-peak --top 2 \
    --threshold 1KiB
want svg "$HT_TMP/f-alloc.svg" "$HT_TMP/c-alloc-fold.txt" \
    --total "$HT_TMP/now.json:alloc_bytes"
if command -v node >/dev/null 2>&1; then
	node "$HT_SRCDIR/t/lib/htflame.js" "$HT_TMP/f.svg" chain_b 'chain_' \
	    >"$HT_TMP/js.out" 2>&1
	jst=$?
	while IFS= read -r l; do
		case $l in
		"ok$TAB"*) ok 0 "${l#"ok$TAB"}" ;;
		"not ok$TAB"*) ok 1 "${l#"not ok$TAB"}"; jst=0 ;;
		*) diag "$l" ;;
		esac
	done <"$HT_TMP/js.out"
	[ $jst -eq 0 ] || ok 1 "node t/lib/htflame.js failed (status $jst)"
else
	skip "node is not installed: the flame graph's script not run"
fi

# C++ names (spaces, <, >, &, commas) through every export
prof=$HT_TMP/cxx.heap
timeout 60 "$HEAPTOOL" run --rate 1 -o "$prof" -- "$TARGETS/cxx-new-O2" \
    >"$HT_TMP/run.out" 2>"$HT_TMP/run.err"
ok $([ -s "$prof" ]; echo $?) \
    "heaptool run --rate 1 cxx-new-O2 writes a profile"
rep "$HT_TMP/cxx.json" --json --detail
rep "$HT_TMP/cxx.txt" --format collapsed
rep "$HT_TMP/cxx.svg" --format svg
rep "$HT_TMP/cxx.pb.gz" --format pprof
want collapsed "$HT_TMP/cxx.txt" "$HT_TMP/cxx.json" --key inuse_bytes
want svg "$HT_TMP/cxx.svg" "$HT_TMP/cxx.txt" \
    --total "$HT_TMP/cxx.json:inuse_bytes"
want pprof "$HT_TMP/cxx.pb.gz" "$HT_TMP/cxx.json"
# grow_vector(unsigned_long): named from the symbol table, with its
# signature, as llvm-symbolizer names it.
ok $(grep -q '^[^ ]*;grow_vector[^;]*;std::vector<int,_std::allocator<int>_>' \
    "$HT_TMP/cxx.txt"; echo $?) \
    "collapsed: a C++ name's spaces become _ (std::vector<int,_...>)"
ok $(grep -q 'data-n="std::vector&lt;int, std::allocator&lt;int&gt; &gt;' \
    "$HT_TMP/cxx.svg"; echo $?) "svg: a C++ name escaped for XML"


# a sampled profile made here: folded sites, a missing module, intervals
prof=$HT_TMP/made.heap
python3 "$HT_SRCDIR/t/lib/htformats.py" mkprofile "$prof"
rep "$HT_TMP/m.json" --json --detail
rep "$HT_TMP/m-top.json" --json --detail --top 1
rep "$HT_TMP/m-peak.json" --json --detail --at-peak
rep "$HT_TMP/m.txt" --detail --bytes
rep "$HT_TMP/m-peak.txt" --detail --bytes --at-peak
rep "$HT_TMP/m.col" --format collapsed
rep "$HT_TMP/m.pb.gz" --format pprof --at-peak
grep -q '^heaptool: note: /nonexistent/prog: ' "$HT_TMP/err"
ok $? "an export says on stderr which module it could not read"
want consistent "$HT_TMP/m.json"
want consistent "$HT_TMP/m-top.json" --top 1
want consistent "$HT_TMP/m-peak.json"
want same-totals "$HT_TMP/m.json" "$HT_TMP/m-top.json"
want peak "$HT_TMP/m-peak.json" "$HT_TMP/m.json"
# Site A at the peak: 61440 bytes; its samples' variance per byte is
# 2e8 / 81920, so the variance is 1.5e8 and the interval 61440 -/+ 1.96
# sqrt(1.5e8).  Now: 40960 -/+ 1.96 sqrt(1e8).
want interval "$HT_TMP/m-peak.json" 0 37435 85445
want interval "$HT_TMP/m.json" 0 21360 60560
want text "$HT_TMP/m.txt" "$HT_TMP/m.json"
want text "$HT_TMP/m-peak.txt" "$HT_TMP/m-peak.json"
want collapsed "$HT_TMP/m.col" "$HT_TMP/m.json" --key inuse_bytes
want pprof "$HT_TMP/m.pb.gz" "$HT_TMP/m-peak.json"
checks
# The agent's folded record counts as its 5 sites and is always folded.
want field "$HT_TMP/m.json" totals.site_count 7
want field "$HT_TMP/m.json" 'sites[*].folded_sites' '[0, 0, 5]'
want field "$HT_TMP/m-top.json" 'sites[*].folded_sites' '[0, 6]'
# At the peak of a sampled profile the live samples are not known.
want field "$HT_TMP/m-peak.json" totals.live_samples null
want field "$HT_TMP/m-peak.json" 'sites[*].live_samples' '[null, null, null]'
want field "$HT_TMP/m-peak.json" 'sites[*].inuse_bytes' '[61440, 0, 500]'
ok $(grep -q '^(5_smaller_sites) 1000$' "$HT_TMP/m.col"; echo $?) \
    "collapsed: the agent's folded sites are one frame"
ok $(! grep -q 'live sample' "$HT_TMP/m-peak.txt"; echo $?) \
    "text at the peak of a sampled profile: no live samples claimed"

done_testing
