#!/usr/bin/env python3
"""Run a fixture to its end and say how it ended, for t/t0027-attach-final.sh.

Usage: htend.py [--core] [--cwd DIR] [--timeout S] STEP... -- PROGRAM [ARG...]

PROGRAM starts with a pipe on its standard input; its standard output is
read line by line.  It must print "ready" first.  Then the steps run in
order:
  --pre CMD      run the shell command CMD, {pid} replaced by PROGRAM's pid;
                 it must succeed (its output goes to our stderr)
  --send LINE    write LINE and a newline to PROGRAM
  --expect LINE  wait until PROGRAM prints LINE
Then its standard input is closed only if no step asked it to end, and the
program is waited for.  Printed on stdout, one per line:
  pid N
  exited N            or   signaled N core 0|1
and PROGRAM's output lines, each as "out: LINE".  With --core the program
may dump core (RLIMIT_CORE unlimited; the file lands in its working
directory, --cwd, which the caller cleans); without, it may not.  Exit
status 0, or 1 when a step failed or the program did not end within the
timeout (it is then killed).
"""

import os
import resource
import select
import shlex
import signal
import subprocess
import sys
import time


def main(argv):
    core, cwd, timeout, steps = False, None, 60.0, []
    i = 0
    while i < len(argv) and argv[i] != "--":
        a = argv[i]
        if a == "--core":
            core = True
        elif a in ("--cwd", "--timeout", "--pre", "--send", "--expect"):
            if i + 1 >= len(argv):
                sys.exit("htend.py: %s needs a value" % a)
            v = argv[i + 1]
            i += 1
            if a == "--cwd":
                cwd = v
            elif a == "--timeout":
                timeout = float(v)
            else:
                steps.append((a, v))
        else:
            sys.exit("htend.py: unknown option %s" % a)
        i += 1
    prog = argv[i + 1:]
    if not prog:
        sys.exit("htend.py: no program")

    def limits():
        lim = resource.RLIM_INFINITY if core else 0
        resource.setrlimit(resource.RLIMIT_CORE, (lim, lim))

    p = subprocess.Popen(prog, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         cwd=cwd, preexec_fn=limits)
    deadline = time.monotonic() + timeout
    buf, lines = b"", []

    def read_until(want):
        """Read lines until one equals want (None: until EOF)."""
        nonlocal buf
        while True:
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                line = line.decode(errors="replace")
                lines.append(line)
                if want is not None and line == want:
                    return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            r, _, _ = select.select([p.stdout], [], [], left)
            if not r:
                return False
            chunk = os.read(p.stdout.fileno(), 4096)
            if not chunk:
                return want is None
            buf += chunk

    ok = read_until("ready")
    print("pid %d" % p.pid)
    for kind, v in steps if ok else []:
        if kind == "--pre":
            cmd = v.replace("{pid}", str(p.pid))
            r = subprocess.run(cmd, shell=True, stdout=sys.stderr,
                               timeout=max(1, deadline - time.monotonic()))
            if r.returncode != 0:
                print("step failed: %s (status %d)" % (cmd, r.returncode))
                ok = False
                break
        elif kind == "--send":
            try:
                p.stdin.write(v.encode() + b"\n")
                p.stdin.flush()
            except BrokenPipeError:
                pass
        elif not read_until(v):
            print("step failed: no line %s" % shlex.quote(v))
            ok = False
            break
    if ok:
        read_until(None)
    try:
        p.stdin.close()
    except BrokenPipeError:
        pass
    # Reaped here, not by Popen, which keeps no core flag.
    status = None

    def late(signum, frame):
        raise TimeoutError()

    signal.signal(signal.SIGALRM, late)
    signal.alarm(max(1, int(deadline - time.monotonic()) + 1))
    try:
        _, status = os.waitpid(p.pid, 0)
    except TimeoutError:
        pass
    signal.alarm(0)
    if status is None:
        os.kill(p.pid, signal.SIGKILL)
        _, status = os.waitpid(p.pid, 0)
        print("timeout")
        ok = False
    elif os.WIFEXITED(status):
        print("exited %d" % os.WEXITSTATUS(status))
    elif os.WIFSIGNALED(status):
        print("signaled %d core %d" % (os.WTERMSIG(status),
                                       1 if os.WCOREDUMP(status) else 0))
    p.returncode = 0  # reaped: Popen must not wait for it again
    for line in lines:
        print("out: %s" % line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
