# What the inline backend's tests (t0056 to t0059) share: their checks
# that the fixture and ptrace are there, a clean environment, the kill of
# the fixture at exit ($pid), and wait_line.  Source after htrun.sh.

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

# wait_line FILE REGEX [N]: wait until N lines (default 1) of FILE match,
# for at most T seconds.  A FILE not made yet has none (grep -c prints
# nothing there: a bare test of it failed, and the loop ended at once as
# if the line had come).
wait_line() {
	_i=0
	while :; do
		_c=$(grep -c "$2" "$1" 2>/dev/null)
		[ "${_c:-0}" -ge "${3:-1}" ] && return 0
		_i=$((_i + 1))
		[ $_i -gt $((T * 20)) ] && return 1
		sleep 0.05
	done
}
