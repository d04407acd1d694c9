/* eager_oplib.c - the op library (eager_int.h): its kernel source, the
 * compile, and on the cpu backend the build kept on disk between runs. */
#define _GNU_SOURCE
#include "eager_int.h"
#include "strbuf.h"

#include <glob.h>
#include <pthread.h>

/* ---- the op library: source and compile ------------------------------------------------ */

const char *eager_oplib_dir(void)
{
	const char *env = getenv("PASSFS_OPLIB_DIR");
	if (env && *env)
		return env;
	return datadir_get(DATADIR_OPLIB);
}

/* The op library source: passfs.h, then each file of OPL_FILES under a
 * #line naming it.  malloc'd, or NULL with a message. */
static char *oplib_source(char *err, size_t errlen)
{
	static const char *files[] = {OPL_FILES};
	const char *dir = eager_oplib_dir();
	struct strbuf src = {0};
	char line[600];
	const char *head = "#include <passfs.h>\n";
	if (strbuf_add(&src, head, strlen(head)))
		goto oom;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		FILE *f = fopen(path, "rb");
		if (f == NULL) {
			snprintf(err, errlen, "eager: cannot read the op library %s: %s", path, strerror(errno));
			strbuf_free(&src);
			return NULL;
		}
		int n = snprintf(line, sizeof(line), "#line 1 \"%s\"\n", files[i]);
		if (strbuf_add(&src, line, (size_t)n)) {
			fclose(f);
			goto oom;
		}
		char chunk[65536];
		size_t got;
		while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
			if (strbuf_add(&src, chunk, got)) {
				fclose(f);
				goto oom;
			}
		fclose(f);
		if (strbuf_add(&src, "\n", 1))
			goto oom;
	}
	return src.p;
oom:
	strbuf_free(&src);
	snprintf(err, errlen, "eager: out of memory reading the op library");
	return NULL;
}

static int rt_fail(pf_call *c, int code, const char *msg)
{
	struct eager_call *ec = c->priv;
	if (!ec->failed) {
		ec->failed = 1;
		snprintf(ec->msg, sizeof(ec->msg), "%s", msg ? msg : "launch failed");
	}
	return code;
}

static int rt_run_blocks(pf_call *c, pf_dim3 grid, pf_dim3 block, void (*fn)(void *ctx, pf_dim3 idx), void *ctx,
			 struct pf_launch_stats *st)
{
	struct eager_call *ec = c->priv;
	return gpu_run_blocks(ec->dev, grid, block, fn, ctx, st);
}

const struct pf_runtime eager_runtime = {
	.abi_version = PF_ABI_VERSION,
	.fail = rt_fail,
	.run_blocks = rt_run_blocks,
};

static int append_file(struct strbuf *buf, const char *path)
{
	FILE *f = fopen(path, "rb");
	char chunk[65536];
	size_t got;
	if (f == NULL)
		return strbuf_puts(buf, path);   /* absent: its name still counts */
	while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (strbuf_add(buf, chunk, got)) {
			fclose(f);
			return -1;
		}
	fclose(f);
	return 0;
}

/* The host compiler's identity: hostcc's, the compiler the op library is
 * built with (PASSFS_CXX resolved as a compile resolves it, run without a
 * shell): the first line of its --version and its path. */
static char compiler_id_buf[512];

static void compiler_id_fill(void)
{
	if (hostcc_compiler_version(compiler_id_buf, sizeof(compiler_id_buf)) != 0)
		compiler_id_buf[0] = 0;
}

static const char *compiler_id(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, compiler_id_fill);
	return compiler_id_buf;
}

static int cache_key(const char *src, char *const *names, int nn, char key[65])
{
	struct strbuf buf = {0};
	char line[512];
	struct stat st;
	const char *inc = hostcc_include_dir();
	static const char *headers[] = {"passfs.h", "passfs_abi.h", "pf_emu.h"};
	int n = snprintf(line, sizeof(line), "passfs oplib 1\n%s\n%s\n", PASSFS_VERSION, compiler_id());
	if (strbuf_add(&buf, line, (size_t)n))
		goto oom;
	/* The compile pipeline (flags, trampolines): its source in a source
	 * tree build, so rebuilding passfs for other reasons keeps the cache;
	 * else the binary that holds it. */
	const char *hostcc_src = datadir_hostcc_source();
	if (hostcc_src != NULL && stat(hostcc_src, &st) == 0) {
		/* every file of the host compiler: gpu/hostcc*.c, sorted */
		char pat[4096];
		const char *sl = strrchr(hostcc_src, '/');
		snprintf(pat, sizeof pat, "%.*s/hostcc*.c", sl ? (int)(sl - hostcc_src) : 1, sl ? hostcc_src : ".");
		glob_t g;
		int grc = glob(pat, 0, NULL, &g);
		for (size_t i = 0; grc == 0 && i < g.gl_pathc; i++)
			if (append_file(&buf, g.gl_pathv[i])) {
				globfree(&g);
				goto oom;
			}
		if (grc == 0)
			globfree(&g);
	} else if (stat("/proc/self/exe", &st) == 0) {
		n = snprintf(line, sizeof(line), "exe %lld %lld.%09ld\n", (long long)st.st_size,
			     (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
		if (strbuf_add(&buf, line, (size_t)n))
			goto oom;
	}
	for (size_t i = 0; i < sizeof(headers) / sizeof(headers[0]); i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", inc, headers[i]);
		if (append_file(&buf, path))
			goto oom;
	}
	if (strbuf_add(&buf, src, strlen(src)))
		goto oom;
	for (int i = 0; i < nn; i++)
		if (strbuf_add(&buf, "\n", 1) || strbuf_add(&buf, names[i], strlen(names[i])))
			goto oom;
	sha256_hex(buf.p, buf.len, key);
	strbuf_free(&buf);
	return 0;
oom:
	strbuf_free(&buf);
	return -1;
}

/* The cache directory, created (0700) if needed; -1 when there is none.
 * PASSFS_CACHE_DIR as the cuda backend's module cache reads it: "off", "0"
 * or empty turn caching off, a path replaces the default. */
static int cache_dir(char *dir, size_t len)
{
	if (gpu_cache_dir("oplib", dir, len) != 0)
		return -1;
	return access(dir, W_OK | X_OK) == 0 ? 0 : -1;
}

/* Copies src to dst through a temporary file and a rename, so a reader
 * never sees half a file. */
static int cache_store(const char *src, const char *dst)
{
	int in = open(src, O_RDONLY | O_CLOEXEC), rc = -1;
	struct base_atomic a;
	if (in < 0)
		return -1;
	if (base_atomic_open(&a, dst, "", 0600, 0) == 0) {
		char buf[65536];
		ssize_t got;
		rc = 0;
		while (rc == 0 && (got = base_read_full(in, buf, sizeof(buf))) > 0)
			rc = base_write_all(a.fd, buf, (size_t)got);
		if (rc == 0)
			rc = base_atomic_commit(&a, 0);
		else
			base_atomic_abort(&a);
	}
	close(in);
	return rc;
}

static void cache_prune(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	time_t now = time(NULL);
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		char path[4400];
		struct stat st;
		if (strncmp(e->d_name, "oplib-", 6) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st) == 0 && now - st.st_mtime > CACHE_MAX_AGE_S)
			unlink(path);
	}
	closedir(d);
}

int eager_model_key(const struct graph_variant *v, const char *model_id, char key[65])
{
	char err[200], *src = oplib_source(err, sizeof(err)), *text = NULL, lib[65];
	size_t len = 0;         /* (the buffer's size: the text ends at its NUL) */
	char *none[] = {NULL};
	int rc = -1;
	if (src != NULL && cache_key(src, none, 0, lib) == 0 && graph_render_variant(v, &text, &len, "") == 0) {
		struct strbuf buf = {0};
		if (strbuf_printf(&buf, "passfs eager model\n%s\n%s\n", model_id, lib) == 0 &&
		    strbuf_puts(&buf, text) == 0) {
			sha256_hex(buf.p, buf.len, key);
			rc = 0;
		}
		strbuf_free(&buf);
	}
	free(text);
	free(src);
	return rc;
}

/* Loads (or compiles and caches) the op library for the sorted names. */
static int cpu_oplib_load(const char *src, char *const *names, int nn, struct shared_mod *sm, char *err,
			  size_t errlen)
{
	char key[65], dir[4096], path[4300];
	int have_dir = cache_dir(dir, sizeof(dir)) == 0;
	if (have_dir && cache_key(src, names, nn, key) == 0) {
		snprintf(path, sizeof(path), "%s/oplib-%s.so", dir, key);
		if ((sm->handle = gpu_dlopen(path, RTLD_NOW | RTLD_LOCAL)) != NULL) {
			sm->from_cache = 1;
			utimensat(AT_FDCWD, path, NULL, 0);     /* recently used: not pruned */
			return 0;
		}
	} else {
		have_dir = 0;
	}
	struct hostcc_request hr = {.label = "oplib.cu", .src = src, .len = strlen(src),
				    .names = (const char *const *)names, .n_names = nn, .timeout_s = 600};
	struct hostcc_output ho;
	double t0 = base_now_ms();
	if (hostcc_compile(&hr, &ho, err, errlen) != HOSTCC_OK) {
		if (ho.log && *ho.log) {
			size_t used = strlen(err);
			snprintf(err + used, errlen - used, ": %.*s", (int)strcspn(ho.log, "\n"), ho.log);
		}
		hostcc_output_free(&ho);
		return -1;
	}
	sm->compile_ms = base_now_ms() - t0;
	const char *load = ho.so_path;
	if (have_dir && cache_store(ho.so_path, path) == 0) {
		load = path;
		cache_prune(dir);
	}
	sm->handle = gpu_dlopen(load, RTLD_NOW | RTLD_LOCAL);
	hostcc_output_free(&ho);
	if (sm->handle == NULL) {
		const char *e = dlerror();
		snprintf(err, errlen, "eager: cannot load the compiled op library: %s", e ? e : "?");
		return -1;
	}
	return 0;
}

/* Compiles one module holding every name of the given plans, shared by
 * them, and resolves each plan's kernels. */
static int compile_plans(struct gpu_dev *d, struct eager_plan **plans, int np, struct blas_handle *blas,
			 struct dnn_handle *dnn, char *err, size_t errlen)
{
	char **names = NULL, *src = NULL, *log = NULL;
	int nn = 0, cap = 0, rc = -1;
	struct shared_mod *sm = NULL;
	for (int i = 0; i < np; i++)
		for (int k = 0; k < plans[i]->nnames; k++) {
			int seen = 0;
			for (int j = 0; j < nn && !seen; j++)
				seen = strcmp(names[j], plans[i]->names[k]) == 0;
			if (seen)
				continue;
			if (nn == cap) {
				cap = cap ? cap * 2 : 32;
				char **x = realloc(names, sizeof(char *) * (size_t)cap);
				if (x == NULL)
					goto oom;
				names = x;
			}
			names[nn++] = plans[i]->names[k];
		}
	if (nn > 1)
		qsort(names, (size_t)nn, sizeof(char *), base_strptr_cmp);
	if ((sm = calloc(1, sizeof(*sm))) == NULL)
		goto oom;
	if (nn > 0) {
		if ((src = oplib_source(err, errlen)) == NULL)
			goto out;
		if (gpu_backend_of(d) == GPU_BACKEND_CPU) {
			if (cpu_oplib_load(src, names, nn, sm, err, errlen))
				goto out;
		} else {
			double t0 = base_now_ms();
			if (gpu_module_compile(d, "oplib.cu", src, (const char *const *)names, nn, &sm->mod, &log,
					       err, errlen)) {
				if (log && *log) {
					size_t used = strlen(err);
					snprintf(err + used, errlen - used, ": %.*s", (int)strcspn(log, "\n"), log);
				}
				goto out;
			}
			sm->compile_ms = base_now_ms() - t0;
		}
	}
	for (int i = 0; i < np; i++) {
		struct eager_plan *p = plans[i];
		size_t n = (size_t)(p->nnames ? p->nnames : 1);
		if (sm->handle ? (p->tramps = calloc(n, sizeof(*p->tramps))) == NULL
			       : (p->kernels = calloc(n, sizeof(*p->kernels))) == NULL)
			goto oom;
		for (int k = 0; k < p->nnames; k++) {
			if (sm->handle) {
				char sym[32];
				char **at = bsearch(&p->names[k], names, (size_t)nn, sizeof(char *), base_strptr_cmp);
				void *fn = NULL;
				if (at) {
					snprintf(sym, sizeof(sym), "pf_tramp_%d", (int)(at - names));
					fn = dlsym(sm->handle, sym);
				}
				memcpy(&p->tramps[k], &fn, sizeof(fn));
				if (fn != NULL)
					continue;
			} else if ((p->kernels[k] = gpu_module_kernel(sm->mod, p->names[k])) != NULL) {
				continue;
			}
			snprintf(err, errlen, "eager: the op library has no kernel '%s'", p->names[k]);
			goto out;
		}
	}
	for (int i = 0; i < np; i++) {  /* every plan resolved: they share it */
		plans[i]->mod = sm;
		sm->refs++;
	}
	sm->blas = blas;
	sm->dnn = dnn;
	rc = 0;
	goto out;
oom:
	snprintf(err, errlen, "eager: out of memory");
out:
	if (sm && sm->refs == 0) {      /* failed: no plan holds it */
		if (sm->mod)
			gpu_module_free(sm->mod);
		if (sm->handle)
			gpu_dlclose(sm->handle);
		free(sm);
	}
	free(names);
	free(src);
	free(log);
	return rc;
}

/* Whether GEMMs and convolutions should be planned as cuBLAS / cuDNN calls:
 * the cuda backend, and PASSFS_EAGER_BLAS is not "0". */
static int libs_wanted(struct gpu_dev *d)
{
	const char *env = getenv("PASSFS_EAGER_BLAS");
	if (env && strcmp(env, "0") == 0)
		return 0;
	return gpu_backend_of(d) == GPU_BACKEND_CUDA;
}

static void plans_free(struct eager_plan **plans, int np)
{
	for (int i = 0; i < np; i++) {
		eg_plan_release(plans[i]);
		plans[i] = NULL;
	}
}

/* cuDNN's part of planning, once the handle exists: each convolution's
 * descriptors, algorithm and workspace size (the workspace buffer takes
 * it). */
static int dnn_finalize(struct eager_plan *p, struct dnn_handle *h, char *err, size_t errlen)
{
	for (int i = 0; i < p->nsteps; i++) {
		struct step *s = &p->steps[i];
		if (s->kind != STEP_DNN_CONV)
			continue;
		if (dnn_conv_setup(h, &s->p.dc, err, errlen))
			return -1;
		p->bufs[s->ws_buf].bytes = s->p.dc.ws_bytes;
	}
	return 0;
}

static void note_add(char *note, size_t len, const char *what)
{
	size_t used = strlen(note), n = strlen(what);
	if (used > 0 && used + 2 < len) {
		memcpy(note + used, "; ", 2);
		used += 2;
	}
	if (n > len - used - 1)
		n = len - used - 1;
	memcpy(note + used, what, n);
	note[used + n] = 0;
}

/* Plans the np variants, creates the libraries' handles their steps need
 * (when a library cannot be loaded or set up, plans again without it and
 * notes why: those ops then run on the op library's kernels), lays out each
 * plan's arena, and compiles the kernels for all of them at once. */
static int prepare_plans(struct gpu_dev *d, const struct graph_variant *vs, int np, int gpu_geometry,
			 struct eager_plan **plans, char *err, size_t errlen)
{
	int use_blas = libs_wanted(d), use_dnn = use_blas, n_blas = 0, n_dnn = 0;
	struct blas_handle *blas = NULL;
	struct dnn_handle *dnn = NULL;
	char note[600] = "", why[300];
	for (int i = 0; i < np; i++)
		plans[i] = NULL;
	for (int again = 1; again;) {
		again = 0;
		n_blas = n_dnn = 0;
		for (int i = 0; i < np; i++) {
			if ((plans[i] = eg_plan_variant(d, &vs[i], use_blas, use_dnn, gpu_geometry, err, errlen)) == NULL)
				goto fail;
			n_blas += plans[i]->n_blas;
			n_dnn += plans[i]->n_dnn;
		}
		if (n_blas > 0 && blas == NULL && (blas = blas_create(d, why, sizeof(why))) == NULL) {
			note_add(note, sizeof(note), why);
			use_blas = 0;
			again = 1;
		}
		if (!again && n_dnn > 0 && dnn == NULL && (dnn = dnn_create(d, why, sizeof(why))) == NULL) {
			note_add(note, sizeof(note), why);
			use_dnn = 0;
			again = 1;
		}
		for (int i = 0; i < np && !again && n_dnn > 0; i++)
			if (dnn_finalize(plans[i], dnn, why, sizeof(why))) {
				note_add(note, sizeof(note), why);
				use_dnn = 0;
				again = 1;
			}
		if (again)
			plans_free(plans, np);
	}
	if (n_blas == 0) {      /* a handle from an earlier round no plan uses */
		blas_destroy(blas);
		blas = NULL;
	}
	if (n_dnn == 0) {
		dnn_destroy(dnn);
		dnn = NULL;
	}
	for (int i = 0; i < np; i++) {
		struct eager_plan *p = plans[i];
		snprintf(p->note, sizeof(p->note), "%s", note);
		snprintf(p->libs, sizeof(p->libs), "%s%s%s", p->n_blas ? blas_version() : "",
			 p->n_blas && p->n_dnn ? ", " : "", p->n_dnn ? dnn_version() : "");
		if ((p->arena_bytes = eg_pack_arena(p)) == SIZE_MAX) {
			snprintf(err, errlen, "eager: variant '%s': out of memory", p->variant);
			goto fail;
		}
	}
	if (compile_plans(d, plans, np, blas, dnn, err, errlen) == 0)
		return 0;
fail:
	blas_destroy(blas);
	dnn_destroy(dnn);
	plans_free(plans, np);
	return -1;
}

struct eager_plan *eager_prepare(struct gpu_dev *d, const struct graph_variant *v, char *err, size_t errlen)
{
	struct eager_plan *p = NULL;
	return prepare_plans(d, v, 1, 0, &p, err, errlen) ? NULL : p;
}

struct eager_plan *eager_prepare_gpu_geometry(struct gpu_dev *d, const struct graph_variant *v, char *err,
					      size_t errlen)
{
	struct eager_plan *p = NULL;
	return prepare_plans(d, v, 1, 1, &p, err, errlen) ? NULL : p;
}

int eager_is_gpu_geometry(const struct eager_plan *p)
{
	return !p->is_cpu;
}

int eager_prepare_task(struct gpu_dev *d, const struct graph_task *t, struct eager_plan **plans, char *err,
		       size_t errlen)
{
	return prepare_plans(d, t->variants, t->n_variants, 0, plans, err, errlen);
}
