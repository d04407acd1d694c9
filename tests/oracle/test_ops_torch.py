#!/usr/bin/env python3
"""Checks that the PyTorch oracle (graph_torch.py) covers every graph op.

`$PASSFS ops` lists the ops of passfs's op table (engine/graph/graph_ops.c), one a
line; graph_torch.OPS must map each of them to PyTorch, and name no op passfs does
not have.  The ops' C layers (shape inference, eager lowering, importer calls) are
checked against the same table by tests/unit/test_ops_table.c.

Prints one line per check and `N passed, N failed`; exits 1 on any failure.
PASSFS is the passfs binary (ctest sets it; default build/passfs).
"""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import graph_torch as gt  # noqa: E402

PASSFS = os.environ.get("PASSFS", os.path.join(ROOT, "build", "passfs"))


def main():
    passes = fails = 0

    def check(name, ok, detail=""):
        nonlocal passes, fails
        if ok:
            passes += 1
            print(f"ok   {name}")
        else:
            fails += 1
            print(f"FAIL {name}{': ' + detail if detail else ''}")

    r = subprocess.run([PASSFS, "ops"], capture_output=True, text=True, check=False)
    check("passfs ops exits 0", r.returncode == 0, r.stderr.strip())
    ops = r.stdout.split()
    check("passfs ops lists ops", len(ops) > 40, f"{len(ops)} ops")
    check("passfs ops names each op once", len(ops) == len(set(ops)))
    missing = [op for op in ops if op not in gt.OPS]
    check("graph_torch.OPS maps every op", not missing, "missing " + ", ".join(missing))
    extra = sorted(set(gt.OPS) - set(ops))
    check("graph_torch.OPS names only passfs ops", not extra, "unknown " + ", ".join(extra))
    for table in ("OPTIONAL_OPERANDS", "REQUIRED_OPERANDS", "MOVEMENT"):
        bad = sorted(set(getattr(gt, table)) - set(ops))
        check(f"graph_torch.{table} names only passfs ops", not bad, ", ".join(bad))
    print(f"{passes} passed, {fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
