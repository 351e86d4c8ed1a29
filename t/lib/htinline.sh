# What the inline backend's tests (t0056 to t0059) share: their checks
# that the fixture and ptrace are there, a clean environment, the kill of
# the fixture at exit ($pid).  Source after htrun.sh (wait_line is
# libtap's).

# inline_prereq EXE [WHY]: skip or bail unless heaptool, EXE (skipped with
# WHY where given: a fixture built only where a package is), python3, nm,
# x86-64 and ptrace are there; then T=60 and a private state directory.
inline_prereq() {
	command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
	command -v nm >/dev/null 2>&1 || skip_all "nm not found"
	[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
	if [ ! -x "$1" ]; then
		[ -n "${2-}" ] && skip_all "$2"
		bail "$1 not built (make check builds it)"
	fi
	[ "$(uname -m)" = x86_64 ] || skip_all "attach supports x86-64 only"
	require_ptrace
	unset HEAPTOOL_SEED LD_PRELOAD HEAPTOOL_AGENT MALLOC_CONF
	XDG_STATE_HOME=$HT_TMP/state
	export XDG_STATE_HOME
	T=60
	pid=
	trap inline_cleanup EXIT
}

inline_cleanup() {
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	rm -rf "$HT_TMP"
}
