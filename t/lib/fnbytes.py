#!/usr/bin/env python3
"""The first bytes of functions of a running process, for the inline tests.

Usage: fnbytes.py PID EXE NAME...

Prints "NAME HEX" for each NAME that EXE defines (nm -S), the first 32
bytes (or its size, if smaller) read from /proc/PID/mem where EXE is
mapped: what the process runs now, patched or not.
"""

import os
import subprocess
import sys


def main():
    pid, exe, names = sys.argv[1], os.path.realpath(sys.argv[2]), sys.argv[3:]
    with open(exe, "rb") as f:
        pie = f.read(18)[16] == 3  # e_type ET_DYN
    base = 0
    if pie:
        with open("/proc/%s/maps" % pid) as f:
            for line in f:
                a = line.split()
                if len(a) >= 6 and a[5] == exe and int(a[2], 16) == 0:
                    base = int(a[0].split("-")[0], 16)
                    break
            else:
                sys.exit("%s not mapped by %s" % (exe, pid))
    syms = {}
    out = subprocess.check_output(["nm", "-S", "--defined-only", exe])
    for line in out.decode().splitlines():
        a = line.split()
        if len(a) == 4 and a[2] in "TtWw":
            syms.setdefault(a[3], (int(a[0], 16), int(a[1], 16)))
    with open("/proc/%s/mem" % pid, "rb") as mem:
        for n in names:
            if n not in syms:
                continue
            addr, size = syms[n]
            mem.seek(base + addr)
            print(n, mem.read(min(size, 32)).hex())


main()
