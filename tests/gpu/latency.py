#!/usr/bin/env python3
"""latency.py - write-to-result latency as an agent sees it (tests/gpu/check.sh).

Serves a task tree with `passfs watch` (plain files, always) and `passfs
mount` (FUSE, when /dev/fuse is there and fusermount3 exists), writes
pass.c the way a shell tool does (open, write, close) and times until the
result of those bytes is readable:

  watch: polls status and result.json until result.json names the sha256 of
         the bytes written (docs/watch.md: reads never wait);
  mount: one `cat result.json` after the write (the read waits for the
         evaluation, docs/mount.md).

Each front end gets two writes: the first (cold: eager's model or timings
for the task, the module cache, the device's first context) and a second
with other bytes (warm: what an agent's later edits cost).  One row per
write, printed as it finishes: front end, which write, seconds, verdict,
score.  The whole run stops at --deadline seconds (a row that did not finish
says so).

Exit status: 0 when every write that started got a result for its bytes,
1 otherwise, 2 on a setup error.
"""
import argparse
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def write_pass(path, data):
    # what `cat > pass.c` does: truncate, write, close
    with open(path, "wb") as f:
        f.write(data)


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


def result_of(path):
    try:
        return json.loads(read(path) or b"{}")
    except ValueError:
        return {}


def row(front, which, secs, r, note=""):
    print("%-6s %-6s %8s  %-14s %8s  %s" % (
        front, which, "-" if secs is None else "%.2f" % secs, r.get("verdict", "-"),
        "-" if r.get("score") is None else "%.3f" % r["score"], note), flush=True)


def passes(src):
    """Two versions of the same correct pass with different bytes."""
    with open(src, "rb") as f:
        base = f.read()
    return [("cold", base + b"\n/* latency: first write */\n"), ("warm", base + b"\n/* latency: second write */\n")]


def run_watch(args, tmp, left):
    tree, state = os.path.join(tmp, "w"), os.path.join(tmp, "state-w")
    cmd = [args.passfs, "watch", "--tasks", args.tasks, "--state", state, "--backend", args.backend, "--quiet", tree]
    log = open(os.path.join(tmp, "watch.log"), "wb")
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    tdir = os.path.join(tree, args.task)
    bad = 0
    try:
        t_end = time.time() + left()
        while not os.path.exists(os.path.join(tdir, "status")):
            if p.poll() is not None or time.time() > t_end:
                row("watch", "start", None, {}, "the watcher did not start: %s" %
                    read(os.path.join(tmp, "watch.log")).decode(errors="replace")[-200:])
                return 1
            time.sleep(0.05)
        for which, data in passes(args.pass_file):
            want = sha256(data)
            t0 = time.time()
            write_pass(os.path.join(tdir, "pass.c"), data)
            done = None
            while time.time() < t_end:
                r = result_of(os.path.join(tdir, "result.json"))
                st = read(os.path.join(tdir, "status")).strip()
                if r.get("pass_sha256") == want and st == b"done":
                    done = time.time() - t0
                    break
                time.sleep(0.02)
            if done is None:
                row("watch", which, None, {}, "no result within the deadline")
                return bad + 1
            row("watch", which, done, r)
            t_end = time.time() + left()
    finally:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
    return bad


def run_mount(args, tmp, left):
    if not os.path.exists("/dev/fuse") or shutil.which("fusermount3") is None:
        row("mount", "-", None, {}, "skipped: no /dev/fuse or fusermount3 here")
        return 0
    mnt, state = os.path.join(tmp, "m"), os.path.join(tmp, "state-m")
    os.makedirs(mnt)
    wait = max(5, int(left()))
    cmd = [args.passfs, "mount", "--tasks", args.tasks, "--state", state, "--backend", args.backend,
           "--wait-timeout", str(wait), mnt]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        row("mount", "start", None, {}, "passfs mount failed: %s" % (p.stderr.strip()[-200:]))
        return 1
    bad = 0
    try:
        tdir = os.path.join(mnt, args.task)
        for which, data in passes(args.pass_file):
            want = sha256(data)
            t0 = time.time()
            write_pass(os.path.join(tdir, "pass.c"), data)
            r = result_of(os.path.join(tdir, "result.json"))       # waits for the evaluation
            secs = time.time() - t0
            if r.get("pass_sha256") != want:
                row("mount", which, None, r, "result.json does not judge the bytes written (status %s)" %
                    read(os.path.join(tdir, "status")).decode(errors="replace").strip())
                bad += 1
                break
            row("mount", which, secs, r)
            if left() < 5:
                break
    finally:
        subprocess.run(["fusermount3", "-u", mnt], capture_output=True, timeout=30)
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passfs", default=os.environ.get("PASSFS", os.path.join(REPO, "build", "passfs")))
    ap.add_argument("--tasks", default=os.path.join(REPO, "tests", "passes", "tasks"))
    ap.add_argument("--task", default="tiny_bias_gelu")
    ap.add_argument("--pass-file", default=os.path.join(REPO, "tests", "passes", "ok_fused.c"))
    ap.add_argument("--backend", default="cuda", choices=["cuda", "cpu", "auto"])
    ap.add_argument("--deadline", type=float, default=60, help="seconds for the whole run")
    ap.add_argument("--fronts", default="watch,mount", help="comma-separated: watch, mount")
    args = ap.parse_args()
    start = time.time()
    if not os.access(args.passfs, os.X_OK):
        print("latency: no passfs binary at %s" % args.passfs)
        return 2
    if not os.path.isfile(os.path.join(args.tasks, args.task, "graph.json")):
        print("latency: no task %s in %s" % (args.task, args.tasks))
        return 2

    def left():
        return max(0.0, args.deadline - (time.time() - start))

    print("%-6s %-6s %8s  %-14s %8s  %s" % ("front", "write", "seconds", "verdict", "score", "note"), flush=True)
    tmp = tempfile.mkdtemp(prefix="passfs_latency_")
    bad = 0
    try:
        for front in [f for f in args.fronts.split(",") if f]:
            if left() < 2:
                row(front, "-", None, {}, "skipped: the deadline passed")
                bad += 1
                continue
            bad += (run_watch if front == "watch" else run_mount)(args, tmp, left)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
