#!/usr/bin/env python3
"""Hostile profiles, and a runner that measures what reading them costs, for
t/t0036-hostile-bounds.sh and bench/hostile.sh.

Usage:
  hthostile.py modules OUT [--modules N] [--sites M]
      N module records (default 65,536, the reader's limit), each with its
      own path (a file that does not exist) and a 64-byte build-id, the
      first one's range holding all the others'; and M sites (default N)
      of 4 frames, each frame in another module (or, one in 8, between
      two, where only the first module holds it): every module is
      charged, named and keyed, and the symbolizer's lookups meet one
      range under 65,535 others.
  hthostile.py sites OUT [--sites N] [--frames K] [--module ELF]
                         [--zero-frames]
      N sites (default 200,000) of K frames each (default 64, the format's
      limit), every frame a distinct address.  With --module the addresses
      lie in the executable segment of that ELF file, which is the module
      (its real path, build-id and load address): each address is one the
      symbolizer looks up for real; without it, in a module whose file does
      not exist.  --zero-frames writes sites of no frames instead (the
      smallest record: the most sites per byte of file).
  hthostile.py run [--timeout S] [--out FILE] -- CMD ARG...
      run CMD with stdout to FILE (default /dev/null) and stderr to
      FILE.err; print "STATUS MAXRSS_KIB WALL_S CPU_S", where STATUS is the
      exit status, or "timeout" when CMD was killed after S seconds
      (default 60), MAXRSS_KIB its peak resident memory and CPU_S its user
      and system time (getrusage of the children, so only CMD's).

Profiles are format version 3 (with the CRC).  The figures of site i
vary with i, so that sorting and folding have work to do; the seed is
fixed, the same arguments always write the same file.
"""

import os
import resource
import signal
import struct
import subprocess
import sys
import time
import zlib

u16 = struct.Struct("<H").pack
u32 = struct.Struct("<I").pack
u64 = struct.Struct("<Q").pack
SITE_HEAD = struct.Struct("<QQQQQQddQQI")


def rec(rtype, payload):
    return u32(rtype) + u32(len(payload)) + payload


def meta(command=b"hostile"):
    m = b"".join(u64(v) for v in (4242, 1, 4096)) + u32(2) + u32(0)
    m += b"".join(u64(v) for v in (
        10 ** 9, 3 * 10 ** 9, 0, 2 * 10 ** 9, 65536, 0, 21, 11,
        0, 0, 0, 0))
    return rec(1, m + u16(len(command)) + command)


def module(bias, start, end, build_id, path):
    return rec(2, u64(bias) + u64(start) + u64(end) + u16(len(build_id)) +
               build_id + u16(len(path)) + path)


def site(i, frames):
    """Site i's record: figures that vary with i (in use at most
    allocated), the given frames, not folded."""
    samples = 1 + (i * 7) % 13
    live = samples - (i % (samples + 1)) // 2
    alloc = samples * 4096
    inuse = live * 4096
    return rec(4, SITE_HEAD.pack(inuse, live, alloc, samples, samples, live,
                                 float(inuse) * 4096, float(alloc) * 4096,
                                 inuse, live, len(frames)) +
               struct.pack("<%dQ" % len(frames), *frames) + u32(0))


def finish(out, parts):
    body = b"HEAPPROF" + u32(3) + u32(0) + b"".join(parts) + u32(0) + u32(4)
    with open(out, "wb") as fp:
        fp.write(body + u32(zlib.crc32(body)))


def opt(args, name, default):
    if name in args:
        i = args.index(name)
        v = args[i + 1]
        del args[i:i + 2]
        return v
    return default


def cmd_modules(args):
    n = int(opt(args, "--modules", "65536"))
    m = int(opt(args, "--sites", str(n)))
    parts = [meta()]
    base = 0x10000000
    for i in range(n):
        bid = struct.pack("<Q", i) * 8
        lo = base + i * 0x10000
        hi = base + n * 0x10000 if i == 0 else lo + 0x8000
        parts.append(module(0, lo, hi, bid,
                            b"/nonexistent/hostile/lib%05d.so.1" % i))
    for i in range(m):
        frames = []
        for k in range(4):
            j = (i * 4 + k) % n
            # In module j, or in the gap after it (module 0's only).
            frames.append(base + j * 0x10000 +
                          (0x9000 if (i + k) % 8 == 7 else 0x100) + 16 * k)
        parts.append(site(i, frames))
    finish(args[0], parts)


def elf_module(path):
    """(start, end, bias, build_id, text_lo, text_hi) of the ELF file at
    path loaded at its own addresses (ET_EXEC) or at 0x7f0000000000."""
    with open(path, "rb") as fp:
        b = fp.read()
    if b[:4] != b"\x7fELF" or b[4] != 2:
        raise SystemExit("%s: not a 64-bit ELF file" % path)
    etype, = struct.unpack_from("<H", b, 16)
    phoff, = struct.unpack_from("<Q", b, 32)
    phentsize, phnum = struct.unpack_from("<HH", b, 54)
    lo, hi, text, bid = None, 0, None, b""
    for k in range(phnum):
        ptype, flags, off, vaddr, _, filesz, memsz, _ = struct.unpack_from(
            "<IIQQQQQQ", b, phoff + k * phentsize)
        if ptype == 1:
            lo = vaddr & ~0xfff if lo is None else min(lo, vaddr & ~0xfff)
            hi = max(hi, vaddr + memsz)
            if flags & 1 and text is None:
                text = (vaddr, vaddr + filesz)
        elif ptype == 4:
            o = off
            while o + 12 <= off + filesz:
                nsz, dsz, ntype = struct.unpack_from("<III", b, o)
                name = b[o + 12:o + 12 + nsz]
                d = o + 12 + ((nsz + 3) & ~3)
                if ntype == 3 and name == b"GNU\0":
                    bid = b[d:d + dsz]
                o = d + ((dsz + 3) & ~3)
    if lo is None or text is None or not bid:
        raise SystemExit("%s: no PT_LOAD, text or build-id" % path)
    bias = 0 if etype == 2 else 0x7f0000000000
    return (lo + bias, ((hi + 0xfff) & ~0xfff) + bias, bias, bid,
            text[0] + bias, text[1] + bias)


def cmd_sites(args):
    n = int(opt(args, "--sites", "200000"))
    k = int(opt(args, "--frames", "64"))
    elf = opt(args, "--module", None)
    zero = "--zero-frames" in args
    if zero:
        args.remove("--zero-frames")
    # The command is the executable's name, as a real profile's.
    parts = [meta(os.path.basename(elf).encode() if elf else b"prog")]
    if elf is not None:
        start, end, bias, bid, lo, hi = elf_module(elf)
        parts.append(module(bias, start, end, bid,
                            os.path.realpath(elf).encode()))
    else:
        lo, hi = 0x400000, 0x40000000
        parts.append(module(0, lo, hi, bytes(range(1, 21)),
                            b"/nonexistent/hostile/prog"))
    # Distinct addresses: frame j of site i is the (i * k + j)-th of a
    # walk over the text with a stride prime to its size, so that the
    # addresses spread over every function rather than fill the first.
    span = hi - lo - 1
    stride = 7919
    while span % stride == 0:
        stride += 2
    for i in range(n):
        if zero:
            parts.append(site(i, []))
            continue
        first = i * k
        parts.append(site(i, [lo + 1 + ((first + j) * stride) % span
                              for j in range(k)]))
    finish(args[0], parts)


def cmd_run(args):
    timeout = float(opt(args, "--timeout", "60"))
    out = opt(args, "--out", os.devnull)
    if args[:1] == ["--"]:
        args = args[1:]
    with open(out, "wb") as o, open(out + ".err" if out != os.devnull
                                    else os.devnull, "wb") as e:
        t0 = time.monotonic()
        p = subprocess.Popen(args, stdout=o, stderr=e,
                             start_new_session=True)
        try:
            st = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            st = "timeout"
        wall = time.monotonic() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    print("%s %d %.2f %.2f" % (st, ru.ru_maxrss, wall,
                               ru.ru_utime + ru.ru_stime))


def main():
    cmds = {"modules": cmd_modules, "sites": cmd_sites, "run": cmd_run}
    if len(sys.argv) < 3 or sys.argv[1] not in cmds:
        sys.stderr.write(__doc__)
        return 2
    cmds[sys.argv[1]](sys.argv[2:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
