/* hostcc.c - the host C++ compiler as a child process (see hostcc.h). */
#define _GNU_SOURCE
#include "hostcc_int.h"

/* --- the compiler's input --------------------------------------------------- */

char *hostcc_build_source(const struct hostcc_request *req, size_t *outlen)
{
	const char *label = req->label ? req->label : "source.cu";
	struct strbuf b = {0};
	size_t rlen;
	const char *text = req->src;
	size_t tlen = req->len;
	char *stubbed = NULL;
	if (req->device_stubs) {
		if ((stubbed = hostcc_device_stubs(req->src, req->len, &tlen)) == NULL)
			return NULL;
		text = stubbed;
	}
	char *body = hostcc_rewrite_shared(label, text, tlen, &rlen);
	free(stubbed);
	if (body == NULL)
		return NULL;

	strbuf_puts(&b, "#line 1 ");
	hostcc_buf_quoted(&b, label);
	strbuf_puts(&b, "\n");
	strbuf_add(&b, body, rlen);
	free(body);
	strbuf_puts(&b, "\n");

	/* What every object gets: a trap for pure virtual calls (the C++
	 * runtime, which has it, is not linked). */
	strbuf_puts(&b, "#line 1 \"<passfs: kernel launch glue>\"\n"
		     "extern \"C\" __attribute__((weak, visibility(\"hidden\"))) void "
		     "__cxa_pure_virtual(void) { __builtin_trap(); }\n");
	for (int i = 0; i < req->n_names; i++) {
		int line = req->name_lines ? req->name_lines[i] : 0;
		if (line > 0) {
			strbuf_printf(&b, "#line %d ", line);
			hostcc_buf_quoted(&b, label);
			strbuf_puts(&b, "\n");
		}
		strbuf_printf(&b, "extern \"C\" int pf_tramp_%d(pf_call *c, pf_dim3 g, pf_dim3 b, size_t smem, "
			       "void **args, int nargs) { return pf_emu::launch_checked(c, &%s, g, b, "
			       "smem, args, nargs); }\n", i, req->names[i]);
	}
	if (req->kernel_table) {
		strbuf_puts(&b, "#line 1 \"<passfs: kernel table>\"\n"
			     "extern \"C\" const struct pf_kernel_entry pf_kernel_table[] = {\n");
		for (int i = 0; i < req->n_names; i++) {
			int line = req->name_lines ? req->name_lines[i] : 0;
			if (line > 0) {
				strbuf_printf(&b, "#line %d ", line);
				hostcc_buf_quoted(&b, label);
				strbuf_puts(&b, "\n");
			}
			strbuf_printf(&b, "\t{(const void *)&%s, ", req->names[i]);
			hostcc_buf_quoted(&b, req->names[i]);
			strbuf_puts(&b, "},\n");
		}
		if (req->n_names == 0)
			strbuf_puts(&b, "\t{0, 0},\n");
		strbuf_printf(&b, "};\nextern \"C\" const int pf_kernel_count = %d;\n", req->n_names);
	}
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	*outlen = b.len;
	return b.p;
}

/* --- files ------------------------------------------------------------------ */

int hostcc_write_file(const char *path, const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (base_write_all(fd, data, len) != 0) {
		close(fd);
		return -1;
	}
	return close(fd);
}

void hostcc_output_free(struct hostcc_output *out)
{
	if (out == NULL)
		return;
	if (out->dir != NULL)
		base_rmtree(out->dir);
	free(out->dir);
	free(out->so_path);
	free(out->log);
	memset(out, 0, sizeof *out);
}

/* --- running the compiler ----------------------------------------------------- */

/* Finds an executable for `name` on PATH (or name itself when it holds a
 * slash), so the child can use execve, which is safe after fork in a
 * threaded process. */
static char *find_program(const char *name)
{
	if (strchr(name, '/') != NULL)
		return access(name, X_OK) == 0 ? strdup(name) : NULL;
	const char *path = getenv("PATH");
	if (path == NULL || *path == '\0')
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t n = colon ? (size_t)(colon - path) : strlen(path);
		char p[4096];
		if (n > 0 && n + strlen(name) + 2 < sizeof p) {
			memcpy(p, path, n);
			p[n] = '/';
			strcpy(p + n + 1, name);
			if (access(p, X_OK) == 0)
				return strdup(p);
		}
		path += n;
		if (*path == ':')
			path++;
	}
	return NULL;
}

static void tail_add(struct tail *t, const char *s, size_t n)
{
	unsigned long long dropped = 0;
	base_tail_keep(t->p, HOSTCC_LOG_CAP, &t->len, s, n, &dropped);
	if (dropped)
		t->cut = 1;
}

/* The log as the pass's author reads it: the compile directory's path (the
 * pass is "pass.c"), the API headers' directory and a precompiled
 * header's (its build's pch-tmp-XXXXXX, or pch-HASH) dropped, so a note in
 * passfs.h reads "passfs.h:228:19"; and a note when the head was cut. */
char *hostcc_finish_log(struct tail *t, const char *dir, const char *inc, const char *pch)
{
	struct strbuf b = {0};
	if (t->cut)
		strbuf_puts(&b, "[... earlier compiler output cut ...]\n");
	char pre[3][4200];
	int np = 0;
	snprintf(pre[np++], sizeof pre[0], "%.4096s/", dir);
	if (inc != NULL && inc[0])
		snprintf(pre[np++], sizeof pre[0], "%.4096s/", inc);
	if (pch != NULL && pch[0]) {
		/* root/pch-: any directory of the family */
		const char *sl = strrchr(pch, '/');
		if (sl != NULL)
			snprintf(pre[np++], sizeof pre[0], "%.*s/pch-", (int)(sl - pch), pch);
	}
	for (size_t i = 0; i < t->len;) {
		int hit = 0;
		for (int k = 0; k < np && !hit; k++) {
			size_t pl = strlen(pre[k]);
			if (t->len - i < pl || memcmp(t->p + i, pre[k], pl) != 0)
				continue;
			size_t e = i + pl;
			if (k == np - 1 && pch != NULL && pch[0]) {
				while (e < t->len && t->p[e] != '/' && t->p[e] != '\n' && t->p[e] != ' ')
					e++;
				if (e >= t->len || t->p[e] != '/')
					continue;
				e++;
			}
			i = e;
			hit = 1;
		}
		if (hit)
			continue;
		strbuf_add(&b, t->p + i, 1);
		i++;
	}
	if (b.p == NULL && !b.oom)
		strbuf_puts(&b, "");
	return b.oom ? strdup("") : b.p;
}

/* Runs argv with output captured into *t, in an address space of at most
 * as_limit bytes; returns the wait status, or -1 when it could not be
 * started (err set); *timed_out when it was killed. */
int hostcc_run_child(char *const argv[], char *const envp[], int timeout_s, unsigned long long as_limit,
		     struct tail *t, int *timed_out, char *err, size_t errlen)
{
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) != 0) {
		snprintf(err, errlen, "host compiler: pipe: %s", strerror(errno));
		return -1;
	}
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "host compiler: fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		if (devnull >= 0)
			close(devnull);
		return -1;
	}
	if (pid == 0) {
		/* Only async-signal-safe calls from here to execve. */
		setpgid(0, 0);
		struct rlimit rl;
		rl.rlim_cur = rl.rlim_max = (rlim_t)timeout_s + 5;
		setrlimit(RLIMIT_CPU, &rl);
		/* Where the caller holds lower hard limits (the compile jail),
		 * raising fails and its limits stay. */
		rl.rlim_cur = rl.rlim_max = as_limit;
		setrlimit(RLIMIT_AS, &rl);
		rl.rlim_cur = rl.rlim_max = HOSTCC_FSIZE_LIMIT;
		setrlimit(RLIMIT_FSIZE, &rl);
		rl.rlim_cur = rl.rlim_max = 0;
		setrlimit(RLIMIT_CORE, &rl);
		if (devnull >= 0)
			dup2(devnull, 0);
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		/* Nothing else of ours (FUSE device, sockets) goes to the compiler. */
		close_range(3, ~0u, 0);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execve(argv[0], argv, envp);
		static const char msg[] = "host compiler: cannot execute\n";
		ssize_t w = write(2, msg, sizeof msg - 1);
		(void)w;
		_exit(127);
	}
	setpgid(pid, pid);
	close(pfd[1]);
	if (devnull >= 0)
		close(devnull);

	double deadline = base_now_ms() + timeout_s * 1000.0;
	int open_pipe = 1, status = 0;
	*timed_out = 0;
	char chunk[8192];
	for (;;) {
		double left = deadline - base_now_ms();
		if (left <= 0) {
			*timed_out = 1;
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			break;
		}
		if (open_pipe) {
			struct pollfd p = {.fd = pfd[0], .events = POLLIN};
			int r = poll(&p, 1, left > 1000 ? 1000 : (int)left + 1);
			if (r < 0 && errno != EINTR) {
				snprintf(err, errlen, "host compiler: poll: %s", strerror(errno));
				kill(-pid, SIGKILL);
				break;
			}
			if (r > 0) {
				ssize_t n = read(pfd[0], chunk, sizeof chunk);
				if (n > 0)
					tail_add(t, chunk, (size_t)n);
				else if (n == 0 || (errno != EINTR && errno != EAGAIN))
					open_pipe = 0;
			}
		} else {
			pid_t w = waitpid(pid, &status, WNOHANG);
			if (w == pid) {
				close(pfd[0]);
				/* anything the compiler left running in its group goes too */
				kill(-pid, SIGKILL);
				return status;
			}
			base_sleep_ms(2);
		}
	}
	close(pfd[0]);
	base_waitpid(pid, &status);
	return *timed_out ? status : -1;
}

/* The compiler command: $PASSFS_CXX (words split on spaces) or g++. */
static int compiler_words(char **words, int max, char *store, size_t storelen)
{
	const char *cxx = getenv("PASSFS_CXX");
	if (cxx == NULL || *cxx == '\0')
		cxx = "g++";
	snprintf(store, storelen, "%s", cxx);
	int n = 0;
	for (char *s = strtok(store, " \t"); s != NULL && n < max; s = strtok(NULL, " \t"))
		words[n++] = s;
	return n;
}

/* The compiler command split into words[] (*nw of them; at most max) and
 * its program found on PATH: malloc'd, or NULL when there are no words or
 * no such program. */
char *hostcc_compiler_find(char **words, int max, char *store, size_t storelen, int *nw)
{
	*nw = compiler_words(words, max, store, storelen);
	return *nw > 0 ? find_program(words[0]) : NULL;
}

/* The compiler's whole environment: a fixed one, never the caller's (a
 * daemon's environment holds tokens and keys, and a compiler can be made to
 * quote /proc/self/environ).  PATH for the driver's helpers, C messages
 * (plain quotes in diagnostics), and TMPDIR: the caller's scratch directory
 * (a path, no secret).  NULL when out of memory; free with hostcc_child_env_free. */
char **hostcc_child_env(void)
{
	char **env = calloc(5, sizeof(char *));
	if (env == NULL)
		return NULL;
	const char *tmp = getenv("TMPDIR");
	env[0] = strdup("PATH=/usr/bin:/bin");
	env[1] = strdup("LANG=C");
	env[2] = strdup("LC_ALL=C");
	if (tmp != NULL && *tmp == '/' && asprintf(&env[3], "TMPDIR=%s", tmp) < 0)
		env[3] = NULL;
	if (env[0] == NULL || env[1] == NULL || env[2] == NULL) {
		for (int i = 0; i < 4; i++)
			free(env[i]);
		free(env);
		return NULL;
	}
	return env;
}

void hostcc_child_env_free(char **env)
{
	for (int i = 0; env != NULL && env[i] != NULL; i++)
		free(env[i]);
	free(env);
}

static const char *const stand_in_headers[] = {"cuda_fp16.h", "cuda_bf16.h", "cuda_runtime.h", NULL};

/* Writes the stand-ins into dir (each includes passfs.h).  0, or -1 with
 * the failing path in `path`. */
int hostcc_write_stand_ins(const char *dir, char *path, size_t pathlen)
{
	static const char body[] = "#pragma once\n#include <passfs.h>\n";
	for (int i = 0; stand_in_headers[i] != NULL; i++) {
		snprintf(path, pathlen, "%s/%s", dir, stand_in_headers[i]);
		if (hostcc_write_file(path, body, sizeof body - 1) != 0)
			return -1;
	}
	return 0;
}
