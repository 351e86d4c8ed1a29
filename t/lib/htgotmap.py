#!/usr/bin/env python3
"""The picture of a process that detach must restore (t0020, t0051-t0054):
GOT contents and page protections of every module, as JSON.  Modules are
the files mapped from / (the agent, once loaded, is left out).

Usage: htgotmap.py PID
"""
import json, os, struct, sys

pid = int(sys.argv[1])

def sections(path):
    """(e_type, [(vaddr, offset) of PT_LOAD], {name: (addr, size)})"""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        return None
    e_type, = struct.unpack_from("<H", data, 16)
    e_phoff, e_shoff = struct.unpack_from("<QQ", data, 32)
    e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx = \
        struct.unpack_from("<HHHHH", data, 54)
    loads = []
    for i in range(e_phnum):
        p_type, _, p_offset, p_vaddr = struct.unpack_from(
            "<IIQQ", data, e_phoff + i * e_phentsize)
        if p_type == 1:
            loads.append((p_vaddr, p_offset))
    shdrs = [struct.unpack_from("<IIQQQQIIQQ", data, e_shoff + i * e_shentsize)
             for i in range(e_shnum)]
    if not shdrs or e_shstrndx >= len(shdrs):
        return e_type, loads, {}
    stroff = shdrs[e_shstrndx][4]
    out = {}
    for sh in shdrs:
        name = data[stroff + sh[0]:data.index(b"\0", stroff + sh[0])]
        if name in (b".got", b".got.plt"):
            out[name.decode()] = (sh[3], sh[5])
    return e_type, loads, out

maps = []
with open("/proc/%d/maps" % pid) as f:
    for line in f:
        parts = line.split(None, 5)
        if len(parts) < 6 or not parts[5].startswith("/"):
            continue
        path = parts[5].rstrip("\n")
        if "heaptool-agent" in os.path.basename(path):
            continue
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        maps.append([lo, hi, parts[1], int(parts[2], 16), path])

# Protections per module: adjacent ranges with the same permissions merged,
# so that a VMA split and merged back by mprotect compares equal.
prot = {}
for lo, hi, perms, off, path in maps:
    r = prot.setdefault(path, [])
    if r and r[-1][1] == lo and r[-1][2] == perms:
        r[-1][1] = hi
    else:
        r.append([lo, hi, perms])

got = {}
mem = open("/proc/%d/mem" % pid, "rb")
for path in prot:
    try:
        info = sections("/proc/%d/root%s" % (pid, path))
    except OSError:
        continue
    if info is None or not info[1]:
        continue
    e_type, loads, secs = info
    first_vaddr, first_off = loads[0]
    page = ~0xfff
    starts = [lo for lo, hi, perms, off, p in maps
              if p == path and off == first_off & page]
    if not starts:
        continue
    bias = 0 if e_type == 2 else min(starts) - (first_vaddr & page)
    for name, (addr, size) in secs.items():
        mem.seek(bias + addr)
        got["%s %s" % (path, name)] = [bias + addr, mem.read(size).hex()]
json.dump({"got": got, "prot": prot}, sys.stdout)
