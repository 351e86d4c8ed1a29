# For shell tests that attach: require_ptrace skips the whole test, with the
# reason, where this process may not ptrace (kernel.yama.ptrace_scope 3,
# seccomp, a container without the capability); ptrace_permitted returns
# nonzero there, with the reason in $ptrace_why, for a test that attaches
# in part.  The fixtures allow any tracer with PR_SET_PTRACER, so tracing a
# child of our own stands for them.  Source it after t/tap/libtap.sh.

require_ptrace() {
	command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
	ptrace_permitted || skip_all "$ptrace_why"
}

ptrace_permitted() {
	ptrace_why="python3 not found"
	command -v python3 >/dev/null 2>&1 || return 1
	if ! python3 - <<'EOF' >"$HT_TMP/probe" 2>&1
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
pid = os.fork()
if pid == 0:
    signal.pause()
    os._exit(0)
r = libc.ptrace(0x4206, pid, None, None)    # PTRACE_SEIZE
e = ctypes.get_errno()
os.kill(pid, signal.SIGKILL)
os.waitpid(pid, 0)
if r != 0:
    print(os.strerror(e))
    sys.exit(1)
EOF
	then
		ptrace_why="ptrace is not permitted here: $(cat "$HT_TMP/probe")"
		return 1
	fi
	return 0
}
