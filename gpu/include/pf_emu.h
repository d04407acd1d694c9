/* pf_emu.h - the CUDA emulation layer: CUDA C kernels compiled by the host
 * C++ compiler (g++ >= 12, C++17, x86-64 Linux) and run on the CPU.
 *
 * passfs.h includes this header in its host branch; it can also be included
 * on its own (it includes passfs_abi.h).  Header-only: everything is inline
 * or a template, no global object has a dynamic initialiser, no
 * function-local static needs a guard, nothing needs a constructor, no ifunc,
 * no initial-exec TLS (the object is dlopen'ed and linked -nostartfiles).
 *
 * Flags the including compile should use:
 *   g++ -std=c++17 -O2 -fPIC -fno-strict-aliasing -fno-math-errno
 *       -Wno-unknown-pragmas -mf16c
 * (-mf16c makes __half conversions one instruction each; without it they are
 * done by bit manipulation with the same results.)  Recommended as well:
 *   -mmemcpy-strategy=vector_loop:2048:noalign,libcall:-1:noalign
 * Every CUDA thread is one call of the kernel, and a by-value struct
 * parameter is copied for each call; g++'s default (`rep movsq`) makes that
 * copy of a 384-byte parameter block ~2x slower than a vector loop.
 *
 * ------------------------------------------------------------------------
 * Execution model
 *
 * pf_emu::launch() checks the configuration, then either hands the packed
 * arguments to the runtime's cuda launcher (c->backend == PF_BACKEND_CUDA)
 * or asks the runtime to run every block (c->rt->run_blocks); each block runs
 * start to finish on one OS thread, blocks may run concurrently on several.
 *
 * Inside a block the CUDA threads run as "lazy fibers".  Every block starts
 * one fiber (a >= 60 KiB stack in a 128 KiB MAP_NORESERVE region with a guard
 * page below it, switched to by a hand-written x86-64 context switch: six
 * callee-saved registers and the stack pointer; not swapcontext, which
 * makes a syscall per switch).  That fiber runs the block's
 * threads one after another as a plain loop - thread t runs the kernel to
 * completion, then thread t+1 - which is the fast path: a kernel without
 * barriers never does anything else, at about plain-C speed.  When a thread
 * reaches a barrier (__syncthreads*, a warp intrinsic) and cannot pass it
 * yet, its fiber is parked with its stack, and the next not-yet-started
 * thread begins on a fresh fiber (again as a loop).  A barrier that all its
 * participants have reached puts the waiting fibers on a FIFO ready queue
 * (round robin); a fiber that finishes its thread takes the next unstarted
 * thread, if any, else passes control to the next ready fiber.
 *
 * So barrier detection is dynamic, per block, and exact: no ELF section, no
 * per-kernel flag, no source scan.  A kernel that has barriers only on some
 * paths (or only in some blocks) pays for fibers only where it meets them.
 * Costs (bench/emu_bench.cc): ~2.5 ns per CUDA thread on the fast path
 * (an indirect call of the kernel), ~11 ns per thread per barrier with
 * 256-1024-thread blocks (one switch; the next fibers' contexts are
 * prefetched from the ready queue).
 *
 * Errors inside a block (they fail the launch with PF_ERR_LAUNCH; the other
 * blocks are skipped):
 *   - a __syncthreads that not every thread of the block reaches (some
 *     threads returned, the others wait): "__syncthreads not reached by all
 *     threads of block (x,y,z)" - reported, never a hang;
 *   - any other deadlock (threads wait at __syncthreads while others of their
 *     warp wait at a warp-level sync, or a warp sync whose mask names lanes
 *     that never arrive);
 *   - no memory for fiber stacks.
 * Warp-level syncs are lenient where GPUs usually are: lanes that have
 * exited (or do not exist: a partial last warp) are not waited for, and
 * shuffling from them returns the caller's own value.
 *
 * Warps are 32 consecutive linear thread ids (x fastest).  Warp intrinsics
 * synchronise like barriers over the lanes of their mask (plus the caller),
 * so warp-synchronous code must use the *_sync intrinsics or __syncwarp
 * (warp-synchronous code without them is undefined on Volta+ GPUs too, and
 * fails here).  __activemask() models convergence: it returns the lanes
 * of the warp that reach an __activemask while all the others are blocked
 * (at a warp sync or __syncthreads) or have exited.
 *
 * threadIdx, blockIdx, blockDim, gridDim are macros that read the running
 * fiber's record, found from the stack pointer (fiber regions are aligned
 * to their size): no TLS access, so a kernel that uses only them needs no
 * __tls_get_addr call.  They are meaningless outside kernels (host code must
 * not read them; barriers and warp intrinsics called outside a kernel are
 * no-ops: they check a magic word in the record).  Being macros, these four
 * names cannot be redeclared (a local variable called blockDim breaks).
 *
 * Thread-local state (`thread_local`, hidden visibility: the local-dynamic
 * TLS model in a -fPIC object, never initial-exec): the OS thread's block
 * scheduler (allocated on first use with mmap: ~50 KiB, plus fiber regions
 * as blocks need them - 128 KiB of address space each, of which only the
 * touched pages, typically 1-2, are resident) and its dynamic shared memory
 * buffer.  They are kept for the OS thread's life and freed when it exits
 * (registered with glibc's __cxa_thread_atexit_impl, which also keeps a
 * dlopen'ed object loaded until then).  `__shared__` is `thread_local`: a
 * block runs on one OS thread, so a thread_local is exactly one block's
 * shared memory.  Types in __shared__ variables must have trivial default
 * constructors (all of this header's types do).
 *
 * AddressSanitizer: fiber switches are announced with
 * __sanitizer_start/finish_switch_fiber and reused stacks are unpoisoned,
 * so ASan builds work (tests/unit/test_emu.cc runs under it).
 *
 * Barriers are opaque calls (noipa) with compiler memory clobbers, so the
 * compiler reloads shared and global memory after them.
 *
 * ------------------------------------------------------------------------
 * Contract with the compile pipeline
 *
 * 1. `extern __shared__` (dynamic shared memory) cannot be a macro; the
 *    pipeline rewrites each declaration in the source text before the host
 *    compile (keeping the line count, with a #line if needed):
 *
 *      at block scope (inside a function body):
 *        extern __shared__ T NAME[];
 *      becomes
 *        T *NAME = (T *)pf_emu::dyn_smem();
 *
 *      at namespace (file) scope:
 *        extern __shared__ T NAME[];
 *      becomes
 *        #define NAME ((T *)pf_emu::dyn_smem())
 *      (a pointer variable there would need a dynamic initialiser, which a
 *      dlopen'ed pass object may not have).
 *
 *    T is the declared element type with its qualifiers (e.g. `volatile
 *    float`, `unsigned char`); drop `__align__(N)` / `alignas(N)` /
 *    `__attribute__((aligned(N)))` from it: dyn_smem() is aligned to 128
 *    bytes.  Several such declarations all alias the same buffer, as on a
 *    GPU.  pf_emu::dyn_smem() returns the current block's dynamic shared
 *    memory: at least max(launch smem, 128) bytes, aligned 128, one buffer
 *    per OS thread reused by the blocks it runs (contents undefined at block
 *    start, as on a GPU); outside a launch it returns the last buffer (or a
 *    valid empty one).
 *
 * 2. Generic launches (cuLaunchKernel-style argument pointers).  For each
 *    name expression NAME (index i) the pipeline appends:
 *
 *      extern "C" int pf_tramp_i(pf_call *c, pf_dim3 g, pf_dim3 b, size_t smem,
 *                                void **args, int nargs)
 *      { return pf_emu::launch_checked(c, &NAME, g, b, smem, args, nargs); }
 *
 *    launch_checked fails with PF_ERR_LAUNCH (through c->rt->fail, message
 *    "kernel expects N arguments, got M") when nargs differs from the
 *    kernel's parameter count, else unpacks args[k] as a pointer to a value
 *    of parameter k's exact type and launches.  Also available:
 *      pf_emu::launch_packed(c, kernel, g, b, smem, args)   (no count check)
 *      pf_emu::launch_checked_sizes(c, kernel, g, b, smem, args, nargs, sizes)
 *      pf_emu::param_count(kernel)     constexpr int
 *      pf_emu::param_sizes(kernel)     const size_t * (constexpr array,
 *                                      param_count entries, then a 0)
 *
 * 3. Not supported on the CPU (the pipeline rejects them by a source scan
 *    before compiling): inline PTX (`asm` is also a macro here and
 *    `__asm__`/`__asm` are poisoned, so any use is a compile error, a
 *    token-pasted one included), wmma/mma, cooperative groups, dynamic
 *    parallelism.
 *
 * 4. Do not define __CUDACC__ or __CUDA_ARCH__ for the host compile
 *    (passfs.h selects its device branch on __CUDACC__).  PF_EMU is defined
 *    to 1 here, for passes that want to know.
 * ------------------------------------------------------------------------
 */
#ifndef PF_EMU_H
#define PF_EMU_H

#ifndef __cplusplus
#error "pf_emu.h is C++ (compile CUDA sources with g++ -std=c++17)"
#endif
#if !defined(__x86_64__)
#error "pf_emu.h: the CUDA emulation's context switch is x86-64 only"
#endif

#define PF_EMU 1

/* System headers first: the CUDA keyword macros below (__noinline__, ...)
 * must not reach them. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <float.h>
#include <limits.h>
#include <assert.h>
#include <sys/mman.h>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <tuple>
#include <type_traits>
#include <utility>

#include "passfs_abi.h"

#if defined(__SANITIZE_ADDRESS__)
#define PF_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PF_EMU_ASAN 1
#endif
#endif
#ifdef PF_EMU_ASAN
extern "C" {
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old, size_t *size_old);
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
}
#endif

#define PF_EMU_TLS __attribute__((visibility("hidden"))) inline thread_local
/* An opaque call: the optimiser assumes it reads and writes any memory. */
#if defined(__clang__)
#define PF_EMU_OPAQUE __attribute__((noinline))
#else
#define PF_EMU_OPAQUE __attribute__((noipa))
#endif
#define PF_EMU_INL __attribute__((always_inline)) inline

/* ======================================================================== */
/* expf, tanhf and erff of device code                                      */
/*
 * A pass and the eager op library (gpu/oplib/common.cu) reach these through
 * the same names (expf, tanhf, erff; exp, tanh, erf with a float argument;
 * __expf), so a fused kernel and eager's op-by-op kernels pay the same for
 * the same function, as they would on a GPU, and differ only in memory
 * traffic and launches.  glibc's tanhf (through expm1f) and erff are scalar
 * library calls several times dearer than the arithmetic around them: with
 * them, a kernel's time was mostly libm.  These are inline, computed in
 * double from one exp kernel (|rel error| < 2^-39: a 32-entry table of
 * 2^(j/32) and a degree-4 polynomial), and rounded once to float (tanh
 * branches to its series near 0): within 1 ulp of the exact value (CUDA documents 2 ulp for all
 * three); tests/unit/test_emu.cc checks the bound on every 997th float bit
 * pattern (at most 0.5 ulp measured) and that the op library's and a
 * pass's results are the same bits.  Double, long double and integer
 * arguments still go to libm.
 */
namespace pf_emu {
namespace fmath {
static PF_EMU_INL double from_bits(uint64_t u)
{
	double d;
	memcpy(&d, &u, sizeof d);
	return d;
}
static PF_EMU_INL uint64_t to_bits(double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof u);
	return u;
}
/* 2^(j/32), j = 0..31, each the double nearest the exact value. */
inline constexpr double exp2_32nds[32] = {
	0x1.0000000000000p+0, 0x1.059b0d3158574p+0, 0x1.0b5586cf9890fp+0, 0x1.11301d0125b51p+0,
	0x1.172b83c7d517bp+0, 0x1.1d4873168b9aap+0, 0x1.2387a6e756238p+0, 0x1.29e9df51fdee1p+0,
	0x1.306fe0a31b715p+0, 0x1.371a7373aa9cbp+0, 0x1.3dea64c123422p+0, 0x1.44e086061892dp+0,
	0x1.4bfdad5362a27p+0, 0x1.5342b569d4f82p+0, 0x1.5ab07dd485429p+0, 0x1.6247eb03a5585p+0,
	0x1.6a09e667f3bcdp+0, 0x1.71f75e8ec5f74p+0, 0x1.7a11473eb0187p+0, 0x1.82589994cce13p+0,
	0x1.8ace5422aa0dbp+0, 0x1.93737b0cdc5e5p+0, 0x1.9c49182a3f090p+0, 0x1.a5503b23e255dp+0,
	0x1.ae89f995ad3adp+0, 0x1.b7f76f2fb5e47p+0, 0x1.c199bdd85529cp+0, 0x1.cb720dcef9069p+0,
	0x1.d5818dcfba487p+0, 0x1.dfc97337b9b5fp+0, 0x1.ea4afa2a490dap+0, 0x1.f50765b6e4540p+0};
/* e^x for -150 <= x <= 150 (NaN gives NaN): x = (32m + j) ln2/32 + r,
 * |r| <= ln2/64 (Cody-Waite: k ln2/32_hi is exact), e^r by its Taylor
 * polynomial of degree 4 (truncation < 1.3e-12), times 2^(j/32) from the
 * table and 2^m built in the exponent field. */
static PF_EMU_INL double exp_core(double x)
{
	const double shift = 0x1.8p52; /* kd's low bits hold k, rounded to nearest */
	double kd = x * 0x1.71547652b82fep+5 + shift;
	double k = kd - shift;
	double r = x - k * 0x1.62e42fee00000p-6;
	r = r - k * 0x1.a39ef35793c76p-38;
	double p = 1.0 / 24.0;
	p = p * r + 1.0 / 6.0;
	p = p * r + 0.5;
	p = p * r + 1.0;
	p = p * r + 1.0;
	int64_t ki = (int64_t)(to_bits(kd) - to_bits(shift)); /* k: kd and shift share their exponent */
	return p * exp2_32nds[ki & 31] * from_bits((uint64_t)((ki >> 5) + 1023) << 52);
}
static PF_EMU_INL float exp_f(float x)
{
	double d = x;
	d = d > 89.0 ? 89.0 : d; /* past the largest float: inf */
	d = d < -104.0 ? -104.0 : d; /* below half the smallest subnormal: 0 */
	return (float)exp_core(d); /* NaN stays NaN */
}
static PF_EMU_INL float tanh_f(float x)
{
	double a = __builtin_fabs((double)x), t;
	if (a < 0.0625) {
		/* near 0, where e - 1 cancels: the series to x^9 (next term < 1e-14) */
		double s = a * a;
		t = a + a * s * (-1.0 / 3.0 + s * (2.0 / 15.0 + s * (-17.0 / 315.0 + s * (62.0 / 2835.0))));
	} else {
		double ac = a < 20.0 ? a : 20.0; /* tanh rounds to 1 from 9.01 on */
		t = 1.0 - 2.0 / (exp_core(2.0 * ac) + 1.0);
	}
	float r = __builtin_copysignf((float)t, x);
	return x != x ? x : r;
}
static PF_EMU_INL float erf_f(float x)
{
	double a = __builtin_fabs((double)x), r;
	if (a < 1.0) {
		/* erf(a)/a as a polynomial in a^2 (least squares, rel. error 9e-13) */
		double s = a * a, p = 0x1.1cd280c810000p-20;
		p = p * s - 0x1.d307a40cfe000p-17;
		p = p * s + 0x1.f59080f572400p-14;
		p = p * s - 0x1.bfe37c44fcb80p-11;
		p = p * s + 0x1.5658b05d584b0p-8;
		p = p * s - 0x1.b82cbdbe26378p-6;
		p = p * s + 0x1.ce2f20c421512p-4;
		p = p * s - 0x1.812746ae61078p-2;
		p = p * s + 0x1.20dd7504294f7p+0;
		r = a * p;
	} else {
		/* 1 - e^-a^2 * g(a), g = erfc(a) e^(a^2) on [1, 4] as a polynomial
		 * in (a - 2.5)/1.5 (rel. error 1.9e-10); erf rounds to 1 from 3.92 */
		double ac = a < 4.0 ? a : 4.0, u = (ac - 2.5) * (1.0 / 1.5), g = 0x1.b8323e9e20000p-20;
		g = g * u - 0x1.5121a3395d800p-18;
		g = g * u + 0x1.0ee813af16800p-17;
		g = g * u - 0x1.59a055e705800p-16;
		g = g * u + 0x1.07a3eb8705600p-14;
		g = g * u - 0x1.58aff2bde7480p-13;
		g = g * u + 0x1.acfafc99fb8c0p-12;
		g = g * u - 0x1.076bb11b3d320p-10;
		g = g * u + 0x1.3b0b447190b80p-9;
		g = g * u - 0x1.6d1848ebf74fcp-8;
		g = g * u + 0x1.99409357de2d8p-7;
		g = g * u - 0x1.ba74592ac265fp-6;
		g = g * u + 0x1.cba83b39f5014p-5;
		g = g * u - 0x1.c8ca44080f531p-4;
		g = g * u + 0x1.afbb3f3bdc856p-3;
		r = 1.0 - exp_core(-ac * ac) * g;
	}
	float f = __builtin_copysignf((float)r, x);
	return x != x ? x : f;
}
} // namespace fmath
} // namespace pf_emu

static PF_EMU_INL float pf_emu_expf(float x) { return pf_emu::fmath::exp_f(x); }
static PF_EMU_INL float pf_emu_tanhf(float x) { return pf_emu::fmath::tanh_f(x); }
static PF_EMU_INL float pf_emu_erff(float x) { return pf_emu::fmath::erf_f(x); }
/* exp/tanh/erf keep <cmath>'s overloads: float here, the rest to libm. */
#define PF_EMU_FMATH_OVERLOADS(NAME, FLOATFN)                                                    \
	static PF_EMU_INL float pf_emu_##NAME(float x) { return FLOATFN(x); }                     \
	static PF_EMU_INL double pf_emu_##NAME(double x) { return ::NAME(x); }                    \
	static PF_EMU_INL long double pf_emu_##NAME(long double x) { return ::NAME##l(x); }       \
	template <typename T, typename = typename std::enable_if<std::is_integral<T>::value>::type> \
	static PF_EMU_INL double pf_emu_##NAME(T x) { return ::NAME((double)x); }
PF_EMU_FMATH_OVERLOADS(exp, pf_emu::fmath::exp_f)
PF_EMU_FMATH_OVERLOADS(tanh, pf_emu::fmath::tanh_f)
PF_EMU_FMATH_OVERLOADS(erf, pf_emu::fmath::erf_f)
#undef PF_EMU_FMATH_OVERLOADS
namespace std {
using ::pf_emu_expf;
using ::pf_emu_tanhf;
using ::pf_emu_erff;
using ::pf_emu_exp;
using ::pf_emu_tanh;
using ::pf_emu_erf;
}
/* Function-like macros: every system header is in by now, and a name not
 * followed by '(' (a function pointer: &tanhf) is still libm's. */
#define expf(x) pf_emu_expf(x)
#define tanhf(x) pf_emu_tanhf(x)
#define erff(x) pf_emu_erff(x)
#define exp(x) pf_emu_exp(x)
#define tanh(x) pf_emu_tanh(x)
#define erf(x) pf_emu_erf(x)

/* ======================================================================== */
/* Built-in vector types and dim3                                           */

#define PF_EMU_VEC1(T, N, A) \
	struct alignas(A) N##1 { T x; }; \
	static inline N##1 make_##N##1(T x) { N##1 v; v.x = x; return v; }
#define PF_EMU_VEC2(T, N, A) \
	struct alignas(A) N##2 { T x, y; }; \
	static inline N##2 make_##N##2(T x, T y) { N##2 v; v.x = x; v.y = y; return v; }
#define PF_EMU_VEC3(T, N, A) \
	struct alignas(A) N##3 { T x, y, z; }; \
	static inline N##3 make_##N##3(T x, T y, T z) { N##3 v; v.x = x; v.y = y; v.z = z; return v; }
#define PF_EMU_VEC4(T, N, A) \
	struct alignas(A) N##4 { T x, y, z, w; }; \
	static inline N##4 make_##N##4(T x, T y, T z, T w) \
	{ N##4 v; v.x = x; v.y = y; v.z = z; v.w = w; return v; }
#define PF_EMU_VECS(T, N, A1, A2, A3, A4) \
	PF_EMU_VEC1(T, N, A1) PF_EMU_VEC2(T, N, A2) PF_EMU_VEC3(T, N, A3) PF_EMU_VEC4(T, N, A4)

PF_EMU_VECS(signed char, char, 1, 2, 1, 4)
PF_EMU_VECS(unsigned char, uchar, 1, 2, 1, 4)
PF_EMU_VECS(short, short, 2, 4, 2, 8)
PF_EMU_VECS(unsigned short, ushort, 2, 4, 2, 8)
PF_EMU_VECS(int, int, 4, 8, 4, 16)
PF_EMU_VECS(unsigned int, uint, 4, 8, 4, 16)
PF_EMU_VECS(long, long, 8, 16, 8, 16)
PF_EMU_VECS(unsigned long, ulong, 8, 16, 8, 16)
PF_EMU_VECS(long long, longlong, 8, 16, 8, 16)
PF_EMU_VECS(unsigned long long, ulonglong, 8, 16, 8, 16)
PF_EMU_VECS(float, float, 4, 8, 4, 16)
PF_EMU_VECS(double, double, 8, 16, 8, 16)

struct dim3 {
	unsigned int x, y, z;
	constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
	constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
	constexpr dim3(pf_dim3 v) : x(v.x), y(v.y), z(v.z) {}
	constexpr operator uint3() const { return uint3{x, y, z}; }
	constexpr operator pf_dim3() const { return pf_dim3{x, y, z}; }
};

/* threadIdx, blockIdx, blockDim, gridDim: macros reading the running
 * fiber's record (see "The block scheduler"); their type is uint3, and
 * `dim3 d = blockDim;` works through dim3(uint3). */
inline constexpr int warpSize = 32;

/* ======================================================================== */
/* __half and __nv_bfloat16                                                 */

namespace pf_emu {

PF_EMU_INL unsigned f2u(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
PF_EMU_INL float u2f(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
PF_EMU_INL unsigned long long d2u(double d) { unsigned long long u; memcpy(&u, &d, 8); return u; }
PF_EMU_INL double u2d(unsigned long long u) { double d; memcpy(&d, &u, 8); return d; }

/* float -> binary16, round to nearest even, by bit manipulation
 * (F. Giesen's float_to_half_rtne); the default rounding mode is assumed. */
PF_EMU_INL unsigned short f2h_soft(float f)
{
	unsigned x = f2u(f);
	unsigned sign = x & 0x80000000u;
	x ^= sign;
	unsigned short o;
	if (x >= (127u + 16u) << 23) {
		o = x > (255u << 23) ? 0x7e00 : 0x7c00;
	} else if (x < (113u << 23)) {
		const unsigned magic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
		float g = u2f(x) + u2f(magic);
		o = (unsigned short)(f2u(g) - magic);
	} else {
		unsigned odd = (x >> 13) & 1u;
		x += ((unsigned)(15 - 127) << 23) + 0xfffu;
		x += odd;
		o = (unsigned short)(x >> 13);
	}
	return (unsigned short)(o | (sign >> 16));
}

PF_EMU_INL float h2f_soft(unsigned short h)
{
	unsigned s = (unsigned)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
	if (e == 0) {
		float v = (float)m * 0x1p-24f;
		return s ? -v : v;
	}
	if (e == 31)
		return u2f(s | 0x7f800000u | (m << 13));
	return u2f(s | ((e + 112u) << 23) | (m << 13));
}

/* With F16C (-mf16c) one instruction each; the same results. */
#if defined(__F16C__)
typedef float v4sf_ __attribute__((vector_size(16)));
typedef short v8hi_ __attribute__((vector_size(16)));
#endif
PF_EMU_INL unsigned short f2h_bits(float f)
{
#if defined(__F16C__)
	v4sf_ v = {f, 0.0f, 0.0f, 0.0f};
	v8hi_ h = __builtin_ia32_vcvtps2ph(v, 0);    /* 0: round to nearest even */
	return (unsigned short)h[0];
#else
	return f2h_soft(f);
#endif
}

PF_EMU_INL float h2f_bits(unsigned short h)
{
#if defined(__F16C__)
	v8hi_ v = {(short)h, 0, 0, 0, 0, 0, 0, 0};
	return __builtin_ia32_vcvtph2ps(v)[0];
#else
	return h2f_soft(h);
#endif
}

/* double -> float rounded to odd, so that a second rounding to a narrower
 * format (half, bfloat16) is the correctly rounded double -> narrow result. */
PF_EMU_INL float d2f_odd(double d)
{
	float f = (float)d;
	if ((double)f != d && f == f && !std::isinf(d)) {
		if (fabs((double)f) > fabs(d))
			f = u2f(f2u(f) - 1u);       /* toward zero (f != 0 here) */
		f = u2f(f2u(f) | 1u);
	}
	return f;
}

PF_EMU_INL unsigned short f2bf_bits(float f)
{
	unsigned u = f2u(f);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (unsigned short)((u >> 16) | 0x40u);  /* quiet NaN, sign kept */
	u += 0x7fffu + ((u >> 16) & 1u);
	return (unsigned short)(u >> 16);
}
PF_EMU_INL float bf2f_bits(unsigned short b) { return u2f((unsigned)b << 16); }

/* Directed roundings to half / bfloat16 by stepping from the nearest. */
enum { RN = 0, RZ = 1, RD = 2, RU = 3 };
template <int MODE, bool BF> inline unsigned short f2n_dir(float f)
{
	unsigned short r = BF ? f2bf_bits(f) : f2h_bits(f);
	if (MODE == RN || f != f)
		return r;
	float back = BF ? bf2f_bits(r) : h2f_bits(r);
	if (back == f)
		return r;
	bool up = back > f;       /* r is above f */
	bool step;
	if (MODE == RZ)
		step = fabsf(back) > fabsf(f);
	else if (MODE == RD)
		step = up;
	else
		step = !up;
	if (!step)
		return r;
	/* move one ulp toward f; magnitudes of sign-magnitude codes */
	bool neg = r & 0x8000u;
	unsigned short mag = r & 0x7fffu;
	bool toward_larger_mag = neg ? (back > f) : (back < f);
	if (toward_larger_mag)
		mag++;
	else if (mag == 0)
		return (unsigned short)((r ^ 0x8000u) | 1u);
	else
		mag--;
	return (unsigned short)((r & 0x8000u) | mag);
}

} /* namespace pf_emu */

struct __half_raw {
	unsigned short x;
};
struct __half2_raw {
	unsigned short x, y;
};
struct __nv_bfloat16_raw {
	unsigned short x;
};
struct __nv_bfloat162_raw {
	unsigned short x, y;
};

#define PF_EMU_NARROW_CTORS(TYPE, CONV)                                                   \
	TYPE() = default;                                                                  \
	TYPE(float f) : __x(CONV((float)f)) {}                                             \
	TYPE(int i) : __x(CONV((float)i)) {}                                               \
	TYPE(unsigned int i) : __x(CONV((float)i)) {}                                      \
	TYPE(short i) : __x(CONV((float)i)) {}                                             \
	TYPE(unsigned short i) : __x(CONV((float)i)) {}                                    \
	TYPE(long i) : __x(CONV((float)i)) {}                                              \
	TYPE(unsigned long i) : __x(CONV((float)i)) {}                                     \
	TYPE(long long i) : __x(CONV((float)i)) {}                                         \
	TYPE(unsigned long long i) : __x(CONV((float)i)) {}

struct __half {
	unsigned short __x;
	PF_EMU_NARROW_CTORS(__half, pf_emu::f2h_bits)
	__half(double d) : __x(pf_emu::f2h_bits(pf_emu::d2f_odd(d))) {}
	constexpr __half(const __half_raw &r) : __x(r.x) {}
	operator float() const { return pf_emu::h2f_bits(__x); }
	constexpr operator __half_raw() const { return __half_raw{__x}; }
};

struct __nv_bfloat16 {
	unsigned short __x;
	PF_EMU_NARROW_CTORS(__nv_bfloat16, pf_emu::f2bf_bits)
	__nv_bfloat16(double d) : __x(pf_emu::f2bf_bits(pf_emu::d2f_odd(d))) {}
	constexpr __nv_bfloat16(const __nv_bfloat16_raw &r) : __x(r.x) {}
	operator float() const { return pf_emu::bf2f_bits(__x); }
	constexpr operator __nv_bfloat16_raw() const { return __nv_bfloat16_raw{__x}; }
};

struct alignas(4) __half2 {
	__half x, y;
	__half2() = default;
	constexpr __half2(const __half &a, const __half &b) : x(a), y(b) {}
	constexpr __half2(const __half2_raw &r) : x(__half_raw{r.x}), y(__half_raw{r.y}) {}
	constexpr operator __half2_raw() const { return __half2_raw{x.__x, y.__x}; }
};

struct alignas(4) __nv_bfloat162 {
	__nv_bfloat16 x, y;
	__nv_bfloat162() = default;
	constexpr __nv_bfloat162(const __nv_bfloat16 &a, const __nv_bfloat16 &b) : x(a), y(b) {}
	constexpr __nv_bfloat162(const __nv_bfloat162_raw &r)
		: x(__nv_bfloat16_raw{r.x}), y(__nv_bfloat16_raw{r.y}) {}
	constexpr operator __nv_bfloat162_raw() const { return __nv_bfloat162_raw{x.__x, y.__x}; }
};

typedef __half half;
typedef __half2 half2;
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

/* Arithmetic and comparisons: in float, rounded (to nearest even) after every
 * operation.  Mixed __half/float expressions are ambiguous, as with CUDA. */
#define PF_EMU_NARROW_OPS(T)                                                                  \
	static inline T operator+(const T &a, const T &b) { return T((float)a + (float)b); }  \
	static inline T operator-(const T &a, const T &b) { return T((float)a - (float)b); }  \
	static inline T operator*(const T &a, const T &b) { return T((float)a * (float)b); }  \
	static inline T operator/(const T &a, const T &b) { return T((float)a / (float)b); }  \
	static inline T &operator+=(T &a, const T &b) { return a = a + b; }                   \
	static inline T &operator-=(T &a, const T &b) { return a = a - b; }                   \
	static inline T &operator*=(T &a, const T &b) { return a = a * b; }                   \
	static inline T &operator/=(T &a, const T &b) { return a = a / b; }                   \
	static inline T operator+(const T &a) { return a; }                                   \
	static inline T operator-(const T &a)                                                 \
	{                                                                                     \
		T r;                                                                          \
		r.__x = (unsigned short)(a.__x ^ 0x8000u);                                    \
		return r;                                                                     \
	}                                                                                     \
	static inline T &operator++(T &a) { return a = T((float)a + 1.0f); }                  \
	static inline T &operator--(T &a) { return a = T((float)a - 1.0f); }                  \
	static inline T operator++(T &a, int) { T o = a; ++a; return o; }                     \
	static inline T operator--(T &a, int) { T o = a; --a; return o; }                     \
	static inline bool operator==(const T &a, const T &b) { return (float)a == (float)b; } \
	static inline bool operator!=(const T &a, const T &b) { return (float)a != (float)b; } \
	static inline bool operator<(const T &a, const T &b) { return (float)a < (float)b; }  \
	static inline bool operator>(const T &a, const T &b) { return (float)a > (float)b; }  \
	static inline bool operator<=(const T &a, const T &b) { return (float)a <= (float)b; } \
	static inline bool operator>=(const T &a, const T &b) { return (float)a >= (float)b; }

PF_EMU_NARROW_OPS(__half)
PF_EMU_NARROW_OPS(__nv_bfloat16)

#define PF_EMU_NARROW2_OPS(T2)                                                              \
	static inline T2 operator+(const T2 &a, const T2 &b) { return T2(a.x + b.x, a.y + b.y); } \
	static inline T2 operator-(const T2 &a, const T2 &b) { return T2(a.x - b.x, a.y - b.y); } \
	static inline T2 operator*(const T2 &a, const T2 &b) { return T2(a.x * b.x, a.y * b.y); } \
	static inline T2 operator/(const T2 &a, const T2 &b) { return T2(a.x / b.x, a.y / b.y); } \
	static inline T2 &operator+=(T2 &a, const T2 &b) { return a = a + b; }                  \
	static inline T2 &operator-=(T2 &a, const T2 &b) { return a = a - b; }                  \
	static inline T2 &operator*=(T2 &a, const T2 &b) { return a = a * b; }                  \
	static inline T2 &operator/=(T2 &a, const T2 &b) { return a = a / b; }                  \
	static inline T2 operator+(const T2 &a) { return a; }                                   \
	static inline T2 operator-(const T2 &a) { return T2(-a.x, -a.y); }                      \
	static inline bool operator==(const T2 &a, const T2 &b) { return a.x == b.x && a.y == b.y; } \
	static inline bool operator!=(const T2 &a, const T2 &b) { return a.x != b.x && a.y != b.y; }

PF_EMU_NARROW2_OPS(__half2)
PF_EMU_NARROW2_OPS(__nv_bfloat162)

/* ---- conversions ---- */
static inline __half __float2half(float f) { return __half(f); }
static inline __half __float2half_rn(float f) { return __half(f); }
static inline __half __float2half_rz(float f) { return __half_raw{pf_emu::f2n_dir<pf_emu::RZ, false>(f)}; }
static inline __half __float2half_rd(float f) { return __half_raw{pf_emu::f2n_dir<pf_emu::RD, false>(f)}; }
static inline __half __float2half_ru(float f) { return __half_raw{pf_emu::f2n_dir<pf_emu::RU, false>(f)}; }
static inline __half __double2half(double d) { return __half(d); }
static inline float __half2float(__half h) { return (float)h; }
static inline __half2 __float2half2_rn(float f) { return __half2(__half(f), __half(f)); }
static inline __half2 __floats2half2_rn(float a, float b) { return __half2(__half(a), __half(b)); }
static inline __half2 __float22half2_rn(float2 v) { return __half2(__half(v.x), __half(v.y)); }
static inline float2 __half22float2(__half2 h) { return make_float2((float)h.x, (float)h.y); }
static inline __half2 __halves2half2(__half a, __half b) { return __half2(a, b); }
static inline __half2 __half2half2(__half a) { return __half2(a, a); }
static inline __half2 make_half2(__half a, __half b) { return __half2(a, b); }
static inline __half __low2half(__half2 h) { return h.x; }
static inline __half __high2half(__half2 h) { return h.y; }
static inline float __low2float(__half2 h) { return (float)h.x; }
static inline float __high2float(__half2 h) { return (float)h.y; }
static inline __half2 __lows2half2(__half2 a, __half2 b) { return __half2(a.x, b.x); }
static inline __half2 __highs2half2(__half2 a, __half2 b) { return __half2(a.y, b.y); }
static inline __half2 __low2half2(__half2 a) { return __half2(a.x, a.x); }
static inline __half2 __high2half2(__half2 a) { return __half2(a.y, a.y); }
static inline __half2 __lowhigh2highlow(__half2 a) { return __half2(a.y, a.x); }
static inline unsigned short __half_as_ushort(__half h) { return h.__x; }
static inline short __half_as_short(__half h) { return (short)h.__x; }
static inline __half __ushort_as_half(unsigned short u) { return __half_raw{u}; }
static inline __half __short_as_half(short s) { return __half_raw{(unsigned short)s}; }

static inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
static inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
static inline __nv_bfloat16 __float2bfloat16_rz(float f) { return __nv_bfloat16_raw{pf_emu::f2n_dir<pf_emu::RZ, true>(f)}; }
static inline __nv_bfloat16 __float2bfloat16_rd(float f) { return __nv_bfloat16_raw{pf_emu::f2n_dir<pf_emu::RD, true>(f)}; }
static inline __nv_bfloat16 __float2bfloat16_ru(float f) { return __nv_bfloat16_raw{pf_emu::f2n_dir<pf_emu::RU, true>(f)}; }
static inline __nv_bfloat16 __double2bfloat16(double d) { return __nv_bfloat16(d); }
static inline float __bfloat162float(__nv_bfloat16 b) { return (float)b; }
static inline __nv_bfloat162 __float2bfloat162_rn(float f) { return __nv_bfloat162(__nv_bfloat16(f), __nv_bfloat16(f)); }
static inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return __nv_bfloat162(__nv_bfloat16(a), __nv_bfloat16(b)); }
static inline __nv_bfloat162 __float22bfloat162_rn(float2 v) { return __nv_bfloat162(__nv_bfloat16(v.x), __nv_bfloat16(v.y)); }
static inline float2 __bfloat1622float2(__nv_bfloat162 h) { return make_float2((float)h.x, (float)h.y); }
static inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat162(a, b); }
static inline __nv_bfloat162 __bfloat162bfloat162(__nv_bfloat16 a) { return __nv_bfloat162(a, a); }
static inline __nv_bfloat162 make_bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat162(a, b); }
static inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 h) { return h.x; }
static inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 h) { return h.y; }
static inline float __low2float(__nv_bfloat162 h) { return (float)h.x; }
static inline float __high2float(__nv_bfloat162 h) { return (float)h.y; }
static inline __nv_bfloat162 __lows2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162(a.x, b.x); }
static inline __nv_bfloat162 __highs2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162(a.y, b.y); }
static inline __nv_bfloat162 __low2bfloat162(__nv_bfloat162 a) { return __nv_bfloat162(a.x, a.x); }
static inline __nv_bfloat162 __high2bfloat162(__nv_bfloat162 a) { return __nv_bfloat162(a.y, a.y); }
static inline __nv_bfloat162 __lowhigh2highlow(__nv_bfloat162 a) { return __nv_bfloat162(a.y, a.x); }
static inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.__x; }
static inline short __bfloat16_as_short(__nv_bfloat16 h) { return (short)h.__x; }
static inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short u) { return __nv_bfloat16_raw{u}; }
static inline __nv_bfloat16 __short_as_bfloat16(short s) { return __nv_bfloat16_raw{(unsigned short)s}; }

namespace pf_emu {
/* float -> integer as CUDA's __float2int_*: NaN -> 0, out of range saturates. */
template <typename I> PF_EMU_INL I f2i_sat(double r)
{
	if (r != r)
		return 0;
	if (r <= (double)std::numeric_limits<I>::min())
		return std::numeric_limits<I>::min();
	if (r >= (double)std::numeric_limits<I>::max())
		return std::numeric_limits<I>::max();
	return (I)r;
}
} /* namespace pf_emu */

#define PF_EMU_F2I(SUF, I)                                                                 \
	static inline I __float2##SUF##_rn(float x) { return pf_emu::f2i_sat<I>(rint((double)x)); } \
	static inline I __float2##SUF##_rz(float x) { return pf_emu::f2i_sat<I>(trunc((double)x)); } \
	static inline I __float2##SUF##_rd(float x) { return pf_emu::f2i_sat<I>(floor((double)x)); } \
	static inline I __float2##SUF##_ru(float x) { return pf_emu::f2i_sat<I>(ceil((double)x)); } \
	static inline I __double2##SUF##_rn(double x) { return pf_emu::f2i_sat<I>(rint(x)); }      \
	static inline I __double2##SUF##_rz(double x) { return pf_emu::f2i_sat<I>(trunc(x)); }     \
	static inline I __double2##SUF##_rd(double x) { return pf_emu::f2i_sat<I>(floor(x)); }     \
	static inline I __double2##SUF##_ru(double x) { return pf_emu::f2i_sat<I>(ceil(x)); }      \
	static inline I __half2##SUF##_rn(__half x) { return pf_emu::f2i_sat<I>(rint((double)(float)x)); } \
	static inline I __half2##SUF##_rz(__half x) { return pf_emu::f2i_sat<I>(trunc((double)(float)x)); } \
	static inline I __half2##SUF##_rd(__half x) { return pf_emu::f2i_sat<I>(floor((double)(float)x)); } \
	static inline I __half2##SUF##_ru(__half x) { return pf_emu::f2i_sat<I>(ceil((double)(float)x)); } \
	static inline I __bfloat162##SUF##_rn(__nv_bfloat16 x) { return pf_emu::f2i_sat<I>(rint((double)(float)x)); } \
	static inline I __bfloat162##SUF##_rz(__nv_bfloat16 x) { return pf_emu::f2i_sat<I>(trunc((double)(float)x)); } \
	static inline I __bfloat162##SUF##_rd(__nv_bfloat16 x) { return pf_emu::f2i_sat<I>(floor((double)(float)x)); } \
	static inline I __bfloat162##SUF##_ru(__nv_bfloat16 x) { return pf_emu::f2i_sat<I>(ceil((double)(float)x)); }
PF_EMU_F2I(int, int)
PF_EMU_F2I(uint, unsigned int)
PF_EMU_F2I(ll, long long)
PF_EMU_F2I(ull, unsigned long long)
PF_EMU_F2I(short, short)
PF_EMU_F2I(ushort, unsigned short)

#define PF_EMU_I2N(SUF, I)                                                                     \
	static inline __half __##SUF##2half_rn(I i) { return __half((float)i); }                  \
	static inline __half __##SUF##2half_rz(I i) { return __float2half_rz((float)i); }         \
	static inline __half __##SUF##2half_rd(I i) { return __float2half_rd((float)i); }         \
	static inline __half __##SUF##2half_ru(I i) { return __float2half_ru((float)i); }         \
	static inline __nv_bfloat16 __##SUF##2bfloat16_rn(I i) { return __nv_bfloat16((float)i); } \
	static inline __nv_bfloat16 __##SUF##2bfloat16_rz(I i) { return __float2bfloat16_rz((float)i); } \
	static inline float __##SUF##2float_rn(I i) { return (float)i; }                          \
	static inline float __##SUF##2float_rz(I i) { return (float)i; }                          \
	static inline float __##SUF##2float_rd(I i) { return (float)i; }                          \
	static inline float __##SUF##2float_ru(I i) { return (float)i; }                          \
	static inline double __##SUF##2double_rn(I i) { return (double)i; }
PF_EMU_I2N(int, int)
PF_EMU_I2N(uint, unsigned int)
PF_EMU_I2N(ll, long long)
PF_EMU_I2N(ull, unsigned long long)
PF_EMU_I2N(short, short)
PF_EMU_I2N(ushort, unsigned short)

static inline float __double2float_rn(double d) { return (float)d; }
static inline float __double2float_rz(double d) { return pf_emu::u2f(pf_emu::f2u((float)d) - (fabs((double)(float)d) > fabs(d) ? 1u : 0u)); }
static inline int __double2hiint(double d) { return (int)(pf_emu::d2u(d) >> 32); }
static inline int __double2loint(double d) { return (int)(unsigned)pf_emu::d2u(d); }
static inline double __hiloint2double(int hi, int lo)
{
	return pf_emu::u2d(((unsigned long long)(unsigned)hi << 32) | (unsigned)lo);
}
static inline int __float_as_int(float f) { return (int)pf_emu::f2u(f); }
static inline unsigned int __float_as_uint(float f) { return pf_emu::f2u(f); }
static inline float __int_as_float(int i) { return pf_emu::u2f((unsigned)i); }
static inline float __uint_as_float(unsigned int u) { return pf_emu::u2f(u); }
static inline long long __double_as_longlong(double d) { return (long long)pf_emu::d2u(d); }
static inline double __longlong_as_double(long long l) { return pf_emu::u2d((unsigned long long)l); }

/* ---- half / bfloat16 arithmetic intrinsics (overloaded for both) ---- */
namespace pf_emu {
PF_EMU_INL float sat01(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }
}
#define PF_EMU_HFUNCS(T, INF)                                                                       \
	static inline T __hadd(T a, T b) { return a + b; }                                      \
	static inline T __hsub(T a, T b) { return a - b; }                                      \
	static inline T __hmul(T a, T b) { return a * b; }                                      \
	static inline T __hdiv(T a, T b) { return a / b; }                                      \
	static inline T __hadd_rn(T a, T b) { return a + b; }                                   \
	static inline T __hsub_rn(T a, T b) { return a - b; }                                   \
	static inline T __hmul_rn(T a, T b) { return a * b; }                                   \
	static inline T __hfma(T a, T b, T c) { return T(fmaf((float)a, (float)b, (float)c)); }   \
	static inline T __hneg(T a) { return -a; }                                              \
	static inline T __habs(T a) { T r = a; r.__x = (unsigned short)(a.__x & 0x7fffu); return r; } \
	static inline T __hadd_sat(T a, T b) { return T(pf_emu::sat01((float)a + (float)b)); }   \
	static inline T __hsub_sat(T a, T b) { return T(pf_emu::sat01((float)a - (float)b)); }   \
	static inline T __hmul_sat(T a, T b) { return T(pf_emu::sat01((float)a * (float)b)); }   \
	static inline T __hfma_sat(T a, T b, T c) { return T(pf_emu::sat01(fmaf((float)a, (float)b, (float)c))); } \
	static inline T __hfma_relu(T a, T b, T c) { float r = fmaf((float)a, (float)b, (float)c); return T(r < 0.0f ? 0.0f : r); } \
	static inline bool __hisnan(T a) { return (a.__x & 0x7fffu) > INF; }                    \
	static inline int __hisinf(T a) { return (a.__x & 0x7fffu) == INF ? ((a.__x & 0x8000u) ? -1 : 1) : 0; } \
	static inline T __hmax(T a, T b) { float x = a, y = b; return x != x ? b : y != y ? a : (x > y ? a : (y > x ? b : ((a.__x & 0x8000u) ? b : a))); } \
	static inline T __hmin(T a, T b) { float x = a, y = b; return x != x ? b : y != y ? a : (x < y ? a : (y < x ? b : ((a.__x & 0x8000u) ? a : b))); } \
	static inline T __hmax_nan(T a, T b) { float x = a, y = b; return x != x ? a : y != y ? b : __hmax(a, b); } \
	static inline T __hmin_nan(T a, T b) { float x = a, y = b; return x != x ? a : y != y ? b : __hmin(a, b); } \
	static inline bool __heq(T a, T b) { return (float)a == (float)b; }                     \
	static inline bool __hne(T a, T b) { return (float)a != (float)b; }                     \
	static inline bool __hlt(T a, T b) { return (float)a < (float)b; }                      \
	static inline bool __hle(T a, T b) { return (float)a <= (float)b; }                     \
	static inline bool __hgt(T a, T b) { return (float)a > (float)b; }                      \
	static inline bool __hge(T a, T b) { return (float)a >= (float)b; }                     \
	static inline bool __hequ(T a, T b) { return !((float)a < (float)b || (float)a > (float)b); } \
	static inline bool __hneu(T a, T b) { return !((float)a == (float)b); }                 \
	static inline bool __hltu(T a, T b) { return !((float)a >= (float)b); }                 \
	static inline bool __hleu(T a, T b) { return !((float)a > (float)b); }                  \
	static inline bool __hgtu(T a, T b) { return !((float)a <= (float)b); }                 \
	static inline bool __hgeu(T a, T b) { return !((float)a < (float)b); }                  \
	static inline T hexp(T a) { return T(expf((float)a)); }                                 \
	static inline T hexp2(T a) { return T(exp2f((float)a)); }                               \
	static inline T hexp10(T a) { return T(exp10f((float)a)); }                             \
	static inline T hlog(T a) { return T(logf((float)a)); }                                 \
	static inline T hlog2(T a) { return T(log2f((float)a)); }                               \
	static inline T hlog10(T a) { return T(log10f((float)a)); }                             \
	static inline T hsqrt(T a) { return T(sqrtf((float)a)); }                              \
	static inline T hrsqrt(T a) { return T(1.0f / sqrtf((float)a)); }                       \
	static inline T hrcp(T a) { return T(1.0f / (float)a); }                                \
	static inline T hsin(T a) { return T(sinf((float)a)); }                                 \
	static inline T hcos(T a) { return T(cosf((float)a)); }                                 \
	static inline T htanh(T a) { return T(tanhf((float)a)); }                               \
	static inline T htanh_approx(T a) { return T(tanhf((float)a)); }                        \
	static inline T hfloor(T a) { return T(floorf((float)a)); }                             \
	static inline T hceil(T a) { return T(ceilf((float)a)); }                               \
	static inline T htrunc(T a) { return T(truncf((float)a)); }                             \
	static inline T hrint(T a) { return T(rintf((float)a)); }

PF_EMU_HFUNCS(__half, 0x7c00u)
PF_EMU_HFUNCS(__nv_bfloat16, 0x7f80u)

#define PF_EMU_H2FUNCS(T2, T)                                                                   \
	static inline T2 __hadd2(T2 a, T2 b) { return a + b; }                                 \
	static inline T2 __hsub2(T2 a, T2 b) { return a - b; }                                 \
	static inline T2 __hmul2(T2 a, T2 b) { return a * b; }                                 \
	static inline T2 __h2div(T2 a, T2 b) { return a / b; }                                 \
	static inline T2 __hfma2(T2 a, T2 b, T2 c) { return T2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); } \
	static inline T2 __hfma2_relu(T2 a, T2 b, T2 c) { return T2(__hfma_relu(a.x, b.x, c.x), __hfma_relu(a.y, b.y, c.y)); } \
	static inline T2 __hneg2(T2 a) { return -a; }                                          \
	static inline T2 __habs2(T2 a) { return T2(__habs(a.x), __habs(a.y)); }                 \
	static inline T2 __hadd2_sat(T2 a, T2 b) { return T2(__hadd_sat(a.x, b.x), __hadd_sat(a.y, b.y)); } \
	static inline T2 __hsub2_sat(T2 a, T2 b) { return T2(__hsub_sat(a.x, b.x), __hsub_sat(a.y, b.y)); } \
	static inline T2 __hmul2_sat(T2 a, T2 b) { return T2(__hmul_sat(a.x, b.x), __hmul_sat(a.y, b.y)); } \
	static inline T2 __hmax2(T2 a, T2 b) { return T2(__hmax(a.x, b.x), __hmax(a.y, b.y)); } \
	static inline T2 __hmin2(T2 a, T2 b) { return T2(__hmin(a.x, b.x), __hmin(a.y, b.y)); } \
	static inline T2 __hmax2_nan(T2 a, T2 b) { return T2(__hmax_nan(a.x, b.x), __hmax_nan(a.y, b.y)); } \
	static inline T2 __hmin2_nan(T2 a, T2 b) { return T2(__hmin_nan(a.x, b.x), __hmin_nan(a.y, b.y)); } \
	static inline T2 __heq2(T2 a, T2 b) { return T2(T(__heq(a.x, b.x) ? 1.0f : 0.0f), T(__heq(a.y, b.y) ? 1.0f : 0.0f)); } \
	static inline T2 __hne2(T2 a, T2 b) { return T2(T(__hne(a.x, b.x) ? 1.0f : 0.0f), T(__hne(a.y, b.y) ? 1.0f : 0.0f)); } \
	static inline T2 __hlt2(T2 a, T2 b) { return T2(T(__hlt(a.x, b.x) ? 1.0f : 0.0f), T(__hlt(a.y, b.y) ? 1.0f : 0.0f)); } \
	static inline T2 __hgt2(T2 a, T2 b) { return T2(T(__hgt(a.x, b.x) ? 1.0f : 0.0f), T(__hgt(a.y, b.y) ? 1.0f : 0.0f)); } \
	static inline T2 __hle2(T2 a, T2 b) { return T2(T(__hle(a.x, b.x) ? 1.0f : 0.0f), T(__hle(a.y, b.y) ? 1.0f : 0.0f)); } \
	static inline T2 __hge2(T2 a, T2 b) { return T2(T(__hge(a.x, b.x) ? 1.0f : 0.0f), T(__hge(a.y, b.y) ? 1.0f : 0.0f)); } \
	static inline bool __hbeq2(T2 a, T2 b) { return __heq(a.x, b.x) && __heq(a.y, b.y); }   \
	static inline bool __hbne2(T2 a, T2 b) { return __hne(a.x, b.x) && __hne(a.y, b.y); }   \
	static inline bool __hblt2(T2 a, T2 b) { return __hlt(a.x, b.x) && __hlt(a.y, b.y); }   \
	static inline bool __hbgt2(T2 a, T2 b) { return __hgt(a.x, b.x) && __hgt(a.y, b.y); }   \
	static inline bool __hble2(T2 a, T2 b) { return __hle(a.x, b.x) && __hle(a.y, b.y); }   \
	static inline bool __hbge2(T2 a, T2 b) { return __hge(a.x, b.x) && __hge(a.y, b.y); }   \
	static inline T2 __hisnan2(T2 a) { return T2(T(__hisnan(a.x) ? 1.0f : 0.0f), T(__hisnan(a.y) ? 1.0f : 0.0f)); } \
	static inline T2 h2exp(T2 a) { return T2(hexp(a.x), hexp(a.y)); }                      \
	static inline T2 h2exp2(T2 a) { return T2(hexp2(a.x), hexp2(a.y)); }                   \
	static inline T2 h2exp10(T2 a) { return T2(hexp10(a.x), hexp10(a.y)); }                \
	static inline T2 h2log(T2 a) { return T2(hlog(a.x), hlog(a.y)); }                      \
	static inline T2 h2log2(T2 a) { return T2(hlog2(a.x), hlog2(a.y)); }                   \
	static inline T2 h2log10(T2 a) { return T2(hlog10(a.x), hlog10(a.y)); }                \
	static inline T2 h2sqrt(T2 a) { return T2(hsqrt(a.x), hsqrt(a.y)); }                   \
	static inline T2 h2rsqrt(T2 a) { return T2(hrsqrt(a.x), hrsqrt(a.y)); }                \
	static inline T2 h2rcp(T2 a) { return T2(hrcp(a.x), hrcp(a.y)); }                      \
	static inline T2 h2sin(T2 a) { return T2(hsin(a.x), hsin(a.y)); }                      \
	static inline T2 h2cos(T2 a) { return T2(hcos(a.x), hcos(a.y)); }                      \
	static inline T2 h2tanh(T2 a) { return T2(htanh(a.x), htanh(a.y)); }                   \
	static inline T2 h2floor(T2 a) { return T2(hfloor(a.x), hfloor(a.y)); }                \
	static inline T2 h2ceil(T2 a) { return T2(hceil(a.x), hceil(a.y)); }                   \
	static inline T2 h2trunc(T2 a) { return T2(htrunc(a.x), htrunc(a.y)); }                \
	static inline T2 h2rint(T2 a) { return T2(hrint(a.x), hrint(a.y)); }

PF_EMU_H2FUNCS(__half2, __half)
PF_EMU_H2FUNCS(__nv_bfloat162, __nv_bfloat16)

#ifndef CUDART_INF_FP16
#define CUDART_INF_FP16 __ushort_as_half((unsigned short)0x7C00U)
#define CUDART_NAN_FP16 __ushort_as_half((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_FP16 __ushort_as_half((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_FP16 __ushort_as_half((unsigned short)0x7BFFU)
#define CUDART_NEG_ZERO_FP16 __ushort_as_half((unsigned short)0x8000U)
#define CUDART_ZERO_FP16 __ushort_as_half((unsigned short)0x0000U)
#define CUDART_ONE_FP16 __ushort_as_half((unsigned short)0x3C00U)
#endif
#ifndef CUDART_INF_BF16
#define CUDART_INF_BF16 __ushort_as_bfloat16((unsigned short)0x7F80U)
#define CUDART_NAN_BF16 __ushort_as_bfloat16((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_BF16 __ushort_as_bfloat16((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_BF16 __ushort_as_bfloat16((unsigned short)0x7F7FU)
#define CUDART_NEG_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x8000U)
#define CUDART_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x0000U)
#define CUDART_ONE_BF16 __ushort_as_bfloat16((unsigned short)0x3F80U)
#endif
#ifndef CUDART_PI_F
#define CUDART_PI_F 3.141592654f
#define CUDART_PI 3.1415926535897931e+0
#define CUDART_SQRT_HALF_F 0.707106781f
#define CUDART_SQRT_2_OVER_PI_F 0.797884561f
#define CUDART_L2E_F 1.442695041f
#define CUDART_LN2_F 0.693147181f
#endif
#ifndef CUDART_INF
#define CUDART_INF (__builtin_inf())
#define CUDART_NAN (__builtin_nan(""))
#endif

/* ======================================================================== */
/* Float / integer math of device code                                      */

/* glibc's <math.h> already declares these names: function-like macros. */
#define __expf(x) (pf_emu_expf(x))
#define __exp10f(x) (::exp10f(x))
#define __logf(x) (::logf(x))
#define __log2f(x) (::log2f(x))
#define __log10f(x) (::log10f(x))
#define __sinf(x) (::sinf(x))
#define __cosf(x) (::cosf(x))
#define __tanf(x) (::tanf(x))
#define __powf(x, y) (::powf((x), (y)))
#define __sincosf(x, s, c) (::sincosf((x), (s), (c)))
#define __fmaf(x, y, z) (::fmaf((x), (y), (z)))

static inline float __fdividef(float a, float b) { return a / b; }
static inline double __fdivide(double a, double b) { return a / b; }
static inline float fdividef(float a, float b) { return a / b; }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
static inline double rcbrt(double x) { return 1.0 / cbrt(x); }
static inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
static inline float __fsqrt_rn(float x) { return sqrtf(x); }
static inline float __fsqrt_rz(float x) { return sqrtf(x); }
static inline float __fsqrt_rd(float x) { return sqrtf(x); }
static inline float __fsqrt_ru(float x) { return sqrtf(x); }
static inline double __dsqrt_rn(double x) { return sqrt(x); }
static inline float __frcp_rn(float x) { return 1.0f / x; }
static inline float __frcp_rz(float x) { return 1.0f / x; }
static inline float __frcp_rd(float x) { return 1.0f / x; }
static inline float __frcp_ru(float x) { return 1.0f / x; }
static inline double __drcp_rn(double x) { return 1.0 / x; }
static inline float __saturatef(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }
/* Directed roundings (_rz/_rd/_ru) are computed round-to-nearest. */
#define PF_EMU_RND_OPS(SUF)                                                                       \
	static inline float __fadd_##SUF(float a, float b) { return a + b; }                     \
	static inline float __fsub_##SUF(float a, float b) { return a - b; }                     \
	static inline float __fmul_##SUF(float a, float b) { return a * b; }                     \
	static inline float __fdiv_##SUF(float a, float b) { return a / b; }                     \
	static inline float __fmaf_##SUF(float a, float b, float c) { return fmaf(a, b, c); }    \
	static inline double __dadd_##SUF(double a, double b) { return a + b; }                  \
	static inline double __dsub_##SUF(double a, double b) { return a - b; }                  \
	static inline double __dmul_##SUF(double a, double b) { return a * b; }                  \
	static inline double __ddiv_##SUF(double a, double b) { return a / b; }                  \
	static inline double __fma_##SUF(double a, double b, double c) { return fma(a, b, c); }
PF_EMU_RND_OPS(rn)
PF_EMU_RND_OPS(rz)
PF_EMU_RND_OPS(rd)
PF_EMU_RND_OPS(ru)
static inline float __fmaf_ieee_rn(float a, float b, float c) { return fmaf(a, b, c); }

static inline float normcdff(float x) { return 0.5f * erfcf(-x * 0.70710678118654752f); }
static inline double normcdf(double x) { return 0.5 * erfc(-x * 0.70710678118654752440); }
static inline float sinpif(float x) { return sinf(x * 3.14159265358979323846f); }
static inline double sinpi(double x) { return sin(x * 3.14159265358979323846); }
static inline float cospif(float x) { return cosf(x * 3.14159265358979323846f); }
static inline double cospi(double x) { return cos(x * 3.14159265358979323846); }
static inline void sincospif(float x, float *s, float *c)
{
	*s = sinpif(x);
	*c = cospif(x);
}
static inline void sincospi(double x, double *s, double *c)
{
	*s = sinpi(x);
	*c = cospi(x);
}
static inline double erfinv(double y)
{
	if (!(y > -1.0 && y < 1.0))
		return y == 1.0 ? HUGE_VAL : y == -1.0 ? -HUGE_VAL : NAN;
	/* Giles' single-precision approximation, then Newton steps in double. */
	double w = -log((1.0 - y) * (1.0 + y)), x;
	if (w < 5.0) {
		w -= 2.5;
		x = 2.81022636e-08;
		x = 3.43273939e-07 + x * w;
		x = -3.5233877e-06 + x * w;
		x = -4.39150654e-06 + x * w;
		x = 0.00021858087 + x * w;
		x = -0.00125372503 + x * w;
		x = -0.00417768164 + x * w;
		x = 0.246640727 + x * w;
		x = 1.50140941 + x * w;
	} else {
		w = sqrt(w) - 3.0;
		x = -0.000200214257;
		x = 0.000100950558 + x * w;
		x = 0.00134934322 + x * w;
		x = -0.00367342844 + x * w;
		x = 0.00573950773 + x * w;
		x = -0.0076224613 + x * w;
		x = 0.00943887047 + x * w;
		x = 1.00167406 + x * w;
		x = 2.83297682 + x * w;
	}
	x *= y;
	for (int i = 0; i < 2; i++)
		x -= (erf(x) - y) / (1.1283791670955126 * exp(-x * x));
	return x;
}
static inline float erfinvf(float y) { return (float)erfinv((double)y); }
static inline double erfcinv(double y) { return erfinv(1.0 - y); }
static inline float erfcinvf(float y) { return (float)erfinv(1.0 - (double)y); }
static inline double normcdfinv(double p) { return -1.4142135623730951 * erfcinv(2.0 * p); }
static inline float normcdfinvf(float p) { return (float)normcdfinv((double)p); }
static inline float erfcxf(float x) { return (float)(exp((double)x * x) * erfc((double)x)); }
static inline double erfcx(double x) { return exp(x * x) * erfc(x); }

/* min / max as CUDA's math_functions.hpp declares them (std::min/max untouched). */
#define PF_EMU_MINMAX(R, A, B)                                                    \
	static inline R min(A a, B b) { return (R)a < (R)b ? (R)a : (R)b; }       \
	static inline R max(A a, B b) { return (R)a > (R)b ? (R)a : (R)b; }
PF_EMU_MINMAX(int, int, int)
PF_EMU_MINMAX(unsigned int, unsigned int, unsigned int)
PF_EMU_MINMAX(unsigned int, int, unsigned int)
PF_EMU_MINMAX(unsigned int, unsigned int, int)
PF_EMU_MINMAX(long, long, long)
PF_EMU_MINMAX(unsigned long, unsigned long, unsigned long)
PF_EMU_MINMAX(unsigned long, long, unsigned long)
PF_EMU_MINMAX(unsigned long, unsigned long, long)
PF_EMU_MINMAX(long long, long long, long long)
PF_EMU_MINMAX(unsigned long long, unsigned long long, unsigned long long)
PF_EMU_MINMAX(unsigned long long, long long, unsigned long long)
PF_EMU_MINMAX(unsigned long long, unsigned long long, long long)
static inline float min(float a, float b) { return fminf(a, b); }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }
static inline double min(float a, double b) { return fmin((double)a, b); }
static inline double max(float a, double b) { return fmax((double)a, b); }
static inline double min(double a, float b) { return fmin(a, (double)b); }
static inline double max(double a, float b) { return fmax(a, (double)b); }
static inline unsigned int umin(unsigned int a, unsigned int b) { return a < b ? a : b; }
static inline unsigned int umax(unsigned int a, unsigned int b) { return a > b ? a : b; }
static inline long long llmin(long long a, long long b) { return a < b ? a : b; }
static inline long long llmax(long long a, long long b) { return a > b ? a : b; }
static inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
static inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a > b ? a : b; }

/* Integer intrinsics. */
static inline int __popc(unsigned int x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
static inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned int __brev(unsigned int x)
{
	x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
	x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
	x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
	return __builtin_bswap32(x);
}
static inline unsigned long long __brevll(unsigned long long x)
{
	return ((unsigned long long)__brev((unsigned)x) << 32) | __brev((unsigned)(x >> 32));
}
static inline int __mul24(int a, int b)
{
	return (int)((unsigned)(((int)((unsigned)a << 8)) >> 8) * (unsigned)(((int)((unsigned)b << 8)) >> 8));
}
static inline unsigned int __umul24(unsigned int a, unsigned int b) { return (a & 0xffffffu) * (b & 0xffffffu); }
static inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
static inline unsigned int __umulhi(unsigned int a, unsigned int b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
static inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b)
{
	return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline int __hadd(int a, int b) { return (int)(((long long)a + b) >> 1); }
static inline int __rhadd(int a, int b) { return (int)(((long long)a + b + 1) >> 1); }
static inline unsigned int __uhadd(unsigned int a, unsigned int b) { return (unsigned)(((unsigned long long)a + b) >> 1); }
static inline unsigned int __urhadd(unsigned int a, unsigned int b) { return (unsigned)(((unsigned long long)a + b + 1) >> 1); }
static inline unsigned int __sad(int x, int y, unsigned int z) { return z + (unsigned)(x > y ? (long long)x - y : (long long)y - x); }
static inline unsigned int __usad(unsigned int x, unsigned int y, unsigned int z) { return z + (x > y ? x - y : y - x); }
static inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s)
{
	unsigned long long v = ((unsigned long long)y << 32) | x;
	unsigned r = 0;
	for (int i = 0; i < 4; i++)
		r |= (unsigned)((v >> (8 * ((s >> (4 * i)) & 7u))) & 0xffu) << (8 * i);
	return r;
}
static inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int sh)
{
	return (unsigned)(((((unsigned long long)hi << 32) | lo) << (sh & 31u)) >> 32);
}
static inline unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int sh)
{
	sh = sh < 32u ? sh : 32u;
	return (unsigned)(((((unsigned long long)hi << 32) | lo) << sh) >> 32);
}
static inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int sh)
{
	return (unsigned)((((unsigned long long)hi << 32) | lo) >> (sh & 31u));
}
static inline unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int sh)
{
	sh = sh < 32u ? sh : 32u;
	return (unsigned)((((unsigned long long)hi << 32) | lo) >> sh);
}
static inline int __dp4a(int a, int b, int c)
{
	int r = c;
	for (int i = 0; i < 4; i++)
		r += (int)(signed char)(a >> (8 * i)) * (int)(signed char)(b >> (8 * i));
	return r;
}
static inline unsigned int __dp4a(unsigned int a, unsigned int b, unsigned int c)
{
	unsigned r = c;
	for (int i = 0; i < 4; i++)
		r += ((a >> (8 * i)) & 0xffu) * ((b >> (8 * i)) & 0xffu);
	return r;
}

/* Cache-hinted loads and stores: plain accesses. */
template <typename T> static inline T __ldg(const T *p) { return *p; }
template <typename T> static inline T __ldcg(const T *p) { return *p; }
template <typename T> static inline T __ldca(const T *p) { return *p; }
template <typename T> static inline T __ldcs(const T *p) { return *p; }
template <typename T> static inline T __ldlu(const T *p) { return *p; }
template <typename T> static inline T __ldcv(const T *p) { return *p; }
template <typename T> static inline void __stcg(T *p, T v) { *p = v; }
template <typename T> static inline void __stcs(T *p, T v) { *p = v; }
template <typename T> static inline void __stwb(T *p, T v) { *p = v; }
template <typename T> static inline void __stwt(T *p, T v) { *p = v; }

static inline long long clock64() { return (long long)__builtin_ia32_rdtsc(); }
static inline void __nanosleep(unsigned int) {}
static inline void __trap()
{
	fprintf(stderr, "__trap() called in a kernel\n");
	abort();
}
static inline void __brkpt() { __trap(); }

/* ======================================================================== */
/* Memory fences and atomics                                                */

static inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

namespace pf_emu {
/* Compare-and-swap loop on the bits of a 2-, 4- or 8-byte value. */
template <typename T, typename F> inline T atomic_update(T *addr, F f)
{
	static_assert(sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "atomic size");
	typedef typename std::conditional<sizeof(T) == 2, unsigned short,
		typename std::conditional<sizeof(T) == 4, unsigned, unsigned long long>::type>::type U;
	U *p = reinterpret_cast<U *>(addr);
	U old = __atomic_load_n(p, __ATOMIC_RELAXED);
	for (;;) {
		T o, n;
		memcpy(&o, &old, sizeof o);
		n = f(o);
		U nu;
		memcpy(&nu, &n, sizeof nu);
		if (__atomic_compare_exchange_n(p, &old, nu, true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			return o;
	}
}
} /* namespace pf_emu */

#define PF_EMU_ATOMIC_INT(T)                                                                       \
	static inline T atomicAdd(T *p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }  \
	static inline T atomicSub(T *p, T v) { return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST); }  \
	static inline T atomicExch(T *p, T v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); } \
	static inline T atomicAnd(T *p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST); }  \
	static inline T atomicOr(T *p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }    \
	static inline T atomicXor(T *p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST); }  \
	static inline T atomicMin(T *p, T v) { return pf_emu::atomic_update(p, [v](T o) { return v < o ? v : o; }); } \
	static inline T atomicMax(T *p, T v) { return pf_emu::atomic_update(p, [v](T o) { return v > o ? v : o; }); } \
	static inline T atomicCAS(T *p, T cmp, T v)                                                 \
	{                                                                                          \
		__atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
		return cmp;                                                                        \
	}
PF_EMU_ATOMIC_INT(int)
PF_EMU_ATOMIC_INT(unsigned int)
PF_EMU_ATOMIC_INT(long long)
PF_EMU_ATOMIC_INT(unsigned long long)

static inline unsigned short atomicCAS(unsigned short *p, unsigned short cmp, unsigned short v)
{
	__atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return cmp;
}
static inline unsigned int atomicInc(unsigned int *p, unsigned int lim)
{
	return pf_emu::atomic_update(p, [lim](unsigned o) { return o >= lim ? 0u : o + 1u; });
}
static inline unsigned int atomicDec(unsigned int *p, unsigned int lim)
{
	return pf_emu::atomic_update(p, [lim](unsigned o) { return (o == 0u || o > lim) ? lim : o - 1u; });
}
static inline float atomicAdd(float *p, float v) { return pf_emu::atomic_update(p, [v](float o) { return o + v; }); }
static inline double atomicAdd(double *p, double v) { return pf_emu::atomic_update(p, [v](double o) { return o + v; }); }
static inline float atomicSub(float *p, float v) { return pf_emu::atomic_update(p, [v](float o) { return o - v; }); }
static inline float atomicExch(float *p, float v)
{
	return pf_emu::atomic_update(p, [v](float) { return v; });
}
static inline double atomicExch(double *p, double v)
{
	return pf_emu::atomic_update(p, [v](double) { return v; });
}
static inline float atomicMax(float *p, float v) { return pf_emu::atomic_update(p, [v](float o) { return fmaxf(o, v); }); }
static inline float atomicMin(float *p, float v) { return pf_emu::atomic_update(p, [v](float o) { return fminf(o, v); }); }
static inline double atomicMax(double *p, double v) { return pf_emu::atomic_update(p, [v](double o) { return fmax(o, v); }); }
static inline double atomicMin(double *p, double v) { return pf_emu::atomic_update(p, [v](double o) { return fmin(o, v); }); }
static inline __half atomicAdd(__half *p, __half v) { return pf_emu::atomic_update(p, [v](__half o) { return o + v; }); }
static inline __nv_bfloat16 atomicAdd(__nv_bfloat16 *p, __nv_bfloat16 v)
{
	return pf_emu::atomic_update(p, [v](__nv_bfloat16 o) { return o + v; });
}
static inline __half2 atomicAdd(__half2 *p, __half2 v) { return pf_emu::atomic_update(p, [v](__half2 o) { return o + v; }); }
static inline __nv_bfloat162 atomicAdd(__nv_bfloat162 *p, __nv_bfloat162 v)
{
	return pf_emu::atomic_update(p, [v](__nv_bfloat162 o) { return o + v; });
}
static inline float2 atomicAdd(float2 *p, float2 v)
{
	float2 o;
	o.x = atomicAdd(&p->x, v.x);
	o.y = atomicAdd(&p->y, v.y);
	return o;
}
static inline float4 atomicAdd(float4 *p, float4 v)
{
	float4 o;
	o.x = atomicAdd(&p->x, v.x);
	o.y = atomicAdd(&p->y, v.y);
	o.z = atomicAdd(&p->z, v.z);
	o.w = atomicAdd(&p->w, v.w);
	return o;
}
/* Scoped variants (_block, _system): the same operations. */
#define atomicAdd_block atomicAdd
#define atomicAdd_system atomicAdd
#define atomicSub_block atomicSub
#define atomicSub_system atomicSub
#define atomicExch_block atomicExch
#define atomicExch_system atomicExch
#define atomicMin_block atomicMin
#define atomicMin_system atomicMin
#define atomicMax_block atomicMax
#define atomicMax_system atomicMax
#define atomicCAS_block atomicCAS
#define atomicCAS_system atomicCAS
#define atomicAnd_block atomicAnd
#define atomicAnd_system atomicAnd
#define atomicOr_block atomicOr
#define atomicOr_system atomicOr
#define atomicXor_block atomicXor
#define atomicXor_system atomicXor
#define atomicInc_block atomicInc
#define atomicInc_system atomicInc
#define atomicDec_block atomicDec
#define atomicDec_system atomicDec

/* ======================================================================== */
/* The block scheduler: lazy fibers                                         */

namespace pf_emu {

/* A fiber's memory: one region of PF_EMU_REGION bytes (a power of two),
 * aligned to its size, MAP_NORESERVE: a guard page at the bottom, the stack
 * above it, and the fiber's record right above the stack top.  Code running
 * on a fiber finds its record from the stack pointer (mask, then a function
 * of the region's address) - that is how threadIdx & co. are read, with no
 * TLS access.  The stack tops (and records) are staggered over PF_EMU_SPREAD
 * bytes by the region's address, so that the hot top lines of hundreds of
 * fibers spread over the cache sets instead of competing for a few; record
 * and stack top share a page (one TLB entry per fiber switch).  Usable
 * stack: at least REGION - SPREAD - 4 KiB - 128 = 60 KiB. */
#ifndef PF_EMU_REGION
#define PF_EMU_REGION (128 * 1024)
#define PF_EMU_SPREAD (64 * 1024)
#endif
#define PF_EMU_PAGE 4096
#ifndef PF_EMU_PF_REC
#define PF_EMU_PF_REC 4         /* prefetch distances (ready-queue entries) */
#define PF_EMU_PF_STK 2
#endif
#define PF_EMU_MAX_THREADS 1024
#define PF_EMU_MAX_SMEM (227 * 1024)

struct launch_info {
	pf_dim3 grid, block;
	size_t smem;
	unsigned nthreads;
	int failed;
	char msg[256];
	pf_launch_stats stats;        /* filled when the runtime sets stats.timing */
};

struct pfe_sched;
struct pfe_fiber {
	uint3 idx;                    /* threadIdx of the thread it runs */
	uint3 bidx, bdim, gdim;       /* blockIdx, blockDim, gridDim */
	unsigned tid;                 /* its linear thread id */
	pfe_sched *S;                     /* the scheduler running it */
	uintptr_t magic;              /* its own address ^ PF_EMU_MAGIC */
	unsigned wneed;               /* lanes of the last warp op */
	unsigned long long wres;      /* result of the last warp op */
	void *sp;                     /* saved stack pointer while switched out */
	char *stk_lo;                 /* lowest usable stack byte (above the guard page) */
	size_t stk_size;
	void *fake;                   /* ASan fake stack */
};

static_assert(sizeof(pfe_fiber) <= 128, "fiber record size");
PF_EMU_INL pfe_fiber *pfe_record_of(uintptr_t region)
{
	uintptr_t lines = PF_EMU_SPREAD / 64;
	uintptr_t off = PF_EMU_REGION - 128 - (((region / PF_EMU_REGION) * 37u) % lines) * 64u;
	return reinterpret_cast<pfe_fiber *>(region + off);
}

/* The record of the fiber this code runs on (only meaningful inside a kernel). */
PF_EMU_INL pfe_fiber *pfe_self()
{
	uintptr_t sp;
	__asm__("movq %%rsp, %0" : "=r"(sp));
	return pfe_record_of(sp & ~(uintptr_t)(PF_EMU_REGION - 1));
}

/* The running fiber, or NULL when not called from a kernel (host code
 * calling a barrier: a no-op then). */
#define PF_EMU_MAGIC ((uintptr_t)0x7066656d75666962ull)
PF_EMU_INL pfe_fiber *pfe_current()
{
	pfe_fiber *f = pfe_self();
	return f->magic == ((uintptr_t)f ^ PF_EMU_MAGIC) ? f : nullptr;
}

enum { W_SYNC, W_SHFL, W_BALLOT, W_ADD, W_MIN_U, W_MAX_U, W_MIN_I, W_MAX_I, W_AND, W_OR, W_XOR,
       W_MATCH_ANY, W_MATCH_ALL, W_ACTIVE };

struct warp_state {
	unsigned arrived, exited, valid;
	unsigned active;              /* arrived lanes that wait in __activemask */
	unsigned bbar;                /* lanes waiting at __syncthreads */
	unsigned mask[32];
	unsigned char op[32];
	signed char src[32];
	unsigned long long val[32];
	pfe_fiber *fib[32];
};

struct pfe_sched {
	pfe_fiber main;
	pfe_fiber *cur;
	void *ctx;
	void (*entry)(pfe_sched *);
	launch_info *li;
	unsigned nthreads, next_tid, exited, nfib;
	unsigned bx, by, bxy;
	uint3 bidx, bdim, gdim;
	unsigned rhead, rcount;
	unsigned nbwait;
	int bacc;
	unsigned bgen;
	int bres[2];
	unsigned nwarps, warp_pending;
	int failed;
	const void *asan_bottom;
	size_t asan_size;
	char err[224];
	pfe_fiber *ready[PF_EMU_MAX_THREADS];
	pfe_fiber *bwait[PF_EMU_MAX_THREADS];
	warp_state warps[PF_EMU_MAX_THREADS / 32];
	pfe_fiber *fibers[PF_EMU_MAX_THREADS];    /* set up on first use, kept */
	char *stacks;                 /* the fibers' regions, PF_EMU_MAX_THREADS in a row */
	/* Thread times (li->stats.timing): ticks of each thread of the block
	 * so far, the start of the running fiber's stretch, and the block's
	 * histogram (merged into li->stats when the block ends; `seen`
	 * marks the buckets used). */
	int timing;
	unsigned long long tseg, tsum, tmax, tn, traw;
	unsigned long long tacc[PF_EMU_MAX_THREADS];
	unsigned long long tsort[PF_EMU_MAX_THREADS];
	unsigned tres[PF_EMU_MAX_THREADS];     /* times each thread was switched back in */
	unsigned long long thist[PF_STATS_BUCKETS];
	unsigned long long thist_ticks[PF_STATS_BUCKETS];
	unsigned long long tseen[PF_STATS_BUCKETS / 64];
};

PF_EMU_TLS pfe_sched *t_pool;      /* this OS thread's scheduler (kept) */
PF_EMU_TLS char *t_dsmem;      /* dynamic shared memory */
PF_EMU_TLS size_t t_dsmem_cap;

/* The context switch: save the callee-saved registers on the current stack,
 * store the stack pointer in *save, load `to`, restore, return there. */
__attribute__((naked, noinline, used)) static void ctx_switch(void ** /*save*/, void * /*to*/)
{
	__asm__ volatile(
		"pushq %rbp\n\t"
		"pushq %rbx\n\t"
		"pushq %r12\n\t"
		"pushq %r13\n\t"
		"pushq %r14\n\t"
		"pushq %r15\n\t"
		"movq %rsp, (%rdi)\n\t"
		"movq %rsi, %rsp\n\t"
		"popq %r15\n\t"
		"popq %r14\n\t"
		"popq %r13\n\t"
		"popq %r12\n\t"
		"popq %rbx\n\t"
		"popq %rbp\n\t"
		"ret\n\t");
}
/* A new fiber's first "return" lands here: r12 = sched, r13 = entry. */
__attribute__((naked, noinline, used)) static void ctx_trampoline()
{
	__asm__ volatile(
		"movq %r12, %rdi\n\t"
		"callq *%r13\n\t"
		"ud2\n\t");
}

inline void report(launch_info *L, const char *msg)
{
	int zero = 0;
	if (__atomic_compare_exchange_n(&L->failed, &zero, 1, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
		size_t n = strlen(msg);
		if (n >= sizeof L->msg)
			n = sizeof L->msg - 1;
		memcpy(L->msg, msg, n);
		L->msg[n] = 0;
	}
}

PF_EMU_INL void switch_to(pfe_sched *S, pfe_fiber *to, bool from_dies = false)
{
	pfe_fiber *from = S->cur;
	S->cur = to;
	if (__builtin_expect(S->timing, 0) && from != &S->main && from->tid < PF_EMU_MAX_THREADS)
		/* the stretch just run belongs to the thread `from` runs */
		S->tacc[from->tid] += __builtin_ia32_rdtsc() - S->tseg;
#ifdef PF_EMU_ASAN
	__sanitizer_start_switch_fiber(from_dies ? nullptr : &from->fake,
				       to == &S->main ? S->asan_bottom : to->stk_lo,
				       to == &S->main ? S->asan_size : to->stk_size);
#else
	(void)from_dies;
#endif
	ctx_switch(&from->sp, to->sp);
#ifdef PF_EMU_ASAN
	__sanitizer_finish_switch_fiber(from->fake, nullptr, nullptr);
#endif
	/* `from` runs again: its thread's next stretch starts now (the
	 * switching itself is the emulator's cost, not the thread's) */
	if (__builtin_expect(S->timing, 0)) {
		S->tseg = __builtin_ia32_rdtsc();
		if (from != &S->main && from->tid < PF_EMU_MAX_THREADS)
			S->tres[from->tid]++;
	}
}

/* The emulator's own bookkeeping inside a thread's stretch (the last lane
 * of a warp exchange computing every lane's result, the last thread at a
 * barrier releasing the block): taken out of that thread's time, from
 * `from` (the rdtsc before it, 0 when not timing) to now.  A GPU does
 * either in one instruction for the whole warp or block. */
PF_EMU_INL unsigned long long untimed_from(pfe_sched *S)
{
	return __builtin_expect(S->timing, 0) ? __builtin_ia32_rdtsc() : 0;
}
PF_EMU_INL void untimed_to(pfe_sched *S, pfe_fiber *f, unsigned long long from)
{
	if (__builtin_expect(S->timing, 0) && f->tid < PF_EMU_MAX_THREADS) {
		S->tacc[f->tid] += from - S->tseg;
		S->tseg = __builtin_ia32_rdtsc();
	}
}

PF_EMU_INL void ready_push(pfe_sched *S, pfe_fiber *f)
{
	S->ready[(S->rhead + S->rcount++) % PF_EMU_MAX_THREADS] = f;
}
PF_EMU_INL pfe_fiber *ready_pop(pfe_sched *S)
{
	if (!S->rcount)
		return nullptr;
	pfe_fiber *f = S->ready[S->rhead];
	S->rhead = (S->rhead + 1) % PF_EMU_MAX_THREADS;
	S->rcount--;
	return f;
}

inline void fiber_start(pfe_sched *S);

/* Sets up fiber number S->nfib (allocating its stack on first use). */
inline pfe_fiber *new_fiber(pfe_sched *S)
{
	unsigned i = S->nfib;
	pfe_fiber *f = S->fibers[i];
	if (!f) {
		/* one reservation for all of the thread's fibers, aligned to a
		 * region (MAP_NORESERVE: untouched pages cost nothing): fiber i
		 * is region i of it, so the staggering of stack tops is the same
		 * sequence in every process (with a region mapped apart, where
		 * each landed decided which fibers' hot lines shared cache
		 * sets, and a few processes in ten ran a sixth of every block's
		 * threads 5-10x slower) */
		if (!S->stacks) {
			size_t total = (PF_EMU_MAX_THREADS + 1) * (size_t)PF_EMU_REGION;
			char *m = (char *)mmap(nullptr, total, PROT_READ | PROT_WRITE,
					       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
			if (m == MAP_FAILED)
				return nullptr;
			char *a = (char *)(((uintptr_t)m + PF_EMU_REGION - 1) & ~(uintptr_t)(PF_EMU_REGION - 1));
			size_t keep = PF_EMU_MAX_THREADS * (size_t)PF_EMU_REGION;
			if (a > m)
				munmap(m, (size_t)(a - m));
			if (m + total > a + keep)
				munmap(a + keep, (size_t)(m + total - (a + keep)));
			S->stacks = a;
		}
		char *r = S->stacks + (size_t)i * PF_EMU_REGION;
		if (mprotect(r, PF_EMU_PAGE, PROT_NONE) != 0)
			return nullptr;
		f = S->fibers[i] = pfe_record_of((uintptr_t)r);
		f->stk_lo = r + PF_EMU_PAGE;
		f->stk_size = (size_t)((char *)f - f->stk_lo);
	}
	f->bidx = S->bidx;
	f->bdim = S->bdim;
	f->gdim = S->gdim;
	f->S = S;
	f->magic = (uintptr_t)f ^ PF_EMU_MAGIC;
	S->nfib = i + 1;
#ifdef PF_EMU_ASAN
	/* frames abandoned on this stack (an earlier block's) left their poison */
	__asan_unpoison_memory_region(f->stk_lo, f->stk_size);
#endif
	uintptr_t top = (uintptr_t)f;             /* the stack ends below the record */
	void **sp = (void **)(top - 72);
	sp[0] = nullptr;                         /* r15 */
	sp[1] = nullptr;                         /* r14 */
	sp[2] = (void *)S->entry;                /* r13 */
	sp[3] = (void *)S;                       /* r12 */
	sp[4] = nullptr;                         /* rbx */
	sp[5] = nullptr;                         /* rbp */
	sp[6] = (void *)&ctx_trampoline;         /* return address */
	sp[7] = nullptr;
	sp[8] = nullptr;
	f->sp = sp;
	f->fake = nullptr;
	return f;
}

/* Ends the block with an error; control goes back to the OS thread's stack. */
inline pfe_fiber *block_error(pfe_sched *S, const char *what)
{
	S->failed = 1;
	snprintf(S->err, sizeof S->err, "%s of block (%u,%u,%u)", what, S->bidx.x, S->bidx.y,
		 S->bidx.z);
	return &S->main;
}

inline pfe_fiber *deadlock(pfe_sched *S)
{
	if (S->nbwait && S->exited)
		return block_error(S, "__syncthreads not reached by all threads");
	if (S->nbwait)
		return block_error(S, "deadlock: threads wait at __syncthreads while others of their "
				      "warp wait at a warp-level sync (__shfl*_sync, __syncwarp, ...)");
	return block_error(S, "deadlock: a warp-level sync (__shfl*_sync, __ballot_sync, __syncwarp, ...) "
			      "waits for lanes that never arrive");
}

/* The current fiber cannot continue (it waits at a barrier): run something else. */
PF_EMU_INL void block_wait(pfe_sched *S)
{
	pfe_fiber *nx = ready_pop(S);
	if (nx) {
		/* software-pipelined prefetch of the next fibers' records and
		 * saved contexts: switching is bound by their cache misses */
		if (S->rcount > PF_EMU_PF_REC)
			__builtin_prefetch(S->ready[(S->rhead + PF_EMU_PF_REC) % PF_EMU_MAX_THREADS], 0);
		if (S->rcount > PF_EMU_PF_STK) {
			char *sp = (char *)S->ready[(S->rhead + PF_EMU_PF_STK) % PF_EMU_MAX_THREADS]->sp;
			__builtin_prefetch(sp, 0);
			__builtin_prefetch(sp + 56, 0);
		}
	} else {
		if (S->next_tid < S->nthreads) {
			nx = new_fiber(S);
			if (!nx)
				nx = block_error(S, "out of memory for fiber stacks");
		} else {
			nx = deadlock(S);
		}
	}
	switch_to(S, nx);
}

/* The current fiber has no thread left to run.  Never returns (not marked
 * noreturn: ASan would then unpoison a stack it does not know). */
inline void fiber_done(pfe_sched *S)
{
	pfe_fiber *nx = ready_pop(S);
	if (!nx)
		nx = S->exited == S->nthreads ? &S->main : deadlock(S);
	switch_to(S, nx, true);
}

/* ---- warp-level exchange ---- */
inline bool warp_try(pfe_sched *S, warp_state *W, unsigned lane)
{
	int op = W->op[lane];
	if (op == W_ACTIVE) {
		/* __activemask: the lanes that reach it while every other lane
		 * of the warp is blocked (in a warp sync or __syncthreads) or
		 * has exited - the emulation's notion of "converged" */
		if (((W->arrived | W->bbar | W->exited) & W->valid) != W->valid)
			return false;
		unsigned grp = W->active;
		for (unsigned j = 0; j < 32; j++) {
			if (!(grp >> j & 1u))
				continue;
			pfe_fiber *f = W->fib[j];
			f->wres = grp;
			f->wneed = grp;
			if (f != S->cur)
				ready_push(S, f);
		}
		W->arrived &= ~grp;
		W->active = 0;
		if (!W->arrived)
			S->warp_pending--;
		return true;
	}
	unsigned need = (W->mask[lane] | (1u << lane)) & W->valid & ~W->exited;
	if ((W->arrived & ~W->active & need) != need)
		return false;
	unsigned long long agg = 0;
	switch (op) {
	case W_BALLOT:
		for (unsigned j = 0; j < 32; j++)
			if ((need >> j & 1u) && W->val[j])
				agg |= 1ull << j;
		break;
	case W_ADD:
		for (unsigned j = 0; j < 32; j++)
			if (need >> j & 1u)
				agg = (unsigned)((unsigned)agg + (unsigned)W->val[j]);
		break;
	case W_MIN_U:
	case W_MAX_U:
	case W_MIN_I:
	case W_MAX_I:
	case W_AND:
	case W_OR:
	case W_XOR: {
		bool first = true;
		for (unsigned j = 0; j < 32; j++) {
			if (!(need >> j & 1u))
				continue;
			unsigned v = (unsigned)W->val[j], a = (unsigned)agg;
			if (first)
				a = v;
			else if (op == W_MIN_U)
				a = v < a ? v : a;
			else if (op == W_MAX_U)
				a = v > a ? v : a;
			else if (op == W_MIN_I)
				a = (int)v < (int)a ? v : a;
			else if (op == W_MAX_I)
				a = (int)v > (int)a ? v : a;
			else if (op == W_AND)
				a &= v;
			else if (op == W_OR)
				a |= v;
			else
				a ^= v;
			first = false;
			agg = a;
		}
		break;
	}
	case W_MATCH_ALL: {
		agg = need;
		for (unsigned j = 0; j < 32; j++)
			if ((need >> j & 1u) && W->val[j] != W->val[lane])
				agg = 0;
		break;
	}
	default:
		break;
	}
	for (unsigned j = 0; j < 32; j++) {
		if (!(need >> j & 1u))
			continue;
		pfe_fiber *f = W->fib[j];
		unsigned long long r = agg;
		if (op == W_SHFL) {
			int s = W->src[j];
			r = (s >= 0 && (need >> s & 1u)) ? W->val[s] : W->val[j];
		} else if (op == W_MATCH_ANY) {
			r = 0;
			for (unsigned k = 0; k < 32; k++)
				if ((need >> k & 1u) && W->val[k] == W->val[j])
					r |= 1ull << k;
		}
		f->wres = r;
		f->wneed = need;
		if (f != S->cur)
			ready_push(S, f);
	}
	W->arrived &= ~need;
	if (!W->arrived)
		S->warp_pending--;
	return true;
}

/* Re-examines the warp's waiting groups after a lane exited or blocked:
 * a warp sync may have been waiting only for it. */
__attribute__((noinline)) inline void warp_recheck(pfe_sched *S, warp_state *W)
{
	bool again = true;
	while (again && W->arrived) {
		again = false;
		for (unsigned l = 0; l < 32; l++)
			if ((W->arrived >> l & 1u) && warp_try(S, W, l)) {
				again = true;
				break;
			}
	}
}

/* Frees the OS thread's scheduler, fiber stacks and dynamic shared memory;
 * registered to run when the thread exits. */
inline void thread_cleanup(void *)
{
	pfe_sched *S = t_pool;
	if (S) {
#ifdef PF_EMU_ASAN
		/* ASan keeps stale stack poison across munmap */
		for (unsigned i = 0; i < PF_EMU_MAX_THREADS; i++)
			if (S->fibers[i])
				__asan_unpoison_memory_region(S->fibers[i]->stk_lo, S->fibers[i]->stk_size);
#endif
		if (S->stacks)
			munmap(S->stacks, PF_EMU_MAX_THREADS * (size_t)PF_EMU_REGION);
		munmap(S, sizeof(pfe_sched));
		t_pool = nullptr;
	}
	free(t_dsmem);
	t_dsmem = nullptr;
	t_dsmem_cap = 0;
}

} /* namespace pf_emu */
/* glibc's registration of thread_local destructors (what g++ itself uses;
 * it also keeps a dlopen'ed object loaded until the destructors ran).  The
 * third argument only has to be an address inside the object. */
extern "C" int __cxa_thread_atexit_impl(void (*)(void *), void *, void *);
namespace pf_emu {

inline pfe_sched *pfe_get_sched()
{
	pfe_sched *S = t_pool;
	if (S)
		return S;
	void *m = mmap(nullptr, sizeof(pfe_sched), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return nullptr;
	S = t_pool = (pfe_sched *)m;
	__cxa_thread_atexit_impl(&thread_cleanup, nullptr, (void *)&thread_cleanup);
	return S;
}

/* The block's thread times into its histogram.  Time the OS thread spent
 * descheduled (its wall time less its CPU time, `away` ns) landed in some
 * CUDA threads' times: it is taken off the longest ones, down to the
 * block's median, longest first. */
inline void timing_block(pfe_sched *S, long long away, double tsc_per_ns, unsigned long long clock_ticks,
			 unsigned long long resume_ticks)
{
	unsigned n = S->exited;
	if (away > 20000 && n > 0 && tsc_per_ns > 0) {
		memcpy(S->tsort, S->tacc, n * sizeof(unsigned long long));
		std::sort(S->tsort, S->tsort + n);
		unsigned long long med = S->tsort[n / 2], left = (unsigned long long)((double)away * tsc_per_ns);
		for (unsigned i = n; i-- > 0 && left > 0 && S->tsort[i] > med;) {
			unsigned long long cut = S->tsort[i] - med < left ? S->tsort[i] - med : left;
			/* the thread with that time (the first found) */
			for (unsigned t = 0; t < n; t++)
				if (S->tacc[t] == S->tsort[i]) {
					S->tacc[t] -= cut;
					break;
				}
			left -= cut;
		}
	}
	for (unsigned t = 0; t < n; t++) {
		/* less the clock's cost, and what a thread pays on being
		 * switched back in (its stack and registers back in the cache:
		 * the emulator's cost of a barrier or a shuffle, not a GPU's) */
		S->traw += S->tacc[t];
		unsigned long long off = clock_ticks + (unsigned long long)S->tres[t] * resume_ticks;
		unsigned long long d = S->tacc[t] > off ? S->tacc[t] - off : 0;
		int b = pf_stats_bucket(d);
		if (!(S->tseen[b >> 6] >> (b & 63) & 1ull)) {
			S->tseen[b >> 6] |= 1ull << (b & 63);
			S->thist[b] = 0;
			S->thist_ticks[b] = 0;
		}
		S->thist[b]++;
		S->thist_ticks[b] += d;
		S->tsum += d;
		S->tn++;
		if (d > S->tmax)
			S->tmax = d;
	}
}

/* Adds the block's thread times to the launch's. */
inline void timing_merge(pfe_sched *S, pf_launch_stats *st)
{
	__atomic_fetch_add(&st->threads, S->tn, __ATOMIC_RELAXED);
	__atomic_fetch_add(&st->sum_ticks, S->tsum, __ATOMIC_RELAXED);
	__atomic_fetch_add(&st->raw_ticks, S->traw, __ATOMIC_RELAXED);
	unsigned long long m = __atomic_load_n(&st->max_ticks, __ATOMIC_RELAXED);
	while (S->tmax > m && !__atomic_compare_exchange_n(&st->max_ticks, &m, S->tmax, true, __ATOMIC_RELAXED,
							   __ATOMIC_RELAXED))
		;
	for (int w = 0; w < PF_STATS_BUCKETS / 64; w++)
		for (unsigned long long bits = S->tseen[w]; bits; bits &= bits - 1) {
			int b = w * 64 + __builtin_ctzll(bits);
			__atomic_fetch_add(&st->hist[b], S->thist[b], __ATOMIC_RELAXED);
			__atomic_fetch_add(&st->hist_ticks[b], S->thist_ticks[b], __ATOMIC_RELAXED);
		}
}

/* Runs the block's threads; returns when all have finished (or on error). */
inline void run_block(launch_info *L, pf_dim3 b, void (*entry)(pfe_sched *), void *ctx)
{
	pfe_sched *S = pfe_get_sched();
	if (!S) {
		report(L, "out of memory for the block scheduler");
		return;
	}
	S->bidx = uint3{b.x, b.y, b.z};
	S->bdim = uint3{L->block.x, L->block.y, L->block.z};
	S->gdim = uint3{L->grid.x, L->grid.y, L->grid.z};
	size_t need = L->smem < 128 ? 128 : (L->smem + 127) & ~(size_t)127;
	if (t_dsmem_cap < need) {
		free(t_dsmem);
		t_dsmem = (char *)aligned_alloc(128, need);
		t_dsmem_cap = t_dsmem ? need : 0;
		if (!t_dsmem) {
			report(L, "out of memory for dynamic shared memory");
			return;
		}
	}
	S->ctx = ctx;
	S->entry = entry;
	S->li = L;
	S->nthreads = L->nthreads;
	S->next_tid = 0;
	S->exited = 0;
	S->nfib = 0;
	S->bx = L->block.x;
	S->by = L->block.y;
	S->bxy = L->block.x * L->block.y;
	S->rhead = S->rcount = 0;
	S->nbwait = 0;
	S->bacc = 0;
	S->failed = 0;
	S->nwarps = (S->nthreads + 31) / 32;
	S->warp_pending = 0;
	for (unsigned w = 0; w < S->nwarps; w++) {
		unsigned n = S->nthreads - 32 * w;
		S->warps[w].arrived = 0;
		S->warps[w].exited = 0;
		S->warps[w].active = 0;
		S->warps[w].bbar = 0;
		S->warps[w].valid = n >= 32 ? ~0u : (1u << n) - 1u;
	}
	S->cur = &S->main;
	S->timing = L->stats.timing;
	long long away0 = 0;
	if (S->timing) {
		S->tsum = S->tmax = S->tn = S->traw = 0;
		memset(S->tseen, 0, sizeof S->tseen);
		away0 = L->stats.away_ns ? L->stats.away_ns() : 0;
	}
	pfe_fiber *f0 = new_fiber(S);
	if (!f0) {
		report(L, "out of memory for fiber stacks");
		return;
	}
	switch_to(S, f0);
	if (S->failed)
		report(L, S->err);
	if (S->timing) {
		long long away = L->stats.away_ns ? L->stats.away_ns() - away0 : 0;
		timing_block(S, away, L->stats.tsc_per_ns, L->stats.clock_ticks, L->stats.resume_ticks);
		timing_merge(S, &L->stats);
	}
}

/* The body of every fiber: run unstarted threads until none is left. */
template <class K> void fiber_main(pfe_sched *S)
{
#ifdef PF_EMU_ASAN
	__sanitizer_finish_switch_fiber(nullptr, S->nfib == 1 ? &S->asan_bottom : nullptr,
					S->nfib == 1 ? &S->asan_size : nullptr);
#endif
	K *k = static_cast<K *>(S->ctx);
	pfe_fiber *f = S->cur;            /* this fiber, for its whole life */
	for (;;) {
		unsigned t = S->next_tid;
		if (t >= S->nthreads)
			break;
		S->next_tid = t + 1;
		uint3 id;
		if (S->bx == S->nthreads) {
			id = uint3{t, 0, 0};
		} else {
			id.x = t % S->bx;
			id.y = (t / S->bx) % S->by;
			id.z = t / S->bxy;
		}
		f->tid = t;
		f->idx = id;
		if (__builtin_expect(S->timing, 0)) {
			unsigned long long now = __builtin_ia32_rdtsc();
			S->tacc[t] = 0;
			S->tres[t] = 0;
			S->tseg = now;
			k->call();
			now = __builtin_ia32_rdtsc();
			S->tacc[t] += now - S->tseg;
			S->tseg = now;
		} else {
			k->call();
		}
		S->exited++;
		S->warps[t >> 5].exited |= 1u << (t & 31);
		if (S->warp_pending)
			warp_recheck(S, &S->warps[t >> 5]);
	}
	fiber_done(S);
}

/* ---- barrier entry points (opaque to the optimiser) ---- */
PF_EMU_OPAQUE inline int syncthreads_impl(int pred)
{
	pfe_fiber *f = pfe_current();
	if (!f)
		return pred;
	pfe_sched *S = f->S;
	unsigned gen = S->bgen;
	S->bacc += pred;
	if (S->nbwait + 1 == S->nthreads) {
		unsigned long long t0 = untimed_from(S);
		/* the last to arrive releases everyone (in arrival order) and
		 * runs on; the result goes by generation parity: the next
		 * barrier cannot complete before every waiter has read it */
		int res = S->bacc;
		S->bacc = 0;
		S->bres[gen & 1] = res;
		S->bgen = gen + 1;
		unsigned n = S->nbwait;
		for (unsigned w = 0; w < S->nwarps; w++)
			S->warps[w].bbar = 0;
		if (S->rcount == 0) {
			memcpy(S->ready, S->bwait, n * sizeof(pfe_fiber *));
			S->rhead = 0;
			S->rcount = n;
		} else {
			for (unsigned i = 0; i < n; i++)
				ready_push(S, S->bwait[i]);
		}
		S->nbwait = 0;
		untimed_to(S, f, t0);
		return res;
	}
	S->bwait[S->nbwait++] = f;
	warp_state *W = &S->warps[f->tid >> 5];
	W->bbar |= 1u << (f->tid & 31);
	if (W->active)
		warp_recheck(S, W);
	block_wait(S);
	return S->bres[gen & 1];
}

PF_EMU_OPAQUE inline unsigned long long warp_op(unsigned mask, int op, unsigned long long val, int src,
							  unsigned *need)
{
	pfe_fiber *f = pfe_current();
	if (!f) {
		*need = 1u;
		if (op == W_BALLOT)
			return val ? 1u : 0u;
		if (op == W_MATCH_ANY || op == W_MATCH_ALL || op == W_ACTIVE)
			return 1u;
		return val;
	}
	pfe_sched *S = f->S;
	unsigned t = f->tid, l = t & 31u;
	warp_state *W = &S->warps[t >> 5];
	W->mask[l] = mask;
	W->op[l] = (unsigned char)op;
	W->val[l] = val;
	W->src[l] = (signed char)src;
	W->fib[l] = f;
	if (!W->arrived)
		S->warp_pending++;
	W->arrived |= 1u << l;
	if (op == W_ACTIVE)
		W->active |= 1u << l;
	/* the lane that completes the exchange computes every lane's result:
	 * that is untimed (the others only wait, and switching is) */
	unsigned need_l = (mask | (1u << l)) & W->valid & ~W->exited;
	int last = op != W_ACTIVE && (W->arrived & ~W->active & need_l) == need_l;
	unsigned long long t0 = last ? untimed_from(S) : 0;
	bool done = warp_try(S, W, l);
	if (last)
		untimed_to(S, f, t0);
	if (!done) {
		if (W->active)
			warp_recheck(S, W);
		block_wait(S);
	}
	*need = f->wneed;
	return f->wres;
}

inline unsigned activemask_impl()
{
	unsigned need;
	return (unsigned)warp_op(0, W_ACTIVE, 0, -1, &need);
}

PF_EMU_INL unsigned lane_id()
{
	pfe_fiber *f = pfe_current();
	return f ? (f->tid & 31u) : 0u;
}

template <typename T> PF_EMU_INL unsigned long long to_bits(T v)
{
	static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value,
		      "warp shuffles take types of at most 8 bytes");
	unsigned long long u = 0;
	memcpy(&u, &v, sizeof v);
	return u;
}
template <typename T> PF_EMU_INL T from_bits(unsigned long long u)
{
	T v;
	memcpy(&v, &u, sizeof v);
	return v;
}

} /* namespace pf_emu */

/* ======================================================================== */
/* Barriers and warp intrinsics                                             */

static inline void __syncthreads()
{
	__asm__ volatile("" ::: "memory");
	pf_emu::syncthreads_impl(0);
	__asm__ volatile("" ::: "memory");
}
static inline int __syncthreads_count(int pred)
{
	__asm__ volatile("" ::: "memory");
	int r = pf_emu::syncthreads_impl(pred ? 1 : 0);
	__asm__ volatile("" ::: "memory");
	return r;
}
static inline int __syncthreads_and(int pred)
{
	__asm__ volatile("" ::: "memory");
	int r = pf_emu::syncthreads_impl(pred ? 1 : 0);
	__asm__ volatile("" ::: "memory");
	pf_emu::pfe_fiber *f = pf_emu::pfe_current();
	return r == (int)(f ? f->S->nthreads : 1u);
}
static inline int __syncthreads_or(int pred)
{
	return __syncthreads_count(pred) != 0;
}
static inline void __syncwarp(unsigned mask = 0xffffffffu)
{
	unsigned need;
	__asm__ volatile("" ::: "memory");
	pf_emu::warp_op(mask, pf_emu::W_SYNC, 0, -1, &need);
	__asm__ volatile("" ::: "memory");
}
static inline unsigned __activemask() { return pf_emu::activemask_impl(); }

static inline unsigned __ballot_sync(unsigned mask, int pred)
{
	unsigned need;
	return (unsigned)pf_emu::warp_op(mask, pf_emu::W_BALLOT, pred ? 1 : 0, -1, &need);
}
static inline int __any_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) != 0; }
static inline int __all_sync(unsigned mask, int pred)
{
	unsigned need;
	unsigned b = (unsigned)pf_emu::warp_op(mask, pf_emu::W_BALLOT, pred ? 1 : 0, -1, &need);
	return b == need;
}
static inline int __uni_sync(unsigned mask, int pred)
{
	unsigned need;
	unsigned b = (unsigned)pf_emu::warp_op(mask, pf_emu::W_BALLOT, pred ? 1 : 0, -1, &need);
	return b == need || b == 0;
}

template <typename T> static inline T __shfl_sync(unsigned mask, T var, int srcLane, int width = warpSize)
{
	unsigned need, l = pf_emu::lane_id();
	if (width <= 0 || width > 32 || (width & (width - 1)))
		width = 32;
	int src = (int)((l & ~(unsigned)(width - 1)) | ((unsigned)srcLane & (unsigned)(width - 1)));
	return pf_emu::from_bits<T>(pf_emu::warp_op(mask, pf_emu::W_SHFL, pf_emu::to_bits(var), src, &need));
}
template <typename T> static inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize)
{
	unsigned need, l = pf_emu::lane_id();
	if (width <= 0 || width > 32 || (width & (width - 1)))
		width = 32;
	int src = (l & (unsigned)(width - 1)) >= delta ? (int)(l - delta) : -1;
	return pf_emu::from_bits<T>(pf_emu::warp_op(mask, pf_emu::W_SHFL, pf_emu::to_bits(var), src, &need));
}
template <typename T> static inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize)
{
	unsigned need, l = pf_emu::lane_id();
	if (width <= 0 || width > 32 || (width & (width - 1)))
		width = 32;
	int src = (l & (unsigned)(width - 1)) + delta < (unsigned)width ? (int)(l + delta) : -1;
	return pf_emu::from_bits<T>(pf_emu::warp_op(mask, pf_emu::W_SHFL, pf_emu::to_bits(var), src, &need));
}
template <typename T> static inline T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = warpSize)
{
	unsigned need, l = pf_emu::lane_id();
	if (width <= 0 || width > 32 || (width & (width - 1)))
		width = 32;
	unsigned j = l ^ ((unsigned)laneMask & 31u);
	unsigned max_lane = (l & ~(unsigned)(width - 1)) | (unsigned)(width - 1);
	int src = j > max_lane ? -1 : (int)j;
	return pf_emu::from_bits<T>(pf_emu::warp_op(mask, pf_emu::W_SHFL, pf_emu::to_bits(var), src, &need));
}

#define PF_EMU_REDUCE(NAME, T, OP)                                                              \
	static inline T NAME(unsigned mask, T value)                                           \
	{                                                                                      \
		unsigned need;                                                                 \
		return (T)(unsigned)pf_emu::warp_op(mask, OP, (unsigned)value, -1, &need);     \
	}
PF_EMU_REDUCE(__reduce_add_sync, unsigned, pf_emu::W_ADD)
PF_EMU_REDUCE(__reduce_add_sync, int, pf_emu::W_ADD)
PF_EMU_REDUCE(__reduce_min_sync, unsigned, pf_emu::W_MIN_U)
PF_EMU_REDUCE(__reduce_min_sync, int, pf_emu::W_MIN_I)
PF_EMU_REDUCE(__reduce_max_sync, unsigned, pf_emu::W_MAX_U)
PF_EMU_REDUCE(__reduce_max_sync, int, pf_emu::W_MAX_I)
PF_EMU_REDUCE(__reduce_and_sync, unsigned, pf_emu::W_AND)
PF_EMU_REDUCE(__reduce_or_sync, unsigned, pf_emu::W_OR)
PF_EMU_REDUCE(__reduce_xor_sync, unsigned, pf_emu::W_XOR)

template <typename T> static inline unsigned __match_any_sync(unsigned mask, T value)
{
	unsigned need;
	return (unsigned)pf_emu::warp_op(mask, pf_emu::W_MATCH_ANY, pf_emu::to_bits(value), -1, &need);
}
template <typename T> static inline unsigned __match_all_sync(unsigned mask, T value, int *pred)
{
	unsigned need;
	unsigned r = (unsigned)pf_emu::warp_op(mask, pf_emu::W_MATCH_ALL, pf_emu::to_bits(value), -1, &need);
	*pred = r != 0;
	return r;
}

/* ======================================================================== */
/* Launching                                                                */

namespace pf_emu {

/* Dynamic shared memory of the current block (see the contract above). */
PF_EMU_INL void *dyn_smem()
{
	if (!t_dsmem) {
		t_dsmem = (char *)aligned_alloc(128, 128);
		t_dsmem_cap = t_dsmem ? 128 : 0;
	}
	return t_dsmem;
}

/* pf_launch's argument conversion: as a <<<>>> launch converts its
 * arguments, plus void * (pf_tensor::data) to any object pointer. */
template <typename P, typename A> inline P arg_cast(A &&a)
{
	typedef typename std::decay<A>::type D;
	if constexpr (std::is_pointer<P>::value && std::is_pointer<D>::value)
		return static_cast<P>(a);
	else if constexpr (std::is_arithmetic<P>::value || std::is_enum<P>::value)
		return static_cast<P>(a);
	else
		return P(std::forward<A>(a));
}

inline const char *check_config(pf_dim3 g, pf_dim3 b, size_t smem, char *buf, size_t bufsz)
{
	unsigned long long nt = (unsigned long long)b.x * b.y * b.z;
	if (nt < 1 || nt > 1024 || b.x > 1024 || b.y > 1024 || b.z > 64) {
		snprintf(buf, bufsz,
			 "invalid block dimensions (%u,%u,%u): %llu threads per block "
			 "(1..1024 allowed, x,y <= 1024, z <= 64)",
			 b.x, b.y, b.z, nt);
		return buf;
	}
	if (g.x < 1 || g.y < 1 || g.z < 1 || g.x > 2147483647u || g.y > 65535 || g.z > 65535) {
		snprintf(buf, bufsz,
			 "invalid grid dimensions (%u,%u,%u) (x: 1..2^31-1, y and z: 1..65535)",
			 g.x, g.y, g.z);
		return buf;
	}
	if (smem > PF_EMU_MAX_SMEM) {
		snprintf(buf, bufsz, "dynamic shared memory of %zu bytes exceeds the %u-byte limit", smem,
			 (unsigned)PF_EMU_MAX_SMEM);
		return buf;
	}
	return nullptr;
}

/* pf_launch's grid and block: pf_dim3, dim3, or an integer (x, with y = z
 * = 1), as <<<grid, block>>> takes them.  An integer outside 1..2^32-1
 * (a negative count, say) is kept for the launch's error message. */
struct launch_dim {
	pf_dim3 d;
	long long bad;          /* the out-of-range integer when !ok */
	int ok;
	constexpr launch_dim(pf_dim3 v) : d(v), bad(0), ok(1) {}
	constexpr launch_dim(dim3 v) : d{v.x, v.y, v.z}, bad(0), ok(1) {}
	constexpr launch_dim(uint3 v) : d{v.x, v.y, v.z}, bad(0), ok(1) {}
	template <typename I, typename std::enable_if<std::is_integral<I>::value, int>::type = 0>
	constexpr launch_dim(I v)
	    : d{(unsigned)v, 1, 1}, bad((long long)v),
	      ok(v >= 1 && (unsigned long long)v <= 0xffffffffull)
	{
	}
};

/* NULL, or why an integer grid or block is no dimension. */
inline const char *check_dims(const launch_dim &g, const launch_dim &b, char *buf, size_t bufsz)
{
	const launch_dim &x = g.ok ? b : g;
	if (x.ok)
		return nullptr;
	snprintf(buf, bufsz, "invalid %s dimension %lld (an integer %s is x, and must be at least 1)",
		 g.ok ? "block" : "grid", x.bad, g.ok ? "block" : "grid");
	return buf;
}

template <typename... P> struct closure {
	launch_info li;
	void (*kernel)(P...);
	std::tuple<P...> args;
	PF_EMU_INL void call() { std::apply(kernel, args); }
};

template <class K> void block_entry(void *ctx, pf_dim3 b)
{
	K *k = static_cast<K *>(ctx);
	if (__atomic_load_n(&k->li.failed, __ATOMIC_RELAXED))
		return;
	run_block(&k->li, b, &fiber_main<K>, k);
}

template <typename... P, std::size_t... I>
inline int cuda_launch(pf_call *c, void (*kernel)(P...), pf_dim3 grid, pf_dim3 block, size_t smem,
		       std::tuple<P...> &vals, std::index_sequence<I...>)
{
	void *argv[sizeof...(P) + 1] = {(void *)&std::get<I>(vals)..., nullptr};
	size_t sizes[sizeof...(P) + 1] = {sizeof(P)..., 0};
	return c->rt->launch(c, reinterpret_cast<const void *>(kernel), grid, block, smem, argv,
			     (int)sizeof...(P), sizes);
}

/* Launches kernel<<<grid, block, smem>>>(args...). */
template <typename... P, typename... A>
inline int launch(pf_call *c, void (*kernel)(P...), pf_dim3 grid, pf_dim3 block, size_t smem, A &&...a)
{
	static_assert(sizeof...(P) == sizeof...(A), "launch: argument count differs from the kernel's parameters");
	char buf[200];
	if (!kernel)
		return c->rt->fail(c, PF_ERR_LAUNCH, "launch of a null kernel");
	const char *why = check_config(grid, block, smem, buf, sizeof buf);
	if (why)
		return c->rt->fail(c, PF_ERR_LAUNCH, why);
	if (c->backend == PF_BACKEND_CUDA) {
		std::tuple<P...> vals(arg_cast<P>(std::forward<A>(a))...);
		return cuda_launch(c, kernel, grid, block, smem, vals, std::index_sequence_for<P...>{});
	}
	typedef closure<P...> K;
	K k{launch_info{grid, block, smem, block.x * block.y * block.z, 0, {0}, {}}, kernel,
	    std::tuple<P...>(arg_cast<P>(std::forward<A>(a))...)};
	int rc = c->rt->run_blocks(c, grid, block, &block_entry<K>, &k, &k.li.stats);
	if (__atomic_load_n(&k.li.failed, __ATOMIC_SEQ_CST))
		return c->rt->fail(c, PF_ERR_LAUNCH, k.li.msg);
	return rc;
}

template <typename... P, std::size_t... I>
inline int launch_unpacked(pf_call *c, void (*kernel)(P...), pf_dim3 grid, pf_dim3 block, size_t smem,
			   void **args, std::index_sequence<I...>)
{
	return launch(c, kernel, grid, block, smem, *static_cast<P *>(args[I])...);
}

/* cuLaunchKernel-style: args[k] points to a value of parameter k's type. */
template <typename... P>
inline int launch_packed(pf_call *c, void (*kernel)(P...), pf_dim3 grid, pf_dim3 block, size_t smem, void **args)
{
	if (sizeof...(P) > 0 && !args)
		return c->rt->fail(c, PF_ERR_LAUNCH, "launch without an argument list");
	return launch_unpacked(c, kernel, grid, block, smem, args, std::index_sequence_for<P...>{});
}

template <typename... P> constexpr int param_count(void (*)(P...)) { return (int)sizeof...(P); }
template <typename... P> struct param_info {
	static constexpr size_t sizes[sizeof...(P) + 1] = {sizeof(P)..., 0};
};
template <typename... P> constexpr const size_t *param_sizes(void (*)(P...)) { return param_info<P...>::sizes; }

template <typename... P>
inline int launch_checked(pf_call *c, void (*kernel)(P...), pf_dim3 grid, pf_dim3 block, size_t smem,
			  void **args, int nargs)
{
	if (nargs != (int)sizeof...(P)) {
		char buf[96];
		snprintf(buf, sizeof buf, "kernel expects %d arguments, got %d", (int)sizeof...(P), nargs);
		return c->rt->fail(c, PF_ERR_LAUNCH, buf);
	}
	return launch_packed(c, kernel, grid, block, smem, args);
}

template <typename... P>
inline int launch_checked_sizes(pf_call *c, void (*kernel)(P...), pf_dim3 grid, pf_dim3 block, size_t smem,
				void **args, int nargs, const size_t *sizes)
{
	if (nargs == (int)sizeof...(P) && sizes) {
		const size_t *want = param_info<P...>::sizes;
		for (int i = 0; i < nargs; i++)
			if (sizes[i] != want[i]) {
				char buf[112];
				snprintf(buf, sizeof buf, "kernel argument %d has %zu bytes, the parameter %zu", i,
					 sizes[i], want[i]);
				return c->rt->fail(c, PF_ERR_LAUNCH, buf);
			}
	}
	return launch_checked(c, kernel, grid, block, smem, args, nargs);
}

} /* namespace pf_emu */

/* ======================================================================== */
/* CUDA keywords (after every system header)                                */

#define threadIdx (pf_emu::pfe_self()->idx)
#define blockIdx (pf_emu::pfe_self()->bidx)
#define blockDim (pf_emu::pfe_self()->bdim)
#define gridDim (pf_emu::pfe_self()->gdim)

#define __global__
#define __device__
#define __host__
#define __shared__ thread_local
#define __constant__
#define __managed__
#define __grid_constant__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __maxnreg__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __cudart_builtin__
/* __restrict__ is native to g++. */
/* Inline PTX cannot run on the CPU, and host x86 assembly must not run
 * here either.  `asm` is an object-like macro, so `asm volatile(...)` fails
 * with this message; `__asm__` and `__asm` are poisoned rather than defined
 * (glibc's and libstdc++'s headers use them inside macros defined earlier,
 * which poisoning exempts, so headers a test includes after this one still
 * work).  Both also catch a keyword made by token pasting, which the
 * pipeline's source scan cannot see. */
#define asm static_assert(sizeof(char) == 0, "inline asm cannot run on the CPU backend (inline PTX needs a GPU)"); (void)
#pragma GCC poison __asm__ __asm
/* The attributes whose string g++ copies verbatim into its assembly output
 * (section, alias, weakref, symver: a newline in the string starts an
 * assembler directive such as `.incbin "/any/file"`) or that make the loader
 * run code (ifunc, target_clones).  The source scan refuses them by name with
 * the line; poisoning also stops a name made by token pasting, in
 * __attribute__((...)) and in [[gnu::...]].  The allowed headers are all
 * included above, and macros defined before this line are exempt. */
#pragma GCC poison section __section__ alias __alias__ weakref __weakref__ symver __symver__
#pragma GCC poison ifunc __ifunc__ target_clones __target_clones__

#endif /* PF_EMU_H */
