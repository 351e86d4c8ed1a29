#!/bin/sh
# man/heaptool.1: it lints clean, it has the sections our pages promise, and
# it documents every command and option that heaptool's help prints (and no
# command that heaptool does not have).
#
# The lint uses mandoc -Tlint when it is installed (warnings and errors fail;
# style hints do not, since they depend on which other pages are installed),
# else groff -mandoc -ww, where any diagnostic fails.  The help comparison
# needs the heaptool binary and is skipped when it is not built.

. "$(dirname "$0")/tap/libtap.sh"

page=$HT_SRCDIR/man/heaptool.1
[ -f "$page" ] || skip_all "man/heaptool.1 not found in $HT_SRCDIR"

if command -v mandoc >/dev/null 2>&1; then
	linter=mandoc
elif command -v groff >/dev/null 2>&1; then
	linter=groff
else
	skip_all "neither mandoc nor groff is installed"
fi

# render: the page as plain ASCII text, lines long enough that no option is
# broken across two, without overstrike or escape sequences.
render() {
	if [ $linter = mandoc ]; then
		mandoc -Tascii -Owidth=400 "$page"
	else
		groff -mandoc -Tascii -P-cbou -rLL=400n "$page" 2>/dev/null
	fi | sed 's/.\x08//g'
}

# The options a help text lists: the long options and the short ones of the
# "  -x, --long" lines.
help_options() {
	grep -oE -- '(^|[^-[:alnum:]])--[[:alnum:]][-[:alnum:]]*' "$1" |
	    sed 's/^[^-]*//'
	grep -oE -- '^ +-[[:alnum:]],' "$1" | sed 's/^ *//; s/,$//'
}

# The commands "heaptool --help" lists: the lines of its Commands block
# that start with two spaces and a lower-case word.
help_commands() {
	sed -n '/^[Cc]ommands:/,/^$/p' "$1" |
	    sed -n 's/^  \([a-z][-a-z]*\).*/\1/p'
}

if [ -x "$HEAPTOOL" ]; then
	have_bin=1
else
	have_bin=0
fi

# Lint, sections, synopsis commands exist, then one test per command and
# per option found in the help texts (counted below, so the plan is lazy).

if [ $linter = mandoc ]; then
	mandoc -Tlint -Wwarning "$page" >"$HT_TMP/lint" 2>&1
	s=$?
else
	groff -mandoc -ww -z "$page" >"$HT_TMP/lint" 2>&1
	s=$?
	[ -s "$HT_TMP/lint" ] && s=1
fi
ok $s "man page lints clean ($linter)"
[ $s -eq 0 ] || diag "$(head -c 4000 "$HT_TMP/lint")"

render >"$HT_TMP/man.txt"
ok $? "man page renders"

missing=
for sec in NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS FILES ENVIRONMENT \
    "EXIT STATUS" EXAMPLES "SEE ALSO" CAVEATS; do
	grep -qx "\\.Sh $sec" "$page" || missing="$missing [$sec]"
done
is "" "$missing" "man page has every section of STYLE.md"

# The profile's format has its own page.
grep -q '^\.Xr heaptool-format 5' "$page"
ok $? "SEE ALSO names heaptool-format(5)"

if [ $have_bin -eq 0 ]; then
	skip "heaptool not built: help texts not compared with the page"
	done_testing
fi

"$HEAPTOOL" --help >"$HT_TMP/help" 2>&1
ok $? "heaptool --help exits 0"

help_commands "$HT_TMP/help" >"$HT_TMP/commands"
[ -s "$HT_TMP/commands" ]
ok $? "heaptool --help lists commands"

# Every command in the page's SYNOPSIS is one that heaptool has.
sed -n '/^\.Sh SYNOPSIS/,/^\.Sh /s/^\.Cm \([a-z][-a-z]*\).*/\1/p' "$page" |
    sort -u >"$HT_TMP/syn"
extra=
while read -r c; do
	grep -qx "$c" "$HT_TMP/commands" || extra="$extra $c"
done <"$HT_TMP/syn"
is "" "$extra" "the SYNOPSIS shows no command that heaptool lacks"

help_options "$HT_TMP/help" >"$HT_TMP/opts"
while read -r c; do
	grep -q "^\\.It.* Cm $c\\b\\|^\\.Cm $c\\b" "$page"
	ok $? "command '$c' is documented"
	# "help" takes a command, not options; the others print their own.
	if "$HEAPTOOL" "$c" --help >"$HT_TMP/help.$c" 2>&1; then
		help_options "$HT_TMP/help.$c" >>"$HT_TMP/opts"
	fi
done <"$HT_TMP/commands"

sort -u "$HT_TMP/opts" >"$HT_TMP/opts.u"
[ -s "$HT_TMP/opts.u" ]
ok $? "the help texts list options"
while read -r o; do
	# A whole word of the rendered page: --rate, not --rate-limit.
	grep -qE -- "(^|[^-[:alnum:]])$o([^-[:alnum:]]|\$)" "$HT_TMP/man.txt"
	ok $? "option $o is documented"
done <"$HT_TMP/opts.u"

done_testing
