/* sandbox.c - rlimits plus a seccomp-BPF allow-list (x86-64).
 *
 * The filter allows only what a running kernel needs; read and write are
 * allowed on stdout/stderr and the IPC descriptors only, so even a raw
 * `syscall` instruction in inline assembly cannot open, connect or fork.
 * Disallowed calls trap (SECCOMP_RET_TRAP): the SIGSYS handler, installed
 * before the filter and unreplaceable afterwards (rt_sigaction is not on the
 * list), reports the call and exits. */
#include "sandbox.h"

#include "gpu.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
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
};

const char *sandbox_syscall_name(long nr, char *buf, size_t len)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].nr == nr)
			return names[i].name;
	snprintf(buf, len, "syscall %ld", nr);
	return buf;
}

/* Async-signal-safe: formats with no stdio. */
static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	char line[96] = "sandbox: forbidden system call ";
	char nb[32];
	const char *nm = NULL;
	long nr = si->si_syscall;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].nr == nr)
			nm = names[i].name;
	if (nm == NULL) {
		int k = 0;
		char tmp[24];
		long v = nr < 0 ? -nr : nr;
		do
			tmp[k++] = (char)('0' + v % 10);
		while ((v /= 10) && k < 20);
		int j = 0;
		memcpy(nb, "syscall ", 8);
		j = 8;
		while (k)
			nb[j++] = tmp[--k];
		nb[j] = 0;
		nm = nb;
	}
	size_t n = strlen(line);
	size_t m = strlen(nm);
	if (n + m + 2 < sizeof(line)) {
		memcpy(line + n, nm, m);
		line[n + m] = '\n';
		line[n + m + 1] = 0;
	}
	if (report_fd >= 0)
		(void)!write(report_fd, line, strlen(line));
	syscall(SYS_exit_group, 159);
}

#define ALLOW(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

int sandbox_enter(const struct sandbox_limits *lim, char *err, size_t errlen)
{
	struct rlimit rl;
	/* AddressSanitizer reserves terabytes of shadow address space, so a
	 * sanitizer build cannot run under RLIMIT_AS; memory floods are then
	 * caught by the other limits only. */
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
	/* 10 fd calls x (3 + 2 x 11 fds) + 9 device calls x (3 + 2 x 32 fds) + 70 fit */
	struct sock_filter prog[1024];
	int n = 0;
	if (lim->n_io_fds > 8 || lim->n_dev_fds < 0 || lim->n_dev_fds > 32 ||
	    (lim->n_dev_fds > 0 && lim->dev_fds == NULL)) {
		errno = EINVAL;
		goto fail;
	}
	/* The given device descriptors, plus those the GPU driver opened when
	 * this process initialised CUDA (none on the cpu backend). */
	int dev_fds[32], n_dev = 0, drv[32];
	for (int k = 0; k < lim->n_dev_fds; k++)
		dev_fds[n_dev++] = lim->dev_fds[k];
	int nd = gpu_driver_fds(NULL, drv, 32);
	for (int k = 0; k < nd; k++) {
		int known = 0;
		for (int q = 0; q < n_dev && !known; q++)
			known = dev_fds[q] == drv[k];
		if (!known && n_dev < 32)
			dev_fds[n_dev++] = drv[k];
	}
#define EMIT(...) do { struct sock_filter ins_[] = {__VA_ARGS__}; \
	for (size_t k_ = 0; k_ < sizeof(ins_) / sizeof(ins_[0]); k_++) prog[n++] = ins_[k_]; } while (0)
	EMIT(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	     BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
	     BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	     BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
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
	static const long plain[] = {
		SYS_munmap, SYS_mremap, SYS_madvise, SYS_brk,
		SYS_futex, SYS_clock_gettime, SYS_clock_getres, SYS_gettimeofday, SYS_nanosleep,
		SYS_clock_nanosleep, SYS_sched_yield, SYS_exit, SYS_exit_group, SYS_rt_sigreturn,
		SYS_rt_sigprocmask, SYS_getpid, SYS_gettid, SYS_sched_getaffinity, SYS_restart_syscall,
		SYS_set_robust_list, SYS_rseq, SYS_getrandom, SYS_sigaltstack,
	};
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		EMIT(ALLOW((unsigned)plain[i]));
	/* The GPU driver's descriptors: the calls it makes on them, whichever
	 * thread makes them.  Each block tests args[0] and reloads nr. */
	if (n_dev > 0) {
		EMIT(ALLOW((unsigned)SYS_poll), ALLOW((unsigned)SYS_ppoll));
		/* newfstatat: glibc's fstat (fd, "", AT_EMPTY_PATH); a path
		 * relative to a device descriptor reaches no file */
		static const long devcalls[] = {SYS_ioctl, SYS_read, SYS_write, SYS_pread64, SYS_pwrite64,
						SYS_fcntl, SYS_fstat, SYS_newfstatat, SYS_close};
		for (size_t i = 0; i < sizeof(devcalls) / sizeof(devcalls[0]); i++) {
			EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)devcalls[i], 0,
				      (unsigned char)(2 * n_dev + 2)));
			EMIT(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])));
			for (int k = 0; k < n_dev; k++)
				EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)dev_fds[k], 0, 1),
				     BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
			EMIT(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
		}
	}
	/* read/write and friends on permitted descriptors only. */
	static const long fdcalls[] = {SYS_read, SYS_write, SYS_readv, SYS_writev, SYS_recvmsg, SYS_sendmsg,
				       SYS_sendto, SYS_recvfrom,
				       SYS_fsync, SYS_poll};
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
	struct sock_fprog fprog = {.len = (unsigned short)n, .filter = prog};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		goto fail;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &fprog))
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "sandbox: %s", strerror(errno));
	return -1;
}
