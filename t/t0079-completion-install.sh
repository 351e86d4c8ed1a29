#!/bin/sh
# Bash completion (completion/heaptool) and the installed files: the
# script, sourced in bash, completes commands, each command's options
# (exactly those its --help lists) and the values of --format, --sort,
# --backend, -p and run's command; make install DESTDIR=... puts it in
# share/bash-completion/completions/heaptool, the JSON schema in
# share/heaptool/report-schema.json (the one t/lib/htschema.py checks
# reports against) and the man pages, which name the schema's path.
. "$(dirname "$0")/tap/libtap.sh"

command -v bash >/dev/null 2>&1 || skip_all "bash not found"
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
comp=$HT_SRCDIR/completion/heaptool

# complete SCRIPT WORD...: the replies of the completion of the last word
# (COMP_CWORD the last), sorted, one line.
complete_words() {
	_script=$1
	shift
	bash --norc --noprofile -c '
		. "$1" || exit 3
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		_heaptool heaptool "${COMP_WORDS[COMP_CWORD]}" \
		    "${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "
	' sh "$_script" "$@" 2>&1
}

is "replay report " "$(complete_words "$comp" heaptool rep)" \
    "heaptool rep<TAB>: replay report"
is "start status stop " "$(complete_words "$comp" heaptool st)" \
    "heaptool st<TAB>: start status stop"
is "--fold --format " "$(complete_words "$comp" heaptool report --fo)" \
    "heaptool report --fo<TAB>: --fold --format"
is "pprof " "$(complete_words "$comp" heaptool report --format p)" \
    "heaptool report --format p<TAB>: pprof"
is "alloc inuse objects temporary " "$(complete_words "$comp" heaptool report -s '')" \
    "heaptool report -s <TAB>: the columns"
is "jemalloc " "$(complete_words "$comp" heaptool start --backend j)" \
    "heaptool start --backend j<TAB>: jemalloc"
is "--no-fold " "$(complete_words "$comp" heaptool diff --no-)" \
    "heaptool diff --no-<TAB>: --no-fold"
is "start status stop " "$(complete_words "$comp" heaptool help st)" \
    "heaptool help st<TAB>: the commands"
ok $(complete_words "$comp" heaptool run --rate 1 -- l | grep -qw ls
    echo $?) "heaptool run --rate 1 -- l<TAB>: commands (ls)"
ok $(complete_words "$comp" heaptool attach "$$" | grep -qw "$$"
    echo $?) "heaptool attach $$<TAB>: a process of ours ($$)"
mkdir "$HT_TMP/files" && : >"$HT_TMP/files/a b.heap"
is "$HT_TMP/files/a b.heap " \
    "$(complete_words "$comp" heaptool report "$HT_TMP/files/a")" \
    "heaptool report FILE<TAB>: a file, blanks and all"

# Every command's options are its --help's, no more, no fewer.
help_options() {
	"$HEAPTOOL" "$1" --help 2>&1 |
	    grep -oE -- '(^|[^-[:alnum:]])--[[:alnum:]][-[:alnum:]]*' |
	    sed 's/^[^-]*//'
	"$HEAPTOOL" "$1" --help 2>&1 | grep -oE -- '^ +-[[:alnum:]],' |
	    sed 's/^ *//; s/,$//'
}
for c in run attach start stop status report baseline dump diff serve top detach \
    record trace-stats replay; do
	# --diff in baseline's help is report's, named in a sentence.
	want=$(help_options $c | grep -vx -- "$([ $c = baseline ] &&
	    echo --diff)" | sort -u | tr '\n' ' ')
	got=$(complete_words "$comp" heaptool $c - | tr ' ' '\n' | grep . |
	    sort -u | tr '\n' ' ')
	is "$want" "$got" "heaptool $c -<TAB>: the options of its --help"
done

# make install DESTDIR=...: the files where they belong.
dest=$HT_TMP/dest
(cd "$HT_BUILDDIR" && env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS \
    make -s install DESTDIR="$dest") >"$HT_TMP/install.out" 2>&1
st=$?
ok $st "make install DESTDIR=..."
[ $st -eq 0 ] || diag "$(tail -c 2000 "$HT_TMP/install.out")"
find "$dest" -type f | sed "s|^$dest||" | sort >"$HT_TMP/installed"
schema=$(grep '/share/heaptool/report-schema\.json$' "$HT_TMP/installed")
ok $([ -n "$schema" ] && cmp -s "$dest$schema" \
    "$HT_SRCDIR/t/data/report-schema.json"; echo $?) \
    "the JSON schema installed as share/heaptool/report-schema.json ($schema)"
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$dest$schema" \
    2>/dev/null
ok $? "the installed schema is JSON"
bc=$(grep '/share/bash-completion/completions/heaptool$' "$HT_TMP/installed")
ok $([ -n "$bc" ] && cmp -s "$dest$bc" "$comp"; echo $?) \
    "the completion installed as share/bash-completion/completions/heaptool"
is "replay report " "$(complete_words "$dest$bc" heaptool rep)" \
    "the installed completion completes"
man1=$(grep '/share/man/man1/heaptool\.1$' "$HT_TMP/installed")
ok $([ -n "$man1" ] && grep -q 'report-schema\.json' "$dest$man1"
    echo $?) "heaptool(1) installed, naming the schema"
prefix=${schema%/share/heaptool/report-schema.json}
ok $(grep -q "^$prefix/share/man/man5/heaptool-format\\.5\$" \
    "$HT_TMP/installed" && grep -q "^$prefix/bin/heaptool\$" \
    "$HT_TMP/installed"; echo $?) "and beside them heaptool and its other pages ($prefix)"
done_testing
