#!/usr/bin/env python3
"""The widest flame graph a profile can ask for, for t/t0081-html.sh:
htwide.py OUT writes a profile (format version 3) of 20,000 sites of 64
distinct frames each, 1,100 of them of 1 GiB (each over a pixel of the
graph's 1,180) and the rest of 4 KiB: at one pixel the graph would draw
some 70,000 frames."""

import struct
import sys

sys.path.insert(0, __import__("os").path.dirname(__file__))
import hthostile as h  # noqa: E402

def main():
    parts = [h.meta(b"prog"),
             h.module(0, 0x400000, 0x40000000, bytes(range(1, 21)),
                      b"/nonexistent/prog")]
    for i in range(20000):
        frames = [0x400000 + 1 + ((i * 64 + j) * 7919) % 0x3fb00000
                  for j in range(64)]
        v = 1 << 30 if i < 1100 else 4096
        parts.append(h.rec(4, h.SITE_HEAD.pack(v, 1, v, 1, 1, 1, 0.0, 0.0,
                                               v, 1, 64) +
                           struct.pack("<64Q", *frames) + h.u32(0)))
    h.finish(sys.argv[1], parts)


if __name__ == "__main__":
    main()
