# TAP helpers for heaptool's shell tests.  Source it:  . "$(dirname "$0")/tap/libtap.sh"
#
# Sets HT_BUILDDIR (where heaptool, the agent and the fixtures are built) and
# HT_SRCDIR, both absolute.  make check sets them; under prove they default to
# the directory above t/.  HEAPTOOL is the binary under test.  Every test gets
# a private $HT_TMP (a real path), removed at exit, and runs with LC_ALL=C.

export LC_ALL=C
: "${HT_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${HT_BUILDDIR:=$HT_SRCDIR}"
HEAPTOOL="$HT_BUILDDIR/heaptool"
TARGETS="$HT_BUILDDIR/t/target"
# Its real path: a dump directory reached through a symbolic link (a TMPDIR
# that is one) is refused.
HT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/heaptool-test.XXXXXX") &&
    HT_TMP=$(cd "$HT_TMP" && pwd -P)
trap 'rm -rf "$HT_TMP"' EXIT
# heaptool keeps the current target per user here: a test must neither see
# nor change the one of whoever runs it.
XDG_STATE_HOME=$HT_TMP/state
export XDG_STATE_HOME

_tap_count=0
_tap_failed=0
_tap_planned=
_tap_todo=

plan() {
	_tap_planned=$1
	echo "1..$1"
}

skip_all() {
	echo "1..0 # skip $*"
	exit 0
}

bail() {
	echo "Bail out! $*"
	exit 255
}

diag() {
	printf '%s\n' "$@" | sed 's/^/# /'
}

ok() {
	# ok CONDITION-STATUS DESCRIPTION: pass when the status is 0.  Returns
	# that status, so that "ok $? what || diag why" and "ok $? what;
	# [ $? -eq 0 ] || diag why" print their diagnostics.
	_tap_count=$((_tap_count + 1))
	_tap_st=$1
	_tap_dir=
	if [ -n "$_tap_todo" ]; then
		_tap_dir=" # TODO $_tap_todo"
		_tap_todo=
	fi
	if [ "$_tap_st" -eq 0 ]; then
		echo "ok $_tap_count - $2$_tap_dir"
	else
		echo "not ok $_tap_count - $2$_tap_dir"
		[ -n "$_tap_dir" ] || _tap_failed=$((_tap_failed + 1))
	fi
	return "$_tap_st"
}

todo() {
	# todo REASON: the next test is a TODO test (TAP's "# TODO REASON"):
	# expected to fail, and its failure is not the test's.  A TODO test
	# that passes is reported as one (automake's driver calls it XPASS and
	# fails the suite, so that the TODO is removed).
	_tap_todo=$*
}

check() {
	# check DESCRIPTION COMMAND...: pass when COMMAND succeeds.
	_d=$1
	shift
	"$@" >"$HT_TMP/check.out" 2>&1
	_s=$?
	ok $_s "$_d"
	[ $_s -eq 0 ] || diag "command: $*" "$(head -c 4000 "$HT_TMP/check.out")"
	return $_s
}

is() {
	# is WANT GOT DESCRIPTION: returns 0 if they are the same, else 1.
	if [ "$1" = "$2" ]; then
		ok 0 "$3"
	else
		ok 1 "$3"
		diag "wanted: $1" "   got: $2"
		return 1
	fi
}

skip() {
	_tap_count=$((_tap_count + 1))
	_tap_todo=
	echo "ok $_tap_count # skip $*"
}

# wait_line FILE REGEX [N]: wait until N lines (default 1) of FILE match,
# for at most T seconds (default 60).  A FILE not made yet (a background
# command's redirection) has none.
wait_line() {
	_i=0
	while :; do
		_c=$(grep -c "$2" "$1" 2>/dev/null)
		[ "${_c:-0}" -ge "${3:-1}" ] && return 0
		_i=$((_i + 1))
		[ $_i -gt $((${T:-60} * 20)) ] && return 1
		sleep 0.05
	done
}

# tap_relay FILE: a checker's verdicts as tests: each line "ok<TAB>what"
# passes, "not ok<TAB>what" fails, any other line is a diagnostic (for
# checks written in another language, e.g. Python over a JSON report).
tap_relay() {
	while IFS= read -r _l; do
		case $_l in
		"ok	"*) ok 0 "${_l#ok	}" ;;
		"not ok	"*) ok 1 "${_l#not ok	}" ;;
		*) diag "$_l" ;;
		esac
	done <"$1"
}

done_testing() {
	if [ -z "$_tap_planned" ]; then
		echo "1..$_tap_count"
	elif [ "$_tap_planned" -ne "$_tap_count" ]; then
		echo "# planned $_tap_planned but ran $_tap_count"
		exit 255
	fi
	[ $_tap_failed -eq 0 ] || exit 1
	exit 0
}
