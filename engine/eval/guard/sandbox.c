/* sandbox.c - rlimits plus a seccomp-BPF allow-list (x86-64).
 *
 * The filter allows only what a running kernel needs; read and write are
 * allowed on stdout/stderr and the IPC descriptors only, so even a raw
 * `syscall` instruction in inline assembly cannot open, connect or fork.
 * Disallowed calls trap (SECCOMP_RET_TRAP): the SIGSYS handler, installed
 * before the filter and unreplaceable afterwards (rt_sigaction is not on the
 * list), reports the call - and the loaded object whose code made it - and
 * exits.
 *
 * The GPU driver.  A CUDA worker's driver keeps working after entry: the
 * descriptors it opened are allowed the calls it makes on them, and the
 * NVIDIA driver opens a fresh /dev/nvidiactl or /dev/nvidiaN descriptor for
 * each host mapping of driver memory.  So entry pre-opens a few descriptors
 * on every device path the driver already has open, and this file defines
 * open/openat (exported from the executable, so a dlopen'ed driver binds to
 * them): after entry, opening one of those paths hands out a pre-opened
 * descriptor; anything else goes to the kernel and traps as before.
 *
 * Audit mode (sandbox_limits.audit_fd, PASSFS_SANDBOX_AUDIT in eval) is for
 * finding out what a driver needs: a refused call is logged with its
 * caller and then carried out (process creation excepted), so one run
 * lists every call.  It confines nothing and is never used for scoring. */
#define _GNU_SOURCE
#include "sandbox.h"

#include "gpu.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

static int report_fd = -1;

static const struct {
	long nr;
	const char *name;
} names[] = {
	{SYS_open, "open"},       {SYS_openat, "openat"},   {SYS_creat, "creat"},
	{SYS_socket, "socket"},   {SYS_connect, "connect"}, {SYS_fork, "fork"},
	{SYS_vfork, "vfork"},     {SYS_clone, "clone"},     {SYS_execve, "execve"},
	{SYS_execveat, "execveat"}, {SYS_kill, "kill"},     {SYS_tgkill, "tgkill"},
	{SYS_unlink, "unlink"},   {SYS_unlinkat, "unlinkat"}, {SYS_rename, "rename"},
	{SYS_ptrace, "ptrace"},   {SYS_rt_sigaction, "rt_sigaction"}, {SYS_clock_settime, "clock_settime"},
	{SYS_settimeofday, "settimeofday"}, {SYS_sendto, "sendto"}, {SYS_recvfrom, "recvfrom"}, {SYS_bind, "bind"},
	{SYS_mkdir, "mkdir"},     {SYS_stat, "stat"},       {SYS_newfstatat, "newfstatat"},
	{SYS_getdents64, "getdents64"}, {SYS_ioctl, "ioctl"}, {SYS_prctl, "prctl"},
	{SYS_clone3, "clone3"},   {SYS_mount, "mount"},     {SYS_chdir, "chdir"},
	{SYS_pipe, "pipe"},       {SYS_pipe2, "pipe2"},     {SYS_dup2, "dup2"},
	{SYS_mmap, "mmap (executable)"}, {SYS_mprotect, "mprotect (executable)"}, {SYS_lseek, "lseek"},     {SYS_fstat, "fstat"},     
	{SYS_read, "read"},       {SYS_write, "write"},     {SYS_shmget, "shmget"},   {SYS_memfd_create, "memfd_create"}, {SYS_process_vm_readv, "process_vm_readv"},
	{SYS_getsid, "getsid"},   {SYS_lstat, "lstat"},     {SYS_access, "access"},   {SYS_faccessat, "faccessat"},
	{SYS_readlink, "readlink"}, {SYS_readlinkat, "readlinkat"}, {SYS_statx, "statx"}, {SYS_uname, "uname"},
	{SYS_sysinfo, "sysinfo"}, {SYS_getrusage, "getrusage"}, {SYS_mincore, "mincore"},
	{SYS_sched_setaffinity, "sched_setaffinity"}, {SYS_eventfd2, "eventfd2"}, {SYS_epoll_wait, "epoll_wait"},
	{SYS_epoll_pwait, "epoll_pwait"}, {SYS_epoll_ctl, "epoll_ctl"}, {SYS_epoll_create1, "epoll_create1"},
	{SYS_timerfd_create, "timerfd_create"}, {SYS_timerfd_settime, "timerfd_settime"}, {SYS_fcntl, "fcntl"}, {SYS_close, "close"}, {SYS_dup, "dup"},
	{SYS_pread64, "pread64"}, {SYS_pwrite64, "pwrite64"}, {SYS_getcpu, "getcpu"}, {SYS_membarrier, "membarrier"},
	{SYS_prlimit64, "prlimit64"}, {SYS_getrlimit, "getrlimit"}, {SYS_setpriority, "setpriority"},
	{SYS_sched_getparam, "sched_getparam"}, {SYS_sched_setscheduler, "sched_setscheduler"},
	{SYS_pkey_mprotect, "pkey_mprotect"},
};

/* ---- which loaded object made a call ------------------------------------ */

/* The executable segments of every loaded object, taken just before the
 * filter goes on (the handler may not take the loader's lock). */
#define MAX_RANGES 96
static struct code_range {
	uintptr_t lo, hi;
	char name[48];
} ranges[MAX_RANGES];
static int n_ranges;

static int note_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : program_invocation_short_name;
	const char *slash = strrchr(name, '/');
	if (slash != NULL)
		name = slash + 1;
	for (int i = 0; i < info->dlpi_phnum && n_ranges < MAX_RANGES; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		struct code_range *r = &ranges[n_ranges++];
		r->lo = info->dlpi_addr + ph->p_vaddr;
		r->hi = r->lo + ph->p_memsz;
		snprintf(r->name, sizeof r->name, "%s", name);
	}
	return 0;
}

static const char *object_at(uintptr_t pc)
{
	for (int i = 0; i < n_ranges; i++)
		if (pc >= ranges[i].lo && pc < ranges[i].hi)
			return ranges[i].name;
	return NULL;
}

/* The open family below lives in its own section, so that a caller can be
 * found past it. */
#define INTERPOSER __attribute__((section("passfs_open_text"), noinline))
extern const char __start_passfs_open_text[], __stop_passfs_open_text[];

/* A call made in libc (a wrapper: open, ioctl, syscall) was asked for by
 * its caller: the first word in the wrapper's few stack frames that points
 * into code outside libc and outside this file's open family is taken to be
 * the return address into it. */
/* Whether an object's name starts with one of a NULL-ended list. */
static int named_one_of(const char *name, const char *const *prefix)
{
	for (size_t i = 0; name != NULL && prefix[i] != NULL; i++)
		if (strncmp(name, prefix[i], strlen(prefix[i])) == 0)
			return 1;
	return 0;
}

static int wrapper_object(const char *name)
{
	/* libc, and the sanitizers' runtimes that wrap its calls */
	static const char *const prefix[] = {"libc.so", "libpthread", "libasan", "libubsan", "liblsan", "libtsan", NULL};
	return named_one_of(name, prefix);
}

__attribute__((no_sanitize_address)) static const char *caller_of(const char *obj, const ucontext_t *uc)
{
	if (!wrapper_object(obj))
		return NULL;
	const uintptr_t *sp = (const uintptr_t *)uc->uc_mcontext.gregs[REG_RSP];
	/* 2 KiB: the wrappers' frames; above any thread's stack pointer lie
	 * at least its caller's frames and its thread descriptor (the main
	 * thread's: its start frames, argv and the environment).
	 * AddressSanitizer's interceptors have frames of several KiB. */
#if defined(__SANITIZE_ADDRESS__)
	const int words = 4096;
#else
	const int words = 256;
#endif
	for (int i = 0; i < words; i++) {
		if (sp[i] >= (uintptr_t)__start_passfs_open_text && sp[i] < (uintptr_t)__stop_passfs_open_text)
			continue;
		const char *o = object_at(sp[i]);
		if (o != NULL && !wrapper_object(o))
			return o;
	}
	return NULL;
}

/* The GPU driver's own libraries: a refused call made there is passfs's
 * limitation, not the pass's doing. */
static int driver_object(const char *name)
{
	static const char *const prefix[] = {"libcuda", "libcupti", "libnvidia-", "libnvrtc", NULL};
	return named_one_of(name, prefix);
}

/* ---- the raw call the handler may make --------------------------------- */

/* long sbx_syscall(nr, a0..a5): its `syscall` instruction ends at
 * sbx_syscall_ret, the one address the audit-mode filter lets through. */
long sbx_syscall(long nr, long a0, long a1, long a2, long a3, long a4, long a5);
extern const char sbx_syscall_ret[];
__asm__(".text\n"
	".globl sbx_syscall\n.hidden sbx_syscall\n.type sbx_syscall,@function\n"
	"sbx_syscall:\n"
	"\tmovq %rdi, %rax\n\tmovq %rsi, %rdi\n\tmovq %rdx, %rsi\n\tmovq %rcx, %rdx\n"
	"\tmovq %r8, %r10\n\tmovq %r9, %r8\n\tmovq 8(%rsp), %r9\n"
	"\tsyscall\n"
	".globl sbx_syscall_ret\n.hidden sbx_syscall_ret\n"
	"sbx_syscall_ret:\n\tret\n"
	".size sbx_syscall, .-sbx_syscall\n");

/* ---- the SIGSYS handler (async-signal-safe: no stdio, no locks) ---------- */

static int audit_fd = -1;

struct line {
	char b[320];
	size_t n;
};

static void put(struct line *l, const char *s)
{
	while (s != NULL && *s && l->n + 2 < sizeof l->b)
		l->b[l->n++] = *s++;
	l->b[l->n] = 0;
}

static void put_num(struct line *l, long v)
{
	char tmp[24];
	int k = 0;
	unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;
	do
		tmp[k++] = (char)('0' + u % 10);
	while ((u /= 10) && k < 22);
	if (v < 0)
		put(l, "-");
	char out[24];
	int j = 0;
	while (k)
		out[j++] = tmp[--k];
	out[j] = 0;
	put(l, out);
}

static void put_call(struct line *l, long nr)
{
	const char *nm = NULL;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].nr == nr)
			nm = names[i].name;
	if (nm != NULL) {
		put(l, nm);
	} else {
		put(l, "syscall ");
		put_num(l, nr);
	}
}

/* The path argument of the calls that take one (audit lines only). */
static const char *path_arg(long nr, const long *a)
{
	const char *p = NULL;
	if (nr == SYS_open || nr == SYS_stat || nr == SYS_lstat || nr == SYS_access || nr == SYS_readlink ||
	    nr == SYS_creat || nr == SYS_mkdir || nr == SYS_unlink)
		p = (const char *)a[0];
	else if (nr == SYS_openat || nr == SYS_newfstatat || nr == SYS_faccessat || nr == SYS_readlinkat ||
		 nr == SYS_unlinkat || nr == SYS_mkdirat || nr == SYS_statx)
		p = (const char *)a[1];
	return (uintptr_t)p >= 4096 ? p : NULL;
}

/* Audit mode logs the first few of each (call, object) pair. */
#define AUDIT_SEEN 128
static struct {
	long nr;
	const char *obj;
	int count;
} seen[AUDIT_SEEN];

static int audit_first_few(long nr, const char *obj)
{
	for (int i = 0; i < AUDIT_SEEN; i++) {
		if (seen[i].count == 0) {
			seen[i].nr = nr;
			seen[i].obj = obj;
			seen[i].count = 1;
			return 1;
		}
		if (seen[i].nr == nr && seen[i].obj == obj)
			return ++seen[i].count <= 4;
	}
	return 0;
}

/* Reads other frames' stack words and a caller's path: not instrumented. */
__attribute__((no_sanitize_address)) static void on_sigsys(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	long nr = si->si_syscall;
	const char *obj = object_at((uintptr_t)si->si_call_addr);
	const char *via = caller_of(obj, ucv);
	struct line l = {.n = 0};
	if (audit_fd >= 0) {
		greg_t *g = ((ucontext_t *)ucv)->uc_mcontext.gregs;
		long a[6] = {g[REG_RDI], g[REG_RSI], g[REG_RDX], g[REG_R10], g[REG_R8], g[REG_R9]};
		/* making processes from a signal handler cannot be carried
		 * out; the call fails instead */
		int refuse = nr == SYS_clone || nr == SYS_clone3 || nr == SYS_fork || nr == SYS_vfork ||
			     nr == SYS_execve || nr == SYS_execveat || (nr == SYS_rt_sigaction && a[0] == SIGSYS);
		long ret = refuse ? -EPERM : sbx_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		g[REG_RAX] = ret;
		if (audit_first_few(nr, obj)) {
			put(&l, "audit: ");
			put_call(&l, nr);
			put(&l, " from ");
			put(&l, obj != NULL ? obj : "unknown code");
			if (via != NULL) {
				put(&l, " called from ");
				put(&l, via);
			}
			const char *p = path_arg(nr, a);
			if (p != NULL) {
				put(&l, " path ");
				char pb[96];
				size_t k = 0;
				while (k + 1 < sizeof pb && p[k])
					pb[k] = p[k], k++;
				pb[k] = 0;
				put(&l, pb);
			} else if (nr == SYS_ioctl || nr == SYS_read || nr == SYS_write || nr == SYS_close ||
				   nr == SYS_fcntl) {
				put(&l, " fd ");
				put_num(&l, a[0]);
			}
			put(&l, refuse ? " (refused)" : " = ");
			if (!refuse)
				put_num(&l, ret);
			put(&l, "\n");
			sbx_syscall(SYS_write, audit_fd, (long)l.b, (long)l.n, 0, 0, 0);
		}
		return;
	}
	put(&l, "sandbox: forbidden system call ");
	put_call(&l, nr);
	if (obj != NULL) {
		put(&l, " (in ");
		put(&l, obj);
		if (via != NULL) {
			put(&l, ", called from ");
			put(&l, via);
		}
		put(&l, ")");
		if (driver_object(via != NULL ? via : obj))
			put(&l, ": made by the GPU driver, not by the pass");
	}
	put(&l, "\n");
	if (report_fd >= 0)
		(void)!write(report_fd, l.b, l.n);
	syscall(SYS_exit_group, SANDBOX_EXIT_STATUS);
}

/* ---- descriptors the driver opens after entry --------------------------- */

#define MAX_DEV_FDS 512
#define MAX_IO_FDS 8            /* sandbox_limits.n_io_fds at most */

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

#define POOL_PATHS 4
#define POOL_PER 8
static struct devpool {
	char path[96];
	int first, count, next;
} pool[POOL_PATHS];
static int pool_n, pool_lo = -1, pool_hi = -1, pool_on;

static int highest_fd(void)
{
	int fds[512], hi = 2;
	int n = gpu_list_open_fds(fds, 512);
	if (n <= 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (fds[i] > hi)
			hi = fds[i];
	return hi;
}

static void pool_drop(void)
{
	if (pool_lo >= 0)
		for (int fd = pool_lo; fd <= pool_hi; fd++)
			close(fd);
	pool_n = 0;
	pool_lo = pool_hi = -1;
}

/* Pre-opens POOL_PER descriptors on each character device (a path under
 * /dev, but not /dev/nvidia-uvm*) among `fds`, numbered contiguously from
 * above every open one. */
static void pool_fill(const int *fds, int n)
{
	pool_drop();
	char paths[POOL_PATHS][96];
	int np = 0;
	for (int i = 0; i < n && np < POOL_PATHS; i++) {
		struct stat st;
		char link[64], path[96];
		if (fstat(fds[i], &st) || !S_ISCHR(st.st_mode))
			continue;
		snprintf(link, sizeof link, "/proc/self/fd/%d", fds[i]);
		ssize_t len = readlink(link, path, sizeof path - 1);
		if (len <= 5 || (size_t)len >= sizeof path - 1)
			continue;
		path[len] = 0;
		/* not the unified-memory devices: a process has one of each,
		 * and every open of /dev/nvidia-uvm makes a new address space */
		if (strncmp(path, "/dev/", 5) != 0 || strstr(path, "uvm") != NULL)
			continue;
		int dup = 0;
		for (int k = 0; k < np && !dup; k++)
			dup = strcmp(paths[k], path) == 0;
		if (!dup)
			memcpy(paths[np++], path, sizeof path);
	}
	int base = np > 0 ? highest_fd() + 1 : -1;
	if (base <= 0)
		return;
	int next = base;
	for (int k = 0; k < np; k++) {
		struct devpool *p = &pool[pool_n];
		memcpy(p->path, paths[k], sizeof p->path);
		p->first = next;
		p->count = p->next = 0;
		for (int j = 0; j < POOL_PER; j++) {
			int fd = (int)syscall(SYS_openat, AT_FDCWD, paths[k], O_RDWR | O_CLOEXEC, 0);
			if (fd < 0)
				break;
			int at = fcntl(fd, F_DUPFD_CLOEXEC, next);
			close(fd);
			if (at != next) {
				/* something else holds a number in the block: no pool */
				if (at >= 0)
					close(at);
				pool_lo = base;
				pool_hi = next - 1;
				pool_drop();
				return;
			}
			next++;
			p->count++;
		}
		if (p->count > 0)
			pool_n++;
	}
	if (next > base) {
		pool_lo = base;
		pool_hi = next - 1;
	}
}

/* A pre-opened descriptor for `path`, or -2 when it is not a pooled path. */
INTERPOSER static int pool_take(const char *path, int flags)
{
	for (int i = 0; i < pool_n; i++) {
		struct devpool *p = &pool[i];
		if (strcmp(path, p->path) != 0)
			continue;
		int k = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
		if (k >= p->count) {
			struct line l = {.n = 0};
			put(&l, "sandbox: the GPU driver opened ");
			put(&l, path);
			put(&l, " more often than the ");
			put_num(&l, p->count);
			put(&l, " descriptors pre-opened for it\n");
			if (report_fd >= 0)
				(void)!write(report_fd, l.b, l.n);
			errno = EMFILE;
			return -1;
		}
		int fd = p->first + k;
		if (flags & O_NONBLOCK)
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		return fd;
	}
	return -2;
}

INTERPOSER static int sbx_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	if (__atomic_load_n(&pool_on, __ATOMIC_ACQUIRE) && path != NULL && path[0] == '/' &&
	    !(flags & (O_CREAT | O_TMPFILE))) {
		int fd = pool_take(path, flags);
		if (fd != -2)
			return fd;
	}
	return (int)syscall(SYS_openat, dirfd, path, flags, mode);
}

/* The exported open family (see the top of the file).  Declared by their
 * assembler names so <fcntl.h>'s redirections and fortify wrappers do not
 * apply; outside a pooled sandbox they are plain openat(2). */
#define MODE_ARG(flags, mode)                                              \
	mode_t mode = 0;                                                   \
	if ((flags) & (O_CREAT | O_TMPFILE)) {                             \
		va_list ap_;                                               \
		va_start(ap_, flags);                                      \
		mode = (mode_t)va_arg(ap_, int);                           \
		va_end(ap_);                                               \
	}
int sbx_open(const char *path, int flags, ...) __asm__("open");
int sbx_open64(const char *path, int flags, ...) __asm__("open64");
int sbx_openat_(int dirfd, const char *path, int flags, ...) __asm__("openat");
int sbx_openat64(int dirfd, const char *path, int flags, ...) __asm__("openat64");
int sbx_open_2(const char *path, int flags) __asm__("__open_2");
int sbx_open64_2(const char *path, int flags) __asm__("__open64_2");
int sbx_openat_2(int dirfd, const char *path, int flags) __asm__("__openat_2");
int sbx_openat64_2(int dirfd, const char *path, int flags) __asm__("__openat64_2");
INTERPOSER int sbx_open(const char *path, int flags, ...)
{
	MODE_ARG(flags, mode);
	return sbx_openat(AT_FDCWD, path, flags, mode);
}
INTERPOSER int sbx_open64(const char *path, int flags, ...)
{
	MODE_ARG(flags, mode);
	return sbx_openat(AT_FDCWD, path, flags, mode);
}
INTERPOSER int sbx_openat_(int dirfd, const char *path, int flags, ...)
{
	MODE_ARG(flags, mode);
	return sbx_openat(dirfd, path, flags, mode);
}
INTERPOSER int sbx_openat64(int dirfd, const char *path, int flags, ...)
{
	MODE_ARG(flags, mode);
	return sbx_openat(dirfd, path, flags, mode);
}
INTERPOSER int sbx_open_2(const char *path, int flags)
{
	return sbx_openat(AT_FDCWD, path, flags, 0);
}
INTERPOSER int sbx_open64_2(const char *path, int flags)
{
	return sbx_openat(AT_FDCWD, path, flags, 0);
}
INTERPOSER int sbx_openat_2(int dirfd, const char *path, int flags)
{
	return sbx_openat(dirfd, path, flags, 0);
}
INTERPOSER int sbx_openat64_2(int dirfd, const char *path, int flags)
{
	return sbx_openat(dirfd, path, flags, 0);
}

#define ALLOW(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

int sandbox_enter(const struct sandbox_limits *lim, char *err, size_t errlen)
{
	struct rlimit rl;
	/* AddressSanitizer reserves terabytes of shadow address space (private
	 * and writable), so a sanitizer build cannot run under RLIMIT_AS or
	 * RLIMIT_DATA; memory floods are then caught by the other limits only. */
#if defined(__SANITIZE_ADDRESS__)
	const int limit_as = 0;
#else
	const int limit_as = 1;
#endif
	if (lim->address_space && limit_as) {
		rl.rlim_cur = rl.rlim_max = lim->address_space;
		if (setrlimit(RLIMIT_AS, &rl))
			goto fail;
	}
	if (lim->data && limit_as) {
		rl.rlim_cur = rl.rlim_max = lim->data;
		if (setrlimit(RLIMIT_DATA, &rl))
			goto fail;
	}
	if (lim->cpu_seconds) {
		rl.rlim_cur = lim->cpu_seconds;
		rl.rlim_max = lim->cpu_seconds + 1;
		if (setrlimit(RLIMIT_CPU, &rl))
			goto fail;
	}
	rl.rlim_cur = rl.rlim_max = 0;
	if (setrlimit(RLIMIT_CORE, &rl))
		goto fail;

	report_fd = lim->report_fd;
	/* The pass can write to the report pipe too: filled to the brim, it
	 * would block the handler's write, and a refused call would become a
	 * hang (a timeout) instead of a SIGSYS exit.  Non-blocking, the
	 * handler's line is lost at worst; the exit status still tells. */
	if (report_fd >= 0 && fcntl(report_fd, F_SETFL, fcntl(report_fd, F_GETFL) | O_NONBLOCK) != 0)
		goto fail;
	/* stdio allocates a stream's buffer on first use and sizes it with
	 * fstat, which the filter refuses: give stdout its buffer now, so a
	 * pass's printf works (setvbuf with NULL would only defer the fstat). */
	static char stdout_buf[4096];
	fflush(stdout);
	setvbuf(stdout, stdout_buf, _IOLBF, sizeof(stdout_buf));
	(void)!write(1, "", 0);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL))
		goto fail;

	/* Build the program: check the arch, then the fd-restricted calls, then
	 * the plain allow-list, then trap. */
	/* the fixed parts (at most PROG_FIXED, asserted below) + 3 per run of
	 * device descriptors */
#define PROG_FIXED 400
	struct sock_filter prog[PROG_FIXED + 3 * (MAX_DEV_FDS + POOL_PATHS * POOL_PER)];
	int n = 0;
	if (lim->n_io_fds > MAX_IO_FDS || lim->n_dev_fds < 0 || lim->n_dev_fds > MAX_DEV_FDS ||
	    (lim->n_dev_fds > 0 && lim->dev_fds == NULL)) {
		errno = EINVAL;
		goto fail;
	}
	/* The given device descriptors, plus those the GPU driver opened when
	 * this process initialised CUDA (none on the cpu backend), plus, with
	 * adopt_open_fds, every other one still open (a worker that closed
	 * all but its own before opening the device).  A CUDA process holds
	 * many: the NVIDIA driver keeps one per host mapping of its memory. */
	static int dev_fds[MAX_DEV_FDS + POOL_PATHS * POOL_PER], drv[MAX_DEV_FDS], open_fds[MAX_DEV_FDS];
	int n_dev = 0;
	for (int k = 0; k < lim->n_dev_fds; k++)
		dev_fds[n_dev++] = lim->dev_fds[k];
	int nd = gpu_driver_fds(NULL, drv, MAX_DEV_FDS);
	int no = lim->adopt_open_fds ? gpu_list_open_fds(open_fds, MAX_DEV_FDS) : 0;
	for (int k = 0; k < nd + no; k++) {
		int fd = k < nd ? drv[k] : open_fds[k - nd];
		int skip = k >= nd && (fd <= 2 || fd == lim->report_fd || fd == lim->audit_fd);
		for (int q = 0; q < lim->n_io_fds && !skip; q++)
			skip = k >= nd && fd == lim->io_fds[q];
		for (int q = 0; q < n_dev && !skip; q++)
			skip = fd == dev_fds[q];
		if (skip)
			continue;
		if (n_dev == MAX_DEV_FDS) {
			snprintf(err, errlen, "sandbox: more than %d device descriptors are open", MAX_DEV_FDS);
			return -1;
		}
		dev_fds[n_dev++] = fd;
	}
	/* descriptors for the driver to open after entry, and the code
	 * ranges the handler names callers by */
	pool_fill(dev_fds, n_dev);
	n_ranges = 0;
	dl_iterate_phdr(note_object, NULL);
	audit_fd = lim->audit_fd > 0 ? lim->audit_fd : -1;
	/* Bounded: one more allow-list entry must fail the sandbox with a
	 * message, never write past prog[] (and the _Static_assert after
	 * fdcalls[] fails the build first). */
	int overflow = 0;
	const int cap = (int)(sizeof(prog) / sizeof(prog[0]));
#define EMIT(...) do { struct sock_filter ins_[] = {__VA_ARGS__}; \
	for (size_t k_ = 0; k_ < sizeof(ins_) / sizeof(ins_[0]); k_++) { \
		if (n < cap) prog[n++] = ins_[k_]; else overflow = 1; } } while (0)
	EMIT(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	     BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
	     BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
	/* audit mode: the handler's own calls (made at sbx_syscall_ret) pass */
	if (audit_fd >= 0) {
		uint64_t ip = (uint64_t)(uintptr_t)sbx_syscall_ret;
		EMIT(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer)),
		     BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)ip, 0, 3),
		     BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer) + 4),
		     BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(ip >> 32), 0, 1),
		     BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
	}
	EMIT(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
	/* x32 syscalls (nr | 0x40000000) are refused outright. */
	EMIT(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1),
	     BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
	/* mmap and mprotect, but never executable: a pass may not write code
	 * and run it (a raw syscall instruction, say).  The object itself is
	 * mapped before the filter goes on. */
	static const long noexec[] = {SYS_mmap, SYS_mprotect};
	for (size_t i = 0; i < 2; i++)
		EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)noexec[i], 0, 4),
		     BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		     BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),
		     BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		     BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
	if (lim->keep_accessed)
		EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)SYS_madvise, 0, 4),
		     BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		     BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MADV_FREE, 1, 0),
		     BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
		     BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		     BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
	static const long plain[] = {
		SYS_munmap, SYS_mremap, SYS_madvise, SYS_brk,
		SYS_futex, SYS_clock_gettime, SYS_clock_getres, SYS_gettimeofday, SYS_nanosleep,
		SYS_clock_nanosleep, SYS_sched_yield, SYS_exit, SYS_exit_group, SYS_rt_sigreturn,
		SYS_rt_sigprocmask, SYS_getpid, SYS_gettid, SYS_sched_getaffinity, SYS_restart_syscall,
		SYS_set_robust_list, SYS_rseq, SYS_getrandom, SYS_sigaltstack,
		/* what a GPU driver may ask of its own process, reaching nothing
		 * outside it: identity and usage queries, page locking and NUMA
		 * placement of its memory, barriers */
		SYS_getppid, SYS_getuid, SYS_geteuid, SYS_getgid, SYS_getegid, SYS_uname, SYS_sysinfo,
		SYS_getrusage, SYS_getrlimit, SYS_getcpu, SYS_sched_getparam, SYS_sched_getscheduler,
		SYS_membarrier, SYS_mlock, SYS_mlock2, SYS_munlock, SYS_get_mempolicy, SYS_mbind,
		SYS_set_mempolicy,
	};
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		EMIT(ALLOW((unsigned)plain[i]));
	/* The GPU driver's descriptors: the calls it makes on them, whichever
	 * thread makes them.  Each block tests args[0] and reloads nr. */
	/* newfstatat: glibc's fstat (fd, "", AT_EMPTY_PATH); a path relative
	 * to a device descriptor reaches no file.  The epoll and timerfd
	 * calls: a driver's event thread may wait so. */
	static const long devcalls[] = {SYS_ioctl, SYS_read, SYS_write, SYS_pread64, SYS_pwrite64,
					SYS_readv, SYS_writev, SYS_fcntl, SYS_fstat, SYS_newfstatat,
					SYS_close, SYS_epoll_wait, SYS_epoll_pwait, SYS_epoll_pwait2,
					SYS_epoll_ctl, SYS_timerfd_settime, SYS_timerfd_gettime};
	if (n_dev > 0 || pool_lo >= 0) {
		/* waiting on descriptors opens nothing */
		EMIT(ALLOW((unsigned)SYS_poll), ALLOW((unsigned)SYS_ppoll), ALLOW((unsigned)SYS_select),
		     ALLOW((unsigned)SYS_pselect6));
		const int nc = (int)(sizeof(devcalls) / sizeof(devcalls[0]));
		/* one of the calls: on to the descriptor test; else past it */
		for (int i = 0; i < nc; i++)
			EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)devcalls[i], (unsigned char)(nc - i), 0));
		/* the descriptors as sorted runs lo..hi, the pre-opened block
		 * one of them: JGE lo, JGT hi, allow */
		for (int k = 0; pool_lo >= 0 && k <= pool_hi - pool_lo; k++)
			dev_fds[n_dev++] = pool_lo + k;
		qsort(dev_fds, (size_t)n_dev, sizeof(int), cmp_int);
		int runs = 0;
		for (int k = 0; k < n_dev; k++)
			runs += k == 0 || dev_fds[k] > dev_fds[k - 1] + 1;
		EMIT(BPF_JUMP(BPF_JMP | BPF_JA, (unsigned)(2 + 3 * runs), 0, 0));
		EMIT(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])));
		for (int k = 0; k < n_dev;) {
			int lo = dev_fds[k];
			while (k + 1 < n_dev && dev_fds[k + 1] <= dev_fds[k] + 1)
				k++;
			EMIT(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, (unsigned)lo, 0, 2),
			     BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, (unsigned)dev_fds[k], 1, 0),
			     BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
			k++;
		}
		/* not a device descriptor: nr again, for the rules below */
		EMIT(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
	}
	/* read/write and friends on permitted descriptors only. */
	static const long fdcalls[] = {SYS_read, SYS_write, SYS_readv, SYS_writev, SYS_recvmsg, SYS_sendmsg,
				       SYS_sendto, SYS_recvfrom,
				       SYS_fsync, SYS_poll};
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
	/* Every instruction above and below but the 3 per device descriptor
	 * run: arch 3, audit 5, nr 1, x32 2, noexec 2 x 5, plain 2 each, the
	 * device block's 4 ALLOWs (8) + devcalls + jump, load and reload (3),
	 * per fdcalls entry 3 + 2 per permitted descriptor (stdout, stderr,
	 * report, MAX_IO_FDS), the final trap 1.  Growing a list past prog[]
	 * fails the build here, not the sandbox at run time. */
	_Static_assert(3 + 5 + 1 + 2 + 2 * 5 + 2 * NELEM(plain) + 8 + NELEM(devcalls) + 3 +
			       NELEM(fdcalls) * (3 + 2 * (3 + MAX_IO_FDS)) + 1 <= PROG_FIXED,
		       "the seccomp program's fixed parts outgrow prog[]: raise PROG_FIXED");
	/* BPF conditional jumps are 8-bit: the skips over devcalls and over a
	 * descriptor block must fit. */
	_Static_assert(NELEM(devcalls) <= 255 && 2 * (3 + MAX_IO_FDS) + 2 <= 255,
		       "a seccomp jump offset outgrows 8 bits");
#undef NELEM
	for (size_t i = 0; i < sizeof(fdcalls) / sizeof(fdcalls[0]); i++) {
		int nfd = 3 + lim->n_io_fds;
		/* nr != call: skip the block (load, 2 per fd, trap), with the
		 * accumulator still holding nr. */
		EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)fdcalls[i], 0, (unsigned char)(2 * nfd + 2)));
		EMIT(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])));
		for (int k = 0; k < nfd; k++) {
			unsigned fd = k == 0 ? 1u : k == 1 ? 2u : k == 2 ? (unsigned)lim->report_fd
								 : (unsigned)lim->io_fds[k - 3];
			EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, fd, 0, 1),
			     BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
		}
		EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP));
	}
	EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP));
#undef EMIT
#undef PROG_FIXED
	if (overflow) {
		snprintf(err, errlen, "sandbox: the seccomp program needs more than %d instructions", cap);
		return -1;
	}
	struct sock_fprog fprog = {.len = (unsigned short)n, .filter = prog};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		goto fail;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &fprog))
		goto fail;
	__atomic_store_n(&pool_on, pool_n > 0, __ATOMIC_RELEASE);
	return 0;
fail:
	snprintf(err, errlen, "sandbox: %s", strerror(errno));
	return -1;
}
