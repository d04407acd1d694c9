/* test_sandbox.c - the seccomp sandbox stops files, sockets, processes and a
 * raw `syscall` instruction, and lets computing, memory, printf and the IPC
 * fd work; its report names the object that made a call; opening a device
 * path the driver holds is served from pre-opened descriptors, a limited
 * number of them; audit mode logs refused calls and carries them out. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox.h"

static int passed, failed;
#define CHECK(cond, ...) do { if (cond) passed++; else { failed++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

enum action { A_COMPUTE, A_OPEN, A_SOCKET, A_FORK, A_RAW_OPENAT, A_WRITE_FILE_FD, A_SIGACTION, A_SETTIME,
	      A_EXEC_MMAP, A_EXEC_MPROTECT, A_DEV_IOCTL, A_DEV_READ, A_OTHER_IOCTL, A_POOL_OPEN,
	      A_POOL_EXHAUST, A_POOL_OTHER_DEV, A_AUDIT, A_ADOPTED, A_NOT_ADOPTED, A_MANY_OK,
	      A_MANY_GAP };

/* Runs `act` in a sandboxed child; returns its exit status and what it wrote
 * to the report pipe. */
static int run(enum action act, char *report, size_t len, const char *probe)
{
	int rp[2], ipc[2];
	if (pipe(rp) || socketpair(AF_UNIX, SOCK_STREAM, 0, ipc))
		return -1;
	int fd_file = open("/dev/null", O_WRONLY);
	/* a stand-in for a GPU driver descriptor */
	int dev[2];
	if (pipe(dev))
		return -1;
	(void)!write(dev[1], "d", 1);
	/* a character device the "driver" holds: its path is pooled */
	int devs[2] = {dev[0], open("/dev/null", O_RDWR | O_CLOEXEC)};
	int audit[2], spare[2];
	if (pipe(audit) || pipe(spare))
		return -1;
	(void)!write(spare[1], "s", 1);
	long sid = (long)getsid(0);
	pid_t pid = fork();
	if (pid == 0) {
		close(rp[0]);
		char err[256];
		/* many descriptors with gaps, as a CUDA process holds (one per
		 * host mapping): fds[i] open unless i % 3 == 1 */
		static int many[300];
		int n_many = act >= A_MANY_OK ? 300 : 0;
		for (int i = 0; i < n_many; i++)
			many[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		for (int i = 0; i < n_many; i++)
			if (i % 3 == 1)
				close(many[i]);
		/* a driver's event thread waits on an epoll descriptor */
		int ep = act == A_ADOPTED ? epoll_create1(EPOLL_CLOEXEC) : -1;
		struct sandbox_limits lim = {.address_space = (size_t)4 << 30, .cpu_seconds = 10,
					     .report_fd = rp[1], .io_fds = &ipc[1], .n_io_fds = 1,
					     .dev_fds = devs,
					     .n_dev_fds = act >= A_POOL_OPEN ? 2 : act >= A_DEV_IOCTL ? 1 : 0,
					     .audit_fd = act == A_AUDIT ? audit[1] : 0,
					     .adopt_open_fds = act == A_ADOPTED || act >= A_MANY_OK};
		if (sandbox_enter(&lim, err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			_exit(3);
		}
		switch (act) {
		case A_COMPUTE: {
			char *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			memset(m, 1, 1 << 20);
			/* what a driver may ask of its own process */
			struct utsname un;
			struct rusage ru;
			if (uname(&un) || getrusage(RUSAGE_SELF, &ru) || getppid() <= 0)
				_exit(6);
			char *h = malloc(1000);
			free(h);
			/* a pass's printf: stdio's first use must not need fstat */
			printf("sandboxed child: printf works\n");
			fflush(stdout);
			(void)!write(ipc[1], "ok", 2);
			_exit(m[5] == 1 ? 0 : 4);
		}
		case A_OPEN:
			open(probe, O_WRONLY | O_CREAT, 0600);
			_exit(0);
		case A_SOCKET:
			socket(AF_INET, SOCK_STREAM, 0);
			_exit(0);
		case A_FORK:
			if (fork() == 0) {
				int f = open(probe, O_WRONLY | O_CREAT, 0600);
				close(f);
			}
			_exit(0);
		case A_RAW_OPENAT: {
			long ret;
			/* openat(AT_FDCWD, probe, O_WRONLY|O_CREAT, 0600) with no libc. */
			__asm__ volatile("syscall" : "=a"(ret)
					 : "a"(257L), "D"(-100L), "S"(probe), "d"(0101L), "r"(0600L)
					 : "rcx", "r11", "memory");
			_exit(0);
		}
		case A_WRITE_FILE_FD:
			(void)!write(fd_file, "x", 1);
			_exit(0);
		case A_SIGACTION:
			signal(SIGSYS, SIG_IGN);
			_exit(0);
		case A_EXEC_MMAP:
			mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			_exit(0);
		case A_EXEC_MPROTECT: {
			/* Write a syscall instruction, make it executable, run it. */
			unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			static const unsigned char code[] = {0x0f, 0x05, 0xc3};
			memcpy(p, code, sizeof(code));
			mprotect(p, 4096, PROT_READ | PROT_EXEC);
			_exit(0);
		}
		case A_DEV_IOCTL: {
			int avail = 0;
			_exit(ioctl(dev[0], FIONREAD, &avail) == 0 && avail == 1 ? 0 : 5);
		}
		case A_DEV_READ: {
			char ch = 0;
			_exit(read(dev[0], &ch, 1) == 1 && ch == 'd' ? 0 : 5);
		}
		case A_OTHER_IOCTL: {
			int avail = 0;
			ioctl(ipc[1], FIONREAD, &avail);
			_exit(0);
		}
		case A_POOL_OPEN: {
			/* 8 opens of /dev/null, each a new descriptor that works */
			int got[8];
			for (int i = 0; i < 8; i++) {
				got[i] = open("/dev/null", O_RDWR | O_CLOEXEC);
				if (got[i] < 0 || write(got[i], "x", 1) != 1)
					_exit(10 + i);
				for (int j = 0; j < i; j++)
					if (got[j] == got[i])
						_exit(30);
			}
			_exit(close(got[3]) == 0 ? 0 : 31);
		}
		case A_POOL_EXHAUST: {
			for (int i = 0; i < 8; i++)
				if (openat(AT_FDCWD, "/dev/null", O_RDONLY) < 0)
					_exit(10 + i);
			int fd = open("/dev/null", O_RDWR);
			_exit(fd < 0 && errno == EMFILE ? 0 : 20);
		}
		case A_POOL_OTHER_DEV:
			open("/dev/zero", O_RDWR);
			_exit(0);
		case A_AUDIT: {
			/* refused calls are carried out, and logged */
			int fd = open(probe, O_WRONLY | O_CREAT, 0600);
			if (fd < 0 || write(fd, "a", 1) != 1)
				_exit(10);
			long ret;
			__asm__ volatile("syscall" : "=a"(ret) : "a"((long)SYS_getsid), "D"(0L) : "rcx", "r11", "memory");
			if (ret != sid)
				_exit(11);
			/* processes are not made */
			if (fork() != -1 || errno != EPERM)
				_exit(12);
			_exit(0);
		}
		case A_ADOPTED:
		case A_NOT_ADOPTED: {
			/* a descriptor opened before entry and named nowhere */
			char ch = 0;
			struct epoll_event ev;
			if (ep >= 0 && epoll_wait(ep, &ev, 1, 0) != 0)
				_exit(6);
			_exit(read(spare[0], &ch, 1) == 1 && ch == 's' ? 0 : 5);
		}
		case A_MANY_OK:
			for (int i = 0; i < n_many; i++)
				if (i % 3 != 1 && fcntl(many[i], F_GETFD) < 0)
					_exit(10);
			_exit(0);
		case A_MANY_GAP: {
			/* a number in a gap: no device descriptor, refused */
			char ch;
			(void)!read(many[151], &ch, 1);
			_exit(0);
		}
		case A_SETTIME: {
			struct timespec ts = {0, 0};
			syscall(SYS_clock_settime, CLOCK_REALTIME, &ts);
			_exit(0);
		}
		}
		_exit(0);
	}
	close(rp[1]);
	close(ipc[1]);
	close(fd_file);
	close(dev[0]);
	close(dev[1]);
	close(devs[1]);
	close(audit[1]);
	close(spare[0]);
	close(spare[1]);
	int st;
	waitpid(pid, &st, 0);
	ssize_t n = read(act == A_AUDIT ? audit[0] : rp[0], report, len - 1);
	close(audit[0]);
	report[n > 0 ? n : 0] = 0;
	close(rp[0]);
	close(ipc[0]);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(void)
{
	char rep[1024], probe[512];
	const char *tmp = getenv("TMPDIR");
	snprintf(probe, sizeof(probe), "%s/passfs-sandbox-probe-%d", tmp && *tmp == '/' ? tmp : "/tmp", (int)getpid());
	unlink(probe);
	CHECK(run(A_COMPUTE, rep, sizeof(rep), probe) == 0, "compute: %s", rep);
	static const struct { enum action a; const char *want; } bad[] = {
		{A_OPEN, "openat"}, {A_SOCKET, "socket"}, {A_FORK, "clone"}, {A_RAW_OPENAT, "openat"},
		{A_WRITE_FILE_FD, "write"}, {A_SIGACTION, "rt_sigaction"}, {A_SETTIME, "clock_settime"},
		{A_EXEC_MMAP, "mmap (executable)"}, {A_EXEC_MPROTECT, "mprotect (executable)"},
		{A_OTHER_IOCTL, "ioctl"},
	};
	/* the GPU driver's descriptors (sandbox_limits.dev_fds) */
	CHECK(run(A_DEV_IOCTL, rep, sizeof(rep), probe) == 0, "ioctl on a device fd: %s", rep);
	CHECK(run(A_DEV_READ, rep, sizeof(rep), probe) == 0, "read on a device fd: %s", rep);
	/* who made the call: libc's open, a raw instruction in this program */
	CHECK(run(A_OPEN, rep, sizeof(rep), probe) == 159 &&
		      strstr(rep, "openat (in libc.so.6, called from test_sandbox)"),
	      "open through libc: '%s'", rep);
	CHECK(run(A_RAW_OPENAT, rep, sizeof(rep), probe) == 159 && strstr(rep, "openat (in test_sandbox)") &&
		      !strstr(rep, "GPU driver"),
	      "raw openat: '%s'", rep);
	/* device paths the driver holds are served from the pool, 8 of them */
	int st = run(A_POOL_OPEN, rep, sizeof(rep), probe);
	CHECK(st == 0, "pooled opens: status %d, report '%s'", st, rep);
	st = run(A_POOL_EXHAUST, rep, sizeof(rep), probe);
	CHECK(st == 0 && strstr(rep, "opened /dev/null more often than the 8 descriptors"),
	      "pool used up: status %d, report '%s'", st, rep);
	st = run(A_POOL_OTHER_DEV, rep, sizeof(rep), probe);
	CHECK(st == 159 && strstr(rep, "forbidden system call openat"), "other device: status %d, '%s'", st, rep);
	/* descriptors adopted as the driver's (adopt_open_fds) */
	st = run(A_ADOPTED, rep, sizeof(rep), probe);
	CHECK(st == 0, "adopted descriptor: status %d, report '%s'", st, rep);
	st = run(A_NOT_ADOPTED, rep, sizeof(rep), probe);
	CHECK(st == 159 && strstr(rep, "forbidden system call read"), "descriptor not adopted: status %d, '%s'", st,
	      rep);
	st = run(A_MANY_OK, rep, sizeof(rep), probe);
	CHECK(st == 0, "200 adopted descriptors with gaps: status %d, report '%s'", st, rep);
	st = run(A_MANY_GAP, rep, sizeof(rep), probe);
	CHECK(st == 159 && strstr(rep, "forbidden system call read"), "a gap between adopted descriptors: status %d, '%s'",
	      st, rep);
	/* audit mode */
	unlink(probe);
	st = run(A_AUDIT, rep, sizeof(rep), probe);
	CHECK(st == 0, "audit: status %d, log '%s'", st, rep);
	char want[700];
	snprintf(want, sizeof want, "audit: openat from libc.so.6 called from test_sandbox path %s = ", probe);
	CHECK(strstr(rep, want) != NULL, "audit log lacks '%s': '%s'", want, rep);
	CHECK(strstr(rep, "audit: write from libc.so.6 called from test_sandbox fd ") != NULL, "audit log lacks the write: '%s'", rep);
	CHECK(strstr(rep, "audit: getsid from test_sandbox = ") != NULL, "audit log lacks getsid: '%s'",
	      rep);
	CHECK(strstr(rep, "audit: clone from libc.so.6 called from test_sandbox (refused)") != NULL, "audit log lacks the fork: '%s'", rep);
	CHECK(access(probe, F_OK) == 0, "audit mode did not carry out the open");
	unlink(probe);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int st = run(bad[i].a, rep, sizeof(rep), probe);
		CHECK(st == 159 && strstr(rep, "forbidden system call") && strstr(rep, bad[i].want),
		      "action %zu: status %d, report '%s' (want %s)", i, st, rep, bad[i].want);
		CHECK(access(probe, F_OK) != 0, "action %zu: the probe file was created", i);
		unlink(probe);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
