#!/usr/bin/env python3
"""bench/op_costs.py - what each kind of arithmetic costs in the cpu
backend's modeled H200 time, against what it costs an H200.

One task, relu over 262,144 float32 elements (one wave of an H200's resident
threads), and one pass per kind of work: a thread per element runs K
dependent repetitions of the operation on a value of its own, then writes
relu(x) + 0 * that value (exact, and the work cannot be dropped: the
value is a float the compiler cannot prove finite - an integer result goes
in as the bits of one, its top exponent bit cleared).  Each pass
is evaluated with `passfs eval --json`; its modeled time (the path and
parallel terms come from the emulated threads' CPU time) less the K = 0
pass's, over K, is the modeled cost of one repetition across the wave.

The H200 column is what the same repetition costs an H200 from its
instruction throughput (CUDA C++ Programming Guide, "Arithmetic
Instructions", compute capability 9.0: per SM per clock, 128 FP32
add/mul/fma, 64 32-bit integer multiply-adds, 16 special-function results,
16 conversions to or from 16-bit types) times the instructions the
repetition compiles to on a GPU (a rough count, given in the table), for
262,144 threads on 132 SMs at 1.98 GHz.  Both columns are also given as
multiples of an FMA's: where the two multiples differ, the emulator's cost
profile, not the GPU's, decides how a pass doing that work is scored.

    bench/op_costs.py [-k K] [--only NAME,...] [PASSFS]

The path and parallel terms are given the same way (each less the K = 0
pass's); the modeled time of a launch is the largest of its terms, so at
small K the bytes hide the work.
"""
import argparse, json, os, subprocess, sys, tempfile

N = 262144
SMS, CLOCK_GHZ = 132, 1.98
# name: (the repetition's body on `a` (float) / `u` (unsigned) / `h` (16-bit),
#        its setup, its use in the output, instructions on a GPU by pipe)
OPS = {
    "fma": ("a = a * 0.999f + 0.001f;", "float a = x;", "a", {"fp32": 1}),
    "fdiv": ("a = a / 1.0001f + 0.0001f;", "float a = x;", "a", {"fp32": 9, "sfu": 1}),
    "sqrtf": ("a = sqrtf(a + 1.0f);", "float a = fabsf(x);", "a", {"fp32": 5, "sfu": 1}),
    "expf": ("a = expf(-a);", "float a = fabsf(x);", "a", {"fp32": 8, "sfu": 1}),
    "tanhf": ("a = tanhf(a + 0.5f);", "float a = x;", "a", {"fp32": 12, "sfu": 2}),
    # a divisor the compiler cannot see (3 or 4, from the input): a GPU
    # has no divide instruction, the compiler's sequence is about 10
    # integer operations, a reciprocal and a few conversions
    "int_div": ("u = u / d + 12345u;", "unsigned u = (unsigned)(fabsf(x) * 1000.0f), d = 3u + (x > 9.0f);",
                "__int_as_float((int)(u & 0x3fffffffu))", {"int": 10, "fp32": 4, "sfu": 1}),
    "int_mad": ("u = u * 1664525u + 1013904223u;", "unsigned u = (unsigned)(fabsf(x) * 1000.0f);",
                "__int_as_float((int)(u & 0x3fffffffu))", {"int": 1}),
    "half": ("h = __float2half(__half2float(h) * 0.999f + 0.001f);", "__half h = __float2half(x);",
             "__half2float(h)", {"cvt": 2, "fp32": 1}),
    "bf16": ("b = __float2bfloat16(__bfloat162float(b) * 0.999f + 0.001f);",
             "__nv_bfloat16 b = __float2bfloat16(x);", "__bfloat162float(b)", {"cvt": 2, "fp32": 1}),
    "syncthreads": ("a = a * 0.999f + 0.001f; __syncthreads();", "float a = x;", "a", {"fp32": 1, "bar": 1}),
    "shfl": ("a = __shfl_xor_sync(0xffffffffu, a, 1) * 0.999f + 0.001f;", "float a = x;", "a",
             {"fp32": 1, "shfl": 1}),
}
# results per SM per clock (compute capability 9.0); a barrier or a shuffle
# taken as one result per clock per warp scheduler (4 an SM) per warp
PER_CLOCK = {"fp32": 128, "int": 64, "sfu": 16, "cvt": 16, "bar": 4 * 32, "shfl": 32}

PASS = r"""#include <passfs.h>
__global__ void work(const float *in, float *out, long long n)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	float x = i < n ? in[i] : 0.0f;
	%(setup)s
#pragma unroll 1
	for (int k = 0; k < %(k)d; k++) {
		%(body)s
	}
	if (i < n)
		out[i] = fmaxf(x, 0.0f) + 0.0f * (%(use)s);
}
PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0);
	pf_tensor *y = pf_out(call, 0);
	long long n = pf_numel(y);
	return pf_launch(call, work, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data, y->data, n);
}
"""


def gpu_ns(pipes):
    """One repetition over N threads on an H200, ns."""
    clocks = sum(n * N / (SMS * PER_CLOCK[p]) for p, n in pipes.items())
    return clocks / CLOCK_GHZ


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-k", type=int, default=256, help="repetitions a thread (default 256)")
    ap.add_argument("--only", default="")
    ap.add_argument("passfs", nargs="?", default="build/passfs")
    a = ap.parse_args()
    names = [n for n in OPS if not a.only or n in a.only.split(",")]
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "tasks", "op_costs"))
        graph = {"id": "op_costs", "summary": "relu over one wave of threads (bench/op_costs.py)",
                 "variants": [{"name": "f32_one_wave",
                               "inputs": [{"name": "x", "shape": [N], "dtype": "float32", "mean": 0.0, "std": 1.0}],
                               "nodes": [{"name": "t0", "op": "relu", "inputs": ["x"]}], "outputs": ["t0"]}]}
        json.dump(graph, open(os.path.join(d, "tasks", "op_costs", "graph.json"), "w"))

        def modeled(setup, body, use, k):
            src = os.path.join(d, "p.c")
            open(src, "w").write(PASS % {"setup": setup, "body": body, "use": use, "k": k})
            p = subprocess.run([a.passfs, "eval", "--json", "--tasks", os.path.join(d, "tasks"), "--task", "op_costs",
                                "--pass", src], capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit("passfs eval: %s" % p.stderr.strip()[-400:])
            r = json.loads(p.stdout)
            v = r["variants"][0]
            if v.get("verdict") != "ok":
                sys.exit("pass %s: %s %s" % (body, v.get("verdict"), v.get("reason", r.get("reason", ""))))
            t = v["traffic"]["pass"]
            return v["modeled_h200_ms"]["pass"], t["path_ms"], t["parallel_ms"]

        base, bpath, bpar = modeled("float a = x;", "a = a * 0.999f + 0.001f;", "a", 0)
        rows = []
        for n in names:
            body, setup, use, pipes = OPS[n]
            m, path, par = modeled(setup, body, use, a.k)
            rows.append((n, (m - base) * 1e6 / a.k, (path - bpath) * 1e6 / a.k, (par - bpar) * 1e6 / a.k,
                         gpu_ns(pipes), pipes))
    fma = next((r for r in rows if r[0] == "fma"), None)
    print("one repetition over %d threads, K = %d; modeled = (pass's modeled ms - the K = 0 pass's) / K" % (N, a.k))
    print("%-12s %12s %10s %10s %10s %10s %10s  %s" % ("work", "modeled ns", "path ns", "par ns", "H200 ns",
                                                        "model/FMA", "H200/FMA", "GPU instructions"))
    for n, m, path, par, g, pipes in rows:
        mf = m / fma[1] if fma and fma[1] > 0 else float("nan")
        gf = g / fma[4] if fma else float("nan")
        print("%-12s %12.1f %10.1f %10.1f %10.1f %10.2f %10.2f  %s" % (
            n, m, path, par, g, mf, gf, " + ".join("%d %s" % (c, p) for p, c in pipes.items())))
    print("(the K = 0 pass models %.4f ms; %s)" % (base, a.passfs))


if __name__ == "__main__":
    main()
