#!/bin/sh
# The C sources are formatted as .clang-format says (KNF, STYLE.md): the
# format is mechanical, so `clang-format -i FILE` never changes a file of
# the tree.  clang-format's output differs between its major versions; the
# check runs with the one the tree was formatted with (Debian 12's, 14).
. "$(dirname "$0")/tap/libtap.sh"

command -v clang-format >/dev/null 2>&1 || skip_all "clang-format not found"
ver=$(clang-format --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
[ "$ver" = 14 ] ||
    skip_all "clang-format $ver: the tree is formatted with version 14"
cd "$HT_SRCDIR" || bail "no source directory"
[ -f .clang-format ] || bail ".clang-format is missing"

# The sources git tracks (the benchmark writes a generated bench/cc1-input.c
# of its own); in a tarball, which has no git, the same globs.
if files=$(git ls-files 'agent/*.[ch]' 'cli/*.[ch]' 'src/*.[ch]' \
    'include/*.h' 't/*.c' 't/tap/*.[ch]' 't/target/*.c' 't/target/*.cc' \
    't/target/*.h' 't/fuzz/*.c' 'bench/*.c' 'examples/*.c' 2>/dev/null) &&
    [ -n "$files" ]; then
	:
else
	files=$(ls agent/*.[ch] cli/*.[ch] src/*.[ch] include/*.h t/*.c \
	    t/tap/*.[ch] t/target/*.c t/target/*.cc t/target/*.h t/fuzz/*.c \
	    bench/*.c examples/*.c 2>/dev/null | grep -v '^bench/cc1-input.c$')
fi
n=0
bad=
for f in $files
do
	[ -f "$f" ] || continue
	n=$((n + 1))
	clang-format "$f" | cmp -s - "$f" || bad="$bad $f"
done
ok $([ -z "$bad" ]; echo $?) "$n files as clang-format writes them" ||
    diag "reformat with clang-format -i:$bad"

done_testing
