/* inputs.h - a variant's input tensors, generated from the graph's rules.
 *
 * docs/eager.md (PassNet's rules), per input in graph order:
 *   - literal `data` if given (converted to the dtype);
 *   - bool: uniform(0,1) > 0.5;
 *   - ints: uniform integers in [min, max] (inclusive); a missing min is 0, a
 *     missing max is min + 9 (so with neither: [0, 10));
 *   - floats: randn * std * 0.2 + mean (std missing: 0.1, mean missing: 0),
 *     clamped to [min, max] where given, non-finite values replaced by 0, then
 *     clamped to [-100, 100]; computed in double, stored in the dtype with
 *     round-to-nearest-even (float16 and bfloat16 via float32, as torch's
 *     float32 randn followed by .to(dtype)).
 *
 * The generator is deterministic and independent per input: each run of 65536
 * elements of input i draws from its own xoshiro256** stream, seeded through
 * splitmix64 from (seed, i, run), normals by Marsaglia and Tsang's ziggurat
 * (256 layers, 52-bit uniforms; exact in distribution).  The same
 * (variant, seed) gives the same bytes on every machine and with any number
 * of threads (large inputs are generated on all CPUs, inputs_set_threads).
 * 123 is the public seed (PassNet's); evaluations add a secret one.
 *
 * The std floor (docs/eager.md): PassNet's weight_meta.py prints std
 * with three decimals, so many real activations read `std = 0.000` and would
 * be generated constant, and a pass writing a constant would then be "right".
 * A float input of more than one element without literal data whose std is
 * below 0.0005 (prints as 0.000), or whose draws (0.2 * std) would span fewer
 * than 4 of the dtype's spacings at |mean|, gets std = max(0.1, 0.05*|mean|)
 * instead (0.1 is PassNet's own default for a missing std).  inputs_std says
 * which std an input gets; the task README marks the inputs it applies to.
 * docs/eager.md describes it.
 */
#ifndef PASSFS_INPUTS_H
#define PASSFS_INPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "graph.h"

#define INPUTS_PUBLIC_SEED 123

/* Generates every input of v.  On success returns 0 and sets host_bufs[i]
 * (i < v->n_inputs) to a malloc'd buffer of numel * dtype size bytes,
 * row-major, little-endian (float16/bfloat16 as their 16-bit patterns, bool as
 * one byte 0/1); free them with inputs_free().  On failure (out of memory)
 * returns -1 with a message in err and leaves every host_bufs[i] NULL. */
int inputs_generate(const struct graph_variant *v, uint64_t seed, void **host_bufs,
		    char *err, size_t errlen);

/* The same, into caller-provided buffers (bufs[i] holds numel * dtype size
 * bytes of input i): no allocation, cannot fail. */
void inputs_fill(const struct graph_variant *v, uint64_t seed, void *const *bufs);

/* How many threads generation may use: n, or 0 (the default) for one per
 * online CPU (at most 16).  The bytes do not depend on it. */
void inputs_set_threads(int n);

#define INPUTS_STD_PRINTED 0.0005  /* smallest std weight_meta prints as non-zero */
#define INPUTS_STD_ULPS 4          /* draws must span this many of the dtype's spacings */
#define INPUTS_STD_FLOOR 0.1
#define INPUTS_STD_FLOOR_REL 0.05  /* of |mean| */

/* The std input generation uses for an input with rule g, dtype dt and n
 * elements: g's std (0.1 when missing), or the floor above; *floored (when
 * not NULL) says whether the floor applied. */
double inputs_std(const struct graph_input_gen *g, enum graph_dtype dt, size_t n, int *floored);

/* Frees the n buffers of host_bufs and sets them to NULL. */
void inputs_free(void **host_bufs, int n);

/* Round-to-nearest-even conversions used for the 16-bit dtypes (exported for
 * tests and for the eager command's readers). */
uint16_t inputs_f32_to_f16(float f);
uint16_t inputs_f32_to_bf16(float f);
float inputs_f16_to_f32(uint16_t h);
float inputs_bf16_to_f32(uint16_t b);

/* inputs_f16_to_f32 itself, for loops over every element (exact: float16
 * values are all float32 values). */
static inline float inputs_f16_to_f32_inline(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, u;
	float f;
	if (exp == 0x1f) {
		u = sign | 0x7f800000u | (man << 13);
	} else if (exp == 0) {
		f = (float)man * 0x1.0p-24f;    /* subnormal or zero: exact */
		return sign ? -f : f;
	} else {
		u = sign | ((exp + 112) << 23) | (man << 13);
	}
	__builtin_memcpy(&f, &u, 4);
	return f;
}

#endif
