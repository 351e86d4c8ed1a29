#!/bin/sh
# Stacks as llvm-symbolizer --inlining prints them.  Exact runs of
# t/target/inline-chain-O2 (-O2 -g) and inline-chain-lto (-flto -O2 -g: every
# inlined instance names its abstract origin in another unit), which make
# allocations at the end of always_inline chains of depth 3 and 2 and in
# libfxalias.so, whose functions have several names at one address as
# glibc's do:
#   - each chain is there, frame by frame at the lines of the fixture's
#     markers, its inlined frames one address (t/lib/htcheck.py chain);
#   - the alias rule: fx_strdup, fx_start, fx_dup (never __GI___fx_strdup,
#     fx_start_impl, fx_start@@FX_2 or fx_dup_with_a_long_name), and no
#     internal glibc name (__GI_*, *_impl) in any frame;
#   - every frame of every site against llvm-symbolizer on the same
#     address (t/lib/htllvm.py: function, file and line), for the files as
#     built (DWARF 5), dwz-compressed (the names of inlined functions in the
#     alternate file), split with their debug files found by build-id
#     (--debug-dir) and by .gnu_debuglink.  The references for the
#     compressed and split copies are the files as built: the code is the
#     same, and LLVM 14 reads no dwz alternate file.
. "$(dirname "$0")/tap/libtap.sh"
. "$HT_SRCDIR/t/lib/htcheck.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
for f in inline-chain-O2 inline-chain-lto libfxalias.so; do
	[ -x "$TARGETS/$f" ] ||
	    bail "$TARGETS/$f not built (make check builds it)"
done
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
unset HEAPTOOL_SEED HEAPTOOL_SYSROOT HEAPTOOL_DEBUG_DIR

llvm=
for p in llvm-symbolizer llvm-symbolizer-19 llvm-symbolizer-18 \
    llvm-symbolizer-17 llvm-symbolizer-16 llvm-symbolizer-15 \
    llvm-symbolizer-14; do
	if command -v "$p" >/dev/null 2>&1; then
		llvm=$(command -v "$p")
		break
	fi
done
libc=$(ldd "$TARGETS/inline-chain-O2" 2>/dev/null |
    awk '$1 == "libc.so.6" { print $3 }')
src="--src $HT_SRCDIR/t/target/inline-chain.h"
src="$src --src $HT_SRCDIR/t/target/inline-chain.c"
src="$src --src $HT_SRCDIR/t/target/inline-chain2.c"
src="$src --src $HT_SRCDIR/t/target/fxalias.c"

# profile NAME DIR BIN [REPORT OPTION...]: heaptool run --rate 1 of DIR/BIN,
# then report --json --detail (with the options) into $HT_TMP/NAME.json.
profile() {
	_n=$1 _d=$2 _b=$3
	shift 3
	timeout 60 "$HEAPTOOL" run --rate 1 -o "$_d/$_n.heap" -- "$_d/$_b" \
	    >"$HT_TMP/$_n.out" 2>"$HT_TMP/$_n.err"
	_st=$?
	ok $([ $_st -eq 0 ] && [ -s "$_d/$_n.heap" ] &&
	    grep -q '^inline-chain: checksum' "$HT_TMP/$_n.out"; echo $?) \
	    "$_n: heaptool run --rate 1 $_b writes a profile"
	[ $_st -eq 0 ] || diag "status $_st: $(head -c 1000 "$HT_TMP/$_n.err")"
	timeout 60 "$HEAPTOOL" report --json --detail "$@" "$_d/$_n.heap" \
	    >"$HT_TMP/$_n.json" 2>"$HT_TMP/$_n.rerr"
	ok $? "$_n: report --json --detail $*" ||
	    diag "$(head -c 1000 "$HT_TMP/$_n.rerr")"
}

# compare NAME BIN REF-DIR [LLVM ARG...]: every frame of $HT_TMP/NAME.json
# in BIN, libfxalias.so and libc against llvm-symbolizer on the files of
# REF-DIR (and libc's).
compare() {
	_n=$1 _b=$2 _r=$3
	shift 3
	if [ -z "$llvm" ]; then
		skip "llvm-symbolizer not found (Debian: apt-get install llvm)"
		return
	fi
	_args=
	for _a in "$@"; do _args="$_args --llvm-arg $_a"; done
	# shellcheck disable=SC2086
	python3 "$HT_SRCDIR/t/lib/htllvm.py" --symbolizer "$llvm" $_args \
	    --module "$_b=$_r/$_b" --module "libfxalias.so=$_r/libfxalias.so" \
	    ${libc:+--module libc.so.6=$libc} "$HT_TMP/$_n.json" \
	    >"$HT_TMP/$_n.cmp" 2>&1
	ok $? "$_n: every frame as llvm-symbolizer --inlining prints it" ||
	    diag "$(head -c 4000 "$HT_TMP/$_n.cmp")"
	diag "$_n: $(head -1 "$HT_TMP/$_n.cmp")"
}

# internal NAME: no frame of NAME.json has an internal alias's name.
internal() {
	python3 - "$HT_TMP/$1.json" >"$HT_TMP/$1.int" <<'EOF'
import json, re, sys
bad = set()
for s in json.load(open(sys.argv[1]))["sites"]:
    for f in s["frames"]:
        fn = f["function"] or ""
        if re.search(r"^__GI_|_impl$|_alias_\d$|@|^fx_dup_with", fn):
            bad.add(fn)
print("\n".join(sorted(bad)))
sys.exit(1 if bad else 0)
EOF
	ok $? "$1: no internal alias name in any frame" ||
	    diag "$(cat "$HT_TMP/$1.int")"
}

for b in O2 lto; do
	d=$HT_TMP/$b
	mkdir -p "$d"
	cp "$TARGETS/inline-chain-$b" "$TARGETS/libfxalias.so" "$d/"
	profile "$b" "$d" "inline-chain-$b"
	j=$HT_TMP/$b.json
	label=$b
	# shellcheck disable=SC2086
	{
		want chain "$j" $src --inlined 4 \
		    ic1_3,ic1_2,ic1_1,ic_site_a,main
		want chain "$j" $src --inlined 4 \
		    ic2_3,ic2_2,ic2_1,ic_site_b,main
		want chain "$j" $src --inlined 3 ic1_3,ic1_2,ic_site_c,main
		want chain "$j" $src fx_strdup,use_aliases,main
		want chain "$j" $src fx_start,use_aliases,main
		want chain "$j" $src fx_dup,use_aliases,main
	}
	checks
	internal "$b"
	if command -v readelf >/dev/null 2>&1; then
		ok $(readelf --debug-dump=info "$d/inline-chain-$b" 2>/dev/null |
		    awk '/Version:/ { if ($2 != 5) bad = 1; n++ }
		    END { exit bad || n == 0 }'; echo $?) \
		    "$b: the fixture's DWARF is version 5"
	fi
	compare "$b" "inline-chain-$b" "$d"

	# dwz: the shared DWARF moved to an alternate file
	z=$HT_TMP/$b-dwz
	mkdir -p "$z"
	cp "$d/inline-chain-$b" "$d/libfxalias.so" "$z/"
	if command -v dwz >/dev/null 2>&1 &&
	    dwz -m "$z/common.debug" -M "$z/common.debug" \
	    "$z/inline-chain-$b" "$z/libfxalias.so" >"$HT_TMP/dwz.out" 2>&1; then
		profile "$b-dwz" "$z" "inline-chain-$b"
		compare "$b-dwz" "inline-chain-$b" "$d"
	else
		skip "$b-dwz: dwz not found or failed: $(head -c 200 \
		    "$HT_TMP/dwz.out" 2>/dev/null)"
	fi

	# split: debug files found by build-id in a directory of --debug-dir
	s=$HT_TMP/$b-id
	mkdir -p "$s/dbg"
	cp "$d/inline-chain-$b" "$d/libfxalias.so" "$s/"
	for f in "inline-chain-$b" libfxalias.so; do
		id=$(readelf -n "$s/$f" | awk '/Build ID/ { print $3 }')
		mkdir -p "$s/dbg/.build-id/${id%"${id#??}"}"
		objcopy --only-keep-debug "$s/$f" \
		    "$s/dbg/.build-id/${id%"${id#??}"}/${id#??}.debug" &&
		    strip --strip-all "$s/$f"
	done
	profile "$b-id" "$s" "inline-chain-$b" --debug-dir "$s/dbg"
	compare "$b-id" "inline-chain-$b" "$s" \
	    "--debug-file-directory=$s/dbg" \
	    "--debug-file-directory=/usr/lib/debug"

	# split: debug files named by .gnu_debuglink, next to the files
	l=$HT_TMP/$b-link
	mkdir -p "$l"
	cp "$d/inline-chain-$b" "$d/libfxalias.so" "$l/"
	for f in "inline-chain-$b" libfxalias.so; do
		objcopy --only-keep-debug "$l/$f" "$l/$f.debug" &&
		    strip --strip-all "$l/$f" &&
		    objcopy --add-gnu-debuglink="$l/$f.debug" "$l/$f"
	done
	profile "$b-link" "$l" "inline-chain-$b"
	compare "$b-link" "inline-chain-$b" "$l"
done

done_testing
