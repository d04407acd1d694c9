/* jail.c - the compile jail (see jail.h). */
#define _GNU_SOURCE
#include "jail.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "file.h"
#include "hostcc.h"
#include "nvrtc.h"
#include "proc.h"

#define MAX_PATHS 24

/* What the jail shows: read-only paths (bound at their real path, with a
 * link from the name the code uses when that differs) and the top-level
 * names that merged-/usr systems make links (/bin -> usr/bin). */
struct view {
	char ro[MAX_PATHS][PATH_MAX];   /* real paths */
	char alias[MAX_PATHS][PATH_MAX]; /* the name used, when not the real path; "" */
	int n;
	const char *rw;
};

static const char *const top_names[] = {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", NULL};

const char *jail_kind_name(enum jail_kind k)
{
	switch (k) {
	case JAIL_NAMESPACES: return "namespaces";
	case JAIL_LANDLOCK: return "landlock";
	case JAIL_LIMITS: return "limits";
	}
	return "limits";
}

__attribute__((format(printf, 3, 4)))
static void say(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/* Whether path is base or below it. */
static int under(const char *path, const char *base)
{
	size_t n = strlen(base);
	return strncmp(path, base, n) == 0 && (path[n] == '\0' || path[n] == '/' || (n == 1 && base[0] == '/'));
}

/* Adds path (its real path; the name too when different) unless it is
 * missing or already inside a shown path. */
static void view_add(struct view *v, const char *path)
{
	char real[PATH_MAX];
	if (path == NULL || path[0] != '/' || realpath(path, real) == NULL || v->n >= MAX_PATHS)
		return;
	for (int i = 0; i < v->n; i++)
		if (under(real, v->ro[i]))
			goto alias;
	snprintf(v->ro[v->n], sizeof v->ro[0], "%s", real);
	v->alias[v->n][0] = '\0';
	v->n++;
alias:
	/* the code names the path, the jail holds the real one: a link */
	if (strcmp(real, path) != 0 && v->n < MAX_PATHS) {
		int shown = 0;
		for (int i = 0; i < v->n && !shown; i++)
			shown = under(path, v->ro[i]);
		if (!shown) {
			snprintf(v->ro[v->n], sizeof v->ro[0], "%s", real);
			snprintf(v->alias[v->n], sizeof v->alias[0], "%s", path);
			v->n++;
		}
	}
}

/* The directory of path (a copy in out), or "" when it has none. */
static void parent_of(const char *path, char *out, size_t len)
{
	snprintf(out, len, "%s", path);
	char *sl = strrchr(out, '/');
	if (sl != NULL && sl != out)
		*sl = '\0';
	else
		out[0] = '\0';
}

/* What a pass compile reads: /usr, the loader's cache, the API headers,
 * the CUDA headers, NVRTC's directory, the compiler's prefix and the
 * precompiled header (pch: its directory, or "").  The compile directory
 * rw is written. */
static void view_build(struct view *v, const char *rw, const char *pch)
{
	char p[PATH_MAX], q[PATH_MAX];
	memset(v, 0, sizeof *v);
	v->rw = rw;
	view_add(v, "/usr");
	view_add(v, "/etc/ld.so.cache");
	for (int i = 0; top_names[i] != NULL; i++) {
		struct stat st;
		if (lstat(top_names[i], &st) == 0 && S_ISDIR(st.st_mode))
			view_add(v, top_names[i]);
	}
	view_add(v, hostcc_include_dir());
	view_add(v, nvrtc_cuda_include_dir());
	if (nvrtc_library_path(p, sizeof p) == 0 && realpath(p, q) != NULL) {
		parent_of(q, p, sizeof p);
		view_add(v, p);
	}
	if (hostcc_compiler_path(p, sizeof p) == 0 && realpath(p, q) != NULL) {
		/* prefix/bin/g++: the prefix holds its libexec and headers;
		 * a compiler anywhere else (a wrapper script): that file */
		char bin[PATH_MAX];
		parent_of(q, bin, sizeof bin);
		const char *base = strrchr(bin, '/');
		if (base != NULL && strcmp(base, "/bin") == 0) {
			parent_of(bin, p, sizeof p);
			view_add(v, p[0] ? p : q);      /* never all of / */
		} else {
			view_add(v, q);
		}
	}
	if (pch != NULL && pch[0])
		view_add(v, pch);
}

/* --- limits, capabilities ------------------------------------------------ */

/* Bytes the process maps now (VmSize), or 0 when unknown. */
static unsigned long long vm_now(void)
{
	FILE *f = fopen("/proc/self/statm", "re");
	unsigned long long pages = 0;
	if (f != NULL) {
		if (fscanf(f, "%llu", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return pages * (unsigned long long)sysconf(_SC_PAGESIZE);
}

/* Sets a limit, never above what the process has: without capabilities a
 * raise would fail anyway, and a caller's tighter limit stays.  Failures
 * leave the old limit. */
static void set_limit(int what, unsigned long long soft, unsigned long long hard)
{
	struct rlimit rl = {.rlim_cur = soft, .rlim_max = hard};
	struct rlimit old;
	if (getrlimit(what, &old) == 0) {
		if (old.rlim_max != RLIM_INFINITY && rl.rlim_max > old.rlim_max)
			rl.rlim_max = old.rlim_max;
		if (rl.rlim_cur > rl.rlim_max)
			rl.rlim_cur = rl.rlim_max;
	}
	setrlimit(what, &rl);
}

/* The compile's limits (jail.h), given the address space vm mapped now;
 * inherited by every compiler. */
static void set_limits(unsigned long long vm, int cpu_s)
{
	set_limit(RLIMIT_AS, vm + JAIL_AS_EXTRA, vm + JAIL_AS_EXTRA);
	set_limit(RLIMIT_CPU, (unsigned long long)cpu_s, (unsigned long long)cpu_s + 2);
	set_limit(RLIMIT_FSIZE, JAIL_FSIZE, JAIL_FSIZE);
	set_limit(RLIMIT_NPROC, JAIL_NPROC, JAIL_NPROC);
	set_limit(RLIMIT_NOFILE, JAIL_NOFILE, JAIL_NOFILE);
	set_limit(RLIMIT_CORE, 0, 0);
}

/* Every capability gone, the bounding set too: a root compiler exec'd in
 * the jail gets none (and so cannot remount, or raise the limits).
 * Failures are ignored: a process that may not drop them has none. */
static void drop_caps(void)
{
	for (int c = 0; c < 64; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0 && errno == EINVAL)
			break;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof d);
	syscall(SYS_capset, &h, d);
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

/* --- namespaces ---------------------------------------------------------- */

/* Writes text to an existing file (a /proc control file): 0, or -1 with
 * errno. */
static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* The flags a bind's remount must keep (a user namespace may not clear
 * them). */
static unsigned long kept_flags(const char *src)
{
	struct statvfs sv;
	unsigned long f = 0;
	if (statvfs(src, &sv) != 0)
		return 0;
	if (sv.f_flag & ST_NOSUID)
		f |= MS_NOSUID;
	if (sv.f_flag & ST_NODEV)
		f |= MS_NODEV;
	if (sv.f_flag & ST_NOEXEC)
		f |= MS_NOEXEC;
	if (sv.f_flag & ST_NOATIME)
		f |= MS_NOATIME;
	if (sv.f_flag & ST_NODIRATIME)
		f |= MS_NODIRATIME;
	if (sv.f_flag & ST_RELATIME)
		f |= MS_RELATIME;
	if (sv.f_flag & ST_RDONLY)
		f |= MS_RDONLY;
	return f;
}

/* Binds src at root/at (a directory or a file, made first), read-only
 * unless rw, with extra mount flags.  0, or -1 with why. */
static int bind_at(const char *root, const char *src, const char *at, int rw, unsigned long flags, char *why,
		   size_t whylen)
{
	char dst[PATH_MAX + 64], dir[PATH_MAX + 64];
	struct stat st;
	if (stat(src, &st) != 0)
		return 0;
	snprintf(dst, sizeof dst, "%s%s", root, at);
	if (S_ISDIR(st.st_mode)) {
		if (base_mkdirs(dst, 0755) != 0)
			goto fail;
	} else {
		parent_of(dst, dir, sizeof dir);
		int fd;
		if (base_mkdirs(dir, 0755) != 0 || (fd = open(dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0)
			goto fail;
		close(fd);
	}
	if (mount(src, dst, NULL, MS_BIND | (rw ? 0 : MS_REC), NULL) != 0)
		goto fail;
	if (mount(NULL, dst, NULL, MS_REMOUNT | MS_BIND | flags | kept_flags(src) | (rw ? 0 : MS_RDONLY), NULL) != 0)
		goto fail;
	return 0;
fail:
	say(why, whylen, "bind %s: %s", src, strerror(errno));
	return -1;
}

/* Own namespaces and a root holding the view.  0, or -1 with why (before
 * pivot_root: the caller may fall back; *pivoted says whether it may).
 * *unshared: the namespaces exist (so the next fork starts a pid
 * namespace, whose end ends every later fork in it: see become_pid1). */
static int enter_namespaces(const struct view *v, char *why, size_t whylen, int *pivoted, int *unshared)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	int flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
	*pivoted = *unshared = 0;
	if (uid != 0)
		flags |= CLONE_NEWUSER;
	if (unshare(flags) != 0) {
		say(why, whylen, "unshare: %s", strerror(errno));
		return -1;
	}
	*unshared = 1;
	if (uid != 0) {
		char map[64];
		snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
		int bad = write_file("/proc/self/setgroups", "deny") != 0 || write_file("/proc/self/uid_map", map) != 0;
		snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
		if (bad || write_file("/proc/self/gid_map", map) != 0) {
			say(why, whylen, "user namespace map: %s", strerror(errno));
			return -1;
		}
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
		say(why, whylen, "mount private: %s", strerror(errno));
		return -1;
	}
	char root[PATH_MAX];
	snprintf(root, sizeof root, "%s/.jail", v->rw);
	if ((mkdir(root, 0700) != 0 && errno != EEXIST) ||
	    mount("passfs-jail", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755") != 0) {
		say(why, whylen, "tmpfs at %s: %s", root, strerror(errno));
		return -1;
	}
	char dst[PATH_MAX + 64], link[PATH_MAX];
	for (int i = 0; top_names[i] != NULL; i++) {
		ssize_t n = readlink(top_names[i], link, sizeof link - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		snprintf(dst, sizeof dst, "%s%s", root, top_names[i]);
		if (symlink(link, dst) != 0) {
			say(why, whylen, "symlink %s: %s", top_names[i], strerror(errno));
			return -1;
		}
	}
	for (int i = 0; i < v->n; i++) {
		if (v->alias[i][0])
			continue;
		if (bind_at(root, v->ro[i], v->ro[i], 0, MS_NOSUID | MS_NODEV, why, whylen) != 0)
			return -1;
	}
	for (int i = 0; i < v->n; i++) {
		/* a name the code uses for a real path elsewhere: the same link */
		struct stat st;
		if (!v->alias[i][0])
			continue;
		snprintf(dst, sizeof dst, "%s%s", root, v->alias[i]);
		if (lstat(dst, &st) == 0)
			continue;
		char dir[PATH_MAX + 64];
		parent_of(dst, dir, sizeof dir);
		if (base_mkdirs(dir, 0755) != 0 || symlink(v->ro[i], dst) != 0) {
			say(why, whylen, "symlink %s: %s", v->alias[i], strerror(errno));
			return -1;
		}
	}
	if (bind_at(root, "/dev/null", "/dev/null", 1, MS_NOSUID | MS_NOEXEC, why, whylen) != 0 ||
	    bind_at(root, v->rw, v->rw, 1, MS_NOSUID | MS_NODEV, why, whylen) != 0)
		return -1;
	if (mount(NULL, root, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) != 0) {
		say(why, whylen, "read-only root: %s", strerror(errno));
		return -1;
	}
	/* pivot_root(".", "."): the old root stacks under the new one and is
	 * detached at once; no directory for it is needed. */
	if (chdir(root) != 0 || syscall(SYS_pivot_root, ".", ".") != 0) {
		say(why, whylen, "pivot_root: %s", strerror(errno));
		return -1;
	}
	*pivoted = 1;
	if (umount2(".", MNT_DETACH) != 0 || chdir("/") != 0 || chdir(v->rw) != 0) {
		say(why, whylen, "detaching the old root: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* --- Landlock ------------------------------------------------------------ */

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif

/* Allows access (within handled; file rights only for a file) beneath
 * path in the ruleset: 0 (also when path does not exist), or -1 with
 * errno. */
static int ll_allow(int ruleset, const char *path, unsigned long long access, unsigned long long handled)
{
	int fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	struct stat st;
	if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
		access &= LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |
			  LANDLOCK_ACCESS_FS_TRUNCATE;
	struct landlock_path_beneath_attr pb = {.allowed_access = access & handled, .parent_fd = fd};
	long rc = syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
	close(fd);
	return rc == 0 ? 0 : -1;
}

/* Reading the view, writing the compile directory, nothing else of the
 * file system.  0, or -1 with why. */
static int enter_landlock(const struct view *v, char *why, size_t whylen)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 1) {
		say(why, whylen, "landlock: %s", strerror(errno));
		return -1;
	}
	unsigned long long handled = (1ULL << 13) - 1;  /* ABI 1: execute .. make_sym */
	if (abi >= 2)
		handled |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		handled |= LANDLOCK_ACCESS_FS_TRUNCATE;
	struct landlock_ruleset_attr ra = {.handled_access_fs = handled};
	int rs = (int)syscall(SYS_landlock_create_ruleset, &ra, sizeof ra, 0);
	if (rs < 0) {
		say(why, whylen, "landlock ruleset: %s", strerror(errno));
		return -1;
	}
	unsigned long long rd = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
	int bad = 0;
	for (int i = 0; i < v->n && !bad; i++)
		bad = ll_allow(rs, v->ro[i], rd, handled) != 0;
	if (!bad)
		bad = ll_allow(rs, v->rw, handled, handled) != 0 ||
		      ll_allow(rs, "/dev/null", LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE, handled) != 0;
	if (bad) {
		say(why, whylen, "landlock rule: %s", strerror(errno));
		close(rs);
		return -1;
	}
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	long rc = syscall(SYS_landlock_restrict_self, rs, 0);
	close(rs);
	if (rc != 0) {
		say(why, whylen, "landlock restrict: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* --- entering ------------------------------------------------------------ */

/* The first process of the new pid namespace runs the compile; this one
 * waits and leaves as it does.  Returns only in that first process (0), or
 * -1 when fork failed. */
static int become_pid1(char *err, size_t errlen)
{
	pid_t pid = fork();
	if (pid < 0) {
		say(err, errlen, "compile jail: fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		/* the caller's parent kills this process on a timeout: the
		 * namespace (every compiler in it) goes with it */
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		return 0;
	}
	int st = 0;
	base_waitpid(pid, &st);
	if (WIFSIGNALED(st)) {
		signal(WTERMSIG(st), SIG_DFL);
		sigset_t s;
		sigemptyset(&s);
		sigaddset(&s, WTERMSIG(st));
		sigprocmask(SIG_UNBLOCK, &s, NULL);
		raise(WTERMSIG(st));
	}
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 125);
}

int jail_compile(const char *rw_dir, int device_stubs, int cpu_s, struct jail_info *info, char *err,
		 size_t errlen)
{
	double t0 = base_now_ms();
	memset(info, 0, sizeof *info);
	char pch[PATH_MAX] = "";
	/* made outside: inside, the cache is not writable */
	if (hostcc_pch_prepare(device_stubs, NULL, pch, sizeof pch) != 0)
		pch[0] = '\0';
	static struct view v;   /* 24 KB: not on a compile thread's stack */
	view_build(&v, rw_dir, pch);
	unsigned long long vm = vm_now();
	const char *force = getenv("PASSFS_JAIL");
	int want = JAIL_NAMESPACES;
	if (force != NULL && strcmp(force, "landlock") == 0)
		want = JAIL_LANDLOCK;
	else if (force != NULL && strcmp(force, "limits") == 0)
		want = JAIL_LIMITS;
	char why[300] = "", why2[300] = "";
	int pivoted = 0, unshared = 0;
	if (want == JAIL_NAMESPACES && enter_namespaces(&v, why, sizeof why, &pivoted, &unshared) == 0) {
		info->kind = JAIL_NAMESPACES;
	} else if (pivoted) {
		say(err, errlen, "compile jail: %s", why);
		return -1;
	} else if (want <= JAIL_LANDLOCK && enter_landlock(&v, why2, sizeof why2) == 0) {
		info->kind = JAIL_LANDLOCK;
		say(info->note, sizeof info->note,
		    "compile jail: no namespaces (%s); Landlock limits the compilers to the toolchain and the "
		    "compile directory", want == JAIL_NAMESPACES ? why : "PASSFS_JAIL=landlock");
	} else {
		info->kind = JAIL_LIMITS;
		if (want == JAIL_LIMITS)
			snprintf(why, sizeof why, "PASSFS_JAIL=limits");
		else if (want == JAIL_LANDLOCK)
			snprintf(why, sizeof why, "PASSFS_JAIL=landlock, %.200s", why2);
		else
			snprintf(why + strlen(why), sizeof why - strlen(why), "; %.200s", why2);
		say(info->note, sizeof info->note,
		    "compile jail: no namespaces and no Landlock (%s): the compilers can read what this user can; "
		    "only limits, no capabilities and an empty environment hold", why);
	}
	if (info->kind != JAIL_NAMESPACES)
		/* what /proc/PID/environ shows, for the weaker kinds, where
		 * /proc is still there (getenv keeps working) */
		base_scrub_environ(NULL, 0);
	set_limits(vm, cpu_s > 0 ? cpu_s : 120);
	drop_caps();
	if (unshared && become_pid1(err, errlen) != 0)
		return -1;
	info->ms = base_now_ms() - t0;
	return 0;
}

/* --- the doctor's probe ---------------------------------------------------- */

struct probe_answer {
	int ok;
	struct jail_info info;
	char line[600];
};

/* In the jailed process: what must and must not be visible. */
static void probe_inside(struct probe_answer *a, const char *compiler, const char *canary)
{
	char inc[PATH_MAX];
	snprintf(inc, sizeof inc, "%s/passfs.h", hostcc_include_dir());
	const char *must[] = {compiler, inc};
	const char *never[] = {"/etc/passwd", "/proc/self/environ", canary, NULL};
	for (int i = 0; i < 2; i++) {
		if (must[i][0] && access(must[i], R_OK) != 0) {
			say(a->line, sizeof a->line, "%s is not visible inside: %s", must[i], strerror(errno));
			return;
		}
	}
	for (int i = 0; never[i] != NULL; i++) {
		int fd = never[i][0] ? open(never[i], O_RDONLY | O_CLOEXEC) : -1;
		if (fd >= 0 && a->info.kind != JAIL_LIMITS) {
			close(fd);
			say(a->line, sizeof a->line, "%s is readable inside", never[i]);
			return;
		}
		if (fd >= 0)
			close(fd);
	}
	a->ok = 1;
}

int jail_probe(struct jail_info *info, char *out, size_t outlen)
{
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX], compiler[PATH_MAX] = "", canary[PATH_MAX + 16];
	snprintf(dir, sizeof dir, "%s/passfs-jail-probe-XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
	memset(info, 0, sizeof *info);
	if (mkdtemp(dir) == NULL) {
		say(out, outlen, "cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	if (hostcc_compiler_path(compiler, sizeof compiler) != 0)
		compiler[0] = '\0';
	/* a file beside the compile directory: what any other task's is */
	snprintf(canary, sizeof canary, "%s.canary", dir);
	int cfd = open(canary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	int pfd[2];
	if (cfd < 0 || pipe2(pfd, O_CLOEXEC) != 0) {
		say(out, outlen, "%s: %s", cfd < 0 ? canary : "pipe", strerror(errno));
		if (cfd >= 0) {
			close(cfd);
			unlink(canary);
		}
		rmdir(dir);
		return -1;
	}
	close(cfd);
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		struct probe_answer a;
		memset(&a, 0, sizeof a);
		char err[300];
		if (jail_compile(dir, 0, 10, &a.info, err, sizeof err) != 0)
			say(a.line, sizeof a.line, "%s", err);
		else
			probe_inside(&a, compiler, canary);
		ssize_t w = write(pfd[1], &a, sizeof a);
		_exit(w == (ssize_t)sizeof a ? 0 : 1);
	}
	close(pfd[1]);
	struct probe_answer a;
	memset(&a, 0, sizeof a);
	ssize_t n = pid > 0 ? read(pfd[0], &a, sizeof a) : -1;
	close(pfd[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	char jd[PATH_MAX + 8];
	snprintf(jd, sizeof jd, "%s/.jail", dir);
	rmdir(jd);
	rmdir(dir);
	unlink(canary);
	if (n != (ssize_t)sizeof a) {
		say(out, outlen, "the probe child gave no answer%s", pid < 0 ? " (fork failed)" : "");
		return -1;
	}
	*info = a.info;
	if (!a.ok) {
		say(out, outlen, "%s", a.line);
		return -1;
	}
	say(out, outlen, "%s", a.info.kind == JAIL_NAMESPACES ? "namespaces + pivot_root" : a.info.note);
	return 0;
}
