/* cupti.h - CUPTI activity records, loaded at run time (inside gpu/ only;
 * the cuda backend drives it, gpu.h's gpu_trace_* are the public face).
 *
 * libcupti is dlopen'ed ($PASSFS_CUPTI_LIB, else libcupti.so, .so.13,
 * .so.12, then the toolkit's lib64 and extras/CUPTI directories); no CUPTI
 * header is needed to build.  The records read are versioned structs; the
 * fields used (kind, start, end, streamId, name) sit at the same offsets in
 * every version since CUDA 11 (CUpti_ActivityKernel4..10, Memcpy5/6,
 * Memset4), as cupti.c notes.
 *
 * Process-wide (CUPTI is): one set of buffer callbacks, one open window.
 * Thread-safe; buffer completion may run on CUPTI's own thread. */
#ifndef PASSFS_GPU_CUPTI_H
#define PASSFS_GPU_CUPTI_H

#include <stddef.h>
#include <stdint.h>

#include "gpu.h"

/* Loads libcupti and resolves its entry points, calling none.  Returns 0, or
 * -1 with the reason ("PASSFS_CUPTI=0", "libcupti.so: cannot open ..."). */
int cupti_load(char *err, size_t errlen);

/* The CUPTI API version whose record layout passfs reads (the offsets in
 * cupti.h), checked against that toolkit's headers by test_cuda_abi. */
#define CUPTI_CHECKED_API_VERSION 130001u
/* The loaded library's version (cuptiGetVersion), 0 when unknown.  Up to
 * CUDA 12 it counts 1, 2, ... 28; from 13.0 it is xxyyzz (130001). */
unsigned cupti_api_version(void);

/* cupti_load, then registers the buffer callbacks and enables
 * CONCURRENT_KERNEL, MEMCPY and MEMSET records.  Call before modules are
 * loaded (kernels of modules loaded earlier may go unrecorded on some
 * drivers).  Idempotent.  Returns 0, or -1 with CUPTI's reason (another
 * CUPTI client, such as nsys or ncu, holds the activity API). */
int cupti_start(char *err, size_t errlen);
int cupti_started(void);

/* From now on activity records are collected only between
 * cupti_window_begin and cupti_window_end (collection costs host time per
 * launch).  0, or -1 with the reason. */
int cupti_pause(char *err, size_t errlen);

/* Opens the window: records that start before now are ignored.  Returns 0
 * or -1 (not started). */
int cupti_window_begin(char *err, size_t errlen);

/* Closes the window: the caller has synchronised the context; this flushes
 * with CUPTI_ACTIVITY_FLAG_FLUSH_FORCED (flushing does not wait for the
 * GPU) and returns the sums.  0, or -1 with the reason. */
int cupti_window_end(struct gpu_trace *out, char *err, size_t errlen);

/* --- record accounting, exposed for the unit tests --------------------- */

/* Offsets of the fields read, per CUPTI's structs (see cupti.c). */
#define CUPTI_REC_KIND 0
#define CUPTI_REC_START 16
#define CUPTI_REC_END 24
#define CUPTI_REC_KERNEL_STREAM 48
#define CUPTI_REC_KERNEL_NAME 104
#define CUPTI_REC_COPY_STREAM 40  /* memcpy and memset */
#define CUPTI_KIND_MEMCPY 1
#define CUPTI_KIND_MEMSET 2
#define CUPTI_KIND_KERNEL 3
#define CUPTI_KIND_CONCURRENT_KERNEL 10
#define CUPTI_FLUSH_FORCED 1u        /* CUPTI_ACTIVITY_FLAG_FLUSH_FORCED */

struct cupti_acc {
	struct gpu_trace t;
	uint64_t t0;                    /* window start (CUPTI timestamp, ns) */
	uint64_t first, last;           /* earliest start, latest end seen */
	uint32_t streams[16];
	int open;
};

/* Empties the accumulator and opens it from t0. */
void cupti_acc_reset(struct cupti_acc *a, uint64_t t0);
/* Adds one activity record.  Records of other kinds, records that start
 * before t0 and records with end < start are not counted; returns 1 when
 * counted. */
int cupti_acc_record(struct cupti_acc *a, const void *rec);
/* The sums so far (span from first to last). */
void cupti_acc_result(const struct cupti_acc *a, struct gpu_trace *out);

/* In a forked child: the loader's lock starts unlocked (gpu.c, atfork). */
void cupti_after_fork(void);

#endif
