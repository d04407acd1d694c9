/* test_traffic.c - the cpu backend's traffic counter (gpu/traffic.c): the
 * bytes a "launch" touched, page by page (or 64 KiB unit by unit in large
 * buffers), with several threads touching the same pages at once, buffers
 * that share pages with other memory, a launch inside a counted launch, and
 * a real fault outside the counted buffers still killing the process with
 * SIGSEGV (or going to AddressSanitizer's handler, in a sanitizer build). */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "traffic.h"

#define PG 4096

struct span {
	unsigned char *p;
	size_t from, to, step;
	int write;
};

static void *toucher(void *arg)
{
	struct span *s = arg;
	volatile unsigned char sink = 0;
	for (size_t i = s->from; i < s->to; i += s->step) {
		if (s->write)
			s->p[i] = (unsigned char)i;
		else
			sink ^= s->p[i];
	}
	(void)sink;
	return NULL;
}

int main(void)
{
	CHECK(traffic_install() == 0 && traffic_installed());
	CHECK(traffic_install() == 0); /* once is enough; again is harmless */

	/* a page-aligned buffer read in part: exactly the pages touched */
	size_t n = 64 * PG;
	unsigned char *a = aligned_alloc(PG, n), *b = aligned_alloc(PG, n);
	memset(a, 1, n);
	memset(b, 2, n);
	struct traffic_alloc al[2] = {{a, n}, {b, n}};
	uint64_t bytes = 0;
	int approx = -1;
	CHECK(traffic_launch_begin(al, 2) == 0);
	struct span s1 = {a, 0, 10 * PG, 64, 0};
	toucher(&s1);
	CHECK(traffic_launch_end(&bytes, &approx) == 0);
	CHECK(bytes == 10 * PG && approx == 0);
	/* the pages are accessible again, with their contents */
	CHECK(a[n - 1] == 1 && b[0] == 2);

	/* four threads racing over the same pages, reading and writing: every
	 * access goes through, each page counts once */
	CHECK(traffic_launch_begin(al, 2) == 0);
	pthread_t t[4];
	struct span sp[4];
	for (int k = 0; k < 4; k++) {
		sp[k] = (struct span){k < 2 ? a : b, (size_t)k, 32 * PG, 7, k % 2};
		pthread_create(&t[k], NULL, toucher, &sp[k]);
	}
	for (int k = 0; k < 4; k++)
		pthread_join(t[k], NULL);
	CHECK(traffic_launch_end(&bytes, &approx) == 0);
	CHECK(bytes == 64 * PG);
	CHECK(a[8] == 8 && b[10] == 10); /* the writers' bytes landed */

	/* an unaligned buffer: its head and tail (no page of their own) count
	 * with its first touched page; an untouched one counts nothing, and a
	 * buffer smaller than a page counts whole */
	unsigned char *big = malloc(10 * PG + 100), *tiny = malloc(64);
	unsigned char *u = big + 50;    /* not page-aligned */
	size_t un = 10 * PG;
	struct traffic_alloc al2[2] = {{u, un}, {tiny, 64}};
	CHECK(traffic_launch_begin(al2, 2) == 0);
	uintptr_t first_page = ((uintptr_t)u + PG - 1) / PG * PG;
	((volatile unsigned char *)first_page)[0] = 9;
	CHECK(traffic_launch_end(&bytes, &approx) == 0);
	size_t head = first_page - (uintptr_t)u, whole = (((uintptr_t)u + un) / PG * PG - first_page) / PG;
	size_t tail = un - head - whole * PG;
	CHECK(bytes == PG + head + tail + 64);
	CHECK(traffic_launch_begin(al2, 1) == 0);
	CHECK(traffic_launch_end(&bytes, &approx) == 0);
	CHECK(bytes == 0);

	/* a large buffer counts in 64 KiB units: one byte touched, one unit */
	size_t ln = 4u << 20;
	unsigned char *l = aligned_alloc(65536, ln);
	memset(l, 0, ln);
	struct traffic_alloc al3[1] = {{l, ln}};
	CHECK(traffic_launch_begin(al3, 1) == 0);
	l[3 * 65536 + 5] = 1;
	l[3 * 65536 + 60000] = 1;       /* the same unit */
	l[ln - 1] = 1;                  /* the last unit */
	CHECK(traffic_launch_end(&bytes, &approx) == 0);
	CHECK(bytes == 2 * 65536);

	/* a launch inside a counted launch is not counted (and does not end
	 * the outer count) */
	CHECK(traffic_launch_begin(al, 2) == 0);
	CHECK(traffic_launch_begin(al, 2) == -1);
	a[0] = 3;
	CHECK(traffic_launch_end(&bytes, &approx) == 0);
	CHECK(bytes == PG);
	/* nothing to count: refused, and nothing left protected */
	CHECK(traffic_launch_begin(al, 0) == -1);
	CHECK(a[5 * PG] == 1);

	/* a fault outside the counted buffers, during a counted launch and
	 * outside one, kills the process with SIGSEGV as without the handler */
	for (int during = 0; during < 2; during++) {
		pid_t pid = fork();
		if (pid == 0) {
			if (during && traffic_launch_begin(al, 2) != 0)
				_exit(3);
			volatile int *volatile bad = NULL;
			*bad = 1;
			_exit(0);
		}
		int st = 0;
		waitpid(pid, &st, 0);
#ifdef __SANITIZE_ADDRESS__
		/* the handler before it was AddressSanitizer's: it reports the
		 * fault and exits non-zero */
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 3);
#else
		CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
#endif
	}

	/* the guard: host touches of closed allocations are counted (the
	 * first address kept) and go on; reopened, nothing more is counted */
	traffic_guard_reset();
	CHECK(traffic_guard_close(al, 2) == 0);
	a[3 * PG + 5] = 7;              /* a write */
	volatile unsigned char r0 = b[0];       /* a read */
	(void)r0;
	a[3 * PG + 6] = 8;              /* the same page again: open now */
	uintptr_t first = 0;
	CHECK(traffic_guard_touches(&first) == 2 && first == (uintptr_t)&a[3 * PG + 5]);
	traffic_guard_open();
	a[9 * PG] = 1;
	CHECK(traffic_guard_touches(NULL) == 2 && a[3 * PG + 5] == 7 && a[3 * PG + 6] == 8);
	/* a counted launch between guarded stretches is not a host touch */
	traffic_guard_reset();
	CHECK(traffic_guard_close(al, 2) == 0);
	traffic_guard_open();
	CHECK(traffic_launch_begin(al, 2) == 0);
	a[PG] = 2;
	CHECK(traffic_launch_end(&bytes, &approx) == 0 && bytes == PG);
	CHECK(traffic_guard_close(al, 2) == 0);
	traffic_guard_open();
	CHECK(traffic_guard_touches(NULL) == 0);

	/* the model: a group of threads alike sets the path, a few threads
	 * slowed by the machine over many octaves do not */
	struct pf_launch_stats st;
	memset(&st, 0, sizeof st);
	st.threads = 100000;
	st.hist[pf_stats_bucket(100)] = 100000;         /* 100 ticks each */
	st.hist_ticks[pf_stats_bucket(100)] = 100000ull * 100;
	st.sum_ticks = 100000ull * 100;
	st.max_ticks = 100;
	double path = model_tail_ticks(&st, 1.0);
	CHECK(path == 100);
	for (int k = 0; k < 6; k++) {                   /* 1.9% of the time, over 6 octaves */
		unsigned long long tk = 3000ull << k;
		int nb = pf_stats_bucket(tk);
		st.hist[nb] += 1;
		st.hist_ticks[nb] += tk;
		st.sum_ticks += tk;
	}
	path = model_tail_ticks(&st, 1.0);
	CHECK(path == 100);
	st.hist[pf_stats_bucket(50000)] += 20;          /* a group holding 9%: the path, its mean */
	st.hist_ticks[pf_stats_bucket(50000)] += 20 * 50000ull;
	st.sum_ticks += 20 * 50000ull;
	path = model_tail_ticks(&st, 1.0);
	CHECK(path >= 50000 && path <= 52500);          /* (with the hiccup of 48000 or 96000 in its octave) */
	/* a launch of 1000 short threads and one long one holding 30%: one
	 * hiccup, not a path; as long as no hiccup makes one, a path */
	struct pf_launch_stats s2;
	memset(&s2, 0, sizeof s2);
	s2.threads = 1001;
	s2.hist[pf_stats_bucket(100)] = 1000;
	s2.hist_ticks[pf_stats_bucket(100)] = 100000;
	s2.hist[pf_stats_bucket(43000)] = 1;
	s2.hist_ticks[pf_stats_bucket(43000)] = 43000;
	s2.sum_ticks = 143000;
	CHECK(model_tail_ticks(&s2, 1.0) == 100);
	s2.hist[pf_stats_bucket(43000)] = 0;
	s2.hist_ticks[pf_stats_bucket(43000)] = 0;
	s2.hist[pf_stats_bucket(300000)] = 1;
	s2.hist_ticks[pf_stats_bucket(300000)] = 300000;
	s2.sum_ticks = 400000;
	CHECK(model_tail_ticks(&s2, 1.0) == 300000);
	/* a barrier a step: 260,000 threads left with ~10 ticks each once the
	 * switches' costs came off, 500 of them struck by hiccups (30,000
	 * ticks each: 85% of what is left) - a slow group by the sum that is
	 * left (2 + 17.6 ms of it), hiccups by the time as measured (600 ms:
	 * 600 of them), so the path is the threads' own */
	struct pf_launch_stats s3;
	memset(&s3, 0, sizeof(s3));
	s3.hist[pf_stats_bucket(10)] = 260000;
	s3.hist_ticks[pf_stats_bucket(10)] = 2600000;
	s3.hist[pf_stats_bucket(30000)] = 500;
	s3.hist_ticks[pf_stats_bucket(30000)] = 500ull * 30000;
	s3.sum_ticks = 2600000 + 500ull * 30000;
	CHECK(model_tail_ticks(&s3, 1.0) == 30000);     /* without raw_ticks: taken for a path */
	s3.raw_ticks = 600000000;
	CHECK(model_tail_ticks(&s3, 1.0) == 10);
	/* a launch: 3 us + the largest term */
	struct model_launch ml = {.bytes = 43000000, .block_threads = 256, .threads = 1 << 20, .path_ns = 10,
				  .sum_ns = 1e6};
	double mem, pth, par, tm = model_launch_ms(&ml, &mem, &pth, &par);
	CHECK(fabs(mem - 0.01) < 1e-9 && fabs(tm - (MODEL_LAUNCH_MS + 0.01)) < 1e-9);
	CHECK(fabs(pth - 10 * MODEL_GPU_PER_CPU / 1e6) < 1e-12);
	CHECK(fabs(par - 1e6 * MODEL_GPU_PER_CPU / (MODEL_SMS * 2048.0) / 1e6) < 1e-12);
	ml.threads = 1024;              /* too few threads: the work is paid per thread */
	tm = model_launch_ms(&ml, &mem, &pth, &par);
	CHECK(fabs(par - 1e6 * MODEL_GPU_PER_CPU / 1024.0 / 1e6) < 1e-12 && fabs(tm - (MODEL_LAUNCH_MS + par)) < 1e-9);
	ml.block_threads = 32;          /* small blocks: 32 a SM */
	ml.threads = 1 << 20;
	tm = model_launch_ms(&ml, &mem, &pth, &par);
	CHECK(fabs(par - 1e6 * MODEL_GPU_PER_CPU / (MODEL_SMS * 1024.0) / 1e6) < 1e-12);

	/* a library call: its compute time or its bytes, never its threads */
	ml.lib_ms = 0.5;
	ml.path_ns = 1e9;               /* a second of emulated path: ignored */
	tm = model_launch_ms(&ml, &mem, &pth, &par);
	CHECK(pth == 0 && par == 0.5 && fabs(tm - (MODEL_LAUNCH_MS + 0.5)) < 1e-12);
	ml.lib_ms = 0.001;              /* memory-bound: its bytes */
	tm = model_launch_ms(&ml, &mem, &pth, &par);
	CHECK(fabs(tm - (MODEL_LAUNCH_MS + mem)) < 1e-12);
	ml.lib_ms = 0;
	/* a large GEMM: its FLOPs at the rate and efficiency, 4096 tiles in
	 * 32 waves of 132 (0.97 filled), then its output's store */
	double g = model_gemm_ms(4096, 4096, 4096, 1, 0, 4);
	double ideal = 2.0 * 4096 * 4096 * 4096 / (MODEL_FP32_FLOPS_PER_MS * MODEL_LIB_EFFICIENCY);
	double store = 4096.0 * 4096 * 4 / MODEL_BYTES_PER_MS;
	CHECK(fabs(g - ideal * (32 * 132.0) / 4096 - store) < 1e-9 * g);
	/* tensor cores: the half-precision rate (a half-precision output
	 * stores half the bytes) */
	CHECK(fabs((model_gemm_ms(4096, 4096, 4096, 1, 1, 2) - store / 2) * MODEL_FP16_TC_FLOPS_PER_MS -
		   (g - store) * MODEL_FP32_FLOPS_PER_MS) < 1e-9 * g * MODEL_FP32_FLOPS_PER_MS);
	/* a small one leaves SMs idle: 128 x 768 by 768 is 24 tiles, split 3
	 * along K (each part 256 long): 72 of 132 SMs, three float32
	 * partials stored */
	double s = model_gemm_ms(128, 768, 768, 1, 0, 4);
	CHECK(fabs(s - 2.0 * 128 * 768 * 768 / (MODEL_FP32_FLOPS_PER_MS * MODEL_LIB_EFFICIENCY * 72 / 132) -
		   128.0 * 768 * 12 / MODEL_BYTES_PER_MS) < 1e-9 * s);
	/* a GEMV (m = 1) is tiles of 8 rows, not 64: 64 tiles, split 2 along
	 * K, 128 in one wave of 132 (split 3 would be 192 in two half-empty
	 * waves) */
	double v = model_gemm_ms(1, 4096, 4096, 1, 0, 4);
	CHECK(fabs(v - 2.0 * 8 * 4096 * 4096 / (MODEL_FP32_FLOPS_PER_MS * MODEL_LIB_EFFICIENCY * 128 / 132) -
		   4096.0 * 8 / MODEL_BYTES_PER_MS) < 1e-9 * v);
	/* a 256 x 256 output on a long K: 16 tiles split 8 (128 of 132 SMs),
	 * not 9 (144: a second wave of 12) */
	double lk = model_gemm_ms(256, 256, 524288, 1, 0, 4);
	CHECK(fabs(lk - 2.0 * 256 * 256 * 524288 / (MODEL_FP32_FLOPS_PER_MS * MODEL_LIB_EFFICIENCY * 128 / 132) -
		   256.0 * 256 * 32 / MODEL_BYTES_PER_MS) < 1e-9 * lk);
	/* a small K: the store is most of it (32768 x 32768 by 32) */
	double sk = model_gemm_ms(32768, 32768, 32, 1, 0, 4);
	CHECK(fabs(sk - 2.0 * 32768.0 * 32768 * 32 / (MODEL_FP32_FLOPS_PER_MS * MODEL_LIB_EFFICIENCY * (262144.0 / (1986 * 132))) -
		   32768.0 * 32768 * 4 / MODEL_BYTES_PER_MS) < 1e-9 * sk);
	CHECK(model_gemm_ms(0, 1, 1, 1, 0, 4) == 0 && model_flops_ms(0) == 0);
	CHECK(fabs(model_flops_ms(1e9) - 1e9 / (MODEL_FP32_FLOPS_PER_MS * MODEL_LIB_EFFICIENCY)) < 1e-12);

	free(a);
	free(b);
	free(big);
	free(tiny);
	free(l);
	printf("test_traffic: %d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
