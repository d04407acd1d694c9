/* cmd_doctor.c - `passfs doctor`: what this machine can evaluate with, and
 * what is missing, checked for real: the backend `auto` picks and the GPU
 * the probe found, NVRTC, the host compiler (run with --version), the pass
 * API headers, the op library, the tasks, the seccomp sandbox (a child
 * enters it and must be stopped at an openat), the compile jail (a child
 * enters it and looks around), CUPTI, cuBLAS, cuDNN, FUSE,
 * the cache and the GPU lock directory.  Exit 0 when passes can be
 * evaluated here, 1 when something they need is missing. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blas.h"
#include "clock.h"
#include "cmd.h"
#include "cupti.h"
#include "dnn.h"
#include "eager.h"
#include "eval.h"
#include "eval_util.h"
#include "graph.h"
#include "hostcc.h"
#include "integrity.h"
#include "jail.h"
#include "nvrtc.h"
#include "sandbox.h"
#include "task.h"

enum level { OK, NOTE, FAIL };
static const char *const level_name[] = {"ok", "note", "FAIL"};

struct report {
	json_t *checks;
	int failed;
	int json;
};

static void add(struct report *r, enum level lv, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void add(struct report *r, enum level lv, const char *name, const char *fmt, ...)
{
	char detail[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof detail, fmt, ap);
	va_end(ap);
	if (lv == FAIL)
		r->failed++;
	json_array_append_new(r->checks, json_pack("{s:s, s:s, s:s}", "name", name, "status",
						   lv == OK ? "ok" : lv == NOTE ? "note" : "fail", "detail", detail));
	if (!r->json)
		printf("  %-5s %-11s %s\n", level_name[lv], name, detail);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: passfs doctor [--json]\n\n"
		"Checks what this machine can evaluate passes with, for real: the backend\n"
		"'auto' picks and the GPU found, NVRTC, the host C++ compiler, the pass API\n"
		"headers, the op library, the tasks, the seccomp sandbox (a test child must be\n"
		"stopped), CUPTI, cuBLAS and cuDNN, FUSE, the cache and the GPU lock directory;\n"
		"then evaluates a built-in correct pass end to end, which must come out ok.\n"
		"Each line is 'ok', 'note' (optional: what is lost without it) or 'FAIL' (passes\n"
		"cannot be evaluated).  Exit status 0 when they can, 1 when not.\n\n"
		"  --json   one JSON object: ok, backend, cuda (the probe's answer), checks\n");
}

/* A child enters the sandbox and asks for openat: the filter must end it
 * with the report line. */
static void check_sandbox(struct report *r)
{
	int rp[2];
	if (pipe2(rp, O_CLOEXEC)) {
		add(r, FAIL, "sandbox", "pipe: %s", strerror(errno));
		return;
	}
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		close(rp[0]);
		char err[300];
		struct sandbox_limits lim = {.report_fd = rp[1]};
		if (sandbox_enter(&lim, err, sizeof err)) {
			(void)!write(rp[1], err, strlen(err));
			_exit(3);
		}
		syscall(SYS_openat, AT_FDCWD, "/", O_RDONLY);
		_exit(0);
	}
	close(rp[1]);
	int st = 0;
	if (pid < 0) {
		add(r, FAIL, "sandbox", "fork: %s", strerror(errno));
		close(rp[0]);
		return;
	}
	waitpid(pid, &st, 0);
	char rep[400];
	ssize_t n = read(rp[0], rep, sizeof rep - 1);
	rep[n > 0 ? n : 0] = 0;
	rep[strcspn(rep, "\n")] = 0;
	close(rp[0]);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 159 && strstr(rep, "forbidden system call openat"))
		add(r, OK, "sandbox", "seccomp: a test worker's openat was refused and ended it");
	else if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
		add(r, FAIL, "sandbox", "cannot confine a pass worker: %s", rep);
	else
		add(r, FAIL, "sandbox", "a sandboxed test worker was not stopped (status %d%s%s)", st, rep[0] ? ": " : "",
		    rep);
}

/* A child enters the compile jail and looks around from inside: the
 * compiler and passfs.h must be there, /etc/passwd, /proc/self/environ and
 * a file beside its compile directory not.  A weaker jail than namespaces is a note that
 * says what holds instead, never silence. */
static void check_jail(struct report *r)
{
	struct jail_info ji;
	char line[700];
	if (jail_probe(&ji, line, sizeof line) != 0)
		add(r, FAIL, "jail", "the compile jail does not hold: %s", line);
	else if (ji.kind == JAIL_NAMESPACES)
		add(r, OK, "jail", "compilers run in namespaces + pivot_root: the compile directory, the toolchain and "
				   "the API headers only (set up in %.1f ms)", ji.ms);
	else
		add(r, NOTE, "jail", "%s (fallback: %s)", ji.note, jail_kind_name(ji.kind));
}

/* The last check: a built-in pass on a built-in one-variant task (bias add
 * + tanh GELU, float32), evaluated as `passfs eval` would - compile, eager,
 * sandboxed pass worker, checks, timing - on the backend `auto` picks.  It
 * must come out ok: what the other checks look at piece by piece, this one
 * proves together (on a GPU: the driver inside the sandbox, CUPTI, the
 * lock). */
static const char doctor_task[] =
	"{\"id\": \"doctor\", \"summary\": \"passfs doctor's check\", \"variants\": [{\"name\": \"f32\","
	" \"inputs\": [{\"name\": \"x\", \"shape\": [4, 64, 256], \"dtype\": \"float32\", \"std\": 1.0},"
	" {\"name\": \"bias\", \"shape\": [256], \"dtype\": \"float32\", \"std\": 0.5}],"
	" \"nodes\": [{\"name\": \"s\", \"op\": \"add\", \"inputs\": [\"x\", \"bias\"]},"
	" {\"name\": \"y\", \"op\": \"gelu\", \"inputs\": [\"s\"], \"attrs\": {\"approximate\": \"tanh\"}}],"
	" \"outputs\": [\"y\"]}]}";

static const char doctor_pass[] =
	"#include <passfs.h>\n"
	"__global__ void bias_gelu(const float *x, const float *b, float *y, long long n, long long c)\n"
	"{\n"
	"\tlong long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
	"\tif (i >= n)\n"
	"\t\treturn;\n"
	"\tfloat v = x[i] + b[i % c];\n"
	"\ty[i] = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));\n"
	"}\n"
	"PASS_REPLACEMENT(pf_call *call)\n"
	"{\n"
	"\tconst pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);\n"
	"\tpf_tensor *y = pf_out(call, 0);\n"
	"\tlong long n = pf_numel(y);\n"
	"\treturn pf_launch(call, bias_gelu, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data, b->data,\n"
	"\t\t\t y->data, n, b->shape[0]);\n"
	"}\n";


static void check_eval(struct report *r)
{
	if (r->failed) {
		add(r, NOTE, "evaluation", "not tried: the failures above come first");
		return;
	}
	char err[512] = "";
	struct eval_job job = {.graph_text = doctor_task, .graph_len = sizeof doctor_task - 1,
			       .graph_label = "passfs doctor's task", .pass_label = "doctor_pass.c",
			       .pass_src = doctor_pass, .pass_len = sizeof doctor_pass - 1,
			       .opts = {.backend = "auto", .warmup = 2, .trials = 5, .quiet = 1}};
	json_t *res = NULL;
	double t0 = base_now_ms();
	int rc = eval_run(&job, NULL, &res, err, sizeof err);
	double secs = (base_now_ms() - t0) / 1e3;
	const char *verdict = res ? json_string_value(json_object_get(res, "verdict")) : NULL;
	const char *msg = res ? json_string_value(json_object_get(res, "message")) : NULL;
	json_t *v0 = res ? json_array_get(json_object_get(res, "variants"), 0) : NULL;
	if (rc != 0)
		add(r, FAIL, "evaluation", "a built-in pass could not be evaluated: %s", err);
	else if (verdict == NULL || strcmp(verdict, "ok") != 0)
		add(r, FAIL, "evaluation", "a built-in correct pass came out %s: %s", verdict ? verdict : "without a verdict",
		    msg ? msg : "");
	else
		add(r, OK, "evaluation", "a built-in pass evaluated end to end on %s in %.1f s: ok, speedup %.2f",
		    json_string_value(json_object_get(res, "backend")), secs,
		    json_number_value(json_object_get(v0, "speedup")));
	json_decref(res);
}

static int dir_writable(const char *dir)
{
	struct stat st;
	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && access(dir, W_OK | X_OK) == 0;
}

static const char *find_on_path(const char *name, char *buf, size_t len)
{
	const char *path = getenv("PATH");
	char copy[4096];
	snprintf(copy, sizeof copy, "%s", path ? path : "/usr/bin:/bin");
	for (char *save = NULL, *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(buf, len, "%s/%s", d, name);
		if (access(buf, X_OK) == 0)
			return buf;
	}
	return NULL;
}

int cmd_doctor(int argc, char **argv)
{
	static const struct option opts[] = {{"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	struct report r = {.checks = json_array()};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': r.json = 1; break;
		case 'h': usage(stdout); json_decref(r.checks); return 0;
		default: usage(stderr); json_decref(r.checks); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "passfs doctor: unexpected argument '%s'\n", argv[optind]);
		json_decref(r.checks);
		return 2;
	}
	if (!r.json)
		printf("passfs %s doctor\n", PASSFS_VERSION);
	fflush(stdout);

	/* the backend: the probe runs cuInit in a child */
	struct gpu_cuda_info ci;
	gpu_cuda_info_get(&ci);
	const char *backend = ci.count > 0 ? "cuda" : "cpu";
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	/* the device's own arch; the target NVRTC compiles for, when not that,
	 * is a note of its own */
	char arch[16], target[16], arch_note[320];
	gpu_cuda_arch_name(ci.cc_major, ci.cc_minor, arch, sizeof arch);
	int ptx_only = gpu_cuda_target_arch(ci.cc_major, ci.cc_minor, target, sizeof target, arch_note,
					    sizeof arch_note);
	if (ci.count > 0)
		add(&r, OK, "backend",
		    "auto picks cuda: %s (%s, %d SMs, %.0f GiB at %.2f TB/s peak, L2 %d MiB, driver %d.%d, bus %s)",
		    ci.name, arch, ci.sm_count, (double)ci.total_mem / (1 << 30),
		    integrity_gpu_bytes_per_ms(ci.mem_clock_khz, ci.mem_bus_bits) / 1e9, ci.l2_bytes >> 20,
		    ci.driver_version / 1000, ci.driver_version % 1000 / 10, ci.pci);
	else
		add(&r, OK, "backend", "auto picks cpu (%ld CPUs; timings are CPU timings): no cuda: %s", cpus, ci.why);
	if (ci.count > 0 && ptx_only)
		add(&r, NOTE, "arch", "%s (a newer NVRTC compiles for the GPU itself)", arch_note);

	char why[512];
	if (nvrtc_available(why, sizeof why))
		add(&r, OK, "nvrtc", "NVRTC %s, CUDA headers %s", nvrtc_version(),
		    nvrtc_cuda_include_dir() ? nvrtc_cuda_include_dir() : "(none found)");
	else if (ci.count > 0)
		add(&r, FAIL, "nvrtc", "%s: the cuda backend compiles every kernel with it", why);
	else
		add(&r, NOTE, "nvrtc", "%s: on cpu, passes compile without the NVRTC gate and the device-code scan "
				     "(clock reads, device state, device launches) does not run",
		    why);

	char cv[600];
	if (hostcc_compiler_version(cv, sizeof cv) == 0)
		add(&r, OK, "compiler", "%s", cv);
	else
		add(&r, FAIL, "compiler", "%s: every pass's host code is compiled with it", cv);

	char path[PATH_MAX];
	const char *inc = hostcc_include_dir();
	snprintf(path, sizeof path, "%s/passfs.h", inc ? inc : "");
	if (inc != NULL && access(path, R_OK) == 0)
		add(&r, OK, "headers", "%s", path);
	else
		add(&r, FAIL, "headers", "no passfs.h (looked in %s; set PASSFS_INCLUDE_DIR)", inc ? inc : "nowhere");

	const char *oplib = eager_oplib_dir();
	if (oplib != NULL && access(oplib, R_OK | X_OK) == 0)
		add(&r, OK, "op library", "%s", oplib);
	else
		add(&r, FAIL, "op library", "not found (%s; set PASSFS_OPLIB_DIR): the eager baseline needs it",
		    oplib ? oplib : "no directory");

	const char *tasks = cmd_default_tasks_dir();
	char **ids = NULL;
	int n_ids = 0;
	char terr[600];
	if (task_scan(tasks, &ids, &n_ids, terr, sizeof terr) != 0)
		add(&r, NOTE, "tasks", "%s: commands need --tasks DIR (or PASSFS_TASKS)", terr);
	else if (n_ids == 0)
		add(&r, NOTE, "tasks", "no tasks in %s: commands need --tasks DIR (or PASSFS_TASKS)", tasks);
	else
		add(&r, OK, "tasks", "%d in %s", n_ids, tasks);
	task_ids_free(ids, n_ids);

	check_sandbox(&r);
	check_jail(&r);

	char e2[400];
	enum level gpu_only = ci.count > 0 ? NOTE : OK;
	if (cupti_load(e2, sizeof e2) == 0) {
		unsigned v = cupti_api_version();
		if (v > CUPTI_CHECKED_API_VERSION)
			add(&r, gpu_only, "cupti",
			    "loads (API version %u), newer than the %u whose record layout passfs reads: GPU kernel "
			    "times are unverified with it", v, CUPTI_CHECKED_API_VERSION);
		else
			add(&r, OK, "cupti", "loads (API version %u): GPU kernel times on the cuda backend", v);
	} else
		add(&r, gpu_only, "cupti", "%s: %s", e2, ci.count > 0 ? "no GPU kernel times in results" : "needed on cuda only");
	if (blas_load(e2, sizeof e2) == 0)
		add(&r, OK, "cublas", "%s: eager GEMMs on the cuda backend", blas_version());
	else
		add(&r, gpu_only, "cublas", "%s: %s", e2,
		    ci.count > 0 ? "eager GEMMs run on passfs's own kernels (a slower baseline)" : "needed on cuda only");
	if (dnn_load(e2, sizeof e2) == 0)
		add(&r, OK, "cudnn", "%s: eager convolutions on the cuda backend", dnn_version());
	else
		add(&r, gpu_only, "cudnn", "%s: %s", e2,
		    ci.count > 0 ? "eager convolutions run on passfs's own kernels (a slower baseline)"
				 : "needed on cuda only");

	char fm[PATH_MAX];
	int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	const char *fusermount = find_on_path("fusermount3", fm, sizeof fm);
	if (fd >= 0 && fusermount != NULL)
		add(&r, OK, "fuse", "/dev/fuse opens, %s: passfs mount works", fusermount);
	else
		add(&r, NOTE, "fuse", "%s%s: passfs mount will not work here; passfs watch needs no FUSE",
		    fd < 0 ? "/dev/fuse does not open: " : "no fusermount3 on PATH",
		    fd < 0 ? strerror(errno) : "");
	if (fd >= 0)
		close(fd);

	char cache[PATH_MAX];
	if (gpu_cache_dir("modules", cache, sizeof cache) == 0 && dir_writable(cache))
		add(&r, OK, "cache", "%s", cache);
	else
		add(&r, NOTE, "cache", "no writable cache directory (PASSFS_CACHE_DIR, XDG_CACHE_HOME, HOME): every "
				     "evaluation recompiles the op library");
	const char *lockdir = getenv("PASSFS_LOCK_DIR");
	if (lockdir == NULL || *lockdir == 0)
		lockdir = "/tmp";
	if (dir_writable(lockdir))
		add(&r, OK, "lock dir", "%s: one GPU benchmark at a time across processes", lockdir);
	else
		add(&r, ci.count > 0 ? FAIL : NOTE, "lock dir", "%s is not a writable directory (PASSFS_LOCK_DIR)", lockdir);
	fflush(stdout);
	check_eval(&r);

	int ok = r.failed == 0;
	if (r.json) {
		json_t *cuda = json_pack("{s:i, s:s}", "count", ci.count, "why", ci.why);
		if (ci.count > 0) {
			json_object_set_new(cuda, "name", json_string(ci.name));
			json_object_set_new(cuda, "compute_capability", json_sprintf("%d.%d", ci.cc_major, ci.cc_minor));
			json_object_set_new(cuda, "arch", json_string(arch));
			json_object_set_new(cuda, "sm_count", json_integer(ci.sm_count));
			json_object_set_new(cuda, "memory_bytes", json_integer((json_int_t)ci.total_mem));
			json_object_set_new(cuda, "l2_bytes", json_integer(ci.l2_bytes));
			json_object_set_new(cuda, "memory_clock_khz", json_integer(ci.mem_clock_khz));
			json_object_set_new(cuda, "memory_bus_bits", json_integer(ci.mem_bus_bits));
			json_object_set_new(cuda, "driver_version", json_integer(ci.driver_version));
			json_object_set_new(cuda, "pci_bus_id", json_string(ci.pci));
		}
		json_t *doc = json_pack("{s:b, s:s, s:s, s:o, s:o}", "ok", ok, "backend", backend, "passfs_version",
					PASSFS_VERSION, "cuda", cuda, "checks", r.checks);
		char *text = json_dumps(doc, JSON_INDENT(2));
		printf("%s\n", text ? text : "{}");
		free(text);
		json_decref(doc);
	} else {
		if (ok)
			printf("passfs can evaluate passes here (%s backend).\n", backend);
		else
			printf("passfs cannot evaluate passes here: %d check%s failed.\n", r.failed, r.failed == 1 ? "" : "s");
		json_decref(r.checks);
	}
	return ok ? 0 : 1;
}
