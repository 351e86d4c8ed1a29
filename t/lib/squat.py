#!/usr/bin/env python3
"""squat.py LOG: pose as heaptool's agent for a pid that is about to be
reused (issue 9, item 2).  Binds the abstract name "\\0heaptool.<own pid>",
hands the listening socket to a child in a session of its own, prints its
pid and exits.  The child serves for ever: it accepts every connection and
appends to LOG one line "N bytes" per connection, N the bytes the client
sent within 2 s.  A client that checks whom it talks to sends nothing."""
import os
import socket
import sys

log = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(b"\0heaptool.%d" % os.getpid())
s.listen(64)
if os.fork() == 0:
    os.setsid()
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    while True:
        c, _ = s.accept()
        c.settimeout(2)
        try:
            d = c.recv(4096)
        except OSError:
            d = b""
        with open(log, "ab") as f:
            f.write(b"%d bytes\n" % len(d))
        c.close()
print(os.getpid(), flush=True)
os._exit(0)
