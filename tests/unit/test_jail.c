/* test_jail.c - engine/jail: what a process in the compile jail sees, for
 * each kind of jail, checked from inside a child: the compile directory
 * writable, the toolchain and the API headers readable, and /etc/passwd,
 * /proc/self/environ, a file beside the compile directory and the rest of
 * the machine not; the limits; a fallback that names itself when unshare is
 * refused (a seccomp filter makes it fail with EPERM, as in a container);
 * and doctor's probe. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hostcc.h"
#include "jail.h"
#include "nvrtc.h"
#include "pass.h"

#include "check.h"

/* What the child found, sent back whole through a pipe. */
struct seen {
	int entered;
	struct jail_info info;
	char err[300];
	int rw_ok, usr_ok, api_ok;      /* must be 1 */
	int passwd, environ_, beside;   /* readable: must be 0 (namespaces, landlock) */
	int environ_holds_secret;       /* /proc/self/environ (when readable) holds the variable's value */
	int getenv_ok;                  /* getenv still works after the jail */
	unsigned long long as_cur, fsize_cur;
	unsigned long long vm_before;   /* VmSize before entering */
	int pid;                        /* getpid() inside: 1 in a pid namespace */
};

static const char secret[] = "jail-test-secret-0123456789";

static int readable(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* unshare(2) fails with EPERM from here on: a container without the
 * privilege.  0, or -1. */
static int refuse_unshare(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/* Enters the jail on dir in a child (force: PASSFS_JAIL, or NULL; deny:
 * unshare refused) and reports what it sees. */
static struct seen look(const char *dir, const char *beside, const char *force, int deny)
{
	struct seen s;
	memset(&s, 0, sizeof s);
	int pfd[2];
	if (pipe(pfd) != 0)
		return s;
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		if (force != NULL)
			setenv("PASSFS_JAIL", force, 1);
		if (deny && refuse_unshare() != 0)
			_exit(2);
		struct seen in;
		memset(&in, 0, sizeof in);
		FILE *st = fopen("/proc/self/statm", "re");
		if (st != NULL) {
			if (fscanf(st, "%llu", &in.vm_before) != 1)
				in.vm_before = 0;
			fclose(st);
			in.vm_before *= (unsigned long long)sysconf(_SC_PAGESIZE);
		}
		if (jail_compile(dir, 0, 10, &in.info, in.err, sizeof in.err) == 0) {
			char p[4200];
			in.entered = 1;
			snprintf(p, sizeof p, "%s/written", dir);
			int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
			in.rw_ok = fd >= 0 && write(fd, "x", 1) == 1;
			if (fd >= 0)
				close(fd);
			in.usr_ok = readable("/usr/include/stdio.h") || readable("/usr/bin/g++");
			snprintf(p, sizeof p, "%s/passfs.h", hostcc_include_dir());
			in.api_ok = readable(p);
			in.passwd = readable("/etc/passwd");
			in.environ_ = readable("/proc/self/environ");
			in.beside = readable(beside);
			FILE *f = fopen("/proc/self/environ", "re");
			if (f != NULL) {
				char buf[1 << 16];
				size_t n = fread(buf, 1, sizeof buf, f);
				fclose(f);
				in.environ_holds_secret = memmem(buf, n, secret, strlen(secret)) != NULL;
			}
			const char *v = getenv("PASSFS_JAIL_TEST");
			in.getenv_ok = v != NULL && strcmp(v, secret) == 0;
			struct rlimit rl;
			getrlimit(RLIMIT_AS, &rl);
			in.as_cur = rl.rlim_cur;
			getrlimit(RLIMIT_FSIZE, &rl);
			in.fsize_cur = rl.rlim_cur;
			in.pid = (int)getpid();
		}
		ssize_t w = write(pfd[1], &in, sizeof in);
		_exit(w == (ssize_t)sizeof in ? 0 : 1);
	}
	close(pfd[1]);
	ssize_t n = pid > 0 ? read(pfd[0], &s, sizeof s) : -1;
	close(pfd[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	if (n != (ssize_t)sizeof s)
		memset(&s, 0, sizeof s);
	return s;
}

static const char honest[] =
	"#include <passfs.h>\n"
	"__global__ void k(float *y, long long n)\n"
	"{\n"
	"\tlong long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
	"\tif (i < n)\n"
	"\t\ty[i] = 1.0f;\n"
	"}\n"
	"PASS_REPLACEMENT(pf_call *call)\n"
	"{\n"
	"\tpf_tensor *y = pf_out(call, 0);\n"
	"\treturn pf_launch(call, k, pf_dim(1), pf_dim(256), 0, y->data, pf_numel(y));\n"
	"}\n";

/* A whole pass compile inside the jail, as the evaluator's compile child
 * runs it (device: the cuda backend's, with a cubin and device stubs).
 * Returns the verdict; *ptx, *cubin: whether NVRTC made them. */
static enum pass_verdict compile_inside(const char *dir, int device, int *ptx, int *cubin, char *msg, size_t len)
{
	int pfd[2];
	struct {
		enum pass_verdict v;
		int ptx, cubin;
		char msg[512];
	} r = {.v = PASS_INTERNAL_ERROR};
	if (pipe(pfd) != 0)
		return PASS_INTERNAL_ERROR;
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		struct jail_info ji;
		setenv("TMPDIR", dir, 1);
		if (jail_compile(dir, device, 30, &ji, r.msg, sizeof r.msg) == 0) {
			struct pass_options o = {.arch = "sm_90", .allow_device_only = device};
			struct pass_module *m = NULL;
			struct pass_diag d;
			pass_compile_opts("pass.c", honest, strlen(honest), &o, &m, &d);
			r.v = d.verdict;
			snprintf(r.msg, sizeof r.msg, "%s", d.message);
			r.ptx = m != NULL && m->ptx != NULL;
			r.cubin = m != NULL && m->cubin_path != NULL && access(m->cubin_path, R_OK) == 0;
			pass_module_free(m);
		}
		ssize_t w = write(pfd[1], &r, sizeof r);
		_exit(w == (ssize_t)sizeof r ? 0 : 1);
	}
	close(pfd[1]);
	if (pid > 0 && read(pfd[0], &r, sizeof r) != (ssize_t)sizeof r)
		r.v = PASS_INTERNAL_ERROR;
	close(pfd[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	*ptx = r.ptx;
	*cubin = r.cubin;
	snprintf(msg, len, "%s", r.msg);
	return r.v;
}

/* Removes what a look left in dir. */
static void clean(const char *dir)
{
	char p[4200];
	snprintf(p, sizeof p, "%s/written", dir);
	unlink(p);
	snprintf(p, sizeof p, "%s/.jail", dir);
	rmdir(p);
}

int main(void)
{
	/* the environment variable is set before anything: it is in the
	 * strings /proc/self/environ shows */
	if (getenv("PASSFS_JAIL_TEST") == NULL) {
		setenv("PASSFS_JAIL_TEST", secret, 1);
		char self[4096];
		ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
		if (n > 0) {
			self[n] = '\0';
			char *argv[] = {self, NULL};
			execv(self, argv);
		}
		fprintf(stderr, "cannot re-execute with the test environment\n");
		return 1;
	}
	const char *tmp = getenv("TMPDIR");
	char dir[4096], beside[4200];
	snprintf(dir, sizeof dir, "%s/passfs-test-jail-XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(beside, sizeof beside, "%s.beside", dir);
	int fd = open(beside, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);

	/* the full jail, where this machine makes namespaces */
	struct seen s = look(dir, beside, NULL, 0);
	CHECK_MSG(s.entered, s.err);
	if (s.info.kind == JAIL_NAMESPACES) {
		CHECK(s.info.note[0] == '\0');
		CHECK(s.pid == 1);
	} else {
		printf("note: no namespaces here: %s\n", s.info.note);
		CHECK(s.info.note[0] != '\0');
	}
	CHECK(s.rw_ok && s.usr_ok && s.api_ok);
	CHECK(!s.passwd && !s.environ_ && !s.beside);
	CHECK(s.getenv_ok);
	CHECK(s.fsize_cur == JAIL_FSIZE);
	/* what it mapped at entry + 2 GiB (the sanitizer's shadow maps
	 * terabytes: relative, not absolute) */
	CHECK(s.as_cur >= s.vm_before + JAIL_AS_EXTRA && s.as_cur < s.vm_before + JAIL_AS_EXTRA + (256ull << 20));
	clean(dir);

	/* unshare refused, as in a container: Landlock, named, with the reason */
	s = look(dir, beside, NULL, 1);
	CHECK_MSG(s.entered, s.err);
	CHECK(s.info.kind != JAIL_NAMESPACES);
	CHECK_MSG(strstr(s.info.note, "unshare: Operation not permitted") != NULL, s.info.note);
	CHECK(s.rw_ok && s.usr_ok && s.api_ok);
	if (s.info.kind == JAIL_LANDLOCK)
		CHECK(!s.passwd && !s.environ_ && !s.beside);
	clean(dir);

	/* forced Landlock */
	s = look(dir, beside, "landlock", 0);
	CHECK_MSG(s.entered, s.err);
	if (s.info.kind == JAIL_LANDLOCK) {
		CHECK_MSG(strstr(s.info.note, "PASSFS_JAIL=landlock") != NULL, s.info.note);
		CHECK(s.rw_ok && s.usr_ok && s.api_ok);
		CHECK(!s.passwd && !s.environ_ && !s.beside);
	} else {
		printf("note: no Landlock here: %s\n", s.info.note);
	}
	clean(dir);

	/* limits only: the files are there, but /proc/self/environ no longer
	 * holds the environment's strings, and getenv still works */
	s = look(dir, beside, "limits", 0);
	CHECK_MSG(s.entered, s.err);
	CHECK(s.info.kind == JAIL_LIMITS);
	CHECK_MSG(strstr(s.info.note, "only limits") != NULL, s.info.note);
	CHECK(s.rw_ok && s.usr_ok && s.api_ok);
	CHECK(!s.environ_holds_secret);
	CHECK(s.getenv_ok);
	CHECK(s.fsize_cur == JAIL_FSIZE);
	clean(dir);

	/* a pass compiles inside, for either backend: NVRTC (its builtins,
	 * the CUDA headers, a cubin for sm_90) and g++ with the precompiled
	 * header, device stubs or not */
	int have_nvrtc = nvrtc_available(NULL, 0);
	for (int device = 0; device <= 1; device++) {
		int ptx = 0, cubin = 0;
		char msg[512];
		enum pass_verdict v = compile_inside(dir, device, &ptx, &cubin, msg, sizeof msg);
		CHECK_MSG(v == PASS_OK, msg);
		CHECK(ptx == have_nvrtc);
		if (device)
			CHECK(cubin == have_nvrtc);
		clean(dir);
	}

	/* doctor's probe */
	struct jail_info ji;
	char line[700];
	CHECK_MSG(jail_probe(&ji, line, sizeof line) == 0, line);
	CHECK(ji.kind == JAIL_NAMESPACES ? strstr(line, "namespaces") != NULL : ji.note[0] != '\0');

	unlink(beside);
	rmdir(dir);
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
