#!/usr/bin/python3
"""verify.py - checks the KernelBench tasks against PyTorch, with the eager
oracle's own machinery (tests/oracle/test_eager_torch.py: `passfs eager
--out` on each task, torch recomputing every variant on the same inputs via
tests/oracle/graph_torch.py, compared at the oracle's tolerances).

    /usr/bin/python3 bench/kernelbench/verify.py [--gpu-geometry] [ID ...]

--gpu-geometry also runs each task with PASSFS_EAGER_GEOMETRY=gpu (the
launches eager's modeled time is counted on).  Environment: PASSFS (default
build/passfs).  Run from the repository root.  Not a test of the suite (it is
not in tests/); it prints the oracle's lines and "N passed, N failed", exit 1
on a failure.
"""
import os
import shutil
import sys
import tempfile

REPO = os.getcwd()
sys.path.insert(0, os.path.join(REPO, "tests", "oracle"))
import test_eager_torch as T  # noqa: E402

TASKS = os.path.join(REPO, "bench", "kernelbench", "tasks")


def main(argv):
    gpu = "--gpu-geometry" in argv
    only = [a for a in argv if not a.startswith("--")]
    ids = T.task_ids(TASKS)
    if only:
        ids = [i for i in ids if i in only]
    jobs = [(TASKS, i, "kb") for i in ids]
    if gpu:
        jobs += [(TASKS, i, "kb-gpu-geometry", {"PASSFS_EAGER_GEOMETRY": "gpu"}) for i in ids]
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    tmp = tempfile.mkdtemp(prefix="passfs_kb_verify_", dir=shm)
    passed = failed = 0
    try:
        for job in jobs:    # one at a time: the tensors are large
            p, f = T.check_task(T.EagerRun(tmp, *job))
            passed += p
            failed += f
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
