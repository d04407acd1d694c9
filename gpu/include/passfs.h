/* passfs.h - the pass API.
 *
 * A pass is one CUDA C file: ordinary kernels plus one host function, the
 * replacement, that runs in place of the whole variant graph and launches
 * them:
 *
 *     #include <passfs.h>
 *
 *     __global__ void scale(const float *x, float *y, float k, long long n) { ... }
 *
 *     PASS_REPLACEMENT(pf_call *call)
 *     {
 *         const pf_tensor *x = pf_in(call, 0);
 *         pf_tensor *y = pf_out(call, 0);
 *         long long n = pf_numel(y);
 *         if (x->dtype != PF_F32)
 *             return pf_unsupported(call, "only float32 so far");
 *         return pf_launch(call, scale, pf_dim((n + 255) / 256), pf_dim(256), 0,
 *                          x->data, y->data, 2.0f, n);
 *     }
 *
 * The same file is compiled twice.  NVRTC compiles it for the device with
 * -default-device, which makes the unannotated replacement a (dead) device
 * function; the system C++ compiler compiles it for the host into a shared
 * object, where the replacement is real and kernels run either on the GPU
 * (cuda backend) or on the CUDA emulation layer (cpu backend).  This header
 * gives both compilers what they need.  docs/pass-api.md is the manual.
 */
#ifndef PASSFS_H
#define PASSFS_H

#include "passfs_abi.h"

/* ------------------------------------------------------------------------ */
#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
/* Device compile.  The replacement is dead code here: these stubs only have
 * to type-check.  What device code commonly takes from host headers comes
 * next, so kernels written for nvcc build unchanged under NVRTC. */
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#ifdef __CUDACC_RTC__
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef long long intptr_t;
typedef unsigned long long uintptr_t;
/* <limits.h>, <stdint.h>, <float.h> and <math.h> values that device code
 * uses: NVRTC has none of those headers (the pass compiler gives it
 * stand-ins that include this file, so the #include lines still resolve). */
#ifndef CHAR_BIT
#define CHAR_BIT 8
#define SCHAR_MIN (-128)
#define SCHAR_MAX 127
#define UCHAR_MAX 255
#define SHRT_MIN (-32768)
#define SHRT_MAX 32767
#define USHRT_MAX 65535
#define INT_MIN (-2147483647 - 1)
#define UINT_MAX 4294967295U
#define LONG_MAX 9223372036854775807L
#define LONG_MIN (-9223372036854775807L - 1)
#define ULONG_MAX 18446744073709551615UL
#define LLONG_MAX 9223372036854775807LL
#define LLONG_MIN (-9223372036854775807LL - 1)
#define ULLONG_MAX 18446744073709551615ULL
#endif
#ifndef INT8_MAX
#define INT8_MIN (-128)
#define INT8_MAX 127
#define UINT8_MAX 255
#define INT16_MIN (-32768)
#define INT16_MAX 32767
#define UINT16_MAX 65535
#define INT32_MIN (-2147483647 - 1)
#define INT32_MAX 2147483647
#define UINT32_MAX 4294967295U
#define INT64_MIN (-9223372036854775807LL - 1)
#define INT64_MAX 9223372036854775807LL
#define UINT64_MAX 18446744073709551615ULL
#define SIZE_MAX 18446744073709551615ULL
#endif
#ifndef HUGE_VALF
#define HUGE_VALF __int_as_float(0x7f800000)
#endif
#ifndef HUGE_VAL
#define HUGE_VAL __longlong_as_double(0x7ff0000000000000LL)
#endif
#ifndef DBL_MIN
#define DBL_MIN 2.2250738585072014e-308
#endif
#ifndef DBL_EPSILON
#define DBL_EPSILON 2.2204460492503131e-16
#endif
#ifndef M_E
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#endif
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
#ifndef FLT_MAX
#define FLT_MAX 3.402823466e+38F
#endif
#ifndef FLT_MIN
#define FLT_MIN 1.175494351e-38F
#endif
#ifndef FLT_EPSILON
#define FLT_EPSILON 1.192092896e-07F
#endif
#ifndef DBL_MAX
#define DBL_MAX 1.7976931348623158e+308
#endif
#ifndef INT_MAX
#define INT_MAX 2147483647
#endif
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#ifndef M_SQRT2
#define M_SQRT2 1.41421356237309504880
#endif
#ifndef M_SQRT1_2
#define M_SQRT1_2 0.70710678118654752440
#endif
#ifndef M_2_SQRTPI
#define M_2_SQRTPI 1.12837916709551257390
#endif
#endif /* __CUDACC_RTC__ */

#ifndef CUDART_INF_F
#define CUDART_INF_F __int_as_float(0x7f800000)
#endif
#ifndef CUDART_NAN_F
#define CUDART_NAN_F __int_as_float(0x7fffffff)
#endif

static __device__ inline const pf_tensor *pf_in(pf_call *, int) { return 0; }
static __device__ inline pf_tensor *pf_out(pf_call *, int) { return 0; }
static __device__ inline int pf_num_in(pf_call *) { return 0; }
static __device__ inline int pf_num_out(pf_call *) { return 0; }
static __device__ inline long long pf_numel(const pf_tensor *) { return 0; }
static __device__ inline pf_dim3 pf_dim(unsigned x, unsigned y = 1, unsigned z = 1)
{
	pf_dim3 d = {x, y, z};
	return d;
}
static __device__ inline void *pf_scratch(pf_call *, unsigned long long) { return 0; }
static __device__ inline int pf_unsupported(pf_call *, const char *) { return PF_ERR_UNSUPPORTED; }
static __device__ inline int pf_not_implemented(pf_call *) { return PF_ERR_NOT_IMPLEMENTED; }
static __device__ inline const char *pf_variant(pf_call *) { return ""; }
/* A function, not a macro, so that the kernel argument is an ordinary
 * expression: softmax<float, 256> keeps its commas, and a kernel named
 * through a template parameter (kern<T> in a templated helper), a macro or
 * a table of kernel pointers is fine.  Passing the kernel odr-uses it, so
 * instantiating the replacement (and every helper template it calls)
 * instantiates the kernels it launches: their code is in the PTX even when
 * no name expression names them. */
template <typename K, typename... A>
static __device__ inline int pf_launch(pf_call *, K, const A &...) { return 0; }
#define PASS_REPLACEMENT extern "C" int pf_pass_replacement

/* ------------------------------------------------------------------------ */
#else
/* Host compile (C++17).  The worker process that loads the pass hands it a
 * pf_call whose runtime table does the work; nothing here touches files,
 * devices or the network. */
#include <stddef.h>
#include <stdint.h>
#include <float.h>
#include <math.h>
#include <limits.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#ifndef CUDART_INF_F
#define CUDART_INF_F (__builtin_inff())
#endif
#ifndef CUDART_NAN_F
#define CUDART_NAN_F (__builtin_nanf(""))
#endif

#include "pf_emu.h"     /* the CUDA emulation layer: __global__, threadIdx, __half, ... */

static inline const pf_tensor *pf_in(pf_call *c, int i) { return c->rt->in(c, i); }
static inline pf_tensor *pf_out(pf_call *c, int i) { return c->rt->out(c, i); }
static inline int pf_num_in(pf_call *c) { return c->rt->num_in(c); }
static inline int pf_num_out(pf_call *c) { return c->rt->num_out(c); }
static inline const char *pf_variant(pf_call *c) { return c->rt->variant(c); }
static inline long long pf_numel(const pf_tensor *t)
{
	long long n = 1;
	for (int i = 0; t && i < t->ndim; i++)
		n *= t->shape[i];
	return n;
}
static inline pf_dim3 pf_dim(unsigned x, unsigned y = 1, unsigned z = 1)
{
	pf_dim3 d = {x, y, z};
	return d;
}
/* Device memory for temporaries, fresh (NaN-filled) for every call; freed
 * after it.  NULL when the request exceeds the scratch limit. */
static inline void *pf_scratch(pf_call *c, size_t bytes) { return c->rt->scratch(c, bytes); }
/* Declines this variant with a reason; the variant's verdict is
 * "unsupported" and the message lands in result.json. */
static inline int pf_unsupported(pf_call *c, const char *why) { return c->rt->fail(c, PF_ERR_UNSUPPORTED, why); }
static inline int pf_not_implemented(pf_call *c)
{
	return c->rt->fail(c, PF_ERR_NOT_IMPLEMENTED, "the replacement is not implemented yet");
}

/* pf_launch(call, kernel, grid, block, shared_bytes, args...): launches
 * `kernel` (a __global__ function or a template instance such as
 * softmax<float, 256>; any expression of one: a template parameter's
 * instance in a helper, a macro, a kernel pointer) with the arguments
 * converted to its parameter types,
 * as a <<<grid, block, shared_bytes>>> launch would.  grid and block are
 * pf_dim(x, y, z), dim3, or an integer count (x; y = z = 1).  Returns PF_OK, or
 * PF_ERR_LAUNCH with the reason recorded for result.json. */
template <typename... P, typename... A>
static inline int pf_launch(pf_call *c, void (*kernel)(P...), pf_emu::launch_dim grid,
			    pf_emu::launch_dim block, size_t smem, A... args)
{
	static_assert(sizeof...(P) == sizeof...(A),
		      "pf_launch: the number of arguments differs from the kernel's parameters");
	char buf[160];
	if (const char *why = pf_emu::check_dims(grid, block, buf, sizeof buf))
		return c->rt->fail(c, PF_ERR_LAUNCH, why);
	return pf_emu::launch(c, kernel, grid.d, block.d, smem, pf_emu::arg_cast<P>(args)...);
}

#define PASS_REPLACEMENT extern "C" int pf_pass_replacement

/* The runtime's side of a launch is not the pass's: the per-thread timings
 * the cpu backend's modeled GPU time (what it scores) is made of travel
 * through these, and a pass calling the runtime's run_blocks with blocks or
 * a record of its own could report what it liked.  Poisoned after their
 * last use here, so a pass naming them fails to compile.  (Runtimes and
 * tests that include this header define PASSFS_RUNTIME first; a pass cannot,
 * as the header comes before its first line.) */
#ifndef PASSFS_RUNTIME
#pragma GCC poison run_blocks pf_launch_stats launch_info timing_block timing_merge away_ns resume_ticks
#pragma GCC poison clock_ticks tsc_per_ns hist_ticks sum_ticks max_ticks
/* the emulator's scheduler: its per-thread resume counts are taken off each
 * thread's timed work */
#pragma GCC poison t_pool tres
/* and every name that leads to a CUDA thread's timing: the running fiber's
 * record (threadIdx and the barriers expand to these, defined before the
 * poison, so they keep working) and the scheduler it points to */
#pragma GCC poison pfe_fiber pfe_sched pfe_current pfe_self pfe_record_of pfe_get_sched
#endif

#endif /* host */
#endif /* PASSFS_H */
