#!/usr/bin/python3
"""bench/first_results.py - how long an agent waits for its answers on a mount.

    bench/first_results.py [-k TASK]... [--no-wait-warm] [--fresh-cache] PASSFS

Mounts the bundled tasks on a fresh state directory (the machine's eager
model cache as it is, unless --fresh-cache: an empty one), waits until
eager's model has been counted ahead for every task (summary.json's
eager_model_ahead; --no-wait-warm measures at once), then for every task
(or each -k TASK), one at a time:

  first  save pass.c (its fused pass from bench/passes/ where there is one,
         else the task's template, saved again) and read result.json: the
         seconds until the read returns this pass's result, and whether one
         blocking read (the mount's --wait-timeout, 20 s) gave it;
  check  save the same pass as check.c and read check.json (docs/mount.md);
  again  save the task's rerun trigger and read result.json again (the same
         bytes evaluated afresh).

Prints one row per task and the medians, 90th percentiles and maxima; the
targets it is held to are in docs/benchmarks.md, "Answers inside one read".
Needs /dev/fuse.  Load on the machine moves the times: run it alone.
"""
import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read_doc(path):
    t0 = time.monotonic()
    with open(path) as f:
        s = f.read()
    try:
        return json.loads(s), time.monotonic() - t0
    except ValueError:
        return None, time.monotonic() - t0


def wait_for(path, done, limit=600):
    """(seconds until a read of path returned a document done() accepts,
    whether the first read did, that document)."""
    t0 = time.monotonic()
    first = True
    while True:
        doc, _ = read_doc(path)
        if doc is not None and done(doc):
            return time.monotonic() - t0, first, doc
        first = False
        if time.monotonic() - t0 > limit:
            return None, False, doc
        time.sleep(0.1)


def pct(xs, q):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    k = min(len(xs) - 1, max(0, int(round(q * (len(xs) - 1)))))
    return xs[k]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("passfs")
    ap.add_argument("-k", action="append", default=[], help="only this task (repeat)")
    ap.add_argument("--no-wait-warm", action="store_true", help="measure without waiting for the warm-up")
    ap.add_argument("--fresh-cache", action="store_true", help="an empty eager model cache (XDG_CACHE_HOME)")
    a = ap.parse_args()
    passfs = os.path.realpath(a.passfs)
    tmp = tempfile.mkdtemp(prefix="passfs-first-")
    mnt, state = os.path.join(tmp, "mnt"), os.path.join(tmp, "state")
    os.mkdir(mnt)
    env = dict(os.environ)
    env.pop("PASSFS_WARM", None)
    if a.fresh_cache:
        env["XDG_CACHE_HOME"] = os.path.join(tmp, "cache")
    t_mount = time.monotonic()
    subprocess.run([passfs, "mount", "--tasks", os.path.join(ROOT, "tasks"), "--state", state, "--backend", "cpu", mnt],
                   check=True, env=env, stdout=subprocess.DEVNULL)
    rows = []
    try:
        warm_s = None
        if not a.no_wait_warm:
            while True:
                s = json.load(open(os.path.join(mnt, "summary.json")))
                ahead = s.get("eager_model_ahead") or {}
                if ahead.get("state") in ("done", None, "off"):
                    break
                time.sleep(1)
            warm_s = time.monotonic() - t_mount
            print("eager's model counted ahead for %s of %s tasks in %.1f s" % (
                ahead.get("tasks_ready"), ahead.get("tasks"), warm_s), file=sys.stderr)
        tasks = a.k or sorted(d for d in os.listdir(mnt) if os.path.isdir(os.path.join(mnt, d)) and d != "docs")
        for t in tasks:
            d = os.path.join(mnt, t)
            fused = os.path.join(ROOT, "bench", "passes", t + ".c")
            src = open(fused, "rb").read() if os.path.exists(fused) else open(os.path.join(d, "pass.c"), "rb").read()
            sha = hashlib.sha256(src).hexdigest()
            with open(os.path.join(d, "pass.c"), "wb") as f:
                f.write(src)

            def mine(doc):
                return doc.get("pass_sha256") == sha and doc.get("state") == "done" and not doc.get("stale")
            first_s, first_one, doc = wait_for(os.path.join(d, "result.json"), mine)
            verdict = doc.get("verdict") if doc else None
            seq = doc.get("seq") if doc else None
            with open(os.path.join(d, "check.c"), "wb") as f:
                f.write(src)
            check_s, check_one, cdoc = wait_for(
                os.path.join(d, "check.json"),
                lambda j: j.get("check_sha256") == sha and j.get("state") == "done")
            with open(os.path.join(d, "rerun"), "w") as f:
                f.write("\n")
            again_s, again_one, _ = wait_for(os.path.join(d, "result.json"),
                                             lambda j: mine(j) and isinstance(seq, int) and j.get("seq", 0) > seq)
            rows.append((t, "fused" if os.path.exists(fused) else "template", verdict, first_s, first_one, check_s,
                         check_one, again_s, again_one))
            print("%-40s %-8s %-15s first %6s%s  check %6s%s  again %6s%s" % (
                t, rows[-1][1], verdict, fmt(first_s), "" if first_one else "*", fmt(check_s), "" if check_one else "*",
                fmt(again_s), "" if again_one else "*"), file=sys.stderr)
    finally:
        subprocess.run(["fusermount3", "-u", mnt])
        time.sleep(1)
        shutil.rmtree(tmp, ignore_errors=True)
    print("| task | pass | verdict | first s | check.c s | again s |")
    print("|---|---|---|---:|---:|---:|")
    for t, kind, verdict, f1, o1, c1, oc, a1, oa in rows:
        print("| `%s` | %s | %s | %s%s | %s%s | %s%s |" % (t, kind, verdict, fmt(f1), "" if o1 else "*", fmt(c1),
                                                          "" if oc else "*", fmt(a1), "" if oa else "*"))
    print()
    print("| over %d tasks | median | 90th percentile | max | in one read |" % len(rows))
    print("|---|---:|---:|---:|---:|")
    for name, i, j in (("first result", 3, 4), ("check.c", 5, 6), ("again (rerun)", 7, 8)):
        xs = [r[i] for r in rows]
        mx = max((x for x in xs if x is not None), default=None)
        worst = [r[0] for r in rows if r[i] == mx]
        print("| %s | %s | %s | %s (`%s`) | %d of %d |" % (name, fmt(statistics.median([x for x in xs if x is not None]) if any(
            x is not None for x in xs) else None), fmt(pct(xs, 0.9)), fmt(mx), worst[0] if worst else "-",
            sum(1 for r in rows if r[j]), len(rows)))
    print()
    print("(* = the first blocking read returned before the answer; the time is until a later read had it)")
    if warm_s is not None:
        print("eager's model counted ahead in %.1f s before the first save" % warm_s)


def fmt(x):
    return "-" if x is None else "%.1f" % x


if __name__ == "__main__":
    main()
