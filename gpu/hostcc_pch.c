/* hostcc_pch.c - the precompiled passfs.h (hostcc_int.h). */
#define _GNU_SOURCE
#include "hostcc_int.h"

/* Device-only headers a pass may include on the cuda backend: in the stub
 * compile only their names have to resolve (the bodies that use them are
 * gone); the namespaces exist for `using namespace nvcuda;` and aliases. */
static const struct {
	const char *path;
	const char *body;
} device_stand_ins[] = {
	{"mma.h", "#pragma once\n#include <passfs.h>\nnamespace nvcuda { namespace wmma {\n"
		  "struct matrix_a; struct matrix_b; struct accumulator; struct row_major; struct col_major;\n"
		  "enum layout_t { mem_row_major, mem_col_major };\n"
		  "template <typename Use, int m, int n, int k, typename T, typename Layout = void> class fragment;\n"
		  "namespace precision { struct tf32; struct b1; struct s4; struct u4; }\n"
		  "} }\n"},
	{"cooperative_groups.h", "#pragma once\n#include <passfs.h>\nnamespace cooperative_groups {}\n"},
	{"cooperative_groups/reduce.h", "#pragma once\n#include <cooperative_groups.h>\n"},
	{"cooperative_groups/memcpy_async.h", "#pragma once\n#include <cooperative_groups.h>\n"},
	{"cuda_pipeline.h", "#pragma once\n#include <passfs.h>\n"},
	{"cuda_awbarrier.h", "#pragma once\n#include <passfs.h>\n"},
};

/* --- precompiled passfs.h -------------------------------------------------
 *
 * About half of a small pass's host compile is parsing passfs.h (the
 * emulation layer and its libstdc++ headers).  A precompiled header saves
 * that: <cache>/pch-<key>/ holds passfs.h.gch plus a copy of the pass API
 * headers (GCC looks for NAME.gch in each include directory just before
 * NAME itself, and a later #include <passfs.h> must find the header in the
 * same directory), and the compile puts that directory first on its include
 * path.  The key hashes the compiler (path, size, mtime), its extra words,
 * the flags and every API header's bytes, so any change builds a new one; a
 * .gch GCC finds unusable is skipped, never an error.  Built on first use
 * into a temporary directory renamed into place (concurrent builders: the
 * first rename wins).  PASSFS_PCH=0 turns it off; PASSFS_CACHE_DIR=off too. */

static uint64_t fnv_str(uint64_t h, const char *s)
{
	return base_fnv1a_step(h, s, strlen(s) + 1);
}

/* The API headers (*.h) of dir, sorted, into names[] (malloc'd); count. */
static int api_headers(const char *dir, char ***names)
{
	DIR *d = opendir(dir);
	*names = NULL;
	if (d == NULL)
		return -1;
	int n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);
		if (l < 3 || strcmp(e->d_name + l - 2, ".h") != 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			char **nn = realloc(*names, sizeof(char *) * (size_t)cap);
			if (nn == NULL)
				break;
			*names = nn;
		}
		if (((*names)[n] = strdup(e->d_name)) != NULL)
			n++;
	}
	closedir(d);
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && strcmp((*names)[j - 1], (*names)[j]) > 0; j--) {
			char *t = (*names)[j];
			(*names)[j] = (*names)[j - 1];
			(*names)[j - 1] = t;
		}
	return n;
}

/* Finds or builds the precompiled header for this compiler and these
 * flags; writes its directory into out and returns 0, or -1 (compile
 * without it). */
/* The API headers in inc, each read once: names, bytes and lengths (free
 * with api_headers_free), each name, length and its bytes hashed into *h.
 * Returns how many, or -(how many) - 1 when there are none, memory ran out
 * or one could not be read (what was read is hashed and returned all the
 * same). */
static int api_headers_read(const char *inc, uint64_t *h, char ***names, char ***data, size_t **lens)
{
	int n = api_headers(inc, names);
	if (n < 0)
		n = 0;
	*data = n > 0 ? calloc((size_t)n, sizeof(char *)) : NULL;
	*lens = n > 0 ? calloc((size_t)n, sizeof(size_t)) : NULL;
	int ok = *data != NULL && *lens != NULL;        /* and so n > 0 */
	for (int i = 0; i < n && ok; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", inc, (*names)[i]);
		int rerr = 0;   /* an API header is far below 64 MiB */
		ok = ((*data)[i] = base_read_file(path, (size_t)64 << 20, &(*lens)[i], &rerr)) != NULL;
		if (ok) {
			*h = fnv_str(*h, (*names)[i]);
			*h = base_fnv1a_step(*h, &(*lens)[i], sizeof(*lens)[i]);
			*h = base_fnv1a_step(*h, (*data)[i], (*lens)[i]);
		}
	}
	return ok ? n : -n - 1;
}

static void api_headers_free(char **names, char **data, size_t *lens, int n)
{
	for (int i = 0; i < n; i++) {
		free(names[i]);
		if (data)
			free(data[i]);
	}
	free(names);
	free(data);
	free(lens);
}

static int pch_dir(const char *prog, char *const *extra, int n_extra, const char *const *flags, const char *inc,
		   char *const *env, int timeout_s, char *out, size_t outlen)
{
	const char *off = getenv("PASSFS_PCH");
	if (off != NULL && strcmp(off, "0") == 0)
		return -1;
	char root[3072];
	if (gpu_cache_dir("pch", root, sizeof root) != 0)
		return -1;
	uint64_t h = BASE_FNV1A_BASIS;
	struct stat st;
	if (stat(prog, &st) != 0)
		return -1;
	h = fnv_str(h, prog);
	h = base_fnv1a_step(h, &st.st_size, sizeof st.st_size);
	h = base_fnv1a_step(h, &st.st_mtime, sizeof st.st_mtime);
	for (int i = 0; i < n_extra; i++)
		h = fnv_str(h, extra[i]);
	for (int i = 0; flags[i] != NULL; i++)
		h = fnv_str(h, flags[i]);
	/* the API headers, read once: hashed into the key, copied on a build */
	char **names, **data;
	size_t *lens;
	char path[4096];
	int n = api_headers_read(inc, &h, &names, &data, &lens);
	int ok = n >= 0;
	if (n < 0)
		n = -n - 1;
	snprintf(out, outlen, "%s/pch-%016llx", root, (unsigned long long)h);
	snprintf(path, sizeof path, "%s/passfs.h.gch", out);
	int have = ok && stat(path, &st) == 0;
	/* Build: headers copied, stand-ins beside them, then g++ -x c++-header. */
	char tmp[3200] = "", stubs[3300];
	if (ok && !have) {
		snprintf(tmp, sizeof tmp, "%s/pch-tmp-XXXXXX", root);
		ok = mkdtemp(tmp) != NULL;
		for (int i = 0; i < n && ok; i++) {
			snprintf(path, sizeof path, "%s/%s", tmp, names[i]);
			ok = hostcc_write_file(path, data[i], lens[i]) == 0;
		}
	}
	api_headers_free(names, data, lens, n);
	if (have || !ok) {
		if (tmp[0]) {
			/* the copy failed: perhaps another compile built it meanwhile */
			base_rmtree(tmp);
			snprintf(path, sizeof path, "%s/passfs.h.gch", out);
			return stat(path, &st) == 0 ? 0 : -1;
		}
		return have ? 0 : -1;
	}
	snprintf(stubs, sizeof stubs, "%s/stand-ins", tmp);
	ok = mkdir(stubs, 0700) == 0 && hostcc_write_stand_ins(stubs, path, sizeof path) == 0;
	if (ok) {
		char hdr[3400], gch[3400], inc_opt[3400], stub_opt[3400];
		snprintf(hdr, sizeof hdr, "%s/passfs.h", tmp);
		snprintf(gch, sizeof gch, "%s/passfs.h.gch", tmp);
		snprintf(inc_opt, sizeof inc_opt, "-I%s", tmp);
		snprintf(stub_opt, sizeof stub_opt, "-I%s", stubs);
		char *argv[80];
		int na = 0;
		argv[na++] = (char *)prog;
		for (int i = 0; i < n_extra && na < 60; i++)
			argv[na++] = extra[i];
		for (int i = 0; flags[i] != NULL && na < 70; i++)
			argv[na++] = (char *)flags[i];
		argv[na++] = stub_opt;
		argv[na++] = inc_opt;
		argv[na++] = "-x";
		argv[na++] = "c++-header";
		argv[na++] = hdr;
		argv[na++] = "-o";
		argv[na++] = gch;
		argv[na] = NULL;
		struct tail t = {.p = malloc(HOSTCC_LOG_CAP)};
		int timed_out = 0;
		char e[256];
		int status = t.p ? hostcc_run_child(argv, env, timeout_s, HOSTCC_AS_LIMIT, &t, &timed_out, e, sizeof e) : -1;
		free(t.p);
		ok = status != -1 && !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0;
	}
	if (ok)
		base_rmtree(stubs);
	if (!ok || rename(tmp, out) != 0) {
		/* failed, or another compile put it there first */
		base_rmtree(stubs);
		base_rmtree(tmp);
		snprintf(path, sizeof path, "%s/passfs.h.gch", out);
		return stat(path, &st) == 0 ? 0 : -1;
	}
	return 0;
}

uint64_t hostcc_api_hash(const char *inc)
{
	if (inc == NULL)
		inc = hostcc_include_dir();
	uint64_t h = fnv_str(BASE_FNV1A_BASIS, inc);
	char **names, **data;
	size_t *lens;
	int n = api_headers_read(inc, &h, &names, &data, &lens);
	api_headers_free(names, data, lens, n < 0 ? -n - 1 : n);
	return h;
}

/* The code-generation flags into cg (room for 24, NULL-terminated); a
 * precompiled header must share them.  Stub bodies are identical: without
 * -fno-ipa-icf g++ may fold kernels into one address and the kernel table
 * could not tell them apart. */
static void code_flags(int device_stubs, const char **cg)
{
	static const char *const base[] = {
		"-std=c++17", "-O2", "-fPIC", "-fno-strict-aliasing", "-fno-math-errno",
		"-Wno-unknown-pragmas", "-mf16c", "-fno-exceptions", "-fno-rtti", "-fno-stack-protector",
		"-fno-threadsafe-statics", "-fno-gnu-unique", "-fdiagnostics-color=never", "-pipe", NULL
	};
	int k = 0;
	for (; base[k] != NULL; k++)
		cg[k] = base[k];
	if (device_stubs) {
		cg[k++] = "-fno-ipa-icf";
		cg[k++] = "-DPF_DEVICE_STUBS=1";
	}
	cg[k] = NULL;
}

int hostcc_pch_prepare(int device_stubs, const char *include_dir, char *out, size_t outlen)
{
	char store[1024];
	char *words[16];
	const char *cg[24];
	int nw;
	char *prog = hostcc_compiler_find(words, 16, store, sizeof store, &nw);
	char **env = prog != NULL ? hostcc_child_env() : NULL;
	int rc = -1;
	code_flags(device_stubs, cg);
	if (env != NULL)
		rc = pch_dir(prog, words + 1, nw - 1, cg, include_dir ? include_dir : hostcc_include_dir(), env,
			     HOSTCC_DEFAULT_TIMEOUT_S, out, outlen);
	hostcc_child_env_free(env);
	free(prog);
	return rc;
}

int hostcc_compiler_path(char *out, size_t outlen)
{
	char store[1024];
	char *words[16];
	int nw;
	char *prog = hostcc_compiler_find(words, 16, store, sizeof store, &nw);
	if (prog == NULL)
		return -1;
	int n = snprintf(out, outlen, "%s", prog);
	free(prog);
	return n > 0 && (size_t)n < outlen ? 0 : -1;
}

enum hostcc_status hostcc_compile(const struct hostcc_request *req, struct hostcc_output *out,
				  char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	const char *label = req->label ? req->label : "source.cu";
	int timeout_s = req->timeout_s > 0 ? req->timeout_s : HOSTCC_DEFAULT_TIMEOUT_S;
	const char *inc = req->include_dir ? req->include_dir : hostcc_include_dir();
	enum hostcc_status st = HOSTCC_FAILED;
	char *prog = NULL, **env = NULL, *src = NULL;
	unsigned long long as_limit = req->as_limit > 0 && req->as_limit < HOSTCC_AS_LIMIT ? req->as_limit
											: HOSTCC_AS_LIMIT;
	struct tail t = {0};
	char pch[3200] = "";
	int have_pch = 0;

	const char *tmp = getenv("TMPDIR");
	if (tmp == NULL || *tmp == '\0')
		tmp = "/tmp";
	char dir[3072];
	if (strlen(tmp) > 2048) {
		snprintf(err, errlen, "%s: TMPDIR is too long", label);
		goto done;
	}
	snprintf(dir, sizeof dir, "%s/passfs-cc-XXXXXX", tmp);
	if (mkdtemp(dir) == NULL) {
		snprintf(err, errlen, "%s: cannot create a temporary directory under %s: %s", label, tmp,
			 strerror(errno));
		goto done;
	}
	out->dir = strdup(dir);
	if (out->dir == NULL)
		goto oom;

	char path[4096], incdir[3200], so[3200];
	snprintf(incdir, sizeof incdir, "%s/include", dir);
	if (mkdir(incdir, 0700) != 0) {
		snprintf(err, errlen, "%s: cannot create %s: %s", label, incdir, strerror(errno));
		goto done;
	}
	if (hostcc_write_stand_ins(incdir, path, sizeof path) != 0) {
		snprintf(err, errlen, "%s: cannot write %s: %s", label, path, strerror(errno));
		goto done;
	}
	for (size_t i = 0; req->device_stubs && i < sizeof device_stand_ins / sizeof device_stand_ins[0]; i++) {
		const char *slash = strchr(device_stand_ins[i].path, '/');
		if (slash != NULL) {
			snprintf(path, sizeof path, "%s/%.*s", incdir, (int)(slash - device_stand_ins[i].path),
				 device_stand_ins[i].path);
			mkdir(path, 0700);
		}
		snprintf(path, sizeof path, "%s/%s", incdir, device_stand_ins[i].path);
		if (hostcc_write_file(path, device_stand_ins[i].body, strlen(device_stand_ins[i].body)) != 0) {
			snprintf(err, errlen, "%s: cannot write %s: %s", label, path, strerror(errno));
			goto done;
		}
	}
	size_t srclen;
	src = hostcc_build_source(req, &srclen);
	if (src == NULL)
		goto oom;
	snprintf(path, sizeof path, "%s/src.cc", dir);
	if (hostcc_write_file(path, src, srclen) != 0) {
		snprintf(err, errlen, "%s: cannot write %s: %s", label, path, strerror(errno));
		goto done;
	}
	snprintf(so, sizeof so, "%s/pass.so", dir);

	char store[1024];
	char *words[16];
	int nw;
	if ((prog = hostcc_compiler_find(words, 16, store, sizeof store, &nw)) == NULL) {
		snprintf(err, errlen, "%s: no host C++ compiler: '%s' not found (set PASSFS_CXX)", label,
			 nw ? words[0] : "");
		goto done;
	}
	char inc_opt[4200], incdir_opt[4300], pch_opt[3300];
	snprintf(inc_opt, sizeof inc_opt, "-I%s", inc);
	snprintf(incdir_opt, sizeof incdir_opt, "-I%s", incdir);
	const char *cg[24];
	code_flags(req->device_stubs, cg);
	const char *fixed[] = {
		"-shared", "-nostartfiles", "-nostdlib", "-Wl,--no-undefined", "-Wl,-z,noexecstack", incdir_opt,
		inc_opt, "-include", "passfs.h", "-x", "c++", path, "-x", "none", "-o", so, "-lm", "-lc", "-lgcc", NULL
	};
	if ((env = hostcc_child_env()) == NULL || (t.p = malloc(HOSTCC_LOG_CAP)) == NULL)
		goto oom;
	double t_pch = base_now_ms();
	have_pch = pch_dir(prog, words + 1, nw - 1, cg, inc, env, timeout_s, pch, sizeof pch) == 0;
	out->pch_ms = base_now_ms() - t_pch;
	out->used_pch = have_pch;
	snprintf(pch_opt, sizeof pch_opt, "-I%s", pch);
	char *argv[80];
	int na = 0;
	argv[na++] = prog;
	for (int i = 1; i < nw; i++)
		argv[na++] = words[i];
	for (int i = 0; cg[i] != NULL; i++)
		argv[na++] = (char *)cg[i];
	if (have_pch) {
		/* a header GCC cannot use says so in the log (a test checks
		 * that the one passfs built is used) */
		argv[na++] = "-Winvalid-pch";
		argv[na++] = pch_opt;
	}
	for (int i = 0; fixed[i] != NULL; i++)
		argv[na++] = (char *)fixed[i];
	argv[na] = NULL;

	double t0 = base_now_ms();
	int status = hostcc_run_child(argv, env, timeout_s, as_limit, &t, &out->timed_out, err, errlen);
	out->ms = base_now_ms() - t0;
	if (status == -1 && !out->timed_out)
		goto done;
	if (out->timed_out) {
		snprintf(err, errlen, "%s: the host compile timed out after %d s", label, timeout_s);
		st = HOSTCC_COMPILE_ERROR;
	} else if (WIFSIGNALED(status)) {
		snprintf(err, errlen, "%s: the host compiler was killed by signal %d", label,
			 WTERMSIG(status));
		st = HOSTCC_COMPILE_ERROR;
	} else if (WEXITSTATUS(status) == 127 && t.len > 0 &&
		   strstr(t.p, "host compiler: cannot execute") != NULL) {
		snprintf(err, errlen, "%s: cannot execute the host compiler %s", label, prog);
		st = HOSTCC_FAILED;
	} else if (WEXITSTATUS(status) != 0) {
		snprintf(err, errlen, "%s: the host compile failed", label);
		st = HOSTCC_COMPILE_ERROR;
	} else if ((out->so_path = strdup(so)) == NULL) {
		goto oom;
	} else {
		st = HOSTCC_OK;
	}
	goto done;
oom:
	snprintf(err, errlen, "%s: out of memory", label);
	st = HOSTCC_FAILED;
done:
	if (t.p != NULL && out->dir != NULL)
		out->log = hostcc_finish_log(&t, out->dir, inc, have_pch ? pch : NULL);
	if (out->log == NULL)
		out->log = strdup("");
	free(t.p);
	hostcc_child_env_free(env);
	free(prog);
	free(src);
	return st;
}

int hostcc_compiler_version(char *out, size_t len)
{
	char store[1024];
	char *words[16];
	int nw;
	char *prog = hostcc_compiler_find(words, 15, store, sizeof store, &nw);
	if (prog == NULL) {
		snprintf(out, len, "'%s' not found (set PASSFS_CXX)", nw ? words[0] : "");
		return -1;
	}
	char *argv[18];
	argv[0] = prog;
	for (int i = 1; i < nw; i++)
		argv[i] = words[i];
	argv[nw] = "--version";
	argv[nw + 1] = NULL;
	char **env = hostcc_child_env();
	struct tail t = {.p = malloc(HOSTCC_LOG_CAP)};
	int timed_out = 0, rc = -1;
	char e[256];
	int status = t.p && env ? hostcc_run_child(argv, env, 20, HOSTCC_AS_LIMIT, &t, &timed_out, e, sizeof e) : -1;
	if (status != -1 && !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0 && t.len > 0) {
		size_t n = strcspn(t.p, "\n");
		n = n < t.len ? n : t.len;
		snprintf(out, len, "%.*s (%s)", (int)n, t.p, prog);
		rc = 0;
	} else {
		snprintf(out, len, "%s --version failed%s%s", prog, status == -1 ? ": " : "", status == -1 ? e : "");
	}
	free(t.p);
	hostcc_child_env_free(env);
	free(prog);
	return rc;
}
