/* inputs.h - a variant's input tensors, generated from the graph's rules.
 *
 * DESIGN.md section 6 (PassNet's rules), per input in graph order:
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
 * splitmix64 from (seed, i, run), normals by Box-Muller in double.  The same
 * (variant, seed) gives the same bytes on every machine and with any number
 * of threads (large inputs are generated on all CPUs).
 * 123 is the public seed (PassNet's); evaluations add a secret one.
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

/* Frees the n buffers of host_bufs and sets them to NULL. */
void inputs_free(void **host_bufs, int n);

/* Round-to-nearest-even conversions used for the 16-bit dtypes (exported for
 * tests and for the eager command's readers). */
uint16_t inputs_f32_to_f16(float f);
uint16_t inputs_f32_to_bf16(float f);
float inputs_f16_to_f32(uint16_t h);
float inputs_bf16_to_f32(uint16_t b);

#endif
