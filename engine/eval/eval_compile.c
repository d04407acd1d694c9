/* eval_compile.c - the pass compiled in a child process with a wall clock
 * and an address-space limit (eval_int.h), and the compiled module as bytes
 * to cross from that child to the parent and on to the pass worker. */
#define _GNU_SOURCE
#include "eval_int.h"

/* ---- a compiled pass as bytes ---------------------------------------------------- */

/* A string as a length (UINT32_MAX for NULL) and its bytes. */
static void mem_blob(FILE *f, const char *s)
{
	uint32_t n = s ? (uint32_t)strlen(s) : UINT32_MAX;
	fwrite(&n, sizeof(n), 1, f);
	if (s)
		fwrite(s, 1, n, f);
}

/* n bytes into dst (zeros, and r->bad, when they are not there) */
static void take_into(struct wire_in *r, void *dst, size_t n)
{
	const void *b = wire_take_bytes(r, n);
	if (b)
		memcpy(dst, b, n);
	else
		memset(dst, 0, n);
}

static char *blob_read(struct wire_in *r)
{
	uint32_t n;
	take_into(r, &n, sizeof(n));
	if (r->bad || n == UINT32_MAX)
		return NULL;
	const char *b = wire_take_bytes(r, n);
	char *s = b ? malloc((size_t)n + 1) : NULL;
	if (s == NULL) {
		r->bad = 1;
		return NULL;
	}
	memcpy(s, b, n);
	s[n] = 0;
	return s;
}

int eval_module_pack(const struct pass_module *m, char **out, size_t *outlen)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (f == NULL)
		return -1;
	struct module_head h = {.n_names = m->names.n, .has_lowered = m->lowered != NULL, .nvrtc_ms = m->nvrtc_ms,
				.host_ms = m->host_ms};
	snprintf(h.note, sizeof(h.note), "%s", m->note);
	fwrite(&h, sizeof(h), 1, f);
	const char *strs[3] = {m->label, m->dir, m->so_path};
	for (int i = 0; i < 3; i++)
		mem_blob(f, strs[i]);
	for (int i = 0; i < m->names.n; i++) {
		mem_blob(f, m->names.expr[i]);
		fwrite(&m->names.line[i], sizeof(int), 1, f);
	}
	for (int i = 0; m->lowered && i < m->names.n; i++)
		mem_blob(f, m->lowered[i]);
	mem_blob(f, m->ptx);
	mem_blob(f, m->cubin_path);
	mem_blob(f, m->host_log);
	int bad = ferror(f);
	if (fclose(f) || bad) {
		free(buf);
		return -1;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

/* NULL when the bytes are short or memory runs out.  own_dir: the module
 * owns its directory (pass_module_free removes it); a worker's copy does
 * not. */
struct pass_module *eval_module_unpack(struct wire_in *rb, int own_dir)
{
	struct module_head h;
	take_into(rb, &h, sizeof(h));
	struct pass_module *m = rb->bad || h.n_names < 0 || h.n_names > 100000 ? NULL : calloc(1, sizeof(*m));
	if (m == NULL)
		return NULL;
	m->label = blob_read(rb);
	m->dir = blob_read(rb);
	if (!own_dir) {
		free(m->dir);
		m->dir = NULL;
	}
	m->so_path = blob_read(rb);
	m->nvrtc_ms = h.nvrtc_ms;
	m->host_ms = h.host_ms;
	memcpy(m->note, h.note, sizeof(m->note));
	m->note[sizeof(m->note) - 1] = 0;
	if (h.n_names > 0 && !rb->bad) {
		m->names.expr = calloc((size_t)h.n_names, sizeof(char *));
		m->names.line = calloc((size_t)h.n_names, sizeof(int));
		if (m->names.expr == NULL || m->names.line == NULL)
			rb->bad = 1;
		for (int i = 0; i < h.n_names && !rb->bad; i++) {
			m->names.expr[i] = blob_read(rb);
			take_into(rb, &m->names.line[i], sizeof(int));
			m->names.n = i + 1;
		}
		if (h.has_lowered && !rb->bad) {
			if ((m->lowered = calloc((size_t)h.n_names, sizeof(char *))) == NULL)
				rb->bad = 1;
			for (int i = 0; i < h.n_names && !rb->bad; i++)
				m->lowered[i] = blob_read(rb);
		}
	}
	m->ptx = blob_read(rb);
	m->cubin_path = blob_read(rb);
	m->host_log = blob_read(rb);
	if (rb->bad || m->label == NULL || m->so_path == NULL) {
		pass_module_free(m);
		return NULL;
	}
	return m;
}

/* ---- compiling in a child ----------------------------------------------------------- */

/* The child sends its pass_module field by field; a field added to struct
 * pass_module must be added here too (this assertion trips first). */
_Static_assert(sizeof(struct pass_module) == 256, "struct pass_module changed: update eval_compile_isolated()");

/* The compile timeout: PASSFS_COMPILE_TIMEOUT_S (tests), else 120 s. */
static double compile_timeout_s(void)
{
	const char *e = getenv("PASSFS_COMPILE_TIMEOUT_S");
	double t = e ? atof(e) : 0;
	return t > 0 ? t : COMPILE_TIMEOUT_S;
}

static void __attribute__((noreturn)) compile_child(const struct ejob *job, const struct pass_options *po,
						   const char *tmp, int fd)
{
	struct compile_head h;
	struct pass_module *m = NULL;
	memset(&h, 0, sizeof(h));
	eval_prctl_pdeathsig_kill();
	/* The compilers' scratch directory: the parent removes it whatever
	 * happens here. */
	setenv("TMPDIR", tmp, 1);
	/* The compilers read what the pass names (#line, __has_include,
	 * .incbin): from here on they see the toolchain, the API headers and
	 * tmp, within the jail's limits (jail.h). */
	struct jail_info ji;
	char jerr[300];
	if (jail_compile(tmp, po->allow_device_only, (int)compile_timeout_s() + 5, &ji, jerr, sizeof(jerr)) != 0) {
		h.rc = -1;
		h.scan_rc = 2;
		h.diag.verdict = PASS_INTERNAL_ERROR;
		snprintf(h.diag.message, sizeof(h.diag.message), "%s", jerr);
		_exit(eval_send_all(fd, &h, sizeof(h)) ? 3 : 0);
	}
	h.jail_kind = (int)ji.kind;
	h.jail_ms = ji.ms;
	snprintf(h.jail_note, sizeof(h.jail_note), "%s", ji.note);
	h.rc = pass_compile_opts(job->pass_label, job->pass_src, job->pass_len, po, &m, &h.diag);
	h.scan_rc = 2;
	if (h.rc == 0 && m != NULL) {
		h.has_mod = 1;
		if (m->ptx != NULL)
			h.scan_rc = integrity_scan_ptx(m->ptx, job->pass_label ? job->pass_label : "pass.c", h.scan_msg,
						       sizeof(h.scan_msg), &h.scan_line, &h.scan_ms);
	}
	int bad = eval_send_all(fd, &h, sizeof(h));
	if (!bad && h.has_mod) {
		char *buf;
		size_t len;
		bad = eval_module_pack(m, &buf, &len) || eval_send_all(fd, buf, len);
		if (!bad)
			free(buf);
	}
	/* No pass_module_free: its directory now belongs to the parent. */
	_exit(bad ? 3 : 0);
}

/* Runs pass_compile_opts and the device-code scan in a child process with
 * a wall-clock limit, in the compile jail (jail.h: its kind in
 * scan->jail_*).  Returns 0 with *mod (or NULL) and *diag exactly as
 * pass_compile_opts would (PASS_INTERNAL_ERROR when the jail could not be
 * entered), the device-code scan's result in scan (rc 2: not run); -1 with
 * err when passfs itself failed (no fork, no temporary directory).  *tmpdir receives a directory the caller
 * removes (rm_tree) after pass_module_free. */
int eval_compile_isolated(const struct ejob *job, const struct pass_options *po, struct pass_module **mod,
			    struct pass_diag *diag, struct scan_result *scan, char *tmpdir, size_t tmplen, char *err,
			    size_t errlen)
{
	const char *label = job->pass_label ? job->pass_label : "pass.c";
	const char *root = getenv("TMPDIR");
	*mod = NULL;
	scan->rc = 2;
	memset(diag, 0, sizeof(*diag));
	snprintf(tmpdir, tmplen, "%s/passfs-compile-XXXXXX", root && *root ? root : "/tmp");
	if (mkdtemp(tmpdir) == NULL) {
		snprintf(err, errlen, "cannot create a compile directory: %s", strerror(errno));
		tmpdir[0] = 0;
		return -1;
	}
	/* Loaded here once, so every child inherits it instead of loading it. */
	char why[256];
	(void)nvrtc_available(why, sizeof(why));
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	pid_t pid = gpu_fork_worker(&pfd[1], 1);
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		close(pfd[0]);
		compile_child(job, po, tmpdir, pfd[1]);
	}
	close(pfd[1]);
	double limit = compile_timeout_s(), deadline = base_now_ms() + limit * 1e3;
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0;
	int timed_out = 0, oom = 0;
	for (;;) {
		double left = deadline - base_now_ms();
		if (left <= 0 || eval_is_cancelled(job->hooks.cancel)) {
			timed_out = 1;
			break;
		}
		struct pollfd pf = {pfd[0], POLLIN, 0};
		int n = poll(&pf, 1, (int)(left > 100 ? 100 : left + 1));
		if (n < 0 && errno != EINTR)
			break;
		if (n <= 0)
			continue;
		if (cap - len < 65536) {
			unsigned char *nb = realloc(buf, cap ? cap * 2 : 1 << 20);
			if (nb == NULL) {
				oom = 1;
				break;
			}
			buf = nb;
			cap = cap ? cap * 2 : 1 << 20;
		}
		ssize_t k = read(pfd[0], buf + len, cap - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		len += (size_t)k;
	}
	close(pfd[0]);
	int st = 0;
	if (timed_out || oom)
		kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	struct compile_head h;
	struct wire_in rb = {.p = (const unsigned char *)buf, .len = len};
	take_into(&rb, &h, sizeof(h));
	if (timed_out || oom || rb.bad || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		free(buf);
		diag->verdict = PASS_COMPILE_ERROR;
		if (oom)
			snprintf(diag->message, sizeof(diag->message), "%s: out of memory reading the compile result", label);
		else if (timed_out)
			snprintf(diag->message, sizeof(diag->message),
				 "%s: the compile did not finish within %.0f s (template or constexpr recursion?)", label,
				 limit);
		else if (WIFSIGNALED(st))
			snprintf(diag->message, sizeof(diag->message),
				 "%s: the compiler died (%s) - out of memory (a compile may add %zu GiB)?", label,
				 strsignal(WTERMSIG(st)), (size_t)(JAIL_AS_EXTRA >> 30));
		else
			snprintf(diag->message, sizeof(diag->message), "%s: the compiler failed (status %d)", label,
				 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		if (!timed_out && !oom && !WIFSIGNALED(st) && rb.bad)
			diag->verdict = PASS_INTERNAL_ERROR;
		return 0;
	}
	*diag = h.diag;
	scan->rc = h.scan_rc;
	scan->line = h.scan_line;
	scan->ms = h.scan_ms;
	snprintf(scan->msg, sizeof(scan->msg), "%s", h.scan_msg);
	scan->jail_kind = h.jail_kind;
	scan->jail_ms = h.jail_ms;
	snprintf(scan->jail_note, sizeof(scan->jail_note), "%s", h.jail_note);
	if (h.rc != 0 || !h.has_mod) {
		free(buf);
		return 0;
	}
	struct pass_module *m = eval_module_unpack(&rb, 1);
	free(buf);
	if (m == NULL) {
		snprintf(err, errlen, "the compile child's result was truncated");
		return -1;
	}
	*mod = m;
	return 0;
}
