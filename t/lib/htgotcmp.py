# Compare two pictures of a process by t/lib/htgotmap.py (before an attach
# and after its detach): every GOT slot and every page protection the same.
# usage: htgotcmp.py BEFORE.json AFTER.json got|prot|all
# Prints what was compared and up to 20 differences; exit 1 on any (or when
# BEFORE has nothing of that kind to compare).
import json, sys
a = json.load(open(sys.argv[1]))
b = json.load(open(sys.argv[2]))
what = sys.argv[3]
bad = []
if what in ("got", "all"):
    for k, (addr, before) in a["got"].items():
        if k not in b["got"]:
            bad.append("%s: gone" % k)
            continue
        after = b["got"][k][1]
        for i in range(0, len(before), 16):
            if before[i:i + 16] != after[i:i + 16]:
                bad.append("%s slot %d (0x%x): %s before, %s after" % (
                    k, i // 16, addr + i // 2, before[i:i + 16],
                    after[i:i + 16]))
    print("%d GOT sections compared" % len(a["got"]))
if what in ("prot", "all"):
    for k, r in a["prot"].items():
        if b["prot"].get(k) != r:
            bad.append("%s: %s before, %s after" % (k, r, b["prot"].get(k)))
    print("%d modules compared" % len(a["prot"]))
for line in bad[:20]:
    print(line)
sys.exit(1 if bad or not a["got" if what == "all" else what] else 0)
