#!/bin/sh
# heaptool attach killed (SIGKILL) at a random instant, again and again, on
# processes hammering the allocator from 8 threads (t/target/inject-hammer),
# in three settings: left alone, under a storm of SIGUSR1 (a handler without
# SA_RESTART, so that interrupted waits see EINTR), and stopped and
# continued (SIGSTOP, SIGCONT) over and over.  No target may die or hang,
# each must compute what a run without heaptool computes (its checksum, no
# corrupted block), no thread may stay traced, and a last attach, not
# killed, must work on each.
#
# The kill times: uniform over the measured duration of an attach, with a
# fixed seed; one attach in ten is killed as soon as its trace shows the
# remote call begun instead, so the call is hit however the machine's load
# skews the measured durations.  The real agent is loaded by the first attach that gets far
# enough, after which attach only reconnects; so most attaches load a
# stand-in instead (HEAPTOOL_AGENT, a fresh copy of libinject-slow.so each
# time, whose constructor makes 400 system calls, at each of which the
# injector stops), and every one of them makes a full remote call, long
# enough for many kills to land inside it.  The injector's trace
# (HEAPTOOL_INJECT_TRACE) tells where each kill landed; the counts are
# printed, and kills inside the remote call must be among them.
#
# HT_KILL_ATTACHES sets the attaches per setting (default 200;
# bench/attach-kill.sh runs 2000).
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/ptrace.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
[ -x "$HEAPTOOL" ] || bail "$HEAPTOOL not built"
[ -x "$HT_BUILDDIR/libheaptool-agent.so" ] ||
    bail "$HT_BUILDDIR/libheaptool-agent.so not built"
for f in inject-hammer libinject-slow.so; do
	[ -x "$TARGETS/$f" ] ||
	    bail "$TARGETS/$f not built (make check builds it)"
done
[ "$(uname -m)" = x86_64 ] || skip_all "attach supports x86-64 only"

require_ptrace

unset HEAPTOOL_AGENT HEAPTOOL_INJECT_TRACE LD_PRELOAD
# shellcheck disable=SC3045
ulimit -c 0 2>/dev/null
n=${HT_KILL_ATTACHES:-200}

cat >"$HT_TMP/kill.py" <<'EOF'
import os, random, shutil, signal, subprocess, sys, threading, time

ht, targets, tmp, setting, n = sys.argv[1:6]
n = int(n)
hammer = os.path.join(targets, "inject-hammer")
slow = os.path.join(targets, "libinject-slow.so")
NTARGETS = 4
INCALL = {"FRAME", "MMAP_SET", "BLOCKED", "MMAP_DONE", "CODE",
          "MPROTECT_SET", "MPROTECT_DONE", "CALL_SET", "CALL_SYSCALL",
          "RETURNED", "RESUME_SET", "TRAPPED", "XSTATE", "MASK", "REGS"}
seq = [0]


def say(kind, msg):
    print(kind, msg, flush=True)


def now():
    return time.monotonic_ns()


def start(tag, args):
    """A hammer target running until its stop file exists."""
    stop = os.path.join(tmp, "stop." + tag)
    out = os.path.join(tmp, tag + ".out")
    # At a lower priority, as in t0020, so that its 8 busy threads do not
    # starve heaptool on a small machine.
    p = subprocess.Popen([hammer, "--until", stop] + args,
                         stdout=open(out, "w"),
                         stderr=open(out + ".err", "w"),
                         preexec_fn=lambda: os.nice(10))
    end = time.monotonic() + 20
    while time.monotonic() < end:
        with open(out) as f:
            if f.read().startswith("ready "):
                return p, stop, out
        if p.poll() is not None:
            break
        time.sleep(0.005)
    raise SystemExit("%s: the target did not start" % tag)


def finish(p, stop, out):
    """Stop the target; its exit status (None: hung) and result line."""
    open(stop, "w").close()
    try:
        rc = p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        rc = None
    with open(out) as f:
        lines = f.read().splitlines()
    return rc, lines[1] if len(lines) > 1 else ""


def checksum(line):
    w = line.split()
    if len(w) != 6 or w[0] != "rounds" or w[2] != "bad":
        return None
    return w[5] if w[3] == "0" else "bad " + w[3]


def tracer(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("TracerPid:"):
                    return int(line.split()[1])
    except OSError:
        return 0
    return 0


def read_trace(trace):
    try:
        with open(trace) as f:
            return [l.split() for l in f.read().splitlines()]
    except OSError:
        return []


def attach(pid, standin, kill_at=None):
    """heaptool attach PID, SIGKILLed kill_at ns after it starts (or,
    if kill_at is "done", once the injector is done; if "incall", once the
    trace shows the remote call begun) unless None.
    Returns (status, start, trace lines)."""
    seq[0] += 1
    trace = os.path.join(tmp, "%s.trace.%d" % (setting, seq[0]))
    env = dict(os.environ, HEAPTOOL_INJECT_TRACE=trace)
    env.pop("HEAPTOOL_AGENT", None)
    if standin:
        # A fresh file each time: dlopen really loads it.
        lib = os.path.join(tmp, "%s.standin.%d.so" % (setting, seq[0]))
        shutil.copyfile(slow, lib)
        env["HEAPTOOL_AGENT"] = lib
    t0 = now()
    p = subprocess.Popen([ht, "attach", "--timeout", "2s", str(pid)],
                         env=env, stdout=subprocess.DEVNULL,
                         stderr=open(trace + ".err", "w"))
    if kill_at in ("done", "incall"):
        steps = ("LOADED", "FAILED") if kill_at == "done" else INCALL
        end = time.monotonic() + 30
        while p.poll() is None and time.monotonic() < end and not [
                l for l in read_trace(trace) if l[0] in steps]:
            time.sleep(0.001)
        p.send_signal(signal.SIGKILL)
    elif kill_at is not None:
        time.sleep(max(0, t0 + kill_at - now()) / 1e9)
        p.send_signal(signal.SIGKILL)
    try:
        rc = p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = p.wait()
        rc = "hung"
    return rc, t0, read_trace(trace)


def landed(rc, lines):
    """Where a kill landed, from the trace the killed attach left."""
    if rc != -signal.SIGKILL:
        return "finished"
    if not lines:
        return "before the injector"
    last = lines[-1][0]
    if last in INCALL:
        return "inside the remote call"
    if last == "LOAD":
        return "in the injector, before the call"
    return "after the call"


def median(v):
    v = sorted(v)
    return v[len(v) // 2]


def calibrate(args, rng):
    """How long attaches take in this setting, the median of a few: a
    stand-in's until the injector is done (it then waits for an agent that
    never answers), the agent's until attach returns, on fresh targets."""
    ts, call, tr = [], [], []
    for i in range(4):
        p, stop, out = start("%s-calib%d" % (setting, i), args)
        storm = Storm(setting, p.pid, rng.random())
        storm.start()
        for j in range(3 if i == 0 else 0):
            rc, t0, lines = attach(p.pid, True, "done")
            at = dict((l[0], int(l[1])) for l in lines)
            if "LOADED" in at:
                ts.append(at["LOADED"] - t0)
                call.append(at["DETACHED"] - at["FRAME"])
        for j in range(6 if i > 0 else 0):
            rc, t0, lines = attach(p.pid, False)
            if rc == 0:
                tr.append(now() - t0)
                break
            time.sleep(0.2)
        storm.stop()
        finish(p, stop, out)
    if not ts or not tr:
        raise SystemExit("calibration: attach does not work here")
    return median(ts), median(call), median(tr)


class Storm(threading.Thread):
    """SIGUSR1 to pid every 0.2 to 1 ms (usr1), or SIGSTOP for 1 to 3 ms
    every 3 to 15 ms (stopcont), until stopped; nothing for plain."""

    def __init__(self, kind, pid, seed):
        threading.Thread.__init__(self, daemon=True)
        self.kind, self.pid = kind, pid
        self.rng = random.Random(seed)
        self.halt = threading.Event()
        self.sent = 0

    def run(self):
        while not self.halt.is_set():
            try:
                if self.kind == "plain":
                    return
                if self.kind == "usr1":
                    os.kill(self.pid, signal.SIGUSR1)
                    self.halt.wait(self.rng.uniform(0.0002, 0.001))
                else:
                    os.kill(self.pid, signal.SIGSTOP)
                    time.sleep(self.rng.uniform(0.001, 0.003))
                    os.kill(self.pid, signal.SIGCONT)
                    self.halt.wait(self.rng.uniform(0.003, 0.015))
                self.sent += 1
            except ProcessLookupError:
                return

    def stop(self):
        self.halt.set()
        self.join()
        if self.kind == "stopcont":
            try:
                os.kill(self.pid, signal.SIGCONT)
            except ProcessLookupError:
                pass


def main():
    rng = random.Random({"plain": 1, "usr1": 2, "stopcont": 3}[setting])
    p, stop, out = start(setting + "-plain", [])
    rc, line = finish(p, stop, out)
    want = checksum(line)
    if rc != 0 or want is None or want.startswith("bad"):
        raise SystemExit("the plain run: status %s, %r" % (rc, line))
    args = ["--sigusr1"] if setting == "usr1" else []
    t_standin, t_call, t_agent = calibrate(args, rng)
    say("DIAG", "%s: plain checksum %s; an attach takes %.0f ms with the "
        "stand-in (%.0f ms in the remote call), %.0f ms with the agent; "
        "kills uniform over those" % (setting, want, t_standin / 1e6,
                                      t_call / 1e6, t_agent / 1e6))

    per = -(-n // NTARGETS)
    where, deaths, hangs, sums, finals, traced = {}, [], [], [], [], []
    done = 0
    for k in range(NTARGETS):
        tag = "%s%d" % (setting, k)
        p, stop, out = start(tag, args)
        storm = Storm(setting, p.pid, rng.random())
        storm.start()
        m = min(per, n - done)
        for i in range(m):
            standin = i < m * 3 // 4
            t = rng.uniform(0, t_standin if standin else t_agent)
            # One kill in ten is aimed inside the remote call, so that the
            # window that matters most is hit however this machine's load
            # skews the calibrated times.
            rc, t0, lines = attach(p.pid, standin,
                                   "incall" if i % 10 == 9 else int(t))
            done += 1
            if rc == "hung":
                hangs.append("%s attach %d" % (tag, i))
            w = landed(rc, lines)
            where[w] = where.get(w, 0) + 1
            end = time.monotonic() + 5
            while tracer(p.pid) != 0 and time.monotonic() < end:
                time.sleep(0.001)
            if tracer(p.pid) != 0:
                traced.append("%s attach %d" % (tag, i))
            if p.poll() is not None:
                deaths.append("%s: status %s after attach %d killed %s" %
                              (tag, p.returncode, i, w))
                break
        if p.poll() is None:
            if storm is not None and setting == "stopcont":
                storm.stop()
                storm = None
            # The agent's thread may still be starting when a killed
            # attach loaded it: attach then says it does not answer yet.
            for tries in range(10):
                rc, t0, lines = attach(p.pid, False)
                if rc == 0:
                    break
                time.sleep(0.3)
            if tries > 0:
                say("DIAG", "%s: the final attach worked at try %d" %
                    (tag, tries + 1))
            if rc != 0:
                finals.append("%s: status %s: %s" % (tag, rc, open(
                    os.path.join(tmp, "%s.trace.%d.err" % (setting, seq[0]))
                ).read()))
        if storm is not None:
            storm.stop()
            if storm.sent > 0:
                say("DIAG", "%s: %d signals sent" % (tag, storm.sent))
        if p.poll() is not None:
            continue
        rc, line = finish(p, stop, out)
        if rc is None:
            hangs.append("%s did not exit" % tag)
        elif rc != 0:
            deaths.append("%s: exit status %s" % (tag, rc))
        got = checksum(line)
        if got != want:
            sums.append("%s: %r" % (tag, line))
    say("DIAG", "%s: %d attaches killed: %s" % (setting, done, ", ".join(
        "%d %s" % (v, w) for w, v in sorted(where.items()))))
    for what, bad in (("no target died", deaths),
                      ("no target or attach hung", hangs),
                      ("no thread stayed traced", traced),
                      ("every target's checksum is the plain run's, no bad "
                       "block", sums),
                      ("a final attach worked on each target", finals)):
        say("FAIL" if bad else "PASS", "%s: %s" % (setting, what))
        for b in bad[:10]:
            say("DIAG", b)
    incall = where.get("inside the remote call", 0)
    say("PASS" if incall >= n // 20 else "FAIL",
        "%s: %d of %d kills landed inside the remote call (at least %d)" %
        (setting, incall, done, n // 20))


try:
    main()
except SystemExit as e:
    say("FAIL", "%s: %s" % (setting, e))
EOF

# Run one setting; turn the driver's PASS/FAIL/DIAG lines into TAP.
run() {
	python3 "$HT_TMP/kill.py" "$HEAPTOOL" "$TARGETS" "$HT_TMP" "$1" "$n" \
	    >"$HT_TMP/$1.res" 2>"$HT_TMP/$1.py.err"
	[ -s "$HT_TMP/$1.py.err" ] && diag "$(head -c 2000 "$HT_TMP/$1.py.err")"
	_got=0
	while read -r _k _m; do
		case $_k in
		PASS) ok 0 "$_m"; _got=1 ;;
		FAIL) ok 1 "$_m"; _got=1 ;;
		*) diag "$_m" ;;
		esac
	done <"$HT_TMP/$1.res"
	[ $_got -eq 1 ] || ok 1 "$1: the driver reported"
}

run plain
run usr1
run stopcont

done_testing
