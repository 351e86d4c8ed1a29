# The python3 workload of the real-program benchmarks (bench/real.sh,
# bench/replay.sh): a dict of N entries (argv[1], default 300000) through
# a JSON round trip and a sort: many small objects made and freed.
import json
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 300000
d = {}
for i in range(n):
    d["k%d" % i] = [i, str(i) * 3, {"x": i}]
s = json.dumps(d)
e = json.loads(s)
l = sorted(e.items(), key=lambda kv: kv[1][1])
print(len(l))
