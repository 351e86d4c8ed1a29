#!/bin/sh
# The zones of the source tree, checked on the #include lines:
#   src/    shared code, libc only: no header of agent/ or cli/, and only
#           C library, kernel and compiler headers among <...>
#   agent/  guest code in other people's processes: headers of src/ and
#           agent/ only, and the same libc-only rule for <...>
#   cli/    may include src/ and cli/ and any system header (libdw, libelf),
#           never a header of agent/
#   replay/ heaptool-replay, the trace replayer: headers of src/ and
#           replay/ only, and the libc-only rule for <...> (it must add
#           no library of its own to the allocator calls it times)
# elfutils headers (libdw, libdwfl, libelf, gelf, dwarf.h) belong in cli/
# only.  A system header counts as libc, kernel or compiler when the compiler
# finds it in its own include directory or dpkg says it belongs to libc6-dev
# or linux-libc-dev (their file lists, else dpkg -S); without dpkg, any header
# under /usr/include passes the second check and only the elfutils rule
# applies.
#
# The checker first runs on small trees made here, one per rule, to show
# that it catches each kind of violation; then on the real tree.
#
# Layering: within agent/ and within cli/, the graph of modules (X.c with
# X.h, and X-foo.c with a private X-int.h, are module X; A depends on B
# when A's .c files use what B's header declares or B's .c files define,
# see t/lib/htcycles.py) has no cycle: a module never calls one above it.
# The checker prints each cycle; it runs first on trees made here, with and
# without cycles, then on the real tree.

. "$(dirname "$0")/tap/libtap.sh"

for d in src agent cli; do
	[ -d "$HT_SRCDIR/$d" ] || skip_all "$HT_SRCDIR/$d not found"
done
CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || skip_all "no C compiler ($CC)"

ccinc=$("$CC" -print-file-name=include)
have_dpkg=0
command -v dpkg >/dev/null 2>&1 && have_dpkg=1
# dpkg -S takes half a second a call; the file lists of the two packages
# answer the common case at once.
libc_lists=
if [ $have_dpkg -eq 1 ]; then
	for l in /var/lib/dpkg/info/libc6-dev.list \
	    /var/lib/dpkg/info/libc6-dev:*.list \
	    /var/lib/dpkg/info/linux-libc-dev.list \
	    /var/lib/dpkg/info/linux-libc-dev:*.list; do
		[ -f "$l" ] && libc_lists="$libc_lists $l"
	done
fi
[ $have_dpkg -eq 1 ] ||
    diag "dpkg not found: <...> headers under /usr/include all pass"

# header_verdict NAME: append "NAME<TAB>REASON" to $HT_TMP/verdicts, REASON
# empty when <NAME> is a C library, kernel or compiler header.
header_verdict() {
	_why=
	case $1 in
	elfutils/*|libelf.h|gelf.h|libdw.h|libdwfl.h|libdwelf.h|dwarf.h|\
	    libasm.h|nlist.h)
		_why="elfutils header outside cli/" ;;
	esac
	if [ -z "$_why" ]; then
		# -H prints the headers as they are opened, the first one at
		# depth one: ". /usr/include/stdio.h".
		_path=$(printf '#include <%s>\n' "$1" |
		    "$CC" -D_GNU_SOURCE -E -H -x c - -o /dev/null 2>&1 |
		    sed -n 's/^\. //p' | head -n 1)
		case $_path in
		'')	_why="header not found by $CC" ;;
		"$ccinc"/*|"$ccinc"-fixed/*) ;;
		*)	_path=$(readlink -f "$_path")
			if [ -n "$libc_lists" ] &&
			    cat $libc_lists | grep -qxF "$_path"; then
				:
			elif [ $have_dpkg -eq 1 ]; then
				_pkg=$(dpkg -S "$_path" 2>/dev/null |
				    sed 's/:.*//' | head -n 1)
				case $_pkg in
				libc6-dev|linux-libc-dev) ;;
				'')	_why="$_path belongs to no package" ;;
				*)	_why="$_path is from $_pkg" ;;
				esac
			else
				case $_path in
				/usr/include/*) ;;
				*)	_why="$_path is outside /usr/include" ;;
				esac
			fi ;;
		esac
	fi
	printf '%s\t%s\n' "$1" "$_why" >>"$HT_TMP/verdicts"
}

# check_tree ROOT: print one line per violation in ROOT's src/, agent/ and
# cli/ as "FILE: #include X: reason".
check_tree() {
	_root=$(cd "$1" && pwd)
	: >>"$HT_TMP/verdicts"
	# Every #include as "FILE<TAB>ZONE<TAB>\"NAME\"" or "...<NAME>", FILE
	# relative to the root.
	find "$_root/src" "$_root/agent" "$_root/cli" \
	    $([ -d "$_root/replay" ] && echo "$_root/replay") -type f \
	    \( -name '*.[ch]' -o -name '*.cc' -o -name '*.hh' \) | sort |
	    sed "s|^$_root/||" >"$HT_TMP/files"
	(cd "$_root" && [ -s "$HT_TMP/files" ] &&
	    awk '/^[ \t]*#[ \t]*include[ \t]*[<"]/ {
		s = $0
		sub(/^[ \t]*#[ \t]*include[ \t]*/, "", s)
		if (match(s, /^(<[^>]*>|"[^"]*")/) == 0)
			next
		z = FILENAME
		sub(/\/.*/, "", z)
		printf "%s\t%s\t%s\n", FILENAME, z, substr(s, 1, RLENGTH)
	    }' $(cat "$HT_TMP/files")) >"$HT_TMP/includes"

	# <...> in src/ and agent/: one verdict per header name.
	awk -F'\t' '$2 != "cli" && $3 ~ /^</ {
		print substr($3, 2, length($3) - 2)
	}' "$HT_TMP/includes" | sort -u >"$HT_TMP/names"
	while read -r n; do
		grep -q "^$n	" "$HT_TMP/verdicts" 2>/dev/null ||
		    header_verdict "$n"
	done <"$HT_TMP/names"
	awk -F'\t' 'FILENAME == ARGV[1] { why[$1] = $2; next }
	$2 != "cli" && $3 ~ /^</ {
		n = substr($3, 2, length($3) - 2)
		if (why[n] != "")
			printf "%s: #include %s: %s\n", $1, $3, why[n]
	}' "$HT_TMP/verdicts" "$HT_TMP/includes"

	# "..." anywhere: found from the including file's directory first,
	# as the compiler looks, then in the zones the file may use, then
	# anywhere in the tree.
	awk -F'\t' '$3 ~ /^"/' "$HT_TMP/includes" |
	while IFS='	' read -r rel zone inc; do
		name=${inc#?}
		name=${name%?}
		case $zone in
		src)	may="src" ;;
		agent)	may="src agent" ;;
		replay)	may="src replay" ;;
		*)	may="src cli" ;;
		esac
		found=
		p=$_root/${rel%/*}/$name
		if [ -f "$p" ]; then
			case $name in
			*/*)	p=$(cd "${p%/*}" && pwd)/${p##*/} ;;
			esac
			case $p in
			"$_root"/src/*)		found=src ;;
			"$_root"/agent/*)	found=agent ;;
			"$_root"/cli/*)		found=cli ;;
			"$_root"/replay/*)	found=replay ;;
			*)			found=other ;;
			esac
		else
			for z in $may src agent cli; do
				if [ -f "$_root/$z/$name" ]; then
					found=$z
					break
				fi
			done
		fi
		case " $may " in
		*" $found "*) continue ;;
		esac
		if [ -n "$found" ]; then
			echo "$rel: #include $inc: a header of $found/," \
			    "which $zone/ may not use"
		elif [ "$name" != config.h ]; then
			echo "$rel: #include $inc: in no zone of the tree" \
			    "(use <> for system headers)"
		fi
	done
}

# mktree DIR: an empty tree with one header per zone.
mktree() {
	mkdir -p "$1/src" "$1/agent" "$1/cli"
	echo '#include <stdint.h>' >"$1/src/size.h"
	echo '#include <stddef.h>' >"$1/agent/mem.h"
	echo '#include <stdio.h>' >"$1/cli/report.h"
}

# expect DESCRIPTION DIR PATTERN: the checker reports a violation that
# matches PATTERN in the tree DIR.
expect() {
	check_tree "$2" >"$HT_TMP/out"
	grep -q -- "$3" "$HT_TMP/out"
	ok $? "$1"
	[ $? -eq 0 ] || diag "checker said:" "$(cat "$HT_TMP/out")"
}

plan 15

t=$HT_TMP/clean
mktree "$t"
printf '#include "%s"\n' config.h size.h >"$t/src/size.c"
printf '#include <%s>\n' stdio.h sys/mman.h >>"$t/src/size.c"
printf '#include <%s>\n' link.h elf.h stdatomic.h >"$t/agent/mem.c"
printf '#include "%s"\n' size.h mem.h ../src/size.h >>"$t/agent/mem.c"
printf '#include <%s>\n' elfutils/libdwfl.h gelf.h >"$t/cli/report.c"
printf '#include "%s"\n' size.h report.h >>"$t/cli/report.c"
check_tree "$t" >"$HT_TMP/out"
is "" "$(cat "$HT_TMP/out")" "checker accepts a tree that keeps the zones"

t=$HT_TMP/agent-cli
mktree "$t"
echo '#include "report.h"' >"$t/agent/hooks.c"
expect "checker catches agent/ including a cli/ header" "$t" \
    '^agent/hooks.c: #include "report.h": a header of cli/'

t=$HT_TMP/src-agent
mktree "$t"
echo '#include "../agent/mem.h"' >"$t/src/profile.c"
expect "checker catches src/ including an agent/ header by path" "$t" \
    '^src/profile.c: #include "../agent/mem.h": a header of agent/'

t=$HT_TMP/cli-agent
mktree "$t"
echo '#include "mem.h"' >"$t/cli/run.c"
expect "checker catches cli/ including an agent/ header" "$t" \
    '^cli/run.c: #include "mem.h": a header of agent/'

t=$HT_TMP/src-elfutils
mktree "$t"
printf '#include <stdio.h>\n#  include <elfutils/libdwfl.h>\n' >"$t/src/x.c"
expect "checker catches src/ including an elfutils header" "$t" \
    '^src/x.c: #include <elfutils/libdwfl.h>: elfutils header'

t=$HT_TMP/agent-gelf
mktree "$t"
echo '#include <gelf.h>' >"$t/agent/x.c"
expect "checker catches agent/ including gelf.h" "$t" \
    '^agent/x.c: #include <gelf.h>: elfutils header'

t=$HT_TMP/src-nonlibc
mktree "$t"
echo '#include <heaptool-no-such-library.h>' >"$t/src/x.c"
expect "checker catches src/ including a header that is not libc's" "$t" \
    '^src/x.c: #include <heaptool-no-such-library.h>: header not found'

t=$HT_TMP/src-cli
mktree "$t"
echo '#include "report.h"' >"$t/src/x.h"
expect "checker catches src/ including a cli/ header" "$t" \
    '^src/x.h: #include "report.h": a header of cli/'

check_tree "$HT_SRCDIR" >"$HT_TMP/real"
is "" "$(cat "$HT_TMP/real")" "src/, agent/, cli/ and replay/ keep their zones"

# layering: no cycle among the modules of agent/ and of cli/

if ! command -v python3 >/dev/null 2>&1; then
	for i in 1 2 3 4 5 6; do
		skip "python3 not found: the module graph is not checked"
	done
	done_testing
fi

# cycles ROOT: the cycles t/lib/htcycles.py finds in ROOT's agent/, cli/.
cycles() {
	python3 "$HT_SRCDIR/t/lib/htcycles.py" "$1" 2>&1
}

# expect_cycle DESCRIPTION DIR PATTERN...: the cycles of DIR include a line
# matching each PATTERN.
expect_cycle() {
	_d=$1
	_t=$2
	shift 2
	cycles "$_t" >"$HT_TMP/out"
	_s=0
	for _p in "$@"; do
		grep -q -- "$_p" "$HT_TMP/out" || _s=1
	done
	ok $_s "$_d" || diag "checker said:" "$(cat "$HT_TMP/out")"
}

# src FILE LINE...: a source file of the trees below.
src() {
	_f=$1
	shift
	mkdir -p "${_f%/*}"
	printf '%s\n' "$@" >"$_f"
}

# A tree without cycles: a -> b -> c in agent/, a module split over two
# files that call each other behind its private header, and in cli/ a
# header declaring functions of several modules, whose includers depend
# only on the modules whose functions they call (a name in a comment or a
# string is no call).
t=$HT_TMP/layers
src "$t/agent/a.h" 'struct a_conf { int n; };' 'void a_run(void);'
src "$t/agent/a.c" '#include "a.h"' '#include "b.h"' \
    'void a_run(void) { b_get(); }'
src "$t/agent/b.h" 'int b_get(void);'
src "$t/agent/b.c" '#include "b.h"' '#include "c.h"' \
    'int b_get(void) { return c_val; }'
src "$t/agent/c.h" 'extern int c_val;'
src "$t/agent/c.c" '#include "c.h"' 'int c_val;'
src "$t/agent/x.h" 'void x_open(void);'
src "$t/agent/x-int.h" 'void x_io(void);' 'void x_helper(void);'
src "$t/agent/x.c" '#include "x.h"' '#include "x-int.h"' '#include "a.h"' \
    'void x_helper(void) { a_run(); }' 'void x_open(void) { x_io(); }'
src "$t/agent/x-io.c" '#include "x-int.h"' \
    'void x_io(void) { x_helper(); }'
src "$t/cli/cli.h" 'int p_cmd(void);' 'int q_cmd(void);' 'void warn(void);'
src "$t/cli/main.c" '#include "cli.h"' \
    'int main(void) { return p_cmd() + q_cmd(); }'
src "$t/cli/p.c" '#include "cli.h"' 'int p_cmd(void) { warn(); return 0; }'
src "$t/cli/q.c" '#include "cli.h"' '/* q_cmd calls p_cmd: not really */' \
    'int q_cmd(void) { const char *s = "p_cmd()"; return s[0]; }'
src "$t/cli/warn.c" '#include "cli.h"' 'void warn(void) { }'
cycles "$t" >"$HT_TMP/out"
is "" "$(cat "$HT_TMP/out")" "layering checker accepts a tree without cycles"

t=$HT_TMP/cycle2
src "$t/agent/a.h" 'void a_run(void);'
src "$t/agent/a.c" '#include "a.h"' '#include "b.h"' \
    'void a_run(void) { b_get(); }'
src "$t/agent/b.h" 'int b_get(void);'
src "$t/agent/b.c" '#include "b.h"' '#include "a.h"' \
    'int b_get(void) { a_run(); return 0; }'
expect_cycle "layering checker catches two modules that call each other" \
    "$t" '^agent/: cycle among a.c b.c$' '^    a.c -> b.c -> a.c$' \
    '^    b.c -> a.c: #include "a.h" (a_run)$'

t=$HT_TMP/cycle-umbrella
src "$t/cli/cli.h" 'int p_cmd(void);' 'int q_cmd(void);' 'void p_util(void);'
src "$t/cli/p.c" '#include "cli.h"' 'void p_util(void) { }' \
    'int p_cmd(void) { return q_cmd(); }'
src "$t/cli/q.c" '#include "cli.h"' 'int q_cmd(void) { p_util(); return 0; }'
expect_cycle "layering checker catches a cycle through a shared header" \
    "$t" '^cli/: cycle among p.c q.c$' \
    '^    p.c -> q.c: #include "cli.h" (q_cmd)$' \
    '^    q.c -> p.c: #include "cli.h" (p_util)$'

t=$HT_TMP/cycle3
src "$t/cli/a.h" '#define A_MAX 4'
src "$t/cli/a.c" '#include "a.h"' '#include "b.h"' 'struct b_thing t;'
src "$t/cli/b.h" 'struct b_thing { int n; };' 'int b_count(void);'
src "$t/cli/b.c" '#include "b.h"' '#include "c.h"' \
    'int b_count(void) { return C_ONE; }'
src "$t/cli/c.h" 'enum { C_ONE = 1 };'
src "$t/cli/c.c" '#include "c.h"' '#include "a.h"'
expect_cycle "layering checker catches a cycle of three (type, enum, include)" \
    "$t" '^    a.c -> b.c -> c.c -> a.c$' \
    '^    a.c -> b.c: #include "b.h" (b_thing)$' \
    '^    c.c -> a.c: #include "a.h" (nothing used)$'

t=$HT_TMP/cycle-private
src "$t/agent/x.h" 'void x_open(void);'
src "$t/agent/x-int.h" 'void x_io(void);'
src "$t/agent/x.c" '#include "x.h"' '#include "x-int.h"' \
    'void x_open(void) { x_io(); }'
src "$t/agent/x-io.c" '#include "x-int.h"' '#include "y.h"' \
    'void x_io(void) { y_get(); }'
src "$t/agent/y.h" 'int y_get(void);'
src "$t/agent/y.c" '#include "y.h"' '#include "x.h"' \
    'int y_get(void) { x_open(); return 0; }'
expect_cycle "layering checker catches a cycle from a module's other file" \
    "$t" '^    x.c -> y.c -> x.c$' \
    '^    x.c -> y.c: #include "y.h" in x-io.c (y_get)$'

# The real tree: its modules only call downward.
cycles "$HT_SRCDIR" >"$HT_TMP/real"
ok $([ ! -s "$HT_TMP/real" ]; echo $?) \
    "no cycle among the modules of agent/ and of cli/" ||
    diag "$(cat "$HT_TMP/real")"

done_testing
