/* cupti.c - CUPTI activity records through dlopen (see cupti.h).
 *
 * The entry points are declared here with CUPTI's C ABI (enums are ints,
 * CUptiResult 0 is success).  Record layout, from cupti_activity.h (CUDA
 * 13.0: CUpti_ActivityKernel10, Memcpy6, Memset4; CUDA 11-12's Kernel4..9
 * and Memcpy5 have the same offsets for these fields):
 *
 *   all         kind            @0  (uint32)
 *               start, end      @16, @24 (uint64, ns, cuptiGetTimestamp's clock)
 *   kernel      streamId        @48 (uint32), name @104 (const char *, lowered)
 *   memcpy/set  streamId        @40 (uint32)
 *
 * Records are walked with cuptiActivityGetNextRecord, which knows each
 * record's size, so only these fields matter. */
#define _GNU_SOURCE
#include "cupti.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CUPTI_BUFFER_BYTES (4u << 20)

typedef int cupti_result;
typedef void *cupti_ctx;        /* CUcontext */
typedef void (*buf_request_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*buf_complete_fn)(cupti_ctx ctx, uint32_t stream, uint8_t *buffer, size_t size,
				size_t valid);

static struct {
	void *handle;
	int loaded, started;
	int paused;                     /* collection off between windows */
	char why[300];
	cupti_result (*ActivityEnable)(int kind);
	cupti_result (*ActivityDisable)(int kind);
	cupti_result (*ActivityRegisterCallbacks)(buf_request_fn, buf_complete_fn);
	cupti_result (*ActivityGetNextRecord)(uint8_t *buffer, size_t valid, void **record);
	cupti_result (*ActivityGetNumDroppedRecords)(cupti_ctx ctx, uint32_t stream, size_t *dropped);
	cupti_result (*ActivityFlushAll)(uint32_t flag);
	cupti_result (*GetTimestamp)(uint64_t *ts);
	cupti_result (*GetResultString)(cupti_result r, const char **s);
	cupti_result (*GetVersion)(uint32_t *version);     /* optional */
	pthread_mutex_t mu;             /* guards acc */
	struct cupti_acc acc;
} cp = {.mu = PTHREAD_MUTEX_INITIALIZER};

static pthread_mutex_t load_mu = PTHREAD_MUTEX_INITIALIZER;

void cupti_after_fork(void)
{
	pthread_mutex_init(&load_mu, NULL);
}

/* --- accounting (pure) ------------------------------------------------------ */

void cupti_acc_reset(struct cupti_acc *a, uint64_t t0)
{
	memset(a, 0, sizeof *a);
	a->t0 = t0;
	a->open = 1;
}

static uint32_t rd32(const void *rec, size_t off)
{
	uint32_t v;
	memcpy(&v, (const char *)rec + off, sizeof v);
	return v;
}

static uint64_t rd64(const void *rec, size_t off)
{
	uint64_t v;
	memcpy(&v, (const char *)rec + off, sizeof v);
	return v;
}

static void note_stream(struct cupti_acc *a, uint32_t s)
{
	int n = a->t.n_streams < 16 ? a->t.n_streams : 16;
	for (int i = 0; i < n; i++)
		if (a->streams[i] == s)
			return;
	if (n < 16)
		a->streams[n] = s;
	a->t.n_streams++;
}

int cupti_acc_record(struct cupti_acc *a, const void *rec)
{
	uint32_t kind = rd32(rec, CUPTI_REC_KIND);
	int is_kernel = kind == CUPTI_KIND_CONCURRENT_KERNEL || kind == CUPTI_KIND_KERNEL;
	if (!a->open || (!is_kernel && kind != CUPTI_KIND_MEMCPY && kind != CUPTI_KIND_MEMSET))
		return 0;
	uint64_t start = rd64(rec, CUPTI_REC_START), end = rd64(rec, CUPTI_REC_END);
	if (start == 0 && end == 0) {
		/* CUPTI could not time this one: the sums would be short */
		a->t.dropped++;
		return 0;
	}
	if (start < a->t0 || end < start)
		return 0;
	double ms = (double)(end - start) / 1e6;
	if (is_kernel) {
		a->t.kernel_ms += ms;
		a->t.n_kernels++;
		note_stream(a, rd32(rec, CUPTI_REC_KERNEL_STREAM));
		const char *name;
		memcpy(&name, (const char *)rec + CUPTI_REC_KERNEL_NAME, sizeof name);
		if (name == NULL)
			name = "?";
		int k;
		for (k = 0; k < a->t.n_names; k++)
			if (strncmp(a->t.kernels[k].name, name, sizeof a->t.kernels[k].name - 1) == 0)
				break;
		if (k == a->t.n_names && k < GPU_TRACE_MAX_KERNELS) {
			snprintf(a->t.kernels[k].name, sizeof a->t.kernels[k].name, "%s", name);
			a->t.n_names++;
		}
		if (k < a->t.n_names) {
			a->t.kernels[k].ms += ms;
			a->t.kernels[k].count++;
		}
	} else if (kind == CUPTI_KIND_MEMCPY) {
		a->t.memcpy_ms += ms;
		a->t.n_memcpy++;
		note_stream(a, rd32(rec, CUPTI_REC_COPY_STREAM));
	} else {
		a->t.memset_ms += ms;
		a->t.n_memset++;
		note_stream(a, rd32(rec, CUPTI_REC_COPY_STREAM));
	}
	if (a->first == 0 || start < a->first)
		a->first = start;
	if (end > a->last)
		a->last = end;
	return 1;
}

void cupti_acc_result(const struct cupti_acc *a, struct gpu_trace *out)
{
	*out = a->t;
	out->span_ms = a->last > a->first ? (double)(a->last - a->first) / 1e6 : 0;
}

/* --- CUPTI ------------------------------------------------------------------- */

static const char *result_str(cupti_result r)
{
	const char *s = NULL;
	if (cp.GetResultString == NULL || cp.GetResultString(r, &s) != 0 || s == NULL)
		return "CUPTI error";
	return s;
}

static void buf_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, CUPTI_BUFFER_BYTES);
	*size = *buffer ? CUPTI_BUFFER_BYTES : 0;
	*max_records = 0;
}

static void buf_complete(cupti_ctx ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
	(void)size;
	pthread_mutex_lock(&cp.mu);
	void *rec = NULL;
	while (valid > 0 && cp.ActivityGetNextRecord(buffer, valid, &rec) == 0)
		cupti_acc_record(&cp.acc, rec);
	size_t dropped = 0;
	if (cp.ActivityGetNumDroppedRecords(ctx, stream, &dropped) == 0 && dropped > 0)
		cp.acc.t.dropped += dropped;
	pthread_mutex_unlock(&cp.mu);
	free(buffer);
}

static int try_open(const char *path, void *ctx)
{
	(void)ctx;
	void *h = gpu_dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		if (cp.why[0] == '\0') {
			const char *e = dlerror();
			snprintf(cp.why, sizeof cp.why, "CUPTI not available: %s", e ? e : path);
		}
		return 0;
	}
	cp.handle = h;
	return 1;
}

int cupti_load(char *err, size_t errlen)
{
	const char *off = getenv("PASSFS_CUPTI");
	if (off != NULL && strcmp(off, "0") == 0) {
		snprintf(err, errlen, "CUPTI timing is turned off (PASSFS_CUPTI=0)");
		return -1;
	}
	pthread_mutex_lock(&load_mu);
	if (!cp.loaded) {
		cp.loaded = 1;
		const char *env = getenv("PASSFS_CUPTI_LIB");
		int ok = 0;
		if (env != NULL && *env != '\0') {
			ok = try_open(env, NULL);
		} else {
			/* the unversioned names exist only with the toolkit's
			 * development files; the runtime has the versioned ones */
			static const char *const names[] = {
				"libcupti.so", "libcupti.so.13", "libcupti.so.12",
				"/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
				"/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
				"/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.12",
				"/usr/local/cuda/lib64/libcupti.so",
				"/usr/local/cuda/lib64/libcupti.so.13",
				"/usr/local/cuda/lib64/libcupti.so.12",
				"/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so",
				"/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13",
				"/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.12", NULL
			};
			ok = gpu_open_lib(names, -1, try_open, NULL);
		}
		struct {
			const char *name;
			void **slot;
		} syms[] = {
			{"cuptiActivityEnable", (void **)&cp.ActivityEnable},
			{"cuptiActivityDisable", (void **)&cp.ActivityDisable},
			{"cuptiActivityRegisterCallbacks", (void **)&cp.ActivityRegisterCallbacks},
			{"cuptiActivityGetNextRecord", (void **)&cp.ActivityGetNextRecord},
			{"cuptiActivityGetNumDroppedRecords", (void **)&cp.ActivityGetNumDroppedRecords},
			{"cuptiActivityFlushAll", (void **)&cp.ActivityFlushAll},
			{"cuptiGetTimestamp", (void **)&cp.GetTimestamp},
			{"cuptiGetResultString", (void **)&cp.GetResultString},
		};
		for (size_t i = 0; ok && i < sizeof syms / sizeof syms[0]; i++) {
			*syms[i].slot = dlsym(cp.handle, syms[i].name);
			if (*syms[i].slot == NULL) {
				snprintf(cp.why, sizeof cp.why, "CUPTI not available: the library has no %s",
					 syms[i].name);
				gpu_dlclose(cp.handle);
				cp.handle = NULL;
				ok = 0;
			}
		}
		if (ok) {
			cp.why[0] = '\0';
			*(void **)&cp.GetVersion = dlsym(cp.handle, "cuptiGetVersion");
		}
	}
	int rc = cp.handle != NULL ? 0 : -1;
	if (rc)
		snprintf(err, errlen, "%s", cp.why[0] ? cp.why : "CUPTI not available");
	pthread_mutex_unlock(&load_mu);
	return rc;
}

static const int trace_kinds[] = {CUPTI_KIND_CONCURRENT_KERNEL, CUPTI_KIND_MEMCPY, CUPTI_KIND_MEMSET};
static const char *const trace_kind_names[] = {"CONCURRENT_KERNEL", "MEMCPY", "MEMSET"};

/* Turns the record kinds on or off; 0, or -1 with the reason (a kind that
 * will not turn on leaves the others off too). */
static int collect(int on, char *err, size_t errlen)
{
	for (int i = 0; i < 3; i++) {
		cupti_result r = on ? cp.ActivityEnable(trace_kinds[i]) : cp.ActivityDisable(trace_kinds[i]);
		if (r == 0)
			continue;
		if (on) {
			snprintf(err, errlen, "CUPTI: cannot enable %s records: %s (is another profiler, such as nsys "
				 "or ncu, attached?)", trace_kind_names[i], result_str(r));
			for (int k = 0; k < i; k++)
				cp.ActivityDisable(trace_kinds[k]);
		} else {
			snprintf(err, errlen, "CUPTI: cannot disable %s records: %s", trace_kind_names[i], result_str(r));
		}
		return -1;
	}
	return 0;
}

int cupti_start(char *err, size_t errlen)
{
	if (cupti_load(err, errlen))
		return -1;
	pthread_mutex_lock(&load_mu);
	int rc = 0;
	if (!cp.started) {
		cupti_result r = cp.ActivityRegisterCallbacks(buf_request, buf_complete);
		if (r != 0) {
			snprintf(err, errlen, "CUPTI: cannot register activity buffers: %s", result_str(r));
			rc = -1;
		}
		if (rc == 0)
			rc = collect(1, err, errlen);
		cp.started = rc == 0;
	}
	pthread_mutex_unlock(&load_mu);
	return rc;
}

int cupti_started(void)
{
	pthread_mutex_lock(&load_mu);
	int s = cp.started;
	pthread_mutex_unlock(&load_mu);
	return s;
}

int cupti_pause(char *err, size_t errlen)
{
	if (!cupti_started()) {
		snprintf(err, errlen, "GPU timing (CUPTI) is not enabled on this device");
		return -1;
	}
	pthread_mutex_lock(&load_mu);
	int rc = 0;
	if (!cp.paused) {
		cp.ActivityFlushAll(CUPTI_FLUSH_FORCED);
		rc = collect(0, err, errlen);
		cp.paused = rc == 0;
	}
	pthread_mutex_unlock(&load_mu);
	return rc;
}

int cupti_window_begin(char *err, size_t errlen)
{
	if (!cupti_started()) {
		snprintf(err, errlen, "GPU timing (CUPTI) is not enabled on this device");
		return -1;
	}
	/* Paused: records are collected inside windows only, so calls outside
	 * them pay nothing for tracing. */
	if (cp.paused && collect(1, err, errlen))
		return -1;
	/* Whatever is still buffered belongs to earlier work: deliver it while
	 * the window is closed, so it is dropped. */
	pthread_mutex_lock(&cp.mu);
	cp.acc.open = 0;
	pthread_mutex_unlock(&cp.mu);
	cp.ActivityFlushAll(CUPTI_FLUSH_FORCED);
	uint64_t t0 = 0;
	cupti_result r = cp.GetTimestamp(&t0);
	if (r != 0) {
		snprintf(err, errlen, "CUPTI: no timestamp: %s", result_str(r));
		return -1;
	}
	pthread_mutex_lock(&cp.mu);
	cupti_acc_reset(&cp.acc, t0);
	pthread_mutex_unlock(&cp.mu);
	return 0;
}

int cupti_window_end(struct gpu_trace *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	if (!cupti_started()) {
		snprintf(err, errlen, "GPU timing (CUPTI) is not enabled on this device");
		return -1;
	}
	cupti_result r = cp.ActivityFlushAll(CUPTI_FLUSH_FORCED);
	char e2[200];
	if (cp.paused && collect(0, e2, sizeof e2) && r == 0) {
		snprintf(err, errlen, "%s", e2);
		return -1;
	}
	pthread_mutex_lock(&cp.mu);
	int was_open = cp.acc.open;
	cupti_acc_result(&cp.acc, out);
	cp.acc.open = 0;
	pthread_mutex_unlock(&cp.mu);
	if (r != 0) {
		snprintf(err, errlen, "CUPTI: flush failed: %s", result_str(r));
		return -1;
	}
	if (!was_open) {
		snprintf(err, errlen, "gpu_trace_end without gpu_trace_begin");
		return -1;
	}
	return 0;
}

unsigned cupti_api_version(void)
{
	char why[200];
	uint32_t v = 0;
	if (cupti_load(why, sizeof why) != 0 || cp.GetVersion == NULL || cp.GetVersion(&v) != 0)
		return 0;
	return v;
}
