#!/usr/bin/env python3
"""bench/model_spread.py - how steady eager's modeled H200 time is from one
first evaluation to the next: each binary counts each task's eager model N
times, each on an empty model cache (`passfs eager --model --json`, a fresh
process each), and the table gives per variant the spread (max - min) /
median of the N counts, then per binary the median and the largest spread
and how many variants moved more than 10%.  -l: every count under load
(two processes copying 256 MiB buffers over and over and one spinning, on
top of the count's own threads), the spread then being the load's too.

    bench/model_spread.py [-n N] [-l] [-t TASKS_DIR] [-b PASSFS]... TASK...

Default: -n 4, build/passfs, the bundled tasks directory."""
import argparse, json, os, statistics, subprocess, sys, tempfile

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("-n", type=int, default=4)
ap.add_argument("-t", default="tasks")
ap.add_argument("-l", action="store_true")
ap.add_argument("-b", action="append")
ap.add_argument("tasks", nargs="+")
a = ap.parse_args()
bins = a.b or ["build/passfs"]
HOG = "a = bytearray(256 << 20); b = bytearray(256 << 20)\nwhile True: b[:] = a"
load = []
if a.l:
    load = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(2)]
    load.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
import atexit
atexit.register(lambda: [p.kill() for p in load])
spreads = {b: [] for b in bins}
print("%-44s" % "task/variant" + "".join("%26s" % ("ms median, spread [%d]" % i) for i in range(len(bins))))
for t in a.tasks:
    runs = {b: [] for b in bins}
    for b in bins:
        for _ in range(a.n):
            with tempfile.TemporaryDirectory() as cache:
                env = dict(os.environ, PASSFS_CACHE_DIR=cache)
                p = subprocess.run([b, "eager", "--model", "--json", "--tasks", a.t, "--task", t], env=env,
                                   capture_output=True, text=True)
                if p.returncode != 0:
                    print("%s on %s: %s" % (b, t, p.stderr.strip()[-200:]), file=sys.stderr)
                    continue
                runs[b].append({v["name"]: v["modeled_h200_ms"] for v in json.loads(p.stdout)["variants"]})
    names = next((r[0].keys() for r in runs.values() if r), [])
    for name in names:
        line = "%-44s" % ("%s/%s" % (t, name))[:44]
        for b in bins:
            xs = [r[name] for r in runs[b] if r.get(name)]
            if len(xs) < 2:
                line += "%26s" % "-"
                continue
            med = statistics.median(xs)
            s = (max(xs) - min(xs)) / med
            spreads[b].append(s)
            line += "%16.4f %8.1f%%" % (med, 100 * s)
        print(line)
for i, b in enumerate(bins):
    s = spreads[b]
    if s:
        print("[%d] %s: %d variants, spread median %.1f%%, largest %.1f%%, over 10%%: %d" %
              (i, b, len(s), 100 * statistics.median(s), 100 * max(s), sum(x > 0.10 for x in s)))
